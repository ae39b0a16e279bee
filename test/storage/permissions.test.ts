import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LevelStorage } from '../../src/storage/levelStorage';

describe('LevelStorage data folder', () => {
  const roots: string[] = [];
  afterEach(() => {
    for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
  });
  const root = (): string => {
    const r = mkdtempSync(path.join(os.tmpdir(), 'fencelock-perm-'));
    roots.push(r);
    return r;
  };

  it('creates a new data folder readable by its owner only (the log holds session ids)', async () => {
    const dir = path.join(root(), 'data', 'n1');
    const storage = await LevelStorage.open(dir);
    await storage.close();
    expect(statSync(dir).mode & 0o777).toBe(0o700);
  });

  it('tightens an existing folder that others could read', async () => {
    const dir = path.join(root(), 'n1');
    mkdirSync(dir);
    chmodSync(dir, 0o755);
    const storage = await LevelStorage.open(dir);
    await storage.close();
    expect(statSync(dir).mode & 0o777).toBe(0o700);
  });
});

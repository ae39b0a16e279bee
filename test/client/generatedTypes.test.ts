import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findProtoRoot } from '../../src/client/protoPath';
import { generateProtoTypes, GENERATED_DIR } from '../../scripts/protoTypes';

/** Every file under dir, relative to it, with its content. */
function readTree(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const full = path.join(entry.parentPath, entry.name);
    out.set(path.relative(dir, full), fs.readFileSync(full, 'utf8'));
  }
  return out;
}

describe('generated protocol types', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'fencelock-gen-'));
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('match what proto-loader-gen-types makes of lock.proto today (run `npm run gen:proto` when this fails)', () => {
    const root = findProtoRoot();
    generateProtoTypes(root, tmp);
    const fresh = readTree(tmp);
    const committed = readTree(path.join(root, GENERATED_DIR));
    expect(fresh.size).toBeGreaterThan(10);
    expect([...committed.keys()].sort()).toEqual([...fresh.keys()].sort());
    for (const [file, text] of fresh) expect(committed.get(file), file).toBe(text);
  });
});

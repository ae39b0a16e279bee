// `fencelock snapshot restore` and `status` in-process, offline (no server): the bump must be said, once.
import { EventEmitter } from 'node:events';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/program';
import { encodeBackup } from '../../src/codec/backupFile';
import { LockStateMachine } from '../../src/state';

const dir = mkdtempSync(path.join(os.tmpdir(), 'fencelock-snapcli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const BACKUP_INDEX = 42;
const file = path.join(dir, 'b.flb');
writeFileSync(file, encodeBackup({ index: BACKUP_INDEX, term: 2, size: 0, voters: ['n1'], takenAt: '2026-01-01T00:00:00.000Z' }, new LockStateMachine().writeSnapshot()));

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runCli(args, { stdout: (t) => void (out += t), stderr: (t) => void (err += t), env: {}, signals: new EventEmitter() });
  return { code, out, err };
}

let n = 0;
const freshDir = (): string => path.join(dir, `data-${++n}`);

describe('snapshot restore flags', () => {
  it('needs --bump or --no-bump-i-know, and refuses both', async () => {
    const target = freshDir();
    const none = await cli(['snapshot', 'restore', file, '--data-dir', target, '--member', 'n1']);
    expect(none.code).toBe(1);
    expect(none.err).toMatch(/--bump \(the default, 1000000000\) or --bump N/);
    const both = await cli(['snapshot', 'restore', file, '--data-dir', target, '--member', 'n1', '--bump', '7', '--no-bump-i-know']);
    expect(both.code).toBe(1);
    expect(both.err).toMatch(/not both/);
    const bad = await cli(['snapshot', 'restore', file, '--data-dir', target, '--member', 'n1', '--bump', '-3']);
    expect(bad.code).toBe(1);
    expect(existsSync(target)).toBe(false);
  });

  it('restores at the backup index plus N, the default, or exactly the backup index', async () => {
    for (const [flags, index] of [
      [['--bump', '7'], BACKUP_INDEX + 7],
      [['--bump'], BACKUP_INDEX + 1_000_000_000],
      [['--no-bump-i-know'], BACKUP_INDEX],
    ] as const) {
      const res = await cli(['--json', 'snapshot', 'restore', file, '--data-dir', freshDir(), '--member', 'n1', ...flags]);
      expect(res.code, res.err).toBe(0);
      expect(JSON.parse(res.out)).toMatchObject({ backupIndex: BACKUP_INDEX, index, voters: ['n1'] });
    }
  });

  it('status of a file that is missing or not a backup: exit 1 and why', async () => {
    const missing = await cli(['snapshot', 'status', path.join(dir, 'nope.flb')]);
    expect(missing.code).toBe(1);
    expect(missing.err).toMatch(/cannot read/);
    const other = path.join(dir, 'other');
    writeFileSync(other, 'x'.repeat(200));
    const foreign = await cli(['snapshot', 'status', other]);
    expect(foreign.code).toBe(1);
    expect(foreign.err).toMatch(/not a fencelock backup/);
  });
});

// The offline restore (src/node/backup/restore.ts) on real LevelDB: what it stores is what a starting node
// loads, and what it refuses leaves nothing behind.
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { encodeBackup } from '../../src/codec/backupFile';
import { MAX_RESTORED_INDEX, restoreBackup, restoredSnapshotMeta } from '../../src/node/backup/restore';
import { crc32 } from '../../src/storage/checksum';
import { LevelStorage } from '../../src/storage/levelStorage';
import { LockStateMachine } from '../../src/state';
import { Harness, put } from '../state/harness';

const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(path.join(os.tmpdir(), 'fencelock-restore-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A backup file of a state with one held lock and its key, at index `h.index`, term 3. */
function backupFile(dir: string): { file: string; index: number; token: number } {
  const h = new Harness();
  const s = h.open();
  const token = h.grant(s, 'held');
  h.write(s, 'held', token, [put('held/k', 'v')]);
  const file = path.join(dir, 'b.flb');
  writeFileSync(file, encodeBackup({ index: h.index, term: 3, size: 0, voters: ['a', 'b', 'c'], takenAt: new Date(0).toISOString() }, h.m.writeSnapshot()));
  return { file, index: h.index, token };
}

const members = ['n3', 'n1', 'n2'].map((id) => ({ id }));

describe('restoreBackup', () => {
  it('stores a snapshot at the backup index plus the bump, with the new members as voters, that storage loads back', async () => {
    const dir = tempDir();
    const { file, index, token } = backupFile(dir);
    const dataDir = path.join(dir, 'data');
    const report = await restoreBackup({ file, dataDir, members, bump: 500 });
    expect(report).toMatchObject({ backupIndex: index, index: index + 500, term: 503, voters: ['n1', 'n2', 'n3'], sessionsDropped: 1 });

    const storage = await LevelStorage.open(dataDir);
    try {
      const loaded = await storage.load();
      expect(loaded.hardState).toEqual({ term: 503, vote: '', commit: index + 500 });
      expect(loaded.entries).toEqual([]);
      const snap = loaded.snapshot!;
      expect(snap.meta).toEqual({ index: index + 500, term: 503, config: { voters: ['n1', 'n2', 'n3'] }, crc32: crc32(snap.data) });
      const m = LockStateMachine.readSnapshot(snap.data);
      expect(m.lastApplied).toBe(index + 500);
      expect(m.sessionIds()).toEqual([]);
      expect(m.get('held/k')).toMatchObject({ watermark: token });
    } finally {
      await storage.close();
    }
  });

  it('refuses a bump that would leave less than half the Raft number space, and bad members, writing nothing', async () => {
    const dir = tempDir();
    const { file, index } = backupFile(dir);
    const dataDir = path.join(dir, 'data');
    await expect(restoreBackup({ file, dataDir, members, bump: MAX_RESTORED_INDEX - index })).rejects.toThrow(/half of the Raft number space/);
    await expect(restoreBackup({ file, dataDir, members: [{ id: 'n1' }, { id: 'n1' }], bump: 5 })).rejects.toThrow(/named twice/);
    await expect(restoreBackup({ file, dataDir, members: [{ id: 'n 1' }], bump: 5 })).rejects.toThrow(/member id/);
    await expect(restoreBackup({ file, dataDir, members, bump: -1 })).rejects.toThrow(/--bump/);
    expect(readdirSync(dir)).toEqual(['b.flb']);
  });

  it('builds the restored meta in one place: index and term raised, voters sorted', () => {
    expect(restoredSnapshotMeta({ index: 7, term: 2 }, 10, members)).toEqual({ index: 17, term: 12, config: { voters: ['n1', 'n2', 'n3'] } });
  });
});

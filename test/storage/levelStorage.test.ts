import * as fs from 'fs';
import * as path from 'path';
import { Level } from 'level';
import { afterEach, describe, expect, it } from 'vitest';
import { encodeEntry, encodeHardState } from '../../src/codec/raftCodec';
import { frame } from '../../src/storage/checksum';
import { StorageFailedError, StorageLockedError } from '../../src/storage/errors';
import { entryKey, FORMAT_MARKER, LevelStorage } from '../../src/storage/levelStorage';
import { StorageCorruptError, type RaftStorage } from '../../src/storage/types';
import { runStorageContract } from './contract';
import { ent, ents, snap, TempDirs } from './helpers';

const temps = new TempDirs();
afterEach(() => temps.cleanup());

runStorageContract('LevelStorage', async () => {
  const dir = path.join(temps.make(), 'node');
  const h = {
    storage: (await LevelStorage.open(dir)) as RaftStorage,
    async restart() {
      await h.storage.close();
      h.storage = await LevelStorage.open(dir);
      return h.storage;
    },
    async dispose() {
      await h.storage.close();
    },
  };
  return h;
});

const hs = (term: number, vote: string, commit: number) => ({ term, vote, commit });

/** Opens the raw LevelDB of a (closed) store to tamper with it. */
async function tamper(dir: string, fn: (db: Level<Uint8Array, Uint8Array>) => Promise<void>): Promise<void> {
  const db = new Level<Uint8Array, Uint8Array>(dir, { keyEncoding: 'view', valueEncoding: 'view', createIfMissing: false });
  await db.open();
  try {
    await fn(db);
  } finally {
    await db.close();
  }
}

/** A closed store in a fresh temp dir holding hard state (2, n1, 3), snapshot at 2 and entries 3..6. */
async function populated(): Promise<string> {
  const dir = path.join(temps.make(), 'node');
  const s = await LevelStorage.open(dir);
  await s.persist({ hardState: hs(2, 'n1', 3), entries: [...ents(1, 3, 1), ...ents(4, 6, 2)] });
  await s.saveSnapshot(snap(2, 1));
  await s.close();
  return dir;
}

async function expectCorrupt(dir: string, pattern: RegExp): Promise<void> {
  let err: unknown;
  try {
    const s = await LevelStorage.open(dir);
    try {
      await s.load();
    } finally {
      await s.close();
    }
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(StorageCorruptError);
  expect((err as Error).message).toContain(dir);
  expect((err as Error).message).toMatch(pattern);
}

describe('LevelStorage: opening', () => {
  it('creates a store in a missing directory and in an existing empty one', async () => {
    for (const dir of [path.join(temps.make(), 'a', 'b'), temps.make()]) {
      const s = await LevelStorage.open(dir);
      expect(await s.load()).toEqual({ hardState: hs(0, '', 0), snapshot: undefined, entries: [] });
      await s.close();
      expect(fs.readdirSync(dir)).toContain('CURRENT');
      const again = await LevelStorage.open(dir);
      expect(await again.load()).toEqual({ hardState: hs(0, '', 0), snapshot: undefined, entries: [] });
      await again.close();
    }
  });

  it('refuses a directory with foreign (non-LevelDB) files', async () => {
    const dir = temps.make();
    fs.writeFileSync(path.join(dir, 'notes.txt'), 'hello');
    fs.writeFileSync(path.join(dir, '000001.log'), 'garbage');
    await expect(LevelStorage.open(dir)).rejects.toThrow(/not a LevelDB store.*refusing/);
    await expect(LevelStorage.open(dir)).rejects.toBeInstanceOf(StorageCorruptError);
    expect(fs.readdirSync(dir).sort()).toEqual(['000001.log', 'notes.txt']); // untouched
  });

  it('refuses a directory whose LevelDB files are garbage', async () => {
    const dir = temps.make();
    fs.writeFileSync(path.join(dir, 'CURRENT'), 'MANIFEST-000777\n');
    fs.writeFileSync(path.join(dir, 'MANIFEST-000777'), 'not a manifest');
    await expect(LevelStorage.open(dir)).rejects.toThrow(/cannot be opened as a LevelDB store|damaged LevelDB store/);
  });

  it('refuses a path that is a file', async () => {
    const file = path.join(temps.make(), 'file');
    fs.writeFileSync(file, 'x');
    await expect(LevelStorage.open(file)).rejects.toThrow(/not a directory/);
  });

  it('refuses a store that is already open (LOCK held)', async () => {
    const dir = temps.make();
    const s = await LevelStorage.open(dir);
    const err = await LevelStorage.open(dir).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StorageLockedError);
    expect((err as Error).message).toMatch(/locked by another process/);
    await s.close();
  });

  it('refuses a LevelDB store of another application (no format marker)', async () => {
    const dir = temps.make();
    const db = new Level(dir);
    await db.put('some', 'data');
    await db.close();
    await expect(LevelStorage.open(dir)).rejects.toThrow(/without the "fencelock-raft-v1" marker/);
  });

  it('refuses an unknown format marker', async () => {
    const dir = await populated();
    await tamper(dir, (db) => db.put(Uint8Array.of(0), new TextEncoder().encode('fencelock-raft-v9')));
    await expect(LevelStorage.open(dir)).rejects.toThrow(/unsupported storage format marker "fencelock-raft-v9"/);
  });

  it('writes the format marker at creation', async () => {
    const dir = temps.make();
    await (await LevelStorage.open(dir)).close();
    await tamper(dir, async (db) => {
      expect(new TextDecoder().decode(await db.get(Uint8Array.of(0)))).toBe(FORMAT_MARKER);
    });
  });
});

describe('LevelStorage: corruption is detected on load', () => {
  it('a populated store loads fine (baseline)', async () => {
    const dir = await populated();
    const s = await LevelStorage.open(dir);
    expect(await s.load()).toEqual({ hardState: hs(2, 'n1', 3), snapshot: snap(2, 1), entries: [ent(3, 1), ...ents(4, 6, 2)] });
    await s.close();
  });

  it('missing format marker with data', async () => {
    const dir = await populated();
    await tamper(dir, (db) => db.del(Uint8Array.of(0)));
    await expect(LevelStorage.open(dir)).rejects.toBeInstanceOf(StorageCorruptError);
    await expect(LevelStorage.open(dir)).rejects.toThrow(/without the "fencelock-raft-v1" marker holds data/);
  });

  it('a garbage entry value', async () => {
    const dir = await populated();
    await tamper(dir, (db) => db.put(entryKey(4), Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0xff, 0xff)));
    await expectCorrupt(dir, /entry 4: checksum mismatch/);
  });

  it('a flipped bit in an entry', async () => {
    const dir = await populated();
    await tamper(dir, async (db) => {
      const v = (await db.get(entryKey(5)))!.slice();
      v[v.length - 1]! ^= 0x01;
      await db.put(entryKey(5), v);
    });
    await expectCorrupt(dir, /entry 5: checksum mismatch/);
  });

  it('an entry value that checksums but does not decode', async () => {
    const dir = await populated();
    await tamper(dir, (db) => db.put(entryKey(4), frame(Uint8Array.of(0x0a, 0xff, 0xff))));
    await expectCorrupt(dir, /entry 4: cannot decode Entry/);
  });

  it('an entry stored under the wrong index', async () => {
    const dir = await populated();
    await tamper(dir, (db) => db.put(entryKey(4), frame(encodeEntry(ent(5, 2)))));
    await expectCorrupt(dir, /stored under index 4 says index 5/);
  });

  it('a gap in the entries', async () => {
    const dir = await populated();
    await tamper(dir, (db) => db.del(entryKey(5)));
    await expectCorrupt(dir, /not contiguous: 4 is followed by 6/);
  });

  it('entries not starting right after the snapshot', async () => {
    const dir = await populated();
    await tamper(dir, (db) => db.del(entryKey(3)));
    await expectCorrupt(dir, /first entry is 4, expected 3/);
  });

  it('an entry left below the snapshot', async () => {
    const dir = await populated();
    await tamper(dir, (db) => db.put(entryKey(2), frame(encodeEntry(ent(2, 1)))));
    await expectCorrupt(dir, /first entry is 2, expected 3/);
  });

  it('decreasing terms', async () => {
    const dir = await populated();
    await tamper(dir, (db) => db.put(entryKey(6), frame(encodeEntry(ent(6, 1)))));
    await expectCorrupt(dir, /terms decrease: term 1 at 6 after term 2 at 5/);
  });

  it('a commit beyond the last index', async () => {
    const dir = await populated();
    await tamper(dir, (db) => db.put(Uint8Array.of(1), frame(encodeHardState(hs(2, 'n1', 9)))));
    await expectCorrupt(dir, /commit 9 is beyond the last index 6/);
  });

  it('a missing snapshot chunk and a garbage snapshot manifest', async () => {
    const dir = await populated();
    await tamper(dir, (db) => db.del(Uint8Array.of(4, 0, 0, 0, 0)));
    await expectCorrupt(dir, /should have 1 data chunks, found 0/);
    const dir2 = await populated();
    await tamper(dir2, (db) => db.put(Uint8Array.of(3), Uint8Array.of(1, 2, 3, 4, 5)));
    await expectCorrupt(dir2, /snapshot manifest: checksum mismatch/);
  });

  it('an unknown key', async () => {
    const dir = await populated();
    await tamper(dir, (db) => db.put(Uint8Array.of(0x7f, 1), Uint8Array.of(1)));
    await expectCorrupt(dir, /unexpected key 7f01/);
  });

  it('a corrupt store is also refused by a write before any load', async () => {
    const dir = await populated();
    await tamper(dir, (db) => db.del(entryKey(5)));
    const s = await LevelStorage.open(dir);
    await expect(s.persist({ entries: ents(7, 7, 2) })).rejects.toBeInstanceOf(StorageCorruptError);
    await s.close();
  });
});

describe('LevelStorage: lifecycle', () => {
  it('rejects calls after close; close is idempotent and waits for queued writes', async () => {
    const dir = temps.make();
    const s = await LevelStorage.open(dir);
    const p = s.persist({ hardState: hs(1, '', 0), entries: ents(1, 3, 1) });
    const c1 = s.close();
    const c2 = s.close();
    await Promise.all([p, c1, c2]);
    await expect(s.load()).rejects.toThrow(/closed/);
    const again = await LevelStorage.open(dir);
    expect((await again.load()).entries).toEqual(ents(1, 3, 1));
    await again.close();
  });

  it('a failed write poisons the instance (fail-stop); reopening shows the last durable state', async () => {
    const dir = temps.make();
    const s = await LevelStorage.open(dir);
    await s.persist({ hardState: hs(1, '', 0), entries: ents(1, 2, 1) });
    const db = (s as unknown as { db: { batch: (...args: unknown[]) => Promise<void> } }).db;
    const realBatch = db.batch.bind(db);
    db.batch = async () => {
      throw new Error('EIO: simulated fsync failure');
    };
    await expect(s.persist({ entries: ents(3, 3, 1) })).rejects.toThrow(/synced write failed: EIO/);
    db.batch = realBatch;
    await expect(s.persist({ entries: ents(3, 3, 1) })).rejects.toBeInstanceOf(StorageFailedError);
    await expect(s.load()).rejects.toBeInstanceOf(StorageFailedError);
    await s.close();
    const again = await LevelStorage.open(dir);
    expect((await again.load()).entries).toEqual(ents(1, 2, 1));
    await again.close();
  });

  it('each persist is one synced LevelDB batch', async () => {
    const dir = temps.make();
    const s = await LevelStorage.open(dir);
    const db = (s as unknown as { db: { batch: (ops: unknown[], opts: unknown) => Promise<void> } }).db;
    const realBatch = db.batch.bind(db);
    const calls: Array<{ ops: number; opts: unknown }> = [];
    db.batch = (ops: unknown[], opts: unknown) => {
      calls.push({ ops: ops.length, opts });
      return realBatch(ops, opts);
    };
    await s.persist({ hardState: hs(1, '', 0), entries: ents(1, 5, 1) });
    await s.persist({ hardState: hs(2, '', 0), entries: ents(2, 3, 2) }); // 2 puts + 2 dels + hard state
    await s.saveSnapshot(snap(2, 2));
    expect(calls).toEqual([
      { ops: 6, opts: { sync: true } },
      { ops: 5, opts: { sync: true } },
      { ops: 4, opts: { sync: true } }, // del 1, del 2, chunk, manifest
    ]);
    await s.close();
  });
});

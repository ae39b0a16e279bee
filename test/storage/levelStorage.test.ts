import * as fs from 'fs';
import * as path from 'path';
import { Level } from 'level';
import { afterEach, describe, expect, it } from 'vitest';
import { encodeEntry, encodeHardState, encodeLogSegment } from '../../src/codec/raftCodec';
import { frame } from '../../src/storage/checksum';
import { StorageFailedError, StorageLockedError } from '../../src/storage/errors';
import { FORMAT_MARKER, LevelStorage, segmentKey } from '../../src/storage/levelStorage';
import { V1_FORMAT_MARKER, v1EntryKey } from '../../src/storage/migrateV1';
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

/**
 * A closed store in a fresh temp dir holding hard state (2, n1, 3), snapshot at 2 and entries 3..6, as the
 * segments 3..3 and 4..6 (the segment 1..2 went with the compaction).
 */
async function populated(): Promise<string> {
  const dir = path.join(temps.make(), 'node');
  const s = await LevelStorage.open(dir);
  await s.persist({ hardState: hs(1, 'n1', 0), entries: ents(1, 2, 1) });
  await s.persist({ entries: ents(3, 3, 1) });
  await s.persist({ hardState: hs(2, 'n1', 3), entries: ents(4, 6, 2) });
  await s.saveSnapshot(snap(2, 1));
  await s.close();
  return dir;
}

/** A segment value as LevelStorage writes it. */
const segment = (entries: ReturnType<typeof ents>): Uint8Array => frame(encodeLogSegment(entries));

/** The keys of a closed store, hex, in order. */
async function storedKeys(dir: string): Promise<string[]> {
  const keys: string[] = [];
  await tamper(dir, async (db) => {
    for await (const key of db.keys()) keys.push(Buffer.from(key).toString('hex'));
  });
  return keys;
}
const segmentKeysHex = (keys: string[]): string[] => keys.filter((k) => k.startsWith('05'));

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
    await expect(LevelStorage.open(dir)).rejects.toThrow(/without the "fencelock-raft-v2" marker/);
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
    await expect(LevelStorage.open(dir)).rejects.toThrow(/without the "fencelock-raft-v2" marker holds data/);
  });

  it('a garbage segment value', async () => {
    const dir = await populated();
    await tamper(dir, (db) => db.put(segmentKey(4), Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0xff, 0xff)));
    await expectCorrupt(dir, /segment 4: checksum mismatch/);
  });

  it('a flipped bit in a segment', async () => {
    const dir = await populated();
    await tamper(dir, async (db) => {
      const v = (await db.get(segmentKey(4)))!.slice();
      v[v.length - 1]! ^= 0x01;
      await db.put(segmentKey(4), v);
    });
    await expectCorrupt(dir, /segment 4: checksum mismatch/);
  });

  it('a segment value that checksums but does not decode', async () => {
    const dir = await populated();
    await tamper(dir, (db) => db.put(segmentKey(4), frame(Uint8Array.of(0x0a, 0xff, 0xff))));
    await expectCorrupt(dir, /segment 4: cannot decode LogSegment/);
  });

  it('an empty segment', async () => {
    const dir = await populated();
    await tamper(dir, (db) => db.put(segmentKey(4), segment([])));
    await expectCorrupt(dir, /segment 4 holds no entries/);
  });

  it('a segment stored under the wrong index, and one with a hole', async () => {
    const dir = await populated();
    await tamper(dir, (db) => db.put(segmentKey(4), segment(ents(5, 6, 2))));
    await expectCorrupt(dir, /segment 4 holds entry 5 where entry 4 belongs/);
    const dir2 = await populated();
    await tamper(dir2, (db) => db.put(segmentKey(4), segment([ent(4, 2), ent(6, 2)])));
    await expectCorrupt(dir2, /segment 4 holds entry 6 where entry 5 belongs/);
  });

  it('a gap in the entries', async () => {
    const dir = await populated();
    await tamper(dir, async (db) => {
      await db.del(segmentKey(4));
      await db.put(segmentKey(5), segment(ents(5, 6, 2)));
    });
    await expectCorrupt(dir, /not contiguous: 3 is followed by 5/);
  });

  it('overlapping segments', async () => {
    const dir = await populated();
    await tamper(dir, (db) => db.put(segmentKey(3), segment([ent(3, 1), ent(4, 2)])));
    await expectCorrupt(dir, /not contiguous: 4 is followed by 4/);
  });

  it('entries not starting right after the snapshot', async () => {
    const dir = await populated();
    await tamper(dir, (db) => db.del(segmentKey(3)));
    await expectCorrupt(dir, /first entry is 4, expected 3/);
  });

  it('a segment left wholly below the snapshot', async () => {
    const dir = await populated();
    await tamper(dir, (db) => db.put(segmentKey(1), segment(ents(1, 2, 1))));
    await expectCorrupt(dir, /segment 1..2 lies wholly at or below the snapshot at 2/);
  });

  it('decreasing terms', async () => {
    const dir = await populated();
    await tamper(dir, (db) => db.put(segmentKey(4), segment([ent(4, 2), ent(5, 2), ent(6, 1)])));
    await expectCorrupt(dir, /terms decrease: term 1 at 6 after term 2 at 5/);
  });

  it('an entry key of the old format in a converted store', async () => {
    const dir = await populated();
    await tamper(dir, (db) => db.put(v1EntryKey(7), frame(encodeEntry(ent(7, 2)))));
    await expectCorrupt(dir, /unexpected key 020000000000000007/);
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
    await tamper(dir, (db) => db.del(segmentKey(3)));
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

  it('each persist is one synced LevelDB batch, its entries one value', async () => {
    const dir = temps.make();
    const s = await LevelStorage.open(dir);
    const db = (s as unknown as { db: { batch: (ops: unknown[], opts: unknown) => Promise<void> } }).db;
    const realBatch = db.batch.bind(db);
    const calls: Array<{ ops: number; opts: unknown }> = [];
    db.batch = (ops: unknown[], opts: unknown) => {
      calls.push({ ops: ops.length, opts });
      return realBatch(ops, opts);
    };
    await s.persist({ hardState: hs(1, '', 0), entries: ents(1, 5, 1) }); // segment 1..5 + hard state
    await s.persist({ hardState: hs(2, '', 0), entries: ents(2, 3, 2) }); // 1..5 rewritten as 1..1, segment 2..3, hard state
    await s.saveSnapshot(snap(2, 2)); // del 1..1, chunk, manifest (2..3 straddles: kept)
    expect(calls).toEqual([
      { ops: 2, opts: { sync: true } },
      { ops: 3, opts: { sync: true } },
      { ops: 3, opts: { sync: true } },
    ]);
    await s.close();
    expect(segmentKeysHex(await storedKeys(dir))).toEqual([Buffer.from(segmentKey(2)).toString('hex')]);
    const again = await LevelStorage.open(dir);
    expect(await again.load()).toEqual({ hardState: hs(2, '', 0), snapshot: snap(2, 2), entries: [ent(3, 2)] });
    await again.close();
  });
});

describe('LevelStorage: segments', () => {
  it('a conflict inside a segment keeps the entries before it and replaces the rest, across restarts', async () => {
    const dir = temps.make();
    let s = await LevelStorage.open(dir);
    await s.persist({ hardState: hs(1, '', 2), entries: ents(1, 4, 1) });
    await s.persist({ entries: ents(5, 8, 1) });
    await s.persist({ hardState: hs(2, '', 2), entries: ents(3, 4, 2) }); // 1..4 keeps 1..2; 5..8 goes
    await s.close();
    expect(segmentKeysHex(await storedKeys(dir))).toEqual([1, 3].map((i) => Buffer.from(segmentKey(i)).toString('hex')));
    s = await LevelStorage.open(dir);
    expect((await s.load()).entries).toEqual([...ents(1, 2, 1), ...ents(3, 4, 2)]);
    await s.persist({ entries: ents(5, 5, 2) });
    await s.close();
    s = await LevelStorage.open(dir);
    expect((await s.load()).entries).toEqual([...ents(1, 2, 1), ...ents(3, 5, 2)]);
    await s.close();
  });

  it('compacts inside a segment (the term is read from it), then past it', async () => {
    const dir = temps.make();
    let s = await LevelStorage.open(dir);
    await s.persist({ hardState: hs(3, '', 6), entries: [...ents(1, 3, 1), ...ents(4, 6, 3)] });
    await expect(s.saveSnapshot(snap(4, 2))).rejects.toThrow(/snapshot at index 4 has term 2 but the log has term 3 there/);
    await s.saveSnapshot(snap(4, 3));
    await s.close();
    s = await LevelStorage.open(dir);
    expect(await s.load()).toEqual({ hardState: hs(3, '', 6), snapshot: snap(4, 3), entries: ents(5, 6, 3) });
    await s.persist({ entries: ents(7, 7, 3) });
    await s.saveSnapshot(snap(6, 3));
    await s.close();
    expect(segmentKeysHex(await storedKeys(dir))).toEqual([Buffer.from(segmentKey(7)).toString('hex')]);
    s = await LevelStorage.open(dir);
    expect(await s.load()).toEqual({ hardState: hs(3, '', 6), snapshot: snap(6, 3), entries: [ent(7, 3)] });
    await s.close();
  });

  it('a snapshot from the leader replaces every segment', async () => {
    const dir = temps.make();
    const s = await LevelStorage.open(dir);
    await s.persist({ hardState: hs(1, '', 0), entries: ents(1, 2, 1) });
    await s.persist({ entries: ents(3, 4, 1) });
    await s.persist({ hardState: hs(2, '', 9), snapshot: snap(9, 2), entries: ents(10, 11, 2) });
    await s.close();
    expect(segmentKeysHex(await storedKeys(dir))).toEqual([Buffer.from(segmentKey(10)).toString('hex')]);
    const again = await LevelStorage.open(dir);
    expect(await again.load()).toEqual({ hardState: hs(2, '', 9), snapshot: snap(9, 2), entries: ents(10, 11, 2) });
    await again.close();
  });
});

describe('LevelStorage: a store of format v1 (one value per entry)', () => {
  /** Writes a v1 store by hand: marker, hard state, snapshot at 2 (as v1 wrote it) and entries 3..`last`. */
  async function v1Store(last: number): Promise<string> {
    const dir = await populated(); // a current store, for its snapshot keys; its log is replaced below
    await tamper(dir, async (db) => {
      for (const k of [3, 4]) await db.del(segmentKey(k));
      await db.put(Uint8Array.of(0), new TextEncoder().encode(V1_FORMAT_MARKER));
      for (let i = 3; i <= last; i++) await db.put(v1EntryKey(i), frame(encodeEntry(ent(i, i < 4 ? 1 : 2))));
    });
    return dir;
  }

  it('is converted when opened: same state, the new marker, segments instead of entry keys', async () => {
    const dir = await v1Store(2_500);
    const s = await LevelStorage.open(dir);
    const loaded = await s.load();
    expect(loaded.hardState).toEqual(hs(2, 'n1', 3));
    expect(loaded.snapshot).toEqual(snap(2, 1));
    expect(loaded.entries).toEqual([ent(3, 1), ...ents(4, 2_500, 2)]);
    await s.persist({ entries: ents(2_501, 2_501, 2) });
    await s.close();
    const keys = await storedKeys(dir);
    expect(keys.filter((k) => k.startsWith('02'))).toEqual([]);
    expect(segmentKeysHex(keys)).toEqual([3, 1_027, 2_051, 2_501].map((i) => Buffer.from(segmentKey(i)).toString('hex')));
    await tamper(dir, async (db) => expect(new TextDecoder().decode(await db.get(Uint8Array.of(0)))).toBe(FORMAT_MARKER));
    const again = await LevelStorage.open(dir);
    expect((await again.load()).entries.at(-1)).toEqual(ent(2_501, 2));
    await again.close();
  });

  it('with a damaged entry is refused and left as it was', async () => {
    const dir = await v1Store(6);
    await tamper(dir, (db) => db.put(v1EntryKey(5), Uint8Array.of(1, 2, 3, 4, 5, 6)));
    const before = await storedKeys(dir);
    await expect(LevelStorage.open(dir)).rejects.toThrow(/format fencelock-raft-v1.*entry 5: checksum mismatch/);
    expect(await storedKeys(dir)).toEqual(before);
    await tamper(dir, async (db) => expect(new TextDecoder().decode(await db.get(Uint8Array.of(0)))).toBe(V1_FORMAT_MARKER));
  });
});

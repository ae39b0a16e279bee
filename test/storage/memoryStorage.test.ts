import { describe, expect, it } from 'vitest';
import { MemoryStorage } from '../../src/storage/memoryStorage';
import { StorageUsageError } from '../../src/storage/errors';
import { runStorageContract } from './contract';
import { ent, ents, snap } from './helpers';

runStorageContract('MemoryStorage', async () => {
  const storage = new MemoryStorage();
  const h = {
    storage,
    async restart() {
      await h.storage.close();
      storage.crash();
      return h.storage;
    },
    async dispose() {},
  };
  return h;
});

const hs = (term: number, vote: string, commit: number) => ({ term, vote, commit });

describe('MemoryStorage: volatile writes, sync and crash', () => {
  it('a crash drops un-synced writes and keeps synced ones', () => {
    const s = new MemoryStorage();
    s.write({ hardState: hs(1, 'n1', 0), entries: ents(1, 3, 1) });
    s.sync();
    s.write({ hardState: hs(2, 'n2', 1), entries: ents(3, 5, 2) }); // truncates 3, appends 4..5
    s.write({ entries: ents(6, 6, 2) });
    expect(s.unsyncedBatches).toBe(2);
    // Before the crash the process sees its own writes.
    expect(s.loadSync().entries).toEqual([...ents(1, 2, 1), ...ents(3, 6, 2)]);
    s.crash();
    expect(s.loadSync()).toEqual({ hardState: hs(1, 'n1', 0), snapshot: undefined, entries: ents(1, 3, 1) });
    expect(s.unsyncedBatches).toBe(0);
    // Writing continues from the durable state.
    s.write({ hardState: hs(3, '', 1), entries: ents(4, 4, 3) });
    s.sync();
    s.crash();
    expect(s.loadSync()).toEqual({ hardState: hs(3, '', 1), snapshot: undefined, entries: [...ents(1, 3, 1), ent(4, 3)] });
  });

  it('a crash may keep a prefix of the un-synced batches, never a part of one', () => {
    const s = new MemoryStorage();
    s.write({ hardState: hs(1, '', 0), entries: ents(1, 2, 1) });
    s.write({ hardState: hs(2, '', 0), entries: ents(3, 4, 2) });
    s.write({ hardState: hs(3, '', 0), entries: ents(5, 6, 3) });
    s.crash(2);
    expect(s.loadSync()).toEqual({ hardState: hs(2, '', 0), snapshot: undefined, entries: [...ents(1, 2, 1), ...ents(3, 4, 2)] });
  });

  it('persist() and saveSnapshotSync() are durable at once; a sync also covers earlier writes', async () => {
    const s = new MemoryStorage();
    await s.persist({ hardState: hs(1, '', 2), entries: ents(1, 4, 1) });
    s.write({ hardState: hs(1, '', 3), entries: ents(5, 5, 1) });
    s.saveSnapshotSync(snap(2, 1));
    s.crash();
    expect(s.loadSync()).toEqual({ hardState: hs(1, '', 3), snapshot: snap(2, 1), entries: ents(3, 5, 1) });
  });

  it('a snapshot written but not synced is lost by a crash, with the entries it deleted restored', () => {
    const s = new MemoryStorage();
    s.write({ hardState: hs(1, '', 3), entries: ents(1, 5, 1) });
    s.sync();
    s.write({ hardState: hs(2, '', 3), entries: [], snapshot: snap(4, 2) });
    expect(s.loadSync()).toEqual({ hardState: hs(2, '', 3), snapshot: snap(4, 2), entries: [] });
    s.crash();
    expect(s.loadSync()).toEqual({ hardState: hs(1, '', 3), snapshot: undefined, entries: ents(1, 5, 1) });
  });

  it('refuses bad writes synchronously without changing anything', () => {
    const s = new MemoryStorage();
    s.write({ hardState: hs(1, '', 0), entries: ents(1, 2, 1) });
    expect(() => s.write({ entries: ents(4, 4, 1) })).toThrow(StorageUsageError);
    expect(() => s.saveSnapshotSync(snap(3, 1))).toThrow(StorageUsageError);
    expect(s.unsyncedBatches).toBe(1);
    expect(s.loadSync().entries).toEqual(ents(1, 2, 1));
  });
});

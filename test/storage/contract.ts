/**
 * The RaftStorage contract, run against every implementation (see levelStorage.test.ts and
 * memoryStorage.test.ts).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EntryType, type PersistedState } from '../../src/raft/types';
import { StorageUsageError } from '../../src/storage/errors';
import type { RaftStorage } from '../../src/storage/types';
import { ent, ents, snap } from './helpers';

export interface StorageHarness {
  storage: RaftStorage;
  /** Simulates a process restart: the storage is closed and reopened; only durable state survives. */
  restart(): Promise<RaftStorage>;
  dispose(): Promise<void>;
}

const hs = (term: number, vote: string, commit: number) => ({ term, vote, commit });

export function runStorageContract(name: string, create: () => Promise<StorageHarness>): void {
  describe(`${name}: RaftStorage contract`, () => {
    let h: StorageHarness;
    beforeEach(async () => {
      h = await create();
    });
    afterEach(async () => {
      await h.dispose();
    });

    /** load() now and after a restart must both equal `expected`. */
    async function expectState(expected: PersistedState): Promise<void> {
      expect(await h.storage.load()).toEqual(expected);
      await h.restart();
      expect(await h.storage.load()).toEqual(expected);
    }

    it('starts empty', async () => {
      await expectState({ hardState: hs(0, '', 0), snapshot: undefined, entries: [] });
    });

    it('round-trips hard state, entries and snapshot', async () => {
      const entries = [ent(1, 1, ''), ent(2, 1, new Uint8Array([0, 255, 7])), ent(3, 2, 'conf', EntryType.ConfChange)];
      await h.storage.persist({ hardState: hs(2, 'n2', 2), entries });
      await expectState({ hardState: hs(2, 'n2', 2), snapshot: undefined, entries });

      await h.storage.persist({ hardState: hs(3, 'n1', 3), entries: [], snapshot: snap(3, 2, 'state@3') });
      await expectState({ hardState: hs(3, 'n1', 3), snapshot: snap(3, 2, 'state@3'), entries: [] });

      await h.storage.persist({ entries: ents(4, 6, 3) });
      await expectState({ hardState: hs(3, 'n1', 3), snapshot: snap(3, 2, 'state@3'), entries: ents(4, 6, 3) });
    });

    it('keeps the stored hard state when a batch has none, and the entries when a batch has none', async () => {
      await h.storage.persist({ hardState: hs(1, 'n1', 0), entries: ents(1, 3, 1) });
      await h.storage.persist({ entries: ents(4, 4, 1) });
      await h.storage.persist({ hardState: hs(1, 'n1', 4), entries: [] });
      await expectState({ hardState: hs(1, 'n1', 4), snapshot: undefined, entries: ents(1, 4, 1) });
    });

    it('truncates a conflicting suffix in the same batch as the append', async () => {
      await h.storage.persist({ hardState: hs(1, 'n1', 1), entries: ents(1, 5, 1) });
      await h.storage.persist({ hardState: hs(2, 'n2', 1), entries: ents(3, 4, 2) });
      await expectState({ hardState: hs(2, 'n2', 1), snapshot: undefined, entries: [...ents(1, 2, 1), ...ents(3, 4, 2)] });
      // A longer replacement, and one replacing from the very first entry.
      await h.storage.persist({ hardState: hs(3, '', 1), entries: ents(2, 7, 3) });
      await expectState({ hardState: hs(3, '', 1), snapshot: undefined, entries: [ent(1, 1), ...ents(2, 7, 3)] });
      await h.storage.persist({ hardState: hs(4, '', 0 + 1), entries: ents(2, 2, 4) });
      await expectState({ hardState: hs(4, '', 1), snapshot: undefined, entries: [ent(1, 1), ent(2, 4)] });
    });

    it('re-persisting identical entries is harmless', async () => {
      await h.storage.persist({ hardState: hs(1, '', 0), entries: ents(1, 3, 1) });
      await h.storage.persist({ entries: ents(1, 3, 1) });
      await h.storage.persist({ entries: ents(2, 4, 1) });
      await expectState({ hardState: hs(1, '', 0), snapshot: undefined, entries: ents(1, 4, 1) });
    });

    it('a snapshot install replaces the whole stored log; entries the core kept come back in the same batch', async () => {
      await h.storage.persist({ hardState: hs(2, '', 2), entries: [...ents(1, 3, 1), ...ents(4, 8, 2)] });
      await h.storage.persist({ hardState: hs(2, '', 5), entries: ents(6, 8, 2), snapshot: snap(5, 2) });
      await expectState({ hardState: hs(2, '', 5), snapshot: snap(5, 2), entries: ents(6, 8, 2) });
    });

    it('a snapshot install without entries leaves no entry, even a suffix that matched', async () => {
      await h.storage.persist({ hardState: hs(2, '', 2), entries: [...ents(1, 3, 1), ...ents(4, 8, 2)] });
      await h.storage.persist({ hardState: hs(2, '', 5), entries: [], snapshot: snap(5, 2) });
      await expectState({ hardState: hs(2, '', 5), snapshot: snap(5, 2), entries: [] });
      // A newer snapshot replaces the older one and its entries.
      await h.storage.persist({ entries: ents(6, 9, 2) });
      await h.storage.persist({ hardState: hs(3, '', 7), entries: [ent(8, 3)], snapshot: snap(7, 2, 'second') });
      await expectState({ hardState: hs(3, '', 7), snapshot: snap(7, 2, 'second'), entries: [ent(8, 3)] });
    });

    it('a snapshot install drops a suffix that does not match the snapshot term', async () => {
      await h.storage.persist({ hardState: hs(2, '', 1), entries: [...ents(1, 1, 1), ...ents(2, 6, 2)] });
      // The leader's snapshot at 4 has term 3: entries 2..6 (term 2) are from a diverged history.
      await h.storage.persist({ hardState: hs(3, '', 4), entries: [], snapshot: snap(4, 3) });
      await expectState({ hardState: hs(3, '', 4), snapshot: snap(4, 3), entries: [] });
    });

    it('a snapshot beyond the log replaces everything; entries after it may follow in the same batch', async () => {
      await h.storage.persist({ hardState: hs(1, '', 2), entries: ents(1, 3, 1) });
      await h.storage.persist({ hardState: hs(4, 'n3', 10), entries: [ent(10, 3), ...ents(11, 12, 4)], snapshot: snap(10, 3) });
      await expectState({ hardState: hs(4, 'n3', 10), snapshot: snap(10, 3), entries: ents(11, 12, 4) });
      // The next append continues after the snapshot.
      await h.storage.persist({ entries: ents(13, 13, 4) });
      await expectState({ hardState: hs(4, 'n3', 10), snapshot: snap(10, 3), entries: ents(11, 13, 4) });
    });

    it('a snapshot batch whose entries do not start right after it is refused', async () => {
      await h.storage.persist({ hardState: hs(2, '', 3), entries: ents(1, 6, 2) });
      await expect(h.storage.persist({ hardState: hs(3, '', 3), entries: ents(5, 5, 3), snapshot: snap(3, 2) })).rejects.toBeInstanceOf(
        StorageUsageError,
      );
      await h.storage.persist({ hardState: hs(3, '', 3), entries: [ent(3, 2), ent(4, 2), ent(5, 3)], snapshot: snap(3, 2) });
      await expectState({ hardState: hs(3, '', 3), snapshot: snap(3, 2), entries: [ent(4, 2), ent(5, 3)] });
    });

    it('saveSnapshot compacts the covered entries and keeps the rest', async () => {
      await h.storage.persist({ hardState: hs(2, '', 8), entries: [...ents(1, 4, 1), ...ents(5, 9, 2)] });
      await h.storage.saveSnapshot(snap(4, 1, 'app@4'));
      await expectState({ hardState: hs(2, '', 8), snapshot: snap(4, 1, 'app@4'), entries: ents(5, 9, 2) });
      await h.storage.saveSnapshot(snap(7, 2, 'app@7'));
      await expectState({ hardState: hs(2, '', 8), snapshot: snap(7, 2, 'app@7'), entries: ents(8, 9, 2) });
      // Up to the last entry, then the same index again (replaces the data).
      await h.storage.saveSnapshot(snap(9, 2, 'app@9'));
      await h.storage.saveSnapshot(snap(9, 2, 'app@9 again'));
      await expectState({ hardState: hs(2, '', 8), snapshot: snap(9, 2, 'app@9 again'), entries: [] });
      await h.storage.persist({ hardState: hs(2, '', 10), entries: ents(10, 11, 2) });
      await expectState({ hardState: hs(2, '', 10), snapshot: snap(9, 2, 'app@9 again'), entries: ents(10, 11, 2) });
    });

    it('skips batch entries already covered by the snapshot', async () => {
      await h.storage.persist({ hardState: hs(2, '', 5), entries: ents(1, 6, 2) });
      await h.storage.saveSnapshot(snap(5, 2));
      await h.storage.persist({ entries: ents(4, 8, 2) });
      await expectState({ hardState: hs(2, '', 5), snapshot: snap(5, 2), entries: ents(6, 8, 2) });
    });

    it('refuses writes that would break the log invariants, and stays usable', async () => {
      await h.storage.persist({ hardState: hs(2, 'n1', 3), entries: [...ents(1, 2, 1), ...ents(3, 4, 2)] });
      await h.storage.saveSnapshot(snap(2, 1));
      const bad: Array<[string, () => Promise<void>]> = [
        ['gap', () => h.storage.persist({ entries: ents(6, 6, 2) })],
        ['non-contiguous batch', () => h.storage.persist({ entries: [ent(5, 2), ent(7, 2)] })],
        ['term below the previous entry', () => h.storage.persist({ entries: ents(5, 5, 1) })],
        ['terms decrease within the batch', () => h.storage.persist({ entries: [ent(5, 2), ent(6, 1)] })],
        ['hard state term goes back', () => h.storage.persist({ hardState: hs(1, '', 3), entries: [] })],
        ['vote changes within a term', () => h.storage.persist({ hardState: hs(2, 'n2', 3), entries: [] })],
        ['commit goes back', () => h.storage.persist({ hardState: hs(2, 'n1', 2), entries: [] })],
        ['commit beyond the log', () => h.storage.persist({ hardState: hs(2, 'n1', 9), entries: [] })],
        ['entry term above the hard state term', () => h.storage.persist({ entries: ents(5, 5, 3) })],
        ['rewriting a committed entry', () => h.storage.persist({ hardState: hs(3, '', 3), entries: ents(3, 3, 3) })],
        ['snapshot older than the stored one', () => h.storage.persist({ entries: [], snapshot: snap(1, 1) })],
        ['snapshot at the stored index with another term', () => h.storage.persist({ entries: [], snapshot: snap(2, 2) })],
        ['entry at the snapshot index with another term', () => h.storage.persist({ entries: [ent(2, 2)] })],
        ['compaction older than the stored snapshot', () => h.storage.saveSnapshot(snap(1, 1))],
        ['compaction beyond the log', () => h.storage.saveSnapshot(snap(5, 2))],
        ['compaction with the wrong term', () => h.storage.saveSnapshot(snap(3, 1))],
        ['negative index', () => h.storage.persist({ entries: [ent(-1, 1)] })],
        ['unsafe integer term', () => h.storage.persist({ entries: [ent(5, 2 ** 53)] })],
        ['bad entry type', () => h.storage.persist({ entries: [ent(5, 2, 'x', 7 as EntryType)] })],
      ];
      for (const [what, call] of bad) {
        await expect(call(), what).rejects.toBeInstanceOf(StorageUsageError);
      }
      // Nothing was written: the log is unchanged and still writable.
      const expected = { hardState: hs(2, 'n1', 3), snapshot: snap(2, 1), entries: ents(3, 4, 2) };
      expect(await h.storage.load()).toEqual(expected);
      await h.storage.persist({ hardState: hs(2, 'n1', 4), entries: ents(5, 5, 2) });
      await expectState({ ...expected, hardState: hs(2, 'n1', 4), entries: ents(3, 5, 2) });
    });

    it('allows a vote after none in the same term and any vote in a higher term', async () => {
      await h.storage.persist({ hardState: hs(1, '', 0), entries: [] });
      await h.storage.persist({ hardState: hs(1, 'n2', 0), entries: [] });
      await h.storage.persist({ hardState: hs(2, '', 0), entries: [] });
      await h.storage.persist({ hardState: hs(3, 'n3', 0), entries: [] });
      await expectState({ hardState: hs(3, 'n3', 0), snapshot: undefined, entries: [] });
    });

    it('copies data on the way in and out', async () => {
      const e = ent(1, 1, new Uint8Array([1, 2, 3]));
      const batch = { hardState: hs(1, '', 1), entries: [e], snapshot: undefined };
      const p = h.storage.persist(batch);
      // Mutate right after the call, before the promise settles.
      e.data[0] = 99;
      e.term = 7;
      batch.entries.push(ent(2, 1));
      batch.hardState.term = 5;
      await p;
      const loaded = await h.storage.load();
      expect(loaded.entries).toEqual([ent(1, 1, new Uint8Array([1, 2, 3]))]);
      expect(loaded.hardState).toEqual(hs(1, '', 1));
      loaded.entries[0]!.data[0] = 42;
      loaded.entries.length = 0;
      loaded.hardState.term = 9;
      expect(await h.storage.load()).toEqual({ hardState: hs(1, '', 1), snapshot: undefined, entries: [ent(1, 1, new Uint8Array([1, 2, 3]))] });
    });

    it('lands concurrent (un-awaited) calls in call order', async () => {
      const calls: Promise<void>[] = [];
      for (let i = 1; i <= 50; i++) calls.push(h.storage.persist({ hardState: hs(Math.ceil(i / 10), '', i - 1), entries: [ent(i, Math.ceil(i / 10))] }));
      calls.push(h.storage.saveSnapshot(snap(20, 2)));
      calls.push(h.storage.persist({ hardState: hs(5, '', 50), entries: ents(46, 52, 5) }));
      await Promise.all(calls);
      const expected = { hardState: hs(5, '', 50), snapshot: snap(20, 2), entries: [] as ReturnType<typeof ents> };
      for (let i = 21; i <= 45; i++) expected.entries.push(ent(i, Math.ceil(i / 10)));
      expected.entries.push(...ents(46, 52, 5));
      await expectState(expected);
    });

    it('restores exactly what was persisted across many restarts (large data, replaced snapshots)', async () => {
      // Large byte arrays are compared with Buffer.equals: a deep toEqual over megabytes takes seconds.
      const same = (a: PersistedState, b: PersistedState): void => {
        expect(Buffer.from(a.snapshot?.data ?? []).equals(Buffer.from(b.snapshot?.data ?? []))).toBe(true);
        const strip = (s: PersistedState) => ({ ...s, snapshot: s.snapshot && { ...s.snapshot, data: s.snapshot.data.length } });
        expect(strip(a)).toEqual(strip(b));
      };
      const big = new Uint8Array(2.5 * 1024 * 1024);
      for (let i = 0; i < big.length; i++) big[i] = (i * 31 + 7) & 0xff;
      const payload = new Uint8Array(1000).fill(5);
      let term = 1;
      let last = 0;
      for (let round = 0; round < 5; round++) {
        const batch = [];
        for (let i = 0; i < 200; i++) batch.push(ent(++last, term, payload));
        await h.storage.persist({ hardState: hs(term, 'n1', last - 10), entries: batch });
        await h.restart();
        term++;
      }
      expect((await h.storage.load()).entries).toHaveLength(1000);
      await h.storage.saveSnapshot(snap(last - 100, term - 1, big));
      let state = await h.storage.load();
      same(state, { hardState: hs(term - 1, 'n1', last - 10), snapshot: snap(last - 100, term - 1, big), entries: state.entries });
      expect(state.entries.map((e) => e.index)).toEqual(Array.from({ length: 100 }, (_, i) => last - 99 + i));
      await h.restart();
      same(await h.storage.load(), state);
      // A smaller snapshot replaces the large one (fewer chunks).
      await h.storage.saveSnapshot(snap(last - 50, term - 1, 'small'));
      state = await h.storage.load();
      expect(state.snapshot).toEqual(snap(last - 50, term - 1, 'small'));
      expect(state.entries).toHaveLength(50);
      expect(state.entries[0]!.index).toBe(last - 49);
      await h.restart();
      expect(await h.storage.load()).toEqual(state);
      // An empty snapshot.
      await h.storage.saveSnapshot(snap(last - 40, term - 1, new Uint8Array(0)));
      state = await h.storage.load();
      await h.restart();
      expect(await h.storage.load()).toEqual(state);
      expect(state.snapshot!.data).toHaveLength(0);
    });
  });
}

/**
 * The storage semantics shared by LevelStorage and MemoryStorage: argument checks, the plan of one
 * persist/saveSnapshot (what to delete, what to put, the resulting log bounds) and the verification of
 * what is read back. Both implementations execute the same plan, so they cannot drift apart.
 *
 * Stored log = an optional snapshot (index S, term T) followed by the contiguous entries S+1..last.
 *
 * persist(batch), in this order, as one atomic write:
 * 1. batch.snapshot (index s, term t), if any: it replaces the stored snapshot AND every stored entry (not
 *    only those <= s). This is the core's Ready contract (src/raft/types.ts, Ready.snapshot): when its log
 *    matches the snapshot (paper Figure 13, steps 6-7) the core keeps the entries after s and hands them
 *    back in batch.entries of the same batch, so they are rewritten in the same write; when it does not
 *    match, nothing after s survives. Deleting everything means the stored log is exactly the core's log,
 *    and entries of a diverged history can never outlive a snapshot. Refused if s is below the stored
 *    snapshot's index.
 * 2. batch.entries: entries at or below the (new) snapshot index are skipped (already covered; one at
 *    exactly the snapshot index must carry the snapshot's term); the rest must start at or below last+1
 *    (no gap), must not go below the previous entry's term, must not rewrite a committed entry with another
 *    term, and every stored entry at or above their first index is replaced (a conflicting suffix is
 *    truncated in the same write).
 * 3. batch.hardState: term never decreases, a vote is never changed within a term, commit never decreases.
 * Afterwards: commit <= last index and hard state term >= last log term, or nothing is written.
 *
 * saveSnapshot(snapshot) (local compaction): the log must hold entry s with term t (or s is the stored
 * snapshot); entries <= s are deleted, entries above are kept.
 */
import { storedConfig } from '../raft/confChange';
import { EntryType, type Entry, type HardState, type PersistedState, type Snapshot } from '../raft/types';
import { StorageUsageError } from './errors';
import { StorageCorruptError, type PersistBatch } from './types';

/** In-memory summary of what is stored. */
export interface LogState {
  snapIndex: number;
  snapTerm: number;
  /** Index of the last entry, or snapIndex when there are no entries after the snapshot. */
  lastIndex: number;
  /** Term at lastIndex (snapTerm when there are no entries). */
  lastTerm: number;
  hardState: HardState;
}

export const EMPTY_HARD_STATE: Readonly<HardState> = Object.freeze({ term: 0, vote: '', commit: 0 });

export function emptyLogState(): LogState {
  return { snapIndex: 0, snapTerm: 0, lastIndex: 0, lastTerm: 0, hardState: { ...EMPTY_HARD_STATE } };
}

/** What one write does. Deletes refer to the state before the write; puts are applied after the deletes. */
export interface Plan<E extends { index: number; term: number }> {
  next: LogState;
  /** Inclusive ranges of stored entry indexes to delete. */
  deletes: Array<[number, number]>;
  /** Entries to store, contiguous, ascending; each replaces a stored entry at the same index. */
  puts: E[];
  snapshot?: Snapshot;
  hardState?: HardState;
}

/** Term of a stored entry strictly between the state's snapIndex and lastIndex. */
export type TermLookup = (index: number) => number;

// ---------------------------------------------------------------------------------------------------------
// Argument checks (before anything is planned or written)

function usage(msg: string): StorageUsageError {
  return new StorageUsageError(`refusing to persist: ${msg}`);
}

function isU64(n: unknown): n is number {
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
}

/** Shape of each entry, contiguity and non-decreasing terms within the batch. */
export function checkEntries(entries: readonly Entry[]): void {
  if (!Array.isArray(entries)) throw usage('batch.entries must be an array');
  let prev: Entry | undefined;
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]; // undefined for a hole in a sparse array: refused below
    if (!e || !isU64(e.index) || e.index < 1 || !isU64(e.term) || e.term < 1) {
      throw usage(`entries[${i}] needs a safe integer index >= 1 and term >= 1 (got index ${e?.index}, term ${e?.term})`);
    }
    if (e.type !== EntryType.Normal && e.type !== EntryType.ConfChange) {
      throw usage(`entries[${i}] (index ${e.index}) has an unknown type ${String(e.type)}`);
    }
    if (!(e.data instanceof Uint8Array)) throw usage(`entries[${i}] (index ${e.index}) data is not a Uint8Array`);
    if (prev) {
      if (e.index !== prev.index + 1) throw usage(`entries are not contiguous: ${prev.index} then ${e.index}`);
      if (e.term < prev.term) throw usage(`entry terms decrease: ${prev.term} at ${prev.index}, ${e.term} at ${e.index}`);
    }
    prev = e;
  }
}

export function checkSnapshot(s: Snapshot, what: string): void {
  if (!s || !s.meta) throw usage(`${what} has no meta`);
  const { index, term, config } = s.meta;
  if (!isU64(index) || index < 1 || !isU64(term) || term < 1) {
    throw usage(`${what} needs a safe integer index >= 1 and term >= 1 (got index ${index}, term ${term})`);
  }
  if (!config || !Array.isArray(config.voters) || config.voters.some((v) => typeof v !== 'string')) {
    throw usage(`${what}.meta.config.voters must be an array of node ids`);
  }
  if (!(s.data instanceof Uint8Array)) throw usage(`${what}.data is not a Uint8Array`);
}

export function checkHardState(hs: HardState): void {
  if (!hs || !isU64(hs.term) || !isU64(hs.commit) || typeof hs.vote !== 'string') {
    throw usage(`hard state needs safe integer term/commit and a string vote (got ${JSON.stringify(hs)})`);
  }
}

function checkHardStateTransition(prev: HardState, next: HardState): void {
  if (next.term < prev.term) throw usage(`hard state term would go back from ${prev.term} to ${next.term}`);
  if (next.term === prev.term && prev.vote !== '' && next.vote !== prev.vote) {
    throw usage(`vote would change within term ${prev.term} from '${prev.vote}' to '${next.vote}'`);
  }
  if (next.commit < prev.commit) throw usage(`commit would go back from ${prev.commit} to ${next.commit}`);
}

// ---------------------------------------------------------------------------------------------------------
// Plans

/**
 * Plans one persist. `entries` and `snapshot`/`hardState` must have passed checkEntries/checkSnapshot/
 * checkHardState. `termAt` is asked only for indexes strictly between cur.snapIndex and cur.lastIndex.
 */
export function planPersist<E extends { index: number; term: number }>(
  cur: LogState,
  batch: { entries: readonly E[]; snapshot?: Snapshot; hardState?: HardState },
  termAt: TermLookup,
): Plan<E> {
  let { snapIndex, snapTerm, lastIndex, lastTerm } = cur;
  const deletes: Array<[number, number]> = [];
  const termOf = (i: number): number =>
    i === snapIndex ? snapTerm : i === lastIndex ? lastTerm : termAt(i);

  const snap = batch.snapshot;
  if (snap) {
    const { index: s, term: t } = snap.meta;
    if (s < snapIndex) throw usage(`snapshot at index ${s} is older than the stored snapshot at index ${snapIndex}`);
    if (s === snapIndex && t !== snapTerm) {
      throw usage(`snapshot at index ${s} has term ${t} but the stored snapshot at that index has term ${snapTerm}`);
    }
    if (lastIndex > snapIndex) deletes.push([snapIndex + 1, lastIndex]);
    snapIndex = s;
    snapTerm = t;
    lastIndex = s;
    lastTerm = t;
  }

  let first = 0;
  const entries = batch.entries;
  for (const e of entries) {
    if (e.index > snapIndex) break;
    if (e.index === snapIndex && e.term !== snapTerm) {
      throw usage(`entry ${e.index} has term ${e.term} but the snapshot at that index has term ${snapTerm}`);
    }
    first++;
  }
  const puts = first === 0 ? entries.slice() : entries.slice(first);
  const head = puts[0];
  const last = puts.at(-1);
  if (head !== undefined && last !== undefined) {
    const f = head.index;
    if (f > lastIndex + 1) throw usage(`entries start at index ${f} but the log ends at ${lastIndex} (a gap)`);
    const prevTerm = termOf(f - 1);
    if (head.term < prevTerm) {
      throw usage(`entry ${f} has term ${head.term}, below the term ${prevTerm} of the entry before it`);
    }
    // Never rewrite a committed entry with another term. By the Log Matching property, checking the highest
    // overlapping committed index covers every committed index below it.
    const k = Math.min(cur.hardState.commit, lastIndex, last.index);
    if (k >= f) {
      const replacing = puts[k - f];
      if (replacing === undefined) throw usage(`entries are not contiguous from ${f} to ${last.index} (check them with checkEntries)`);
      if (termOf(k) !== replacing.term) {
        throw usage(`entry ${k} is committed (commit ${cur.hardState.commit}) with term ${termOf(k)}; the batch would replace it with term ${replacing.term}`);
      }
    }
    if (last.index < lastIndex) deletes.push([last.index + 1, lastIndex]);
    lastIndex = last.index;
    lastTerm = last.term;
  }

  let hardState = cur.hardState;
  if (batch.hardState) {
    checkHardStateTransition(cur.hardState, batch.hardState);
    hardState = { term: batch.hardState.term, vote: batch.hardState.vote, commit: batch.hardState.commit };
  }
  if (hardState.commit > lastIndex) throw usage(`commit ${hardState.commit} would be beyond the last index ${lastIndex}`);
  if (hardState.term < lastTerm) {
    throw usage(`hard state term ${hardState.term} would be below the last log term ${lastTerm} (persist the term with the entries)`);
  }

  return {
    next: { snapIndex, snapTerm, lastIndex, lastTerm, hardState },
    deletes,
    puts,
    snapshot: snap,
    hardState: batch.hardState ? hardState : undefined,
  };
}

/** Plans a local compaction. `termAt` is asked only for indexes strictly between cur.snapIndex and cur.lastIndex. */
export function planSaveSnapshot(cur: LogState, snapshot: Snapshot, termAt: TermLookup): Plan<never> {
  const { index: s, term: t } = snapshot.meta;
  if (s < cur.snapIndex) {
    throw usage(`snapshot at index ${s} is older than the stored snapshot at index ${cur.snapIndex}`);
  }
  if (s > cur.lastIndex) throw usage(`cannot compact up to index ${s}: the log ends at ${cur.lastIndex}`);
  const stored = s === cur.snapIndex ? cur.snapTerm : s === cur.lastIndex ? cur.lastTerm : termAt(s);
  if (stored !== t) throw usage(`snapshot at index ${s} has term ${t} but the log has term ${stored} there`);
  const deletes: Array<[number, number]> = s > cur.snapIndex ? [[cur.snapIndex + 1, s]] : [];
  return {
    next: { ...cur, snapIndex: s, snapTerm: t },
    deletes,
    puts: [],
    snapshot,
  };
}

/** Indexes whose stored term planPersist may ask for (so that an async store can fetch them first). */
export function termsNeededForPersist(
  cur: LogState,
  batch: { entries: readonly { index: number }[]; snapshot?: Snapshot },
): number[] {
  const out: number[] = [];
  const inside = (i: number): boolean => i > cur.snapIndex && i < cur.lastIndex;
  if (batch.snapshot) return out; // the snapshot replaces the whole log: no stored term matters
  const firstKept = batch.entries.find((e) => e.index > cur.snapIndex);
  const lastEntry = batch.entries.at(-1); // defined when firstKept is
  if (firstKept && lastEntry) {
    if (inside(firstKept.index - 1)) out.push(firstKept.index - 1);
    const k = Math.min(cur.hardState.commit, cur.lastIndex, lastEntry.index);
    if (k >= firstKept.index && inside(k)) out.push(k);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// Verification of what is read back

/**
 * Checks a loaded state and returns its summary. Throws StorageCorruptError naming `where` and the problem.
 */
export function verifyPersistedState(state: PersistedState, where: string): LogState {
  const corrupt = (msg: string): StorageCorruptError => new StorageCorruptError(`${where}: ${msg}`);
  const hs = state.hardState;
  if (!isU64(hs.term) || !isU64(hs.commit) || typeof hs.vote !== 'string') throw corrupt('invalid hard state');
  let snapIndex = 0;
  let snapTerm = 0;
  if (state.snapshot) {
    snapIndex = state.snapshot.meta.index;
    snapTerm = state.snapshot.meta.term;
    if (!isU64(snapIndex) || snapIndex < 1 || !isU64(snapTerm) || snapTerm < 1) {
      throw corrupt(`snapshot has an invalid index ${snapIndex} / term ${snapTerm}`);
    }
  }
  let lastIndex = snapIndex;
  let lastTerm = snapTerm;
  let first = true;
  for (const e of state.entries) {
    if (e.index !== lastIndex + 1) {
      throw corrupt(
        first
          ? `the first entry is ${e.index}, expected ${snapIndex + 1} (${state.snapshot ? `after the snapshot at ${snapIndex}` : 'no snapshot'})`
          : `entries are not contiguous: ${lastIndex} is followed by ${e.index}`,
      );
    }
    first = false;
    if (!isU64(e.term) || e.term < 1) throw corrupt(`entry ${e.index} has an invalid term ${e.term}`);
    if (e.term < lastTerm) {
      throw corrupt(`entry terms decrease: term ${e.term} at ${e.index} after term ${lastTerm} at ${lastIndex}`);
    }
    lastIndex = e.index;
    lastTerm = e.term;
  }
  if (hs.commit > lastIndex) throw corrupt(`hard state commit ${hs.commit} is beyond the last index ${lastIndex}`);
  if (hs.term < lastTerm) throw corrupt(`hard state term ${hs.term} is below the last log term ${lastTerm}`);
  return { snapIndex, snapTerm, lastIndex, lastTerm, hardState: { term: hs.term, vote: hs.vote, commit: hs.commit } };
}

/** Deep copies (entries and snapshots cross the storage boundary by value). */
export function copyEntry(e: Entry): Entry {
  return { term: e.term, index: e.index, type: e.type, data: e.data.slice() };
}

export function copySnapshot(s: Snapshot): Snapshot {
  return {
    meta: { index: s.meta.index, term: s.meta.term, config: storedConfig(s.meta.config) },
    data: s.data.slice(),
  };
}

export function copyBatch(batch: PersistBatch): PersistBatch {
  return {
    hardState: batch.hardState ? { ...batch.hardState } : undefined,
    entries: batch.entries.map(copyEntry),
    snapshot: batch.snapshot ? copySnapshot(batch.snapshot) : undefined,
  };
}

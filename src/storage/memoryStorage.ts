/**
 * In-memory twin of LevelStorage for tests and the simulator. Same semantics (./logic.ts), plus a model of
 * a disk with a volatile cache:
 *
 * - write(batch) applies an atomic batch to the volatile view only (what a process reading its own store
 *   sees), like a LevelDB write without sync;
 * - sync() makes everything written so far durable (like fsync of LevelDB's write-ahead log, which also
 *   covers earlier un-synced writes);
 * - crash(keep = 0) drops the un-synced batches, except the first `keep` of them (batches are atomic and land
 *   in order, so a crash may keep any prefix of them); the volatile view becomes the durable state.
 * - persist() = write + sync; saveSnapshot()/saveSnapshotSync() are durable at once (and, like a synced
 *   LevelDB write, also make earlier un-synced writes durable).
 * - load()/loadSync() read the volatile view (after crash() that is the durable state) and verify it.
 *
 * Entries and snapshots are deep-copied on the way in and out: a caller mutating its arrays or bytes cannot
 * change what is stored. Stored objects are never mutated, so the durable and volatile views share them.
 * close() is a no-op: the "disk" outlives the node instance that used it (restart = crash() + loadSync()).
 */
import type { Entry, HardState, PersistedState, Snapshot } from '../raft/types';
import {
  checkEntries,
  checkHardState,
  checkSnapshot,
  copyBatch,
  copyEntry,
  copySnapshot,
  emptyLogState,
  planPersist,
  planSaveSnapshot,
  verifyPersistedState,
  type LogState,
  type Plan,
} from './logic';
import type { PersistBatch, RaftStorage } from './types';

interface DiskState {
  log: LogState;
  snapshot?: Snapshot;
  /** Entries log.snapIndex+1 .. log.lastIndex. */
  entries: Entry[];
}

function emptyDisk(): DiskState {
  return { log: emptyLogState(), entries: [] };
}

function cloneDisk(d: DiskState): DiskState {
  return { log: { ...d.log, hardState: { ...d.log.hardState } }, snapshot: d.snapshot, entries: d.entries.slice() };
}

function termLookup(d: DiskState): (index: number) => number {
  return (index) => {
    const e = d.entries[index - d.log.snapIndex - 1];
    if (e === undefined) throw new Error(`MemoryStorage: no entry at index ${index} (log ${d.log.snapIndex + 1}..${d.log.lastIndex})`);
    return e.term;
  };
}

function apply(d: DiskState, plan: Plan<Entry>): void {
  if (plan.snapshot) d.snapshot = plan.snapshot;
  for (const [from, to] of plan.deletes) {
    d.entries = d.entries.filter((e) => e.index < from || e.index > to);
  }
  const [first] = plan.puts;
  if (first !== undefined) {
    d.entries.length = first.index - plan.next.snapIndex - 1;
    for (const e of plan.puts) d.entries.push(e);
  }
  d.log = plan.next;
}

/** A read-only view of a stored log: an optional snapshot (index, term), then contiguous entries. */
export interface LogView {
  readonly hardState: HardState;
  readonly snapshotIndex: number;
  readonly snapshotTerm: number;
  readonly lastIndex: number;
  /** Term at i for snapshotIndex <= i <= lastIndex (0 at index 0), undefined elsewhere. */
  term(i: number): number | undefined;
  /** The stored entry at i for snapshotIndex < i <= lastIndex. */
  entry(i: number): Entry | undefined;
}

/** Reads whichever state `current` returns at the time of the read (crash() replaces the objects). */
class DiskView implements LogView {
  constructor(private readonly current: () => DiskState) {}

  get hardState(): HardState {
    return this.current().log.hardState;
  }

  get snapshotIndex(): number {
    return this.current().log.snapIndex;
  }

  get snapshotTerm(): number {
    return this.current().log.snapTerm;
  }

  get lastIndex(): number {
    return this.current().log.lastIndex;
  }

  term(i: number): number | undefined {
    const { log } = this.current();
    if (i === log.snapIndex) return log.snapTerm;
    return this.entry(i)?.term;
  }

  entry(i: number): Entry | undefined {
    const d = this.current();
    if (i <= d.log.snapIndex || i > d.log.lastIndex) return undefined;
    return d.entries[i - d.log.snapIndex - 1];
  }
}

export class MemoryStorage implements RaftStorage {
  private durable: DiskState = emptyDisk();
  private volatile: DiskState = emptyDisk();
  /** Plans written but not yet synced, in order (replayed onto `durable` by sync()). */
  private pending: Plan<Entry>[] = [];
  /** Counters for tests and the simulator. */
  readonly stats = { writes: 0, syncs: 0, crashes: 0 };

  /** Applies one atomic batch to the volatile view (not durable until sync()). */
  write(batch: PersistBatch): void {
    checkEntries(batch.entries);
    if (batch.snapshot) checkSnapshot(batch.snapshot, 'batch.snapshot');
    if (batch.hardState) checkHardState(batch.hardState);
    const copy = copyBatch(batch);
    const plan = planPersist(this.volatile.log, copy, termLookup(this.volatile));
    this.commitPlan(plan);
  }

  /** Everything written so far becomes durable. */
  sync(): void {
    for (const plan of this.pending) apply(this.durable, plan);
    this.pending = [];
    this.stats.syncs++;
  }

  /** Loses the un-synced writes except the first `keep` of them. */
  crash(keep = 0): void {
    const survivors = this.pending.slice(0, Math.max(0, Math.min(keep, this.pending.length)));
    for (const plan of survivors) apply(this.durable, plan);
    this.pending = [];
    this.volatile = cloneDisk(this.durable);
    this.stats.crashes++;
  }

  /** What the process sees now ('written'), or what a crash would leave ('durable'); live, not a copy. */
  view(which: 'written' | 'durable'): LogView {
    return new DiskView(() => (which === 'written' ? this.volatile : this.durable));
  }

  /** Number of written but not yet synced batches. */
  get unsyncedBatches(): number {
    return this.pending.length;
  }

  loadSync(): PersistedState {
    const d = this.volatile;
    const state: PersistedState = {
      hardState: { ...d.log.hardState },
      snapshot: d.snapshot ? copySnapshot(d.snapshot) : undefined,
      entries: d.entries.map(copyEntry),
    };
    verifyPersistedState(state, 'MemoryStorage');
    return state;
  }

  /** Local compaction, durable at once. */
  saveSnapshotSync(snapshot: Snapshot): void {
    checkSnapshot(snapshot, 'snapshot');
    const plan = planSaveSnapshot(this.volatile.log, copySnapshot(snapshot), termLookup(this.volatile));
    this.commitPlan(plan);
    this.sync();
  }

  async load(): Promise<PersistedState> {
    return this.loadSync();
  }

  async persist(batch: PersistBatch): Promise<void> {
    this.write(batch);
    this.sync();
  }

  async saveSnapshot(snapshot: Snapshot): Promise<void> {
    this.saveSnapshotSync(snapshot);
  }

  async close(): Promise<void> {}

  private commitPlan(plan: Plan<Entry>): void {
    apply(this.volatile, plan);
    this.pending.push(plan);
    this.stats.writes++;
  }
}

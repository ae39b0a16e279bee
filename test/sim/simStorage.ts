/**
 * The simulator's durable store: one per node, with the crash semantics that matter. A write is issued at
 * once (and visible to `latest`), becomes durable only at `sync()`, and `crash()` drops every write that
 * was not synced. `loadSync()` reads back only what is durable.
 *
 * It follows the stored-log rules of src/storage/logic.ts (the Raft paper's InstallSnapshot rule: a
 * snapshot keeps the stored suffix only when the log holds the snapshot's last entry with its term), but is
 * written independently and keeps whole images in memory so the invariant checker can read any index.
 */
import type { Entry, HardState, PersistedState, Snapshot } from '../../src/raft/types';
import type { PersistBatch } from '../../src/storage/types';

/** Read-only view of a stored log: optional snapshot (index, term) then contiguous entries. */
export interface LogView {
  readonly hardState: HardState;
  readonly snapshotIndex: number;
  readonly snapshotTerm: number;
  readonly lastIndex: number;
  /** Term at i for snapshotIndex <= i <= lastIndex (0 at index 0), undefined elsewhere. */
  term(i: number): number | undefined;
  /** Stored entry at i for snapshotIndex < i <= lastIndex. */
  entry(i: number): Entry | undefined;
}

/** A batch the store refuses: the core asked for something no valid log can become. */
export class StorageRefusal extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StorageRefusal';
  }
}

export class LogImage implements LogView {
  hardState: HardState;
  snapshot: Snapshot | undefined;
  entries: Entry[];

  constructor(hardState: HardState = { term: 0, vote: '', commit: 0 }, snapshot?: Snapshot, entries: Entry[] = []) {
    this.hardState = hardState;
    this.snapshot = snapshot;
    this.entries = entries;
  }

  clone(): LogImage {
    return new LogImage({ ...this.hardState }, this.snapshot, this.entries.slice());
  }

  get snapshotIndex(): number {
    return this.snapshot?.meta.index ?? 0;
  }

  get snapshotTerm(): number {
    return this.snapshot?.meta.term ?? 0;
  }

  get lastIndex(): number {
    return this.snapshotIndex + this.entries.length;
  }

  term(i: number): number | undefined {
    const s = this.snapshotIndex;
    if (i === s) return this.snapshotTerm;
    if (i < s || i > this.lastIndex) return undefined;
    return this.entries[i - s - 1]!.term;
  }

  entry(i: number): Entry | undefined {
    const s = this.snapshotIndex;
    if (i <= s || i > this.lastIndex) return undefined;
    return this.entries[i - s - 1];
  }

  /** Applies one persist batch (snapshot, then entries, then hard state), or throws StorageRefusal. */
  apply(batch: PersistBatch): void {
    if (batch.snapshot) this.installSnapshot(batch.snapshot, true);
    const ents = batch.entries;
    if (ents.length > 0) {
      for (let k = 1; k < ents.length; k++) {
        if (ents[k]!.index !== ents[k - 1]!.index + 1) {
          throw new StorageRefusal(`entries not contiguous: ${ents[k - 1]!.index} then ${ents[k]!.index}`);
        }
      }
      const s = this.snapshotIndex;
      let from = 0;
      while (from < ents.length && ents[from]!.index <= s) {
        const e = ents[from]!;
        if (e.index === s && e.term !== this.snapshotTerm) {
          throw new StorageRefusal(`entry ${e.index} term ${e.term} conflicts with the snapshot term ${this.snapshotTerm}`);
        }
        from++;
      }
      if (from < ents.length) {
        const first = ents[from]!.index;
        if (first > this.lastIndex + 1) {
          throw new StorageRefusal(`gap: appending at ${first} after last index ${this.lastIndex}`);
        }
        this.entries.length = first - s - 1;
        for (let k = from; k < ents.length; k++) this.entries.push(ents[k]!);
      }
    }
    if (batch.hardState) {
      const prev = this.hardState;
      const hs = batch.hardState;
      if (hs.term < prev.term) throw new StorageRefusal(`hard state term goes back ${prev.term} -> ${hs.term}`);
      if (hs.term === prev.term && prev.vote !== '' && hs.vote !== prev.vote) {
        throw new StorageRefusal(`vote changes within term ${hs.term}: ${prev.vote} -> ${hs.vote}`);
      }
      if (hs.commit < prev.commit) throw new StorageRefusal(`commit goes back ${prev.commit} -> ${hs.commit}`);
      this.hardState = { ...hs };
    }
  }

  /**
   * fromLeader: the Raft paper's rule (keep the suffix only if the log holds the snapshot's last entry with
   * its term). Local compaction (fromLeader false) requires that entry and always keeps the suffix.
   */
  installSnapshot(snap: Snapshot, fromLeader: boolean): void {
    const { index: si, term: st } = snap.meta;
    const cur = this.snapshotIndex;
    if (si < cur) throw new StorageRefusal(`snapshot ${si} is older than the stored snapshot ${cur}`);
    const stored = this.term(si);
    if (si === cur && stored !== st) throw new StorageRefusal(`snapshot ${si} term ${st} != stored snapshot term ${stored}`);
    if (!fromLeader && stored !== st) {
      throw new StorageRefusal(`compaction at ${si} term ${st} but the log holds term ${String(stored)} there`);
    }
    const keep = stored === st ? this.entries.slice(si - cur) : [];
    this.snapshot = snap;
    this.entries = keep;
  }

  toPersisted(): PersistedState {
    const p: PersistedState = { hardState: { ...this.hardState }, entries: this.entries.slice() };
    if (this.snapshot) p.snapshot = this.snapshot;
    return p;
  }
}

/** One node's disk. */
export class SimStorage {
  private durableImage = new LogImage();
  private latestImage = new LogImage();
  private unsynced = 0;

  /** Everything written, synced or not: what the node's core believes its log is. */
  get latest(): LogView {
    return this.latestImage;
  }

  /** What survives a crash. */
  get durable(): LogView {
    return this.durableImage;
  }

  get unsyncedWrites(): number {
    return this.unsynced;
  }

  /** Issues a write; it is volatile until sync(). Throws StorageRefusal for an impossible batch. */
  write(batch: PersistBatch): void {
    this.latestImage.apply(batch);
    this.unsynced++;
  }

  /** Makes every written batch durable. */
  sync(): void {
    if (this.unsynced === 0) return;
    this.durableImage = this.latestImage.clone();
    this.unsynced = 0;
  }

  /**
   * Power loss: unsynced writes are gone, except that `keep` > 0 lets the unsynced writes land (the disk
   * wrote them but the process died before learning so). Batches are atomic and land in order; the
   * simulator never has more than one outstanding, so keep is all or nothing here.
   */
  crash(keep = 0): void {
    if (keep > 0) this.sync();
    this.latestImage = this.durableImage.clone();
    this.unsynced = 0;
  }

  loadSync(): PersistedState {
    return this.durableImage.toPersisted();
  }

  /** Local compaction, durable at once (the node calls it only with no write outstanding). */
  saveSnapshotSync(snapshot: Snapshot): void {
    if (this.unsynced > 0) throw new StorageRefusal('compaction with unsynced writes outstanding');
    this.durableImage.installSnapshot(snapshot, false);
    this.latestImage = this.durableImage.clone();
  }
}

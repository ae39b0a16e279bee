import type { Entry, HardState, PersistedState, Snapshot } from '../raft/types';

/** What one Ready asks to make durable. Written as one atomic, synced batch. */
export interface PersistBatch {
  hardState?: HardState;
  /** Appended entries; stored entries at or above entries[0].index are deleted in the same batch. */
  entries: Entry[];
  /** A snapshot received from the leader: replaces the stored snapshot and every entry it covers. */
  snapshot?: Snapshot;
}

/** Durable Raft state of one node: hard state, log entries after the snapshot, the latest snapshot. */
export interface RaftStorage {
  /** Reads everything back. Throws StorageCorruptError when the data cannot be trusted. */
  load(): Promise<PersistedState>;
  /** One atomic batch, fsynced before the promise resolves. */
  persist(batch: PersistBatch): Promise<void>;
  /** Local compaction: stores the application's snapshot and deletes the entries it covers. */
  saveSnapshot(snapshot: Snapshot): Promise<void>;
  close(): Promise<void>;
}

export class StorageCorruptError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StorageCorruptError';
  }
}

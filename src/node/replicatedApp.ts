/** The state machine a RaftDriver replicates. Deterministic: the same entries give the same state. */
export interface ReplicatedApp<Result> {
  /** Applies one committed entry (never a leader no-op) and returns its result. Must not throw. */
  apply(index: number, data: Uint8Array): Result;
  /**
   * Captures the whole state as of the last applied entry, cheaply: the driver encodes it a slice at a
   * time between turns of its Ready loop while entries go on being applied (one capture at a time).
   */
  captureSnapshot(): SnapshotJob;
  /** Replaces the whole state by a snapshot's (from local storage at start, or sent by the leader). */
  restore(data: Uint8Array): void;
  /**
   * Decodes and checks a snapshot sent by the leader, fully, before anything of it is stored; throws if it
   * is not a valid state. Must not change the state; may keep the decoded state for the restore(data)
   * that follows with the same bytes.
   */
  validateSnapshot(data: Uint8Array): void;
}

/** A captured state being encoded. */
export interface SnapshotJob {
  /** Encodes the next slice, a bounded amount of work; true once the bytes are complete. */
  step(): boolean;
  /** The snapshot, once step() returned true. */
  bytes(): Uint8Array;
  /** Gives the encoding up (the app stops keeping the captured state). */
  cancel(): void;
}

/** A job for a state small enough to encode at once. */
export function encodedSnapshot(data: Uint8Array): SnapshotJob {
  return { step: () => true, bytes: () => data, cancel: () => undefined };
}

/** The state machine a RaftDriver replicates. Deterministic: the same entries give the same state. */
export interface ReplicatedApp<Result> {
  /** Applies one committed entry (never a leader no-op) and returns its result. Must not throw. */
  apply(index: number, data: Uint8Array): Result;
  /** Serializes the whole state as of the last applied entry. */
  snapshot(): Uint8Array;
  /** Replaces the whole state by a snapshot's (from local storage at start, or sent by the leader). */
  restore(data: Uint8Array): void;
}

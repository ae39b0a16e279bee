/** The state machine a RaftDriver replicates. Deterministic: the same entries give the same state. */
export interface ReplicatedApp<Result> {
  /** Applies one committed entry (never a leader no-op) and returns its result. Must not throw. */
  apply(index: number, data: Uint8Array): Result;
  /** Serializes the whole state as of the last applied entry. */
  snapshot(): Uint8Array;
  /** Replaces the whole state by a snapshot's (from local storage at start, or sent by the leader). */
  restore(data: Uint8Array): void;
  /**
   * Decodes and checks a snapshot sent by the leader, fully, before anything of it is stored; throws if it
   * is not a valid state. Must not change the state; may keep the decoded state for the restore(data)
   * that follows with the same bytes.
   */
  validateSnapshot(data: Uint8Array): void;
}

// Errors of the Raft core.
//
// ProposalDroppedError is an expected, recoverable refusal (the caller retries elsewhere or later).
// RaftInvariantError means the core reached a state the protocol forbids: a bug, or corrupted
// input that breaks Raft's guarantees. It is never caught inside the core.

export type DropReason =
  | 'not-leader'
  | 'transferring'
  | 'too-many-uncommitted'
  /** The next index would reach RAFT_NUMBER_LIMIT (see types.ts). */
  | 'log-full'
  /** Too many ReadIndex requests wait for leadership confirmation (RaftConfig.maxPendingReads). */
  | 'too-many-pending-reads';

export class ProposalDroppedError extends Error {
  constructor(readonly reason: DropReason) {
    super(`proposal dropped: ${reason}`);
    this.name = 'ProposalDroppedError';
  }
}

export class RaftInvariantError extends Error {
  constructor(message: string) {
    super(`raft invariant violated: ${message}`);
    this.name = 'RaftInvariantError';
  }
}

/** Throws RaftInvariantError unless `cond` holds. */
export function invariant(cond: boolean, message: string | (() => string)): asserts cond {
  if (!cond) throw new RaftInvariantError(typeof message === 'string' ? message : message());
}

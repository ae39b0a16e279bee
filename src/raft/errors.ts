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
  | 'too-many-pending-reads'
  /** A membership change is in the log and not yet committed: one change at a time. */
  | 'conf-change-pending'
  /** A new leader has not yet committed an entry of its term: no membership change before that. */
  | 'conf-change-not-ready';

export class ProposalDroppedError extends Error {
  constructor(readonly reason: DropReason) {
    super(`proposal dropped: ${reason}`);
    this.name = 'ProposalDroppedError';
  }
}

/**
 * A membership change that cannot be made (it says why). Retrying will not help, except for
 * 'learner-behind': a learner not yet promotable may become so once it runs and catches up.
 */
export class ConfChangeRefusedError extends Error {
  constructor(
    readonly why: string,
    readonly kind: 'rule' | 'learner-behind' = 'rule',
  ) {
    super(`membership change refused: ${why}`);
    this.name = 'ConfChangeRefusedError';
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

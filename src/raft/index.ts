// Public API of the Raft core.

export { RawNode, type BasicStatus, type RaftStatus, type ProgressStatus } from './rawNode';
export { RAFT_DEFAULTS, type RaftConfig } from './config';
export { ProposalDroppedError, RaftInvariantError, type DropReason } from './errors';
export { TRANSFER_CONTEXT, isTransferContext, makeMessage } from './messages';
export type { ProgressState } from './progress';
export * from './types';

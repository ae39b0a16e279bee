// Public API of the Raft core.

export { RawNode, type BasicStatus, type RaftStatus, type ProgressStatus } from './rawNode';
export { RAFT_DEFAULTS, type RaftConfig } from './config';
export { ConfChangeRefusedError, ProposalDroppedError, RaftInvariantError, type DropReason } from './errors';
export { applyConfChange, decodeConfigEntry, encodeConfigEntry, fullConfig, isMember, CONFIG_LIMITS, type ConfChange, type ConfChangeType, type FullConfig } from './confChange';
export { TRANSFER_CONTEXT, flattenMessage, isTransferContext, makeMessage, narrowMessage, type WireFields } from './messages';
export type { ProgressState, ProgressStateKind } from './progress';
export * from './types';

// fencelock's replicated state machine (docs/architecture.md#promises and #decisions): sessions, locks with FIFO waiters,
// the fenced key-value store and the request-dedup table. Pure and deterministic: apply(index, command).
//
// Caveats for the node:
// - A Result is what the proposer gets; stored results are frozen and shared: do not mutate them.
// - A duplicate `waiting` (a retried Acquire) is the stored answer of the first application; the lock may
//   have been granted since — ask sessionLockState(lock, sessionId) before blocking on events.
// - CancelWait may answer `granted` (newGrant false): the wait ended in a grant before the cancel applied.
//   The caller holds the lock; report it (or release it), not DEADLINE_EXCEEDED.
// - Dedup memory is bounded, in per-identity shares (dedup.ts): an identity's client forgotten by that
//   identity's own churn (beyond its dedup_clients quota or DEDUP_MAX_RESULTS_PER_IDENTITY) whose very late
//   retry of its first request arrives afterwards gets it applied again; no other identity's traffic can
//   cause that. Clients that send ackedBelow keep their tables small and are never near the bounds.
// - describeLock()/getSession() expose session ids (bearer secrets); never pass them to other clients.
// - Auth (docs/auth.md): stamp `caller` (and `callerToken`) on every client's request; '' is trusted as the
//   node's own. `machine.auth` answers the checks a node makes before proposing and for reads.
export * from './commands';
export * from './results';
export * from './resultStatuses';
export * from './limits';
export { InvariantError } from './invariant';
export type { KvEntry, KvListOptions } from './fencedKv';
export {
  LockStateMachine,
  type LockInfo,
  type LockListing,
  type LockDelayInfo,
  type LockListOptions,
  type SessionInfo,
  type SessionLockState,
  type StateStats,
} from './lockStateMachine';
export type { PermitSlotInfo, SemaphoreInfo, SessionPermitState } from './semaphoreInfo';
export { AuthView, type AuthList, type IdentityUsage } from './auth/view';
export type { Rule } from './auth/authTable';
export { ROOT_ROLE } from './auth/authChange';
export { PERMISSIONS, QUOTA_NAMES, isCaller, isRoleName, isTokenHash, isTokenId, isUserName, type Permission, type QuotaName } from './auth/names';
export { SNAPSHOT_FORMAT, SNAPSHOT_FORMATS_READ } from './snapshot';
export { decodeResult, encodeResult } from './resultCodec';
export { SnapshotError } from './snapshotWire';
export { compareStrings, utf8ByteLength, isWellFormed, isSessionId } from './text';
export { decoderOfMember, entryOf, type BodyReader, type EntryOf, type MemberDecoder, type WireBody } from './registry/index';

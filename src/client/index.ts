/** The fencelock client library. */
export { FenceLockClient, DEFAULT_REQUEST_TIMEOUT_MS, DEFAULT_TOTAL_TIMEOUT_MS, DEFAULT_CLOSE_TIMEOUT_MS } from './client';
export { Election, type ElectionOptions, type CampaignOptions } from './election';
export { Leadership } from './leadership';
export type { Leader } from './electionState';
export { DEFAULT_RESYNC_MS, type ObserveOptions } from './electionObserver';
export { Session, LockHandle, DEFAULT_TTL_MS, DEFAULT_WAIT_TIMEOUT_MS, safetyMarginMs, CLOCK_RATE_BOUND, type AcquireOptions, type TryAcquireOptions } from './session';
export {
  FenceLockError,
  isFenceLockError,
  META_LEADER,
  META_REASON,
  META_WATERMARK,
  META_KEY,
  META_KEY_LOCK,
  META_QUOTA,
  type FenceLockErrorCode,
  type EndpointError,
} from './errors';
export { type Logger, silentLogger } from './logger';
export {
  AuthClient,
  authTokenProblem,
  checkAuthToken,
  isAuthTokenId,
  AUTH_PERMISSIONS,
  AUTH_QUOTA_NAMES,
  AUTH_TOKEN_PREFIX,
  META_AUTHORIZATION,
} from './auth';
export { endpointProblem } from './router';
export type { SnapshotInfo, SnapshotSink } from './snapshot';
export { parseDecimalUint64, UINT64_MAX } from './uint64';
export { findProtoRoot, lockProtoPath } from './protoPath';
export { publicSessionId } from './publicId';
export { MembersClient, type MemberChange, type MemberListing, type MemberRecord } from './members';
export { lockFencing, type LockFencing } from './fencingToken';
export { PermitHandle, slotResource, type AcquirePermitOptions, type PermitFencing, type SemaphoreDescription } from './permit';
export {
  buildCredentials,
  chooseCredentials,
  resolveCredentials,
  parseInsecureEnv,
  ENV_CACERT,
  ENV_CERT,
  ENV_KEY,
  ENV_INSECURE,
  LOCAL_CERTS_DIR,
  type ClientTlsOptions,
  type CredentialChoice,
  type CredentialOptions,
  type CredentialSource,
  type MaterialNames,
  type ResolvedCredentials,
} from './credentials';
export type * from './types';
export * as protocol from '../protocol';
export { type FenceLockReason, isFenceLockReason } from './errors';

import * as grpc from '@grpc/grpc-js';
import { META_DELAYED_UNTIL, META_KEY, META_KEY_LOCK, META_LEADER, META_QUOTA, META_REASON, META_WATERMARK } from '../protocol/metadata';
import type { FenceLockReason } from '../protocol/reasons';
import { parseDecimalUint64 } from './uint64';

// The metadata keys and reasons are shared with the server (src/protocol): re-exported as the client's API.
export { META_LEADER, META_REASON, META_WATERMARK, META_KEY, META_KEY_LOCK, META_QUOTA } from '../protocol/metadata';
export { isFenceLockReason, type FenceLockReason } from '../protocol/reasons';

/** gRPC status names; FenceLockError.code is one of them. */
export type FenceLockErrorCode =
  | 'CANCELLED'
  | 'UNKNOWN'
  | 'INVALID_ARGUMENT'
  | 'DEADLINE_EXCEEDED'
  | 'NOT_FOUND'
  | 'ALREADY_EXISTS'
  | 'PERMISSION_DENIED'
  | 'RESOURCE_EXHAUSTED'
  | 'FAILED_PRECONDITION'
  | 'ABORTED'
  | 'OUT_OF_RANGE'
  | 'UNIMPLEMENTED'
  | 'INTERNAL'
  | 'UNAVAILABLE'
  | 'DATA_LOSS'
  | 'UNAUTHENTICATED';

/** One endpoint's part in a call that gave up: the last error it gave during that call. */
export interface EndpointError {
  endpoint: string;
  error: FenceLockError;
}

export interface FenceLockErrorInit {
  /**
   * Machine-readable cause from the `fencelock-reason` metadata (WRONG_LOCK, STALE_TOKEN, UNKNOWN_SESSION,
   * NOT_HOLDER, LOCK_NOT_HELD, ...; for writes see the README's "The fencing rules"). A newer server may send
   * a reason this version does not list: check with isFenceLockReason() before an exhaustive switch.
   */
  reason?: FenceLockReason;
  /** The key's current watermark from `fencelock-watermark`, on fencing refusals. */
  watermark?: bigint;
  /** The key a fencing refusal is about, from `fencelock-key` (WRONG_LOCK for a key of another lock). */
  key?: string;
  /** With WRONG_LOCK for `key`: the lock that key belongs to, from `fencelock-key-lock`. */
  keyLock?: string;
  /** The per-identity quota a QUOTA_EXCEEDED refusal is about (`sessions`, `keys`, ...), from `fencelock-quota`. */
  quota?: string;
  /** With LOCK_DELAYED: when the lock's delay ends by the leader's clock (ms since the epoch), from `fencelock-delayed-until`. */
  delayedUntil?: number;
  /** The leader's client address from `fencelock-leader`, when the server named one. */
  leader?: string;
  /** The server's own words (gRPC status details). */
  details?: string;
  /**
   * True when the client gave up without a definite answer (every attempt timed out or found no leader): the
   * operation may or may not have taken effect. Retrying it as a new request may apply it twice.
   */
  indeterminate?: boolean;
  /**
   * With a call that gave up after retries: the last error of each endpoint it tried (configured order), so
   * a caller can say which nodes answered and why the others did not (refused, timed out, TLS).
   */
  endpointErrors?: readonly EndpointError[];
  cause?: unknown;
}

/**
 * The one error type of the library: a gRPC status name plus fencelock's reason, watermark, key and quota.
 * With auth on (docs/auth.md): UNAUTHENTICATED for a call without an identity (or with a token the cluster
 * does not know), PERMISSION_DENIED (reason PERMISSION_DENIED or NOT_SESSION_OWNER) for one its identity may
 * not make, RESOURCE_EXHAUSTED with reason QUOTA_EXCEEDED and `quota` set past a per-identity quota.
 */
export class FenceLockError extends Error {
  readonly code: FenceLockErrorCode;
  readonly reason?: FenceLockReason;
  readonly watermark?: bigint;
  readonly key?: string;
  readonly keyLock?: string;
  readonly quota?: string;
  readonly delayedUntil?: number;
  readonly leader?: string;
  readonly details?: string;
  readonly indeterminate: boolean;
  readonly endpointErrors?: readonly EndpointError[];

  constructor(code: FenceLockErrorCode, message: string, init: FenceLockErrorInit = {}) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'FenceLockError';
    this.code = code;
    this.indeterminate = init.indeterminate ?? false;
    if (init.reason !== undefined) this.reason = init.reason;
    if (init.watermark !== undefined) this.watermark = init.watermark;
    if (init.key !== undefined) this.key = init.key;
    if (init.keyLock !== undefined) this.keyLock = init.keyLock;
    if (init.quota !== undefined) this.quota = init.quota;
    if (init.delayedUntil !== undefined) this.delayedUntil = init.delayedUntil;
    if (init.leader !== undefined) this.leader = init.leader;
    if (init.details !== undefined) this.details = init.details;
    if (init.endpointErrors !== undefined) this.endpointErrors = init.endpointErrors;
  }
}

/** True when err is a FenceLockError, optionally with this code. */
export function isFenceLockError(err: unknown, code?: FenceLockErrorCode): err is FenceLockError {
  return err instanceof FenceLockError && (code === undefined || err.code === code);
}

/** The first value of a metadata key as a string, or undefined. */
export function metadataString(md: grpc.Metadata | undefined | null, key: string): string | undefined {
  if (!md || typeof md.get !== 'function') return undefined;
  const [v] = md.get(key);
  if (v === undefined) return undefined;
  const s = typeof v === 'string' ? v : v.toString('utf8');
  return s.length > 0 ? s : undefined;
}

/** A metadata value the server percent-encoded (a key or lock name: UTF-8, where metadata is ASCII). */
function metadataText(md: grpc.Metadata | undefined | null, key: string): string | undefined {
  const v = metadataString(md, key);
  if (v === undefined) return undefined;
  try {
    return decodeURIComponent(v);
  } catch {
    return v; // not percent-encoded after all: the raw text says more than nothing
  }
}

export function statusName(code: number): FenceLockErrorCode {
  const name = grpc.status[code];
  if (typeof name !== 'string' || name === 'OK') return 'UNKNOWN';
  return name as FenceLockErrorCode;
}

/** Looks like a grpc-js ServiceError (a status code plus details and metadata). */
export function isServiceError(err: unknown): err is grpc.ServiceError {
  return typeof err === 'object' && err !== null && typeof (err as { code?: unknown }).code === 'number' && 'details' in err;
}

/** Converts a gRPC error (or anything thrown) into a FenceLockError with a message that says what failed. */
export function toFenceLockError(err: unknown, what: string): FenceLockError {
  if (err instanceof FenceLockError) return err;
  if (!isServiceError(err)) {
    const msg = err instanceof Error ? err.message : String(err);
    return new FenceLockError('UNKNOWN', `${what}: ${msg}`, { cause: err });
  }
  const code = statusName(err.code);
  const reason = metadataString(err.metadata, META_REASON) as FenceLockReason | undefined;
  const watermarkText = metadataString(err.metadata, META_WATERMARK);
  const watermark = watermarkText === undefined ? undefined : parseDecimalUint64(watermarkText);
  const leader = metadataString(err.metadata, META_LEADER);
  const key = metadataText(err.metadata, META_KEY);
  const keyLock = metadataText(err.metadata, META_KEY_LOCK);
  const quota = metadataText(err.metadata, META_QUOTA);
  const delayedText = metadataString(err.metadata, META_DELAYED_UNTIL);
  const delayedUntil = delayedText !== undefined && /^\d{1,15}$/.test(delayedText) ? Number(delayedText) : undefined;
  const details = err.details || '';
  // The server's details often repeat the reason and the watermark already; say each thing once.
  let message = `${what}: ${code}`;
  if (reason && !details.startsWith(reason)) message += ` ${reason}`;
  if (details) message += `: ${details}`;
  if (watermark !== undefined && !details.includes(`watermark ${watermark}`)) message += ` (current watermark ${watermark})`;
  if (quota !== undefined && !details.includes(quota)) message += ` (quota ${quota})`;
  return new FenceLockError(code, message, { reason, watermark, key, keyLock, quota, delayedUntil, leader, details, cause: err });
}

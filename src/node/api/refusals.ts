// Refusals of the state machine as gRPC statuses, with the reason and what it is about in metadata.
import * as grpc from '@grpc/grpc-js';
import type { Result } from '../../state';
import { isResourceExhausted, MAX_MOVE_KEYS, Reason } from '../../state';
import { intToWire } from '../../protocol/wireInt';
import { ApiError, KEY_LOCK_METADATA_KEY, KEY_METADATA_KEY, metadataText, QUOTA_METADATA_KEY, REASON_METADATA_KEY, WATERMARK_METADATA_KEY } from './errors';

/** Turns a refusal or an invalid command into the API's status codes; returns the result otherwise. */
export function expectOk<R extends Result>(result: Result): Exclude<R, { status: 'refused' | 'invalid' }> | Result {
  if (result.status === 'invalid') throw new ApiError(grpc.status.INVALID_ARGUMENT, result.message);
  if (result.status === 'refused') throw refusalError(result.reason, result.watermark, result.key, result.owner, result.subject);
  return result;
}

/** Why the auth tables refuse a change while auth is off, and what to do (docs/auth.md "Bootstrap"). */
export const AUTH_OFF_TEXT =
  'auth is off: users, roles and tokens can be made only once auth is on; set "auth": { "enabled": true, "admin": NAME } in every node\'s config and restart them, then make them as NAME (a client certificate from the cluster CA naming urn:fencelock:client:NAME)';

const REFUSAL_TEXT: Record<string, string> = {
  [Reason.STALE_TOKEN]: 'stale token: a newer grant of this lock exists (the token is below its latest), or a key was written under a newer token',
  [Reason.LOCK_NOT_HELD]: 'lock not held: the grant under this token has ended (released, closed or expired) and no newer grant exists yet',
  [Reason.WRONG_LOCK]: 'wrong lock: a key belongs to another lock, or the token is above this lock\'s latest and cannot have been issued for it',
  [Reason.UNKNOWN_SESSION]: 'unknown session: it was never opened, or it was closed or expired',
  [Reason.NOT_HOLDER]: 'not the holder: this session does not hold the lock (for a write: the token is another session\'s grant)',
  [Reason.WRONG_TOKEN]: 'this session holds the lock under another token',
  [Reason.TOO_MANY_SESSIONS]: 'too many open sessions',
  [Reason.TOO_MANY_WAITERS]: 'too many waiters on this lock',
  [Reason.TOO_MANY_LOCKS]: 'too many locks',
  [Reason.STORE_FULL]: 'the fenced store is full',
  [Reason.DEDUP_FULL]: 'the retry-record table is full of other identities\' records and this one holds none it could give up; the request was not applied: retry later',
  [Reason.REQUEST_TOO_OLD]: 'request id below what this client acknowledged, or this client id\'s retry records were forgotten (it may have been applied); use a new client id or request id',
  [Reason.REQUEST_ID_REUSED]: 'this request id was used before for another kind of request',
  [Reason.SESSION_EXISTS]: 'session id collision; retry',
  [Reason.PERMISSION_DENIED]: 'permission denied',
  [Reason.NOT_SESSION_OWNER]: 'another identity opened this session; only its owner may use it',
  [Reason.QUOTA_EXCEEDED]: 'a quota of this identity is used up',
  [Reason.AUTH_FULL]: 'the auth tables are full',
  [Reason.USER_EXISTS]: 'the user exists already',
  [Reason.ROLE_EXISTS]: 'the role exists already',
  [Reason.TOKEN_EXISTS]: 'a token with this id exists already; retry',
  [Reason.UNKNOWN_USER]: 'no such user',
  [Reason.UNKNOWN_ROLE]: 'no such role',
  [Reason.UNKNOWN_TOKEN]: 'no such token',
  [Reason.LAST_ADMIN]: 'this would leave no user with the admin permission',
  [Reason.AUTH_OFF]: AUTH_OFF_TEXT,
  [Reason.LOCK_BUSY]: 'keys move only to a lock that nobody holds or waits for; release it first',
  [Reason.LOCK_DELAYED]: 'the lock is in its lock-delay (its last grant ended by expiry or revocation): nobody is granted it before the delay ends; wait for it or try later',
  [Reason.SHARED_GRANT]: 'this token is a shared (read) grant: a shared holder never writes; acquire the lock in exclusive mode to write',
  [Reason.MODE_CONFLICT]: 'this session holds or waits for the lock in the other mode; a grant never changes mode: release it, then acquire in the mode wanted',
  [Reason.PERMITS_MISMATCH]: 'the semaphore has another number of permits, fixed while any is held or anyone waits; ask for the number in force',
  [Reason.SET_OVERLAP]: 'this session already holds or waits for one of these locks, not as this very set; a set is granted whole: release it (or cancel the wait) first',
  [Reason.MOVE_TOO_LARGE]: `a move takes at most ${MAX_MOVE_KEYS} keys; move a longer prefix at a time`,
};

const STATUS_OF: Partial<Record<Reason, grpc.status>> = {
  [Reason.UNKNOWN_SESSION]: grpc.status.NOT_FOUND,
  [Reason.UNKNOWN_USER]: grpc.status.NOT_FOUND,
  [Reason.UNKNOWN_ROLE]: grpc.status.NOT_FOUND,
  [Reason.UNKNOWN_TOKEN]: grpc.status.NOT_FOUND,
  [Reason.REQUEST_ID_REUSED]: grpc.status.INVALID_ARGUMENT,
  [Reason.SESSION_EXISTS]: grpc.status.ABORTED,
  [Reason.TOKEN_EXISTS]: grpc.status.ABORTED,
  [Reason.USER_EXISTS]: grpc.status.ALREADY_EXISTS,
  [Reason.ROLE_EXISTS]: grpc.status.ALREADY_EXISTS,
  [Reason.PERMISSION_DENIED]: grpc.status.PERMISSION_DENIED,
  [Reason.NOT_SESSION_OWNER]: grpc.status.PERMISSION_DENIED,
};

/**
 * `key`: the key the refusal is about; `owner`: the lock that key belongs to (WRONG_LOCK for a key);
 * `subject`: the user, role, token, quota or permission the refusal is about.
 */
export function refusalError(reason: Reason, watermark: number, key?: string, owner?: string, subject?: string): ApiError {
  const metadata: Record<string, string> = { [REASON_METADATA_KEY]: reason, [WATERMARK_METADATA_KEY]: intToWire('watermark', watermark) };
  if (key !== undefined) metadata[KEY_METADATA_KEY] = metadataText(key);
  if (owner !== undefined) metadata[KEY_LOCK_METADATA_KEY] = metadataText(owner);
  if (reason === Reason.QUOTA_EXCEEDED && subject !== undefined) metadata[QUOTA_METADATA_KEY] = subject;
  const about = subject === undefined ? '' : ` (${subjectText(reason, subject)})`;
  const text = `${reason}: ${refusalText(reason, key, owner)}${about}; current watermark ${watermark}`;
  return new ApiError(statusOf(reason), text, metadata);
}

/**
 * A fenced write's refusal as a caller sees it who may not read what it is about (docs/auth.md
 * "Refusals"): the reason and the key it sent, but neither the lock that key belongs to nor a watermark,
 * which would tell it that another lock's key exists, its lock's name, or how far a lock it may not use
 * has gone.
 */
export function withheldRefusalError(reason: Reason, lock: string, key?: string): ApiError {
  const metadata: Record<string, string> = { [REASON_METADATA_KEY]: reason };
  if (key !== undefined) metadata[KEY_METADATA_KEY] = metadataText(key);
  const q = JSON.stringify;
  const text =
    reason === Reason.WRONG_LOCK && key !== undefined
      ? `${reason}: wrong lock: key ${q(key)} belongs to another lock (for good: bound by its first write); which lock, and its watermark, are shown only to a caller that may read the key; use another key`
      : `${reason}: ${refusalText(reason, key, undefined)}; the watermark is shown only to a caller that may lock ${q(lock)}${key === undefined ? '' : ` or read ${q(key)}`}`;
  return new ApiError(statusOf(reason), text, metadata);
}

function statusOf(reason: Reason): grpc.status {
  return STATUS_OF[reason] ?? (isResourceExhausted(reason) ? grpc.status.RESOURCE_EXHAUSTED : grpc.status.FAILED_PRECONDITION);
}

function subjectText(reason: Reason, subject: string): string {
  if (reason === Reason.QUOTA_EXCEEDED) return `quota ${subject}; an admin raises it for a role with \`fencelock auth role quota ROLE ${subject} VALUE\``;
  return subject;
}

function refusalText(reason: Reason, key: string | undefined, owner: string | undefined): string {
  const q = JSON.stringify;
  if (key !== undefined && owner !== undefined) {
    return `wrong lock: key ${q(key)} belongs to lock ${q(owner)} (for good: bound by its first write, also once deleted); write it under lock ${q(owner)} or use another key`;
  }
  return `${REFUSAL_TEXT[reason] ?? 'refused'}${key === undefined ? '' : ` (key ${q(key)})`}`;
}


// The reasons (`fencelock-reason` metadata, FenceLockError.reason) a refusal or a loss carries, as one typed
// union that the state machine, the API layer and the client all use, so that the two sides cannot disagree.

/**
 * Why a command was refused. Exact strings; they are part of the replicated state (stored results) and of
 * the API, so never rename one.
 */
export const Reason = Object.freeze({
  /**
   * Write: a newer grant of this lock exists (token < latest token; whichever lock issued it: the lock keeps
   * only its latest token), or a key has a higher watermark.
   */
  STALE_TOKEN: 'STALE_TOKEN',
  /**
   * Write: the token is the lock's latest and the session was its holder, but that grant has ended (released,
   * closed or expired); or the lock's record was forgotten (idle, no keys) and the token is not above gcFloor.
   */
  LOCK_NOT_HELD: 'LOCK_NOT_HELD',
  /** Write: a key belongs to another lock, or the token is above the lock's latest token (cannot be its). */
  WRONG_LOCK: 'WRONG_LOCK',
  /** The session is not open (never opened, closed or expired). */
  UNKNOWN_SESSION: 'UNKNOWN_SESSION',
  /**
   * Release: the session does not hold the lock. Write: the session is open and the token is the lock's
   * latest, but that grant is (or was) another session's.
   */
  NOT_HOLDER: 'NOT_HOLDER',
  /** Release: the session holds the lock, under another token. */
  WRONG_TOKEN: 'WRONG_TOKEN',
  /** OpenSession: the leader chose an id that is already open (retry with a fresh id). */
  SESSION_EXISTS: 'SESSION_EXISTS',
  /** OpenSession: MAX_SESSIONS reached. */
  TOO_MANY_SESSIONS: 'TOO_MANY_SESSIONS',
  /** Acquire: MAX_WAITERS_PER_LOCK reached. */
  TOO_MANY_WAITERS: 'TOO_MANY_WAITERS',
  /** Acquire: MAX_LOCKS or MAX_LOCKS_PER_SESSION reached. */
  TOO_MANY_LOCKS: 'TOO_MANY_LOCKS',
  /** Write: MAX_KEYS or MAX_STORE_BYTES would be exceeded. */
  STORE_FULL: 'STORE_FULL',
  /**
   * The retry-record table is at its global bound and the caller holds no record it could give up: the
   * request was not applied (other identities' records are never evicted for it; docs/auth.md).
   */
  DEDUP_FULL: 'DEDUP_FULL',
  /** The requestId is below what the client acknowledged (ackedBelow) or its result was dropped: not applied. */
  REQUEST_TOO_OLD: 'REQUEST_TOO_OLD',
  /** The (clientId, requestId) pair was used before for a command of another type: not applied. */
  REQUEST_ID_REUSED: 'REQUEST_ID_REUSED',
  /**
   * Auth is on and the caller may not do this: it is no user, its token was revoked or is another user's,
   * or no rule of its roles allows the permission on the name (`subject` says which, see RefusedResult).
   */
  PERMISSION_DENIED: 'PERMISSION_DENIED',
  /** Auth is on and the session was opened by another identity (Close, Acquire, CancelWait, Release, Write). */
  NOT_SESSION_OWNER: 'NOT_SESSION_OWNER',
  /** AuthChange: the user (`subject`) exists already. */
  USER_EXISTS: 'USER_EXISTS',
  /** AuthChange: the role (`subject`) exists already. */
  ROLE_EXISTS: 'ROLE_EXISTS',
  /** AuthChange: no such user (`subject`). */
  UNKNOWN_USER: 'UNKNOWN_USER',
  /** AuthChange: no such role (`subject`). */
  UNKNOWN_ROLE: 'UNKNOWN_ROLE',
  /** AuthChange: no such token (`subject`: its id). */
  UNKNOWN_TOKEN: 'UNKNOWN_TOKEN',
  /** AuthChange token_issue: the leader drew an id in use (`subject`); retry with a fresh one. */
  TOKEN_EXISTS: 'TOKEN_EXISTS',
  /** AuthChange: auth is on and no user would hold `admin` afterwards (`subject`: the user or role changed). */
  LAST_ADMIN: 'LAST_ADMIN',
  /** AuthChange: a bound of the auth table (`subject`: users, roles, rules, roles_per_user, tokens, tokens_per_user). */
  AUTH_FULL: 'AUTH_FULL',
  /**
   * AuthChange: auth is off, and the auth tables accept no change but `enable` until it is on (`subject`:
   * the op refused). Auth is turned on by the config (`auth.enabled`, `auth.admin`) of every node.
   */
  AUTH_OFF: 'AUTH_OFF',
  /** The caller's quota (`subject`: its name, e.g. `sessions`) would be exceeded. */
  QUOTA_EXCEEDED: 'QUOTA_EXCEEDED',
  /** MoveKeys: the target lock (`subject`) is held or has waiters. */
  LOCK_BUSY: 'LOCK_BUSY',
  /** MoveKeys: more than MAX_MOVE_KEYS keys under the prefix (`subject`); nothing moved. */
  MOVE_TOO_LARGE: 'MOVE_TOO_LARGE',
  /**
   * Acquire with wait 0: the lock is free but in its lock-delay (its last grant ended by expiry or revocation);
   * no one is granted it before the delay ends (docs/architecture.md#lock-delay).
   */
  LOCK_DELAYED: 'LOCK_DELAYED',
  /**
   * Write: the token is this session's shared (read) grant of the lock, live: a shared grant never writes;
   * writes need the exclusive grant (docs/architecture.md#read-write-locks).
   */
  SHARED_GRANT: 'SHARED_GRANT',
  /**
   * Acquire: the session holds or waits for the lock in the other mode; a grant never changes mode
   * (release it, then acquire in the mode wanted: docs/architecture.md#read-write-locks).
   */
  MODE_CONFLICT: 'MODE_CONFLICT',
  /**
   * Semaphore Acquire: it names another number of permits than the one in force (`subject`: "permits N",
   * N the number in force). The number is fixed while any permit is held or anyone waits.
   */
  PERMITS_MISMATCH: 'PERMITS_MISMATCH',
  /**
   * AcquireAll: the session already holds or waits for one of the named locks (`subject`: its name) other than
   * by this very set (docs/architecture.md#atomic-multi-lock): a set is granted whole or not at all.
   */
  SET_OVERLAP: 'SET_OVERLAP',
} as const);

export type Reason = (typeof Reason)[keyof typeof Reason];

/** Refusals by the API layer of a node, before or around the state machine. */
export const ApiReason = Object.freeze({
  /** This node does not lead (or was just elected and is catching up); `fencelock-leader` names the leader if known. */
  NOT_LEADER: 'NOT_LEADER',
  /** The connection has as many Pipeline calls in flight as it may. */
  TOO_MANY_CALLS: 'TOO_MANY_CALLS',
  /** The connection has as many streams of this kind as it may. */
  TOO_MANY_STREAMS: 'TOO_MANY_STREAMS',
  /** A watch stream fell too far behind the events and was ended. */
  WATCH_BEHIND: 'WATCH_BEHIND',
  /** A watch resumed after events it can no longer replay. */
  EVENTS_MISSED: 'EVENTS_MISSED',
  /** Another membership change is in progress. */
  CHANGE_IN_PROGRESS: 'CHANGE_IN_PROGRESS',
  /** A learner cannot be promoted yet: its log is behind. */
  LEARNER_BEHIND: 'LEARNER_BEHIND',
  /** A membership change the rules refuse (docs/membership.md). */
  MEMBERSHIP_REFUSED: 'MEMBERSHIP_REFUSED',
  /**
   * A session was ended by an admin (Session.Revoke, or its user deleted): its locks are lost, as on expiry.
   * KeepAliveResponse.reason, and the reason the client library's onLost and withLock's signal report.
   */
  REVOKED: 'REVOKED',
} as const);
export type ApiReason = (typeof ApiReason)[keyof typeof ApiReason];

/** Reasons the client library gives its own errors (never sent by a server). */
export const ClientReason = Object.freeze({
  /** No renewal was acknowledged within the session's TTL: the lease is presumed lost. */
  KEEPALIVE_TIMEOUT: 'KEEPALIVE_TIMEOUT',
  /** The leader answered that the session has expired or is unknown. */
  SESSION_EXPIRED: 'SESSION_EXPIRED',
  /** The client stopped renewing the session (a release could not be confirmed). */
  ABANDONED: 'ABANDONED',
  /** The lock was still held by another session when the wait ran out. */
  LOCK_HELD: 'LOCK_HELD',
  /** Every permit of the semaphore was still taken when the wait ran out (acquirePermit). */
  PERMITS_FULL: 'PERMITS_FULL',
  /** The session was closed by this client. */
  SESSION_CLOSED: 'SESSION_CLOSED',
  /** No acknowledged renewal recently enough: past presumedLostAt(), before the TTL itself ran out. */
  PRESUMED_LOST: 'PRESUMED_LOST',
  /** The server's TLS certificate could not be verified (an untrusted CA, another host's name): not retried. */
  UNTRUSTED_CERTIFICATE: 'UNTRUSTED_CERTIFICATE',
  /** lock.signal: the holder released the lock (or closed its session); not a loss. */
  RELEASED: 'RELEASED',
} as const);
export type ClientReason = (typeof ClientReason)[keyof typeof ClientReason];

/** Every reason of fencelock, whichever side gives it. */
export type FenceLockReason = Reason | ApiReason | ClientReason;

const KNOWN: ReadonlySet<string> = new Set<string>([...Object.values(Reason), ...Object.values(ApiReason), ...Object.values(ClientReason)]);

/** True when `s` is a reason this version knows (a newer server may send others). */
export function isFenceLockReason(s: string): s is FenceLockReason {
  return KNOWN.has(s);
}

// What applying one command yields: a Result (the answer to the proposer, stored for retries) and the
// LockEvents it caused (for blocked Acquires and watch streams on the node).

// The refusal reasons live in the protocol leaf module, which the client imports too.
import { Reason } from '../protocol/reasons';
export { Reason };

/** The reasons a fenced write is refused for (docs/architecture.md#fenced-writes). */
export type WriteRefusalReason =
  | typeof Reason.STALE_TOKEN
  | typeof Reason.LOCK_NOT_HELD
  | typeof Reason.WRONG_LOCK
  | typeof Reason.UNKNOWN_SESSION
  | typeof Reason.NOT_HOLDER;

const RESOURCE_EXHAUSTED: ReadonlySet<Reason> = new Set<Reason>([
  Reason.TOO_MANY_SESSIONS,
  Reason.TOO_MANY_WAITERS,
  Reason.TOO_MANY_LOCKS,
  Reason.STORE_FULL,
  Reason.DEDUP_FULL,
  Reason.AUTH_FULL,
  Reason.QUOTA_EXCEEDED,
]);

const PERMISSION_REFUSALS: ReadonlySet<Reason> = new Set<Reason>([Reason.PERMISSION_DENIED, Reason.NOT_SESSION_OWNER]);

/** Reasons the API layer should map to gRPC PERMISSION_DENIED. */
export function isPermissionRefusal(reason: Reason): boolean {
  return PERMISSION_REFUSALS.has(reason);
}

/** Reasons the API layer should map to gRPC RESOURCE_EXHAUSTED. */
export function isResourceExhausted(reason: Reason): boolean {
  return RESOURCE_EXHAUSTED.has(reason);
}

export interface SessionOpenedResult {
  status: 'session_opened';
  sessionId: string;
  ttlMs: number;
}

/**
 * Why a session ended: its client closed it, its lease ran out, or an admin ended it (RevokeSession, or its
 * user was deleted).
 */
export type SessionEndCause = 'closed' | 'expired' | 'revoked';

export interface SessionEndedResult {
  status: 'session_ended';
  sessionId: string;
  cause: SessionEndCause;
  /** Locks the session held, now released (and handed over where someone waited), sorted. */
  released: string[];
}

/** ExpireSession: the sessions that ended, in the entry's order (unknown ones were skipped). */
export interface SessionsExpiredResult {
  status: 'sessions_expired';
  ended: string[];
}

/** CheckpointLeases: how many open sessions got their checkpoint (unknown ones were skipped). */
export interface CheckpointedResult {
  status: 'checkpointed';
  sessions: number;
}

/**
 * The session holds the lock under `token`. `newGrant` is true when this very entry granted it (then
 * token = this entry's index); false for a re-entrant Acquire, and for a CancelWait that found the session
 * already granted (the wait ended in a grant before the cancel was applied: the caller owns the lock and
 * should report success, or release it, rather than DEADLINE_EXCEEDED).
 */
export interface GrantedResult {
  status: 'granted';
  token: number;
  newGrant: boolean;
}

/** Acquire queued the session (or found it queued). `position` is 1-based in the FIFO queue. */
export interface WaitingResult {
  status: 'waiting';
  holderToken: number;
  position: number;
}

/** A try-only Acquire found the lock held by another session under `holderToken`. */
export interface HeldResult {
  status: 'held';
  holderToken: number;
}

/** CancelWait removed the session from the queue. */
export interface CancelledResult {
  status: 'cancelled';
}

/** CancelWait found the session neither waiting for nor holding the lock. */
export interface NotWaitingResult {
  status: 'not_waiting';
}

/**
 * `nextHolder` / `nextToken`: the session the lock was handed to and its token (= this entry's index), when
 * a live waiter got it; both absent when the lock became free. Stored, so a retry learns the same handover.
 */
export interface ReleasedResult {
  status: 'released';
  token: number;
  nextHolder?: string;
  nextToken?: number;
}

/**
 * The fenced write was applied: every touched key's watermark is now `token`. `index`: the entry that applied
 * it (a retry answers with it). Absent in results stored before it was recorded (older snapshots).
 */
export interface WrittenResult {
  status: 'written';
  token: number;
  ops: number;
  index?: number;
}

/** AuthChange applied (or had nothing to do: the table already was as asked). `tokenId`: of token_issue. */
export interface AuthChangedResult {
  status: 'auth_changed';
  tokenId?: string;
}

/** MoveKeys: `moved` keys now belong to the target lock (keys that already did are not counted). */
export interface KeysMovedResult {
  status: 'keys_moved';
  moved: number;
}

/**
 * The command was valid but refused; nothing changed. `watermark`:
 * - Write: max(latest token of the lock (0 without a record), watermark of every touched key that exists,
 *   whatever its lock) — every token below it is stale for this write; STORE_FULL: the write's token;
 * - Acquire, CancelWait, Release: the lock's latest token (0 without a record);
 * - session and dedup refusals (SESSION_EXISTS, TOO_MANY_SESSIONS, UNKNOWN_SESSION of Close/Expire,
 *   REQUEST_TOO_OLD, REQUEST_ID_REUSED): 0.
 * `key`: the key that caused a Write refusal, when one did (WRONG_LOCK for a key bound to another lock,
 * STALE_TOKEN for a key watermark). `owner`: with WRONG_LOCK for a key, the lock that key belongs to, so the
 * caller learns where the key lives. Absent in results stored before it was recorded (older snapshots).
 * `subject`: what an auth, quota or move refusal is about (never with `key`; watermark 0):
 * - PERMISSION_DENIED: `<perm> <name>` for a missing rule (`lock orders`, `write k/1` for the first key
 *   refused, `admin` for a command only admins may send), `user <caller>` when the caller is no user, `token <id>` when
 *   the request's token was revoked or is another user's;
 * - USER_EXISTS, UNKNOWN_USER: the user; ROLE_EXISTS, UNKNOWN_ROLE: the role; UNKNOWN_TOKEN, TOKEN_EXISTS:
 *   the token id; LAST_ADMIN: the user or role the change was about; AUTH_FULL: the bound reached;
 *   QUOTA_EXCEEDED: the quota's name; LOCK_BUSY: the target lock; MOVE_TOO_LARGE: the prefix.
 */
export interface RefusedResult {
  status: 'refused';
  reason: Reason;
  watermark: number;
  key?: string;
  owner?: string;
  subject?: string;
}

/** The command was malformed or beyond a limit; nothing changed. */
export interface InvalidResult {
  status: 'invalid';
  message: string;
}

export type Result =
  | SessionOpenedResult
  | SessionEndedResult
  | SessionsExpiredResult
  | CheckpointedResult
  | GrantedResult
  | WaitingResult
  | HeldResult
  | CancelledResult
  | NotWaitingResult
  | ReleasedResult
  | WrittenResult
  | AuthChangedResult
  | KeysMovedResult
  | RefusedResult
  | InvalidResult;

export type ResultStatus = Result['status'];

/**
 * State changes of locks caused by one entry, in the order they happened. The node uses them to answer
 * blocked Acquires (`granted` / `wait_ended` for its session and lock) and to feed watch streams.
 *
 * Order within one entry: for Release, `released` then the `granted` of the next waiter; for a session end
 * (Close/Expire), first `wait_ended` for every lock it waited for, then per held lock (sorted by name)
 * `released` followed by the handover `granted`, and last `session_ended`. RevokeLock is as Release. An ExpireSession of several
 * sessions ends them together: first the `wait_ended` of them all, then each one's releases and end.
 */
export type LockEvent =
  | {
      type: 'granted';
      lock: string;
      sessionId: string;
      token: number;
      /** 'acquired': the lock was free; otherwise what ended the previous grant. */
      cause: 'acquired' | GrantEndCause;
    }
  | {
      type: 'released';
      lock: string;
      sessionId: string;
      token: number;
      cause: GrantEndCause;
      /** With cause `lock_revoked` (RevokeLock): the admin who revoked it ('' for the node) and their reason. */
      revokedBy?: string;
      reason?: string;
    }
  | { type: 'queued'; lock: string; sessionId: string; position: number }
  | { type: 'wait_ended'; lock: string; sessionId: string; cause: 'cancelled' | SessionEndCause }
  | { type: 'session_ended'; sessionId: string; cause: SessionEndCause };

/**
 * What ended a grant: its holder released it, an admin revoked the grant alone (`lock_revoked`, RevokeLock:
 * the session stays open), or its session ended.
 */
export type GrantEndCause = 'released' | 'lock_revoked' | SessionEndCause;

/**
 * The outcome of apply(). `duplicate` is true when (clientId, requestId) had been applied before: `result`
 * is then the stored result of that first application and `events` is empty (nothing happened now). Note
 * for a duplicate `waiting`: the grant may have happened since; ask sessionLockState().
 */
export interface CommandResult {
  result: Result;
  events: LockEvent[];
  duplicate: boolean;
}

/** A refusal; `owner` only with a `key`. Fields in this order: stored results are compared as JSON. */
export function refused(reason: Reason, watermark: number, key?: string, owner?: string): RefusedResult {
  if (key === undefined) return { status: 'refused', reason, watermark };
  return owner === undefined ? { status: 'refused', reason, watermark, key } : { status: 'refused', reason, watermark, key, owner };
}

/** A refusal about `subject` (an auth, quota or move refusal: watermark 0). */
export function refusedAbout(reason: Reason, subject: string): RefusedResult {
  return { status: 'refused', reason, watermark: 0, subject };
}

export function invalid(message: string): InvalidResult {
  return { status: 'invalid', message };
}

/** Results are shared with the dedup table; freezing them keeps a caller from changing a stored answer. */
export function freezeResult<T extends Result>(r: T): T {
  for (const v of Object.values(r)) {
    if (Array.isArray(v)) Object.freeze(v);
  }
  return Object.freeze(r);
}

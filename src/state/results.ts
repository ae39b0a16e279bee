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
  | typeof Reason.NOT_HOLDER
  | typeof Reason.SHARED_GRANT;

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

/**
 * Why a session ended: its client closed it, its lease ran out, or an admin ended it (RevokeSession, or its
 * user was deleted).
 */
export type SessionEndCause = (typeof SESSION_END_CAUSES)[number];

/** In the order of state.proto's SessionEndCause enum (value = position + 1). */
export const SESSION_END_CAUSES = ['closed', 'expired', 'revoked'] as const;

// ---- every result status: its fields, their types and its stored form (StoredResult, state.proto) ----

/**
 * How a field is stored, and so its type. uint: uint64 (wire type 0), a number exact below 2^53; bool:
 * varint 1 (false is left out); string: UTF-8 (wire type 2); strings: a repeated string; cause: the
 * SessionEndCause enum; reason: a Reason by name (a string on the wire).
 */
export type FieldKind = 'uint' | 'bool' | 'string' | 'strings' | 'cause' | 'reason';

interface KindTypes {
  uint: number;
  bool: boolean;
  string: string;
  strings: string[];
  cause: SessionEndCause;
  reason: Reason;
}

export interface FieldCodec<N extends string = string, K extends FieldKind = FieldKind> {
  /** The field number in the status's message. */
  readonly no: number;
  /** The Result property. */
  readonly name: N;
  readonly kind: K;
  /** proto3 `optional`: the property may be absent; written whenever present, even with a default value. */
  readonly optional?: true;
}

export interface StatusCodec {
  /** The StoredResult oneof member's field number. */
  readonly no: number;
  /** In number order, which is the order the machine builds the result's properties in (after `status`). */
  readonly fields: readonly FieldCodec[];
  /** What the field kinds cannot say: undefined when the result is one the machine builds, else why not. */
  readonly check?: (r: Readonly<Record<string, unknown>>) => string | undefined;
}

/** Statuses by name: a registry entry's own (registry/*.ts) or the shared ones below. */
export type StatusTable = Readonly<Record<string, StatusCodec>>;

/** A table without statuses: the own table of an entry that declares none. */
export type NoStatuses = Readonly<Record<never, StatusCodec>>;

const ofKind =
  <K extends FieldKind>(kind: K) =>
  <N extends string>(no: number, name: N): FieldCodec<N, K> => ({ no, name, kind });
export const uint = ofKind('uint');
export const bool = ofKind('bool');
export const str = ofKind('string');
export const strs = ofKind('strings');
export const cause = ofKind('cause');
export const reason = ofKind('reason');
/** A proto3 `optional` field: its property may be absent. */
export const opt = <F extends FieldCodec>(f: F): F & { readonly optional: true } => ({ ...f, optional: true });

/** Only a WRONG_LOCK for a key names the key's owner (fencing.ts); a subject is never about a key. */
function refusalCheck(r: Readonly<Record<string, unknown>>): string | undefined {
  if (r.owner !== undefined && (r.key === undefined || r.reason !== Reason.WRONG_LOCK)) return 'a refusal names an owner but is not WRONG_LOCK for a key';
  if (r.subject !== undefined && r.key !== undefined) return 'a refusal names both a key and a subject';
  return undefined;
}

/**
 * The shared result statuses (several commands answer them, or code outside the registry builds them): their
 * StoredResult oneof member number and their fields. A status that one command alone answers is declared in
 * that command's registry entry (its `results`). The Result types are read off these tables, so a status's
 * type and its stored form cannot drift (issue 31); resultStatuses.ts joins them all, and
 * test/state/resultCodec.test.ts holds them to state.proto.
 */
export const SHARED_STATUSES = {
  /** `released`: the locks the session held, now released (and handed over where someone waited), sorted. */
  session_ended: { no: 2, fields: [str(1, 'sessionId'), cause(2, 'cause'), strs(3, 'released')] },
  /**
   * The session holds the lock under `token`. `newGrant` is true when this very entry granted it (then
   * token = this entry's index); false for a re-entrant Acquire, and for a CancelWait that found the session
   * already granted (the wait ended in a grant before the cancel was applied: the caller owns the lock and
   * should report success, or release it, rather than DEADLINE_EXCEEDED).
   */
  granted: { no: 5, fields: [uint(1, 'token'), bool(2, 'newGrant')] },
  /** Acquire queued the session (or found it queued). `position` is 1-based in the FIFO queue. */
  waiting: { no: 6, fields: [uint(1, 'holderToken'), uint(2, 'position')] },
  /** A try-only Acquire found the lock held by another session under `holderToken`. */
  held: { no: 7, fields: [uint(1, 'holderToken')] },
  /** CancelWait removed the session from the queue. */
  cancelled: { no: 8, fields: [] },
  /** CancelWait found the session neither waiting for nor holding the lock. */
  not_waiting: { no: 9, fields: [] },
  /**
   * `nextHolder` / `nextToken`: the session the lock was handed to and its token (= this entry's index), when
   * a live waiter got it; both absent when the lock became free. Stored, so a retry learns the same handover.
   */
  released: {
    no: 10,
    fields: [uint(1, 'token'), opt(str(2, 'nextHolder')), opt(uint(3, 'nextToken'))],
    check: (r) => ((r.nextHolder === undefined) !== (r.nextToken === undefined) ? 'a handover names its holder and token together' : undefined),
  },
  /** AuthChange applied (or had nothing to do: the table already was as asked). `tokenId`: of token_issue. */
  auth_changed: { no: 12, fields: [opt(str(1, 'tokenId'))] },
  /** MoveKeys: `moved` keys now belong to the target lock (keys that already did are not counted). */
  keys_moved: { no: 13, fields: [uint(1, 'moved')] },
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
  refused: {
    no: 14,
    fields: [reason(1, 'reason'), uint(2, 'watermark'), opt(str(3, 'key')), opt(str(4, 'owner')), opt(str(5, 'subject'))],
    check: refusalCheck,
  },
  /** The command was malformed or beyond a limit; nothing changed. */
  invalid: { no: 15, fields: [str(1, 'message')] },
  /**
   * SemaphoreAcquire, SemaphoreCancelWait (issue 33): the session holds the permit of `slot` (0..permits-1)
   * under `token`; `permits` is the number in force; `newGrant` as for `granted`.
   */
  permit_granted: { no: 17, fields: [uint(1, 'token'), uint(2, 'slot'), uint(3, 'permits'), bool(4, 'newGrant')] },
} as const satisfies StatusTable;

export type SharedStatus = keyof typeof SHARED_STATUSES;

type FieldOf<C extends StatusCodec> = C['fields'][number];
type Flatten<T> = { [K in keyof T]: T[K] };

/** The result of status S whose codec is C (its `optional` fields may be absent). */
type ResultOfCodec<S extends string, C extends StatusCodec> = Flatten<
  { status: S } & { [F in FieldOf<C> as F extends { optional: true } ? never : F['name']]: KindTypes[F['kind']] } & {
    [F in FieldOf<C> as F extends { optional: true } ? F['name'] : never]?: KindTypes[F['kind']];
  }
>;

/** Every result of a table's statuses; of each table of a union of them. */
export type ResultsOf<T extends StatusTable> = T extends StatusTable ? { [S in keyof T & string]: ResultOfCodec<S, T[S]> }[keyof T & string] : never;

/** The results of statuses S, read off the shared table and an entry's own table R. */
export type ResultIn<S extends string, R extends StatusTable = NoStatuses> = Extract<ResultsOf<typeof SHARED_STATUSES> | ResultsOf<R>, { status: S }>;

export type SessionEndedResult = ResultIn<'session_ended'>;
export type AuthChangedResult = ResultIn<'auth_changed'>;
export type KeysMovedResult = ResultIn<'keys_moved'>;
export type RefusedResult = ResultIn<'refused'>;
export type InvalidResult = ResultIn<'invalid'>;

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
      /** 'acquired': the lock was free; 'delay_ended': its lock-delay ended; otherwise what ended the previous grant. */
      cause: 'acquired' | 'delay_ended' | GrantEndCause;
      /** A shared (read) grant; absent: exclusive. */
      shared?: boolean;
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
      /** A shared (read) grant ended; absent: exclusive. */
      shared?: boolean;
    }
  | { type: 'queued'; lock: string; sessionId: string; position: number; shared?: boolean }
  | { type: 'wait_ended'; lock: string; sessionId: string; cause: 'cancelled' | SessionEndCause }
  | { type: 'session_ended'; sessionId: string; cause: SessionEndCause }
  | PermitEvent;

/**
 * A semaphore's permit changed hands (issue 33): `slot` is the permit's slot, `token` its grant's token.
 * 'granted' causes as for locks; a grant that ended names its cause.
 */
export type PermitEvent =
  | { type: 'permit_granted'; semaphore: string; sessionId: string; slot: number; token: number; cause: 'acquired' | GrantEndCause }
  | { type: 'permit_released'; semaphore: string; sessionId: string; slot: number; token: number; cause: GrantEndCause }
  | { type: 'permit_queued'; semaphore: string; sessionId: string; position: number }
  | { type: 'permit_wait_ended'; semaphore: string; sessionId: string; cause: 'cancelled' | SessionEndCause };

/**
 * What ended a grant: its holder released it, an admin revoked the grant alone (`lock_revoked`, RevokeLock:
 * the session stays open), or its session ended.
 */
export type GrantEndCause = 'released' | 'lock_revoked' | SessionEndCause;

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
export function freezeResult<T extends { readonly status: string }>(r: T): T {
  for (const v of Object.values(r)) {
    if (Array.isArray(v)) Object.freeze(v);
  }
  return Object.freeze(r);
}

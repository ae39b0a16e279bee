// The commands of the replicated lock state machine: what a committed log entry asks it to do.
//
// Every field is chosen by the leader before the entry is proposed, so applying an entry is deterministic:
// `now` is the leader's clock (ms) when it proposed the entry, `sessionId` of OpenSession comes from the
// leader's random source. The node encodes commands into log entries (protobufjs); the state machine only
// sees decoded plain objects, and validates them again (validateCommand) because a log entry may carry
// anything a buggy or older proposer wrote.
import { checkAuthChange, type AuthChange } from './auth/changes';
import { isCaller, isTokenId } from './auth/names';
import * as L from './limits';
import { isSessionId, isWellFormed, utf8ByteLength } from './text';

export type { AuthChange, AuthChangeOp } from './auth/changes';
export { AUTH_RULES_CLOSED_WHEN_OFF } from './auth/changes';

/**
 * Request identity for de-duplication (docs/architecture.md#promises, promise 4). A retry carries the same clientId and requestId and
 * gets the stored result of the first application; it never applies twice.
 *
 * - `clientId`: 1..MAX_CLIENT_ID_BYTES bytes, stable for one client process. The empty string means "not
 *   de-duplicated" (for entries the node itself proposes, e.g. a CancelWait when a wait times out).
 * - `requestId`: >= 1, unique per clientId; ignored when clientId is ''.
 * - `ackedBelow`: optional; the client has received the replies of all its requests with lower ids, so their
 *   stored results may be dropped. Must be <= requestId. A later request below it is refused
 *   (REQUEST_TOO_OLD) instead of applied.
 * - `now`: the leader's clock in ms when it proposed the entry (safe integer >= 0).
 * - `caller`: the identity that sent the request, stamped by the node that took it (a user name, or with
 *   auth off `address:IP`; 0..MAX_CALLER_BYTES printable ASCII). Absent or '': the node itself or a log
 *   written before callers were stamped: no permission checks, no session binding, no quotas
 *   (docs/auth.md). The node must stamp it on every client's request.
 * - `callerToken`: the id of the bearer token the call came with (absent: not via a token). The request is
 *   refused if, when it applies, that token was revoked.
 */
export interface RequestMeta {
  clientId: string;
  requestId: number;
  ackedBelow?: number;
  now: number;
  caller?: string;
  callerToken?: string;
}

/** Opens a session. The leader picks the 128-bit id; the TTL is enforced by the leader, not here. */
export interface OpenSessionCommand extends RequestMeta {
  type: 'OpenSession';
  sessionId: string;
  ttlMs: number;
  clientName: string;
}

/** Ends a session at the client's request: releases its locks and drops its waits. */
export interface CloseSessionCommand extends RequestMeta {
  type: 'CloseSession';
  sessionId: string;
}

/**
 * An admin ends another identity's session (docs/auth.md "Ending sessions"): as CloseSession, with cause
 * `revoked`, so its holder's client learns why. With auth on, only an admin may.
 */
export interface RevokeSessionCommand extends RequestMeta {
  type: 'RevokeSession';
  sessionId: string;
}

/**
 * Ends sessions whose deadline passed, as decided by the leader (keepalives are not log entries), in order,
 * up to MAX_SESSIONS_PER_EXPIRY per entry. Not de-duplicated: it is idempotent (an unknown session is
 * skipped).
 */
export interface ExpireSessionCommand {
  type: 'ExpireSession';
  now: number;
  sessionIds: string[];
}

/** The lease time a session had left on the leader when it proposed a checkpoint. */
export interface LeaseCheckpoint {
  sessionId: string;
  remainingMs: number;
}

/**
 * Lease checkpoints (as etcd's): the time each session had left on the leader. A next leader starts a
 * session's deadline from its checkpoint rather than from a full TTL, so leader changes cannot postpone an
 * expiry forever. Up to MAX_CHECKPOINTS_PER_ENTRY per entry; not de-duplicated (unknown sessions are
 * skipped); a checkpoint above the session's TTL counts as the TTL.
 */
export interface CheckpointLeasesCommand {
  type: 'CheckpointLeases';
  now: number;
  leases: LeaseCheckpoint[];
}

/**
 * Acquires a lock for a session. Free -> granted with token = this entry's index; held by the same session ->
 * the same token again (re-entrant, with no hold count: one Release ends the grant, since a token names one
 * grant); held by another -> `held` when tryOnly, otherwise the session joins the FIFO queue.
 */
export interface AcquireCommand extends RequestMeta {
  type: 'Acquire';
  lock: string;
  sessionId: string;
  tryOnly: boolean;
  /** Informational (the node runs the timer): 0..MAX_WAIT_TIMEOUT_MS, 0 = try-lock. */
  waitTimeoutMs?: number;
}

/** Leaves the queue of a lock (wait timed out, or the client gave up). */
export interface CancelWaitCommand extends RequestMeta {
  type: 'CancelWait';
  lock: string;
  sessionId: string;
}

/** Releases a lock held by the session under exactly `token`; the next live waiter gets it. */
export interface ReleaseCommand extends RequestMeta {
  type: 'Release';
  lock: string;
  sessionId: string;
  token: number;
}

export interface PutOp {
  type: 'put';
  key: string;
  value: Uint8Array;
}

export interface DeleteOp {
  type: 'delete';
  key: string;
}

export type WriteOp = PutOp | DeleteOp;

/** The fenced write: all ops apply atomically, and only under the current grant of `lock`. */
export interface WriteCommand extends RequestMeta {
  type: 'Write';
  lock: string;
  sessionId: string;
  token: number;
  ops: WriteOp[];
}

/** Changes the auth table (auth/changes.ts). With auth on, only an admin may (except `enable`, a no-op then). */
export interface AuthChangeCommand extends RequestMeta {
  type: 'AuthChange';
  change: AuthChange;
}

/**
 * Moves one key, or every key under a prefix (tombstones included), to lock `toLock`, which nobody may hold
 * or wait for (docs/auth.md "Moving keys"). Exactly one of `key` / `prefix` (prefix '' = every key). Keys
 * keep their watermarks; `toLock`'s latest token is raised to the highest of them, so that every token it
 * grants later is above. At most MAX_MOVE_KEYS keys per entry. With auth on, only an admin may.
 */
export interface MoveKeysCommand extends RequestMeta {
  type: 'MoveKeys';
  key?: string;
  prefix?: string;
  toLock: string;
}

export type Command =
  | OpenSessionCommand
  | CloseSessionCommand
  | RevokeSessionCommand
  | ExpireSessionCommand
  | CheckpointLeasesCommand
  | AcquireCommand
  | CancelWaitCommand
  | ReleaseCommand
  | WriteCommand
  | AuthChangeCommand
  | MoveKeysCommand;

export type CommandType = Command['type'];

/** The commands only a leader proposes, for its lease duties: no RequestMeta, not de-duplicated. */
export type LeaseCommand = ExpireSessionCommand | CheckpointLeasesCommand;

/** Commands that carry RequestMeta and are de-duplicated. */
export type RequestCommand = Exclude<Command, LeaseCommand>;

export const COMMAND_TYPES: readonly CommandType[] = Object.freeze([
  'OpenSession',
  'CloseSession',
  'ExpireSession',
  'CheckpointLeases',
  'Acquire',
  'CancelWait',
  'Release',
  'Write',
  'AuthChange',
  'MoveKeys',
  'RevokeSession',
] as const);

export function isCommandType(t: unknown): t is CommandType {
  return typeof t === 'string' && (COMMAND_TYPES as readonly string[]).includes(t);
}

/** True for command types that carry RequestMeta and go through the de-duplication table. */
export function isRequestCommandType(t: CommandType): t is RequestCommand['type'] {
  return t !== 'ExpireSession' && t !== 'CheckpointLeases';
}

type Fields = Record<string, unknown>;

function isRecord(v: unknown): v is Fields {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isNonNegativeInt(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
}

/** Checks a string field: well-formed, within [minBytes, maxBytes] UTF-8 bytes. */
function checkText(v: unknown, what: string, minBytes: number, maxBytes: number): string | null {
  if (typeof v !== 'string') return `${what} must be a string`;
  if (!isWellFormed(v)) return `${what} must be well-formed Unicode`;
  const n = utf8ByteLength(v);
  if (n < minBytes) return `${what} must not be empty`;
  if (n > maxBytes) return `${what} exceeds ${maxBytes} bytes`;
  return null;
}

export function checkLockName(v: unknown): string | null {
  return checkText(v, 'lock name', 1, L.MAX_LOCK_NAME_BYTES);
}

export function checkKey(v: unknown): string | null {
  return checkText(v, 'key', 1, L.MAX_KEY_BYTES);
}

/**
 * Validates clientId/requestId/ackedBelow of a request command. Returns a message, or null when valid.
 * Separate from validateCommand so that a command whose ids are valid but whose body is not still has its
 * `invalid` result stored for retries.
 */
export function validateRequestMeta(c: Fields): string | null {
  const idProblem = checkText(c.clientId, 'clientId', 0, L.MAX_CLIENT_ID_BYTES);
  if (idProblem !== null) return idProblem;
  if (c.caller !== undefined && !isCaller(c.caller)) return `caller must be 0..${L.MAX_CALLER_BYTES} printable ASCII characters`;
  if (c.callerToken !== undefined && !isTokenId(c.callerToken)) return `callerToken must be ${L.TOKEN_ID_HEX_CHARS} lowercase hex characters`;
  if (c.clientId === '') return null;
  if (!isNonNegativeInt(c.requestId) || c.requestId < 1) return 'requestId must be an integer >= 1';
  if (c.ackedBelow !== undefined) {
    if (!isNonNegativeInt(c.ackedBelow)) return 'ackedBelow must be an integer >= 0';
    if (c.ackedBelow > c.requestId) return 'ackedBelow must not exceed requestId';
  }
  return null;
}

function checkSessionId(v: unknown): string | null {
  return isSessionId(v) ? null : `sessionId must be ${L.SESSION_ID_HEX_CHARS} lowercase hex characters`;
}

function checkToken(v: unknown): string | null {
  return isNonNegativeInt(v) && v >= 1 ? null : 'token must be an integer >= 1';
}

function checkOps(v: unknown): string | null {
  if (!Array.isArray(v)) return 'ops must be an array';
  if (v.length === 0) return 'a write needs at least one op';
  if (v.length > L.MAX_OPS_PER_WRITE) return `a write has at most ${L.MAX_OPS_PER_WRITE} ops`;
  let bytes = 0;
  for (const op of v as unknown[]) {
    if (!isRecord(op)) return 'an op must be an object';
    const keyProblem = checkKey(op.key);
    if (keyProblem !== null) return keyProblem;
    bytes += utf8ByteLength(op.key as string);
    if (op.type === 'put') {
      if (!(op.value instanceof Uint8Array)) return 'a put needs a byte value';
      if (op.value.length > L.MAX_VALUE_BYTES) return `a value exceeds ${L.MAX_VALUE_BYTES} bytes`;
      bytes += op.value.length;
    } else if (op.type !== 'delete') {
      return "an op's type must be 'put' or 'delete'";
    }
  }
  if (bytes > L.MAX_WRITE_BYTES) return `a write exceeds ${L.MAX_WRITE_BYTES} bytes`;
  return null;
}

/** A list of 1..max items, each valid by `check`. */
function checkList(v: unknown, name: string, max: number, check: (item: unknown) => string | null): string | null {
  if (!Array.isArray(v) || v.length < 1 || v.length > max) return `${name} must list 1..${max} items`;
  for (const item of v) {
    const problem = check(item);
    if (problem !== null) return problem;
  }
  return null;
}

function checkLeaseCheckpoint(v: unknown): string | null {
  if (!isRecord(v)) return 'a lease checkpoint must be an object';
  if (!isNonNegativeInt(v.remainingMs) || v.remainingMs > L.MAX_SESSION_TTL_MS) return `remainingMs must be an integer in [0, ${L.MAX_SESSION_TTL_MS}]`;
  return checkSessionId(v.sessionId);
}

function checkMove(c: Fields): string | null {
  if ((c.key === undefined) === (c.prefix === undefined)) return 'a key move names exactly one of key and prefix';
  const what = c.key !== undefined ? checkKey(c.key) : checkText(c.prefix, 'prefix', 0, L.MAX_KEY_BYTES);
  return what ?? checkLockName(c.toLock);
}

/**
 * Full validation of a decoded command (shape, types and limits). Returns a message, or null when the
 * command is valid. Never throws, whatever `c` is.
 */
export function validateCommand(c: unknown): string | null {
  if (!isRecord(c)) return 'a command must be an object';
  if (!isCommandType(c.type)) return 'unknown command type';
  if (!isNonNegativeInt(c.now)) return 'now must be an integer >= 0 (ms)';
  if (c.type === 'ExpireSession') return checkList(c.sessionIds, 'sessionIds', L.MAX_SESSIONS_PER_EXPIRY, checkSessionId);
  if (c.type === 'CheckpointLeases') return checkList(c.leases, 'leases', L.MAX_CHECKPOINTS_PER_ENTRY, checkLeaseCheckpoint);
  const metaProblem = validateRequestMeta(c);
  if (metaProblem !== null) return metaProblem;
  if (c.type === 'AuthChange') return checkAuthChange(c.change);
  if (c.type === 'MoveKeys') return checkMove(c);
  const sessionProblem = checkSessionId(c.sessionId);
  if (sessionProblem !== null) return sessionProblem;
  switch (c.type) {
    case 'OpenSession':
      if (!isNonNegativeInt(c.ttlMs) || c.ttlMs < L.MIN_SESSION_TTL_MS || c.ttlMs > L.MAX_SESSION_TTL_MS) {
        return `ttlMs must be an integer in [${L.MIN_SESSION_TTL_MS}, ${L.MAX_SESSION_TTL_MS}]`;
      }
      return checkText(c.clientName, 'clientName', 0, L.MAX_CLIENT_NAME_BYTES);
    case 'CloseSession':
    case 'RevokeSession':
      return null;
    case 'Acquire':
      if (typeof c.tryOnly !== 'boolean') return 'tryOnly must be a boolean';
      if (c.waitTimeoutMs !== undefined && (!isNonNegativeInt(c.waitTimeoutMs) || c.waitTimeoutMs > L.MAX_WAIT_TIMEOUT_MS)) {
        return `waitTimeoutMs must be an integer in [0, ${L.MAX_WAIT_TIMEOUT_MS}]`;
      }
      return checkLockName(c.lock);
    case 'CancelWait':
      return checkLockName(c.lock);
    case 'Release':
      return checkLockName(c.lock) ?? checkToken(c.token);
    case 'Write':
      return checkLockName(c.lock) ?? checkToken(c.token) ?? checkOps(c.ops);
  }
  return 'unknown command type';
}

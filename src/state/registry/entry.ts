// The shape of one registry entry: everything about one replicated command, in one place (issue 31).
import type { AuthTable } from '../auth/authTable';
import type { QuotaName } from '../auth/names';
import type { FencedKv } from '../fencedKv';
import type { LockTable } from '../locks';
import type { LockRecord, Session } from '../records';
import type { GrantEndCause, InvalidResult, LockEvent, NoStatuses, RefusedResult, ResultIn, SessionEndCause, SessionEndedResult, StatusTable } from '../results';
import type { SemaphoreTable } from '../semaphores';
import type { SessionTable } from '../sessions';
import type { UsageTable } from '../usage';

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

/** A body as protobufjs takes it to encode (fromObject): field names in camelCase. */
export type WireBody = Record<string, unknown>;

/**
 * A decoded body as the codec hands it over: unset fields read as their defaults ('', 0, false, [],
 * an empty array of bytes); a uint64 beyond 2^53 throws (the entry is undecodable). The codec owns the
 * protobuf library: src/state stays free of it.
 */
export interface BodyReader {
  str(field: string): string;
  num(field: string): number;
  bool(field: string): boolean;
  bytes(field: string): Uint8Array;
  strings(field: string): string[];
  list(field: string): BodyReader[];
  /** The set member of a oneof (undefined: none). */
  oneof(name: string): string | undefined;
}

/** What an entry's execution may use of the machine: its tables and the steps commands share. */
export interface MachineState {
  readonly sessions: SessionTable;
  readonly locks: LockTable;
  readonly semaphores: SemaphoreTable;
  readonly kv: FencedKv;
  readonly authTable: AuthTable;
  readonly usage: UsageTable;
  /** Would `adding` more of `quota` take `caller` (not '') above it? Nothing added is never refused. */
  overQuota(caller: string, quota: QuotaName, used: number, adding: number): boolean;
  endSession(index: number, now: number, sessionId: string, cause: SessionEndCause, events: LockEvent[]): SessionEndedResult | RefusedResult;
  endSessionsOf(index: number, now: number, owner: string, events: LockEvent[]): void;
  /** Returns the locks whose queues the session left (for admitReaders once the ending is done). */
  leaveSession(s: Session, cause: SessionEndCause, events: LockEvent[]): LockRecord[];
  releaseSession(index: number, now: number, s: Session, cause: SessionEndCause, events: LockEvent[]): string[];
  handOver(rec: LockRecord, index: number, now: number, cause: GrantEndCause | 'delay_ended', events: LockEvent[]): string | undefined;
  /** After waiters left these queues: readers now at the head of a lock held only shared are granted. */
  admitReaders(recs: readonly LockRecord[], index: number, now: number, events: LockEvent[]): void;
}

/** Who asks, for a permission rule: the caller (a user of an enabled auth table) and whose a session is. */
export interface PermissionScope {
  table: AuthTable;
  caller: string;
  sessionOwner(sessionId: string): string | undefined;
}

/** Fields every command has in the log: its type and the leader's clock. */
export interface CommandBase {
  type: string;
  now: number;
}

/** The meta an entry's decoder gets: the request's ids and caller, or only the clock for a leader's lease command. */
export type MetaOf<C> = C extends RequestMeta ? RequestMeta : { now: number };

/**
 * One replicated command. `C`: its TypeScript type; `S`: the statuses its execution yields besides a
 * refusal (every command may also be refused, or be `invalid`, see ResultOf); `R`: the statuses it declares
 * as its own (no other command answers them), with their stored form.
 */
export interface CommandEntry<C extends CommandBase, S extends string, R extends StatusTable = NoStatuses> {
  type: C['type'];
  /** 'request': carries RequestMeta and is de-duplicated; 'lease': a leader's lease duty, neither. */
  kind: C extends RequestMeta ? 'request' : 'lease';
  /**
   * The statuses its execution yields besides refused (checked by test/state/registry.test.ts): shared ones
   * or its own (registry/index.ts's UndeclaredStatuses fails to compile on any other).
   */
  statuses: readonly S[];
  /**
   * Its own result statuses: each one's StoredResult member number in state.proto and its fields (built with
   * results.ts's uint, str, opt...). resultStatuses.ts joins them with the shared ones.
   */
  results?: R;
  /** state.proto: the member of Command's `body` oneof it is written in, and its body there. */
  member: string;
  encode(c: C): WireBody;
  decode(b: BodyReader, meta: MetaOf<C>): C;
  /** Members older logs carry it in (read only, never written). */
  legacy?: Readonly<Record<string, (b: BodyReader, meta: MetaOf<C>) => C>>;
  /** The body's shape and limits, on a command whose type, clock and request meta are valid. Never throws. */
  validate(c: Record<string, unknown>): string | null;
  /** The permission rule at apply (auth on, caller a live user): the refusal, or null when it may run. */
  permit?(scope: PermissionScope, c: C): RefusedResult | null;
  execute(m: MachineState, index: number, c: C, events: LockEvent[]): ResultIn<S, R> | RefusedResult;
}

/** The shared outcomes any command may end in: refused, or invalid. */
export type SharedResult = RefusedResult | InvalidResult;

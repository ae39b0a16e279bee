import type { ClientTlsOptions } from './credentials';
import type { FenceLockError } from './errors';
import type { Logger } from './logger';
import type { ClientPorts } from './ports';

export interface FenceLockClientOptions {
  /**
   * host:port (client listener) of the cluster's nodes; the leader is found among them. A `fencelock-leader`
   * hint is followed only to one of these addresses (spelt the same way), so list every node.
   */
  endpoints: string[];
  /**
   * TLS material (see credentials.ts). Without it (and without `insecure`): FENCELOCK_CACERT / FENCELOCK_CERT /
   * FENCELOCK_KEY, else ./data/certs/ca.pem (+ client.pem, client-key.pem), else the system's root CAs.
   * The server's name is always verified against the endpoint's host (or tls.serverName).
   */
  tls?: ClientTlsOptions;
  /** Plaintext (no TLS), for a cluster started with "insecure": true. Env: FENCELOCK_INSECURE=1. */
  insecure?: boolean;
  /** Names this client in request headers; default 128 random bits in hex. 1..64 bytes. */
  clientId?: string;
  /** Deadline of one attempt of a call; default 2,000 ms. */
  requestTimeoutMs?: number;
  /** Budget of one operation including retries; default 10,000 ms (a blocking acquire adds its wait). */
  totalTimeoutMs?: number;
  /** pino-compatible logger; silent by default. */
  logger?: Logger;
  /**
   * Send Acquire, Release, Write and Get as messages on one long-lived stream per node (Pipeline.Calls)
   * instead of one unary call each: same semantics, far less overhead per call. Default true.
   */
  pipeline?: boolean;
  /**
   * A bearer token, `flt_<16 hex digits>_<secret>` (from `fencelock auth token issue USER`): every call,
   * unary or streaming, carries `authorization: Bearer <token>` metadata, over TLS and plaintext alike. With a
   * token the cluster takes the call for the token's user, whatever client certificate the connection shows
   * (docs/auth.md). Checked for shape when the client is built; never logged.
   */
  token?: string;
  /** Default client name of the sessions this client opens (openSession's `name` wins). */
  clientName?: string;
  /**
   * Labels every session of this client carries (openSession's `labels` win, key by key). Limits: README
   * "Limits" (at most 16; keys 1..64 bytes of a-z 0-9 _ . -; values up to 256 bytes; 1024 bytes in all).
   */
  labels?: Record<string, string>;
  /** Add host (os.hostname()) and pid labels to every session; default true. Either may be overridden by `labels`. */
  processLabels?: boolean;
  /**
   * @internal Not for applications: for the simulator and tests. The clock, timers, randomness and transport
   * the client runs on, each defaulting to the real one (performance.now, Node's timers, node:crypto, gRPC
   * over `tls`/`insecure`). A transport given here replaces every connection the client would open.
   */
  ports?: Partial<ClientPorts>;
}

/** One operation of a fenced write: put a value, or delete a key. */
export type WriteOp = { put: string; value: Uint8Array | string } | { delete: string };

export interface WriteResult {
  /** Log index at which the write applied. */
  index: bigint;
}

export interface WriteArgs {
  lock: string;
  token: bigint;
  sessionId: string;
  ops: WriteOp[];
}

export interface GetOptions {
  /** Answer from the contacted node's state without a ReadIndex round (may be stale). */
  staleOk?: boolean;
}

export interface GetResult {
  /** The key has a value. */
  found: boolean;
  value: Uint8Array;
  /** The key's watermark: the token of the last write that touched it; 0n for a key never written. */
  token: bigint;
  /** The lock the key belongs to, for good (also once deleted); '' for a key never written. */
  lock: string;
  /** The key was deleted (found is false): `lock` and `token` are still the key's. */
  deleted: boolean;
  /** Set when the key is bound to this slot of the semaphore `lock` (written under a permit, issue 33). */
  slot?: number;
}

export interface ListOptions {
  /** At most this many items (server default 100, at most 1000). */
  limit?: number;
  /** Resume after this key (exclusive). */
  startAfter?: string;
  /** Also list deleted keys (`deleted: true`, empty value), which keep their lock and watermark. */
  includeDeleted?: boolean;
}

export interface KeyValue {
  key: string;
  /** Empty for a deleted key. */
  value: Uint8Array;
  /** The key's watermark: the token of the last write that touched it. */
  token: bigint;
  /** The lock the key belongs to. */
  lock: string;
  /** The key was deleted (listed only with `includeDeleted`). */
  deleted: boolean;
}

export interface ListResult {
  items: KeyValue[];
  /** More keys with this prefix follow the last item. */
  more: boolean;
}

/** A session as describe() and watch() show it: its public handle and what its client said of itself. */
export interface SessionDetails {
  handle: string;
  clientName: string;
  labels: Record<string, string>;
}

export interface LockDescription {
  lock: string;
  held: boolean;
  holderSession: string;
  /** The holder's handle, client name and labels; null when free (or from a server older than labels). */
  holder: SessionDetails | null;
  token: bigint;
  /** Leader's wall clock (ms since epoch) when the granting entry was proposed; 0 when not held. */
  grantedAtMs: number;
  waiters: string[];
  /** The waiters, in the same order, with their client names and labels (empty from a server older than labels). */
  waiterSessions: SessionDetails[];
  /** Highest token ever issued for this lock (0n: never granted). */
  latestToken: bigint;
  /** While held: the lock-delay the current grant asked for (0: none). */
  lockDelayMs: number;
  /** In a lock-delay: when it ends by the leader's clock (ms since the epoch); 0 when not delayed. */
  delayedUntilMs: number;
  /** In a lock-delay: the time left by the serving node's clock (0 when not delayed, or over but not yet ended). */
  delayRemainingMs: number;
  /** The shared grants in force, in grant order, each with its own token (`held` is false while only these hold it). */
  sharedHolders: Array<{ session: SessionDetails | null; token: bigint; grantedAtMs: number }>;
  /** Which of `waiters` (same order) wait for a shared grant. */
  waiterShared: boolean[];
}

export interface ListLocksOptions {
  /** Only locks whose names start with this ('' = every lock the caller may describe). */
  prefix?: string;
  /** Only locks whose names sort after this one: the last name of the previous page. */
  startAfter?: string;
  /** 1..1000 per page; 0 or omitted = 100. The server refuses more with INVALID_ARGUMENT. */
  limit?: number;
  /** Also free locks nobody waits for that the server keeps (they own keys of the fenced store). */
  includeIdle?: boolean;
}

/** A queued session of a listed lock. */
export interface LockWaiter {
  /** Public handle of the waiting session. */
  session: string;
  /** How long it has waited, by the leader's clock (0 when unknown: queued before an upgrade). */
  waitingMs: number;
}

/** A lock as Lock.List shows it. */
export interface LockSummary {
  lock: string;
  held: boolean;
  /** Public handle of the holder's session ('' when free). */
  holderSession: string;
  /** The current grant's token (0n when free). */
  token: bigint;
  /** Leader's wall clock (ms since epoch) when the grant was proposed; 0 when free. */
  grantedAtMs: number;
  /** How long it has been held, by the leader's clock at the read; 0 when free. */
  heldForMs: number;
  latestToken: bigint;
  /** The head of the FIFO queue (at most 100); waiterCount says how many wait in all. */
  waiters: LockWaiter[];
  waiterCount: number;
  /** While held: the holder's handle, client name and labels (as lockInfo() shows them); null when free. */
  holder: SessionDetails | null;
  /** In a lock-delay: when it ends by the leader's clock (ms since the epoch); 0 when not delayed. */
  delayedUntilMs: number;
  /** In a lock-delay: the time left by the serving node's clock (0 when not delayed). */
  delayRemainingMs: number;
}

export interface ListLocksResult {
  /** In name (code point) order. */
  locks: LockSummary[];
  /** More locks follow the last one: ask again with startAfter = its name. */
  more: boolean;
}

/** REVOKED: an admin ended the grant (Lock.Revoke); the holder's session goes on. */
export type LockEventKind = 'GRANTED' | 'RELEASED' | 'EXPIRED' | 'REVOKED' | 'UNSPECIFIED';

/** What every watch event says: the grant it is about and the entry that caused it. */
export interface GrantEvent {
  kind: LockEventKind;
  sessionId: string;
  /** The grant's token. */
  token: bigint;
  /** Log index of the entry that caused the event. */
  index: bigint;
  /** GRANTED: the new holder's handle, client name and labels; null otherwise. */
  holder: SessionDetails | null;
  /** REVOKED only: who revoked the grant and why (absent otherwise). */
  revokedBy?: string;
  reason?: string;
}

export interface LockEvent extends GrantEvent {
  lock: string;
  /** A shared (read) grant started or ended (read-write locks); absent for an exclusive one. */
  shared?: boolean;
}

/** An event of a semaphore watch (FenceLockClient.watchSemaphore): one permit granted, released or expired. */
export interface PermitEvent extends GrantEvent {
  semaphore: string;
  /** The permit's slot, 0..permits-1: the resource its token fences (docs/fencing-downstream.md). */
  slot: number;
}

export interface WatchOptions {
  /** Called once when the watch stops for good (a non-retryable error); reconnects are silent. */
  onError?: (err: FenceLockError) => void;
  /**
   * Called, without stopping the watch, when the node serving it says events were lost: it replaced its state
   * by a snapshot from the leader (ABORTED, reason EVENTS_MISSED, naming the log index up to which), or this
   * client fell too far behind reading them (RESOURCE_EXHAUSTED, reason WATCH_BEHIND, naming the log index
   * from which). The watch goes on by itself on a new stream; read describe() for the lock's current state.
   * Without this callback the client logs a warning.
   */
  onMissed?: (err: FenceLockError) => void;
  /**
   * Called when the watch opens a new stream after a broken one (a node failed, events were missed): events
   * of the gap are not sent, so read the lock's state again if every transition matters (elections do).
   */
  onReconnect?: () => void;
}

export interface WatchHandle {
  cancel(): void;
}

export interface PeerStatus {
  id: string;
  address: string;
  match: bigint;
  next: bigint;
  state: string;
}

export interface NodeStatus {
  id: string;
  address: string;
  role: string;
  term: bigint;
  leader: string;
  leaderAddress: string;
  commit: bigint;
  applied: bigint;
  snapshotIndex: bigint;
  lastIndex: bigint;
  peers: PeerStatus[];
  /** Open sessions, held locks and queued waiters in this node's state, as of `applied`. */
  sessions: bigint;
  locksHeld: bigint;
  waiters: bigint;
}

/** One row of statusAll(): the node's status, or why it could not be had. */
export type EndpointStatus = { endpoint: string; ok: true; status: NodeStatus } | { endpoint: string; ok: false; error: FenceLockError };

export interface OpenSessionOptions {
  /** Lease length; default 10,000 ms. The server enforces its bounds (default 3,000..300,000). */
  ttlMs?: number;
  /** Informational name shown by the server, up to 128 bytes; default the client's `clientName`, else ''. */
  name?: string;
  /** Labels for this session, over the client's (see FenceLockClientOptions.labels). */
  labels?: Record<string, string>;
}

export interface WithLockOptions {
  ttlMs?: number;
  waitTimeoutMs?: number;
  /** The grant's lock-delay (Session.acquire's AcquireOptions.lockDelayMs). */
  lockDelayMs?: number;
  /** 'exclusive' (default) or 'shared' (Session.acquire's AcquireOptions.mode); withReadLock sets 'shared'. */
  mode?: LockMode;
}

/**
 * A grant's mode (docs/architecture.md#read-write-locks): one exclusive holder, or shared holders together.
 * A shared grant's writes are refused SHARED_GRANT.
 */
export type LockMode = 'exclusive' | 'shared';

export interface CloseOptions {
  /**
   * How long to wait for the cluster to confirm that this client's sessions are closed (default 2,000 ms).
   * After it the channels close anyway; a session whose close was not confirmed expires on the server when
   * its lease runs out there, and its locks are released then. 0: do not wait at all.
   */
  timeoutMs?: number;
}

/** What a key move moves: one key, or every key under a prefix (at most 10,000 per call). */
export type MoveTarget = { key: string } | { prefix: string };

export interface RevokeLockOptions {
  /** Why, for the audit log and the watch event (up to 256 bytes). */
  reason?: string;
  /** Revoke only while this is the current grant's token (from describe()); default: whatever grant is current. */
  token?: bigint;
}

export interface RevokeLockResult {
  /** The token of the grant that ended. */
  endedToken: bigint;
  /** Public handle of the waiter the lock went to ('' when it became free), and its token (0n then). */
  nextHolderSession: string;
  nextToken: bigint;
}

export interface MoveResult {
  /** How many keys changed lock. */
  moved: number;
  /** Log index of the entry that moved them. */
  index: bigint;
}

// ----- auth (docs/auth.md) -----

/** A permission a role's rule grants: on lock names (lock), on keys (write, read), or auth itself (admin). */
export type AuthPermission = 'lock' | 'write' | 'read' | 'admin';

export interface AuthRule {
  /** 'unspecified' for a permission this client does not know (a newer server). */
  permission: AuthPermission | 'unspecified';
  /** The rule allows every name that starts with it; '' = every name. */
  prefix: string;
}

export interface AuthQuota {
  /** sessions, locks, waiters, keys, store_bytes or dedup_clients (docs/auth.md, "Quotas"). */
  name: string;
  value: bigint;
}

export interface WhoAmI {
  /** The identity the cluster takes this client for; '' when the calls carry none. */
  identity: string;
  /** How the identity was found: 'certificate', 'token', or '' (none). */
  via: string;
  authEnabled: boolean;
  roles: string[];
  /** Every rule of those roles. */
  rules: AuthRule[];
}

export interface AuthUser {
  name: string;
  roles: string[];
}

export interface AuthRole {
  name: string;
  rules: AuthRule[];
  /** The quotas this role sets; the others keep their defaults. */
  quotas: AuthQuota[];
}

/** An issued token as listed: its id and user, never its secret. */
export interface AuthTokenInfo {
  id: string;
  user: string;
}

export interface AuthListing {
  authEnabled: boolean;
  users: AuthUser[];
  roles: AuthRole[];
  tokens: AuthTokenInfo[];
}

/** An open session as an admin lists it (client.auth.sessionList): never its secret id. */
export interface SessionSummary {
  /** The public handle (16 hex characters): what Describe and Watch show as holder, and sessionRevoke takes. */
  handle: string;
  /** Who opened it ('' for a session opened before auth was on). */
  identity: string;
  clientName: string;
  /** As given when it opened (host and pid among them for the client library's sessions). */
  labels: Record<string, string>;
  /** Locks held, sorted. */
  locks: string[];
  /** Locks waited for, sorted. */
  waiting: string[];
  /** Since it opened, by the leader's wall clock. */
  ageMs: number;
  ttlMs: number;
}

export interface AuthChangeResult {
  /** Log index of the entry that applied the change. */
  index: bigint;
}

export interface IssuedToken {
  /** 16 hex digits; names the token in auth list and tokenRevoke. */
  tokenId: string;
  /** The bearer token `flt_<id>_<secret>`, shown once: the cluster keeps only a digest of the secret. */
  token: string;
}

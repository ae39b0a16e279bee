// Every limit of the replicated state machine, in one place (TigerBeetle style: an explicit bound on
// everything). The API layer validates requests against these before proposing them; the state machine
// checks them again when it applies an entry, because a log entry must never make a replica throw.
//
// Changing a limit changes how committed entries are applied, so every replica of a cluster must run with
// the same values: these are constants, not configuration.

// The limits a client can check before sending live in the protocol leaf module (one source for both sides).
import * as api from '../protocol/limits';
import { MAX_KEY_BYTES } from '../protocol/limits';
export * from '../protocol/limits';
// Among them MAX_LOCKS_PER_ACQUIRE_ALL (64): the names of one AcquireAll, checked by the API and again at apply.

/** Open sessions at once. Beyond: OpenSession is refused with TOO_MANY_SESSIONS. */
export const MAX_SESSIONS = 100_000;
/** Sessions one ExpireSession entry ends (the leader also bounds an entry by the locks they hold). */
export const MAX_SESSIONS_PER_EXPIRY = 1_000;
/** Lease checkpoints in one CheckpointLeases entry. */
export const MAX_CHECKPOINTS_PER_ENTRY = 1_000;
/** Lock-delays one EndLockDelay entry ends. */
export const MAX_DELAYS_PER_ENTRY = 1_000;
/** Queued waiters of one lock. Beyond: Acquire is refused with TOO_MANY_WAITERS. */
export const MAX_WAITERS_PER_LOCK = 10_000;
/**
 * Lock records kept at once: held locks, locks with waiters, and locks that own keys of the fenced store
 * (idle locks without keys are forgotten). Beyond: a new lock is refused with TOO_MANY_LOCKS.
 */
export const MAX_LOCKS = 200_000;
/** Locks one session holds or waits for at once. Beyond: Acquire is refused with TOO_MANY_LOCKS. */
export const MAX_LOCKS_PER_SESSION = 10_000;
/**
 * Semaphore records kept at once (those with a permit held or a waiter; idle ones are forgotten). Beyond: a
 * new semaphore is refused with TOO_MANY_LOCKS.
 */
export const MAX_SEMAPHORES = 10_000;
/** Keys of the fenced store, tombstones of deleted keys included. Beyond: STORE_FULL. */
export const MAX_KEYS = 1_000_000;
/** Summed key and value bytes of the fenced store, tombstones included. Beyond: STORE_FULL. */
export const MAX_STORE_BYTES = 256 * 1024 * 1024;

/** Request de-duplication: results kept per client (the oldest applied is dropped first). */
export const DEDUP_MAX_RESULTS_PER_CLIENT = 1_000;
/** Request de-duplication: clients remembered (the least recently used is forgotten first). */
export const DEDUP_MAX_CLIENTS = 10_000;
/** Request de-duplication: results kept over all clients (least recently used clients are forgotten). */
export const DEDUP_MAX_RESULTS = 200_000;
/**
 * Request de-duplication: results kept for one identity (caller other than ''), its share of
 * DEDUP_MAX_RESULTS (beyond: its own least recently used clients are forgotten, docs/auth.md "Retry records
 * per identity"). A tenth, so that no identity alone fills the table others need.
 */
export const DEDUP_MAX_RESULTS_PER_IDENTITY = 20_000;

/**
 * The identity a node stamps on a request (RequestMeta.caller): a user name (1..MAX_AUTH_NAME_BYTES) or,
 * with auth off, `address:IP`. Printable ASCII, so its bytes are its characters.
 */
export const MAX_CALLER_BYTES = 128;
/** User and role names: 1..128 bytes (USER_NAME in auth/names.ts). */
export const MAX_AUTH_NAME_BYTES = 128;
/** Token ids: 64 random bits drawn by the leader, as 16 lowercase hex characters. */
export const TOKEN_ID_HEX_CHARS = 16;
/** Token hashes: SHA-256 of the 256-bit secret, as 64 lowercase hex characters. */
export const TOKEN_HASH_HEX_CHARS = 64;
/** The prefix of a permission rule: as long as the longest name it can match (a key). */
export const MAX_RULE_PREFIX_BYTES = MAX_KEY_BYTES;
/** Users of the auth table. Beyond: AUTH_FULL. */
export const MAX_USERS = 10_000;
/** Roles of the auth table. Beyond: AUTH_FULL. */
export const MAX_ROLES = 1_000;
/** Rules of one role (bounds the cost of one permission check with MAX_ROLES_PER_USER). Beyond: AUTH_FULL. */
export const MAX_RULES_PER_ROLE = 100;
/** Roles of one user. Beyond: AUTH_FULL. */
export const MAX_ROLES_PER_USER = 32;
/** Bearer tokens of the auth table. Beyond: AUTH_FULL. */
export const MAX_TOKENS = 100_000;
/** Bearer tokens of one user. Beyond: AUTH_FULL. */
export const MAX_TOKENS_PER_USER = 100;
/** Largest value a role may set a quota to (every quota counts far less than this). */
export const MAX_QUOTA_VALUE = 1_000_000_000_000;

/**
 * What one identity may use when none of its roles sets a quota (docs/auth.md "Quotas"). Each default is at
 * most 1/QUOTA_HEADROOM of every limit the identity shares with others (QUOTA_SHARED_LIMITS), so that no
 * identity at its defaults fills a resource others need: 10 identities at their defaults fill MAX_SESSIONS.
 */
export const DEFAULT_QUOTAS = Object.freeze({
  /** Open sessions the identity opened. */
  sessions: 10_000,
  /** Locks its sessions hold. */
  locks: 20_000,
  /** Queued waits of its sessions: a tenth of one lock's queue, which every identity may share. */
  waiters: 1_000,
  /** Keys of the fenced store it wrote last (tombstones included). */
  keys: 100_000,
  /** Key and value bytes of those keys. */
  store_bytes: 16 * 1024 * 1024,
  /** Client ids whose retry records are kept. */
  dedup_clients: 1_000,
  /**
   * Semaphores its sessions hold a permit of or wait for: a tenth of MAX_SEMAPHORES. A semaphore is kept only
   * while someone is in it, so identities at this default cannot fill the table the others need.
   */
  semaphores: 1_000,
  // Counted by the node's listener over all of the identity's connections (src/node/api/connectionLimits.ts),
  // not by the state machine: sixteen times what one connection may hold (with auth off, every client of
  // one host is one identity; the library opens one Pipeline and one KeepAlive stream per client).
  /** Lock.Watch streams open at once. */
  watch_streams: 4_096,
  /** Pipeline.Calls streams open at once. */
  pipeline_streams: 1_024,
  /** Session.KeepAlive streams open at once. */
  keepalive_streams: 1_024,
  /** Pipeline calls in flight or answered but unsent. */
  calls_in_flight: 131_072,
});

/** How many times a quota's default fits in each limit it shares with other identities (at least). */
export const QUOTA_HEADROOM = 10;

/**
 * The shared limits each quota keeps an identity well below, by the quota: what an identity at that quota
 * could otherwise fill for everyone. Quotas counted per node listener have no shared limit to fill (the caps
 * that bound a node are per connection, docs/security.md); an empty list says so.
 */
export const QUOTA_SHARED_LIMITS: Readonly<Record<keyof typeof DEFAULT_QUOTAS, ReadonlyArray<{ name: string; value: number }>>> = Object.freeze({
  sessions: [{ name: 'MAX_SESSIONS', value: MAX_SESSIONS }],
  // A held lock is a lock record; so is a wait on a lock nobody holds yet.
  locks: [{ name: 'MAX_LOCKS', value: MAX_LOCKS }],
  waiters: [
    { name: 'MAX_WAITERS_PER_LOCK', value: MAX_WAITERS_PER_LOCK },
    { name: 'MAX_LOCKS', value: MAX_LOCKS },
  ],
  keys: [{ name: 'MAX_KEYS', value: MAX_KEYS }],
  store_bytes: [{ name: 'MAX_STORE_BYTES', value: MAX_STORE_BYTES }],
  dedup_clients: [{ name: 'DEDUP_MAX_CLIENTS', value: DEDUP_MAX_CLIENTS }],
  semaphores: [{ name: 'MAX_SEMAPHORES', value: MAX_SEMAPHORES }],
  watch_streams: [],
  pipeline_streams: [],
  keepalive_streams: [],
  calls_in_flight: [],
});

/** All limits as one read-only record, e.g. for a status page. */
export const LIMITS = Object.freeze({
  ...api,
  MAX_SESSIONS,
  MAX_SESSIONS_PER_EXPIRY,
  MAX_CHECKPOINTS_PER_ENTRY,
  MAX_DELAYS_PER_ENTRY,
  MAX_WAITERS_PER_LOCK,
  MAX_LOCKS,
  MAX_LOCKS_PER_SESSION,
  MAX_SEMAPHORES,
  MAX_KEYS,
  MAX_STORE_BYTES,
  DEDUP_MAX_RESULTS_PER_CLIENT,
  DEDUP_MAX_CLIENTS,
  DEDUP_MAX_RESULTS,
  DEDUP_MAX_RESULTS_PER_IDENTITY,
  MAX_CALLER_BYTES,
  MAX_AUTH_NAME_BYTES,
  TOKEN_ID_HEX_CHARS,
  TOKEN_HASH_HEX_CHARS,
  MAX_RULE_PREFIX_BYTES,
  MAX_USERS,
  MAX_ROLES,
  MAX_RULES_PER_ROLE,
  MAX_ROLES_PER_USER,
  MAX_TOKENS,
  MAX_TOKENS_PER_USER,
  MAX_QUOTA_VALUE,
});

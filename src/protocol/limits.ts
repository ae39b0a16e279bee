// The limits of the public API that a client can check before it sends a request. The state machine's own
// limits (src/state/limits.ts) import these, so client and server cannot disagree. Constants, because every
// replica of a cluster must apply committed entries with the same values.

/** Lock names: 1..256 UTF-8 bytes. */
export const MAX_LOCK_NAME_BYTES = 256;
/** Keys of the fenced store: 1..512 UTF-8 bytes. */
export const MAX_KEY_BYTES = 512;
/** One value of the fenced store: up to 64 KiB. */
export const MAX_VALUE_BYTES = 64 * 1024;
/** Operations in one fenced write: 1..64. */
export const MAX_OPS_PER_WRITE = 64;
/** Summed key and value bytes of one fenced write (keeps one log entry well under 1 MiB). */
export const MAX_WRITE_BYTES = 512 * 1024;
/** Client names given at OpenSession (informational, may be empty). */
export const MAX_CLIENT_NAME_BYTES = 128;
/** Client ids used for request de-duplication: 1..128 UTF-8 bytes ('' = not de-duplicated). */
export const MAX_CLIENT_ID_BYTES = 128;
/** Session ids: 128 random bits chosen by the leader, as 32 lowercase hex characters. */
export const SESSION_ID_HEX_CHARS = 32;
/** Session TTL bounds. The minimum must stay well above the election timeout (docs/architecture.md#sessions-and-expiry). */
export const MIN_SESSION_TTL_MS = 3_000;
export const MAX_SESSION_TTL_MS = 24 * 60 * 60 * 1000;
/** Upper bound of the informational wait timeout carried by Acquire. */
export const MAX_WAIT_TIMEOUT_MS = 60 * 60 * 1000;
/**
 * Upper bound of the lock-delay an Acquire may ask for (docs/architecture.md#lock-delay): long enough for a
 * side effect that cannot check a token to finish or time out, short enough that a lock is never out of use
 * for long after a crash.
 */
export const MAX_LOCK_DELAY_MS = 60 * 1000;
/** Upper bound on the entries one list() query returns; a larger limit is refused INVALID_ARGUMENT. */
export const MAX_LIST_LIMIT = 1_000;
/** Waiters Lock.List shows per lock (the head of the queue; it tells how many wait in all). */
export const MAX_LIST_WAITERS = 100;
/** Keys one MoveKeys entry moves at most (the entry's apply time is bounded). Beyond: refused, nothing moves. */
export const MAX_MOVE_KEYS = 10_000;
/** Labels one session carries (host and pid count as labels: src/protocol/labels.ts). */
export const MAX_SESSION_LABELS = 16;
/** A label key: 1..64 bytes of a-z 0-9 _ . - */
export const MAX_LABEL_KEY_BYTES = 64;
/** A label value: 0..256 UTF-8 bytes, no control characters. */
export const MAX_LABEL_VALUE_BYTES = 256;
/**
 * All of a session's label keys and values together. Every open session keeps them in memory and in
 * snapshots: at MAX_SESSIONS (100,000) sessions this bounds them to about 100 MB.
 */
export const MAX_LABELS_BYTES = 1024;
/** The reason an admin gives for Lock.Revoke (audit log and watch event): 0..256 UTF-8 bytes. */
export const MAX_REVOKE_REASON_BYTES = 256;
/** Grants one keepalive renewal asks about (KeepAliveRequest.held); a client holding more asks in turns. */
export const MAX_HELD_PER_RENEWAL = 64;
/**
 * Pipeline calls coalesced into one message (CallRequest.calls) by the client, and the answers one
 * CallResponse.answers carries: enough to fill a busy turn, few enough that one message stays small.
 */
export const MAX_CALLS_PER_BATCH = 64;
/** Encoded calls in one batch: the client sends a call that would pass this in the next message. */
export const MAX_BATCH_BYTES = 1024 * 1024;
/** The response header by which a node says it takes batches on the Pipeline, with MAX_CALLS_PER_BATCH. */
export const PIPELINE_BATCH_HEADER = 'fencelock-pipeline-batch';
/** Permits of one semaphore (issue 33): 1..MAX_PERMITS. */
export const MAX_PERMITS = 1_024;
/**
 * Lock names of one AcquireAll (issue 33): 1..MAX_LOCKS_PER_ACQUIRE_ALL, distinct. One entry grants them all
 * and a waiter sits in each of their queues, so the bound keeps one entry's work and one waiter's footprint small.
 */
export const MAX_LOCKS_PER_ACQUIRE_ALL = 64;

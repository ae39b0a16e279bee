// Response metadata keys of the public API (see proto/fencelock/v1/lock.proto). The server sets them, the
// client reads them: both import them from here.

/** The leader's client address, on a refusal by a node that does not lead. */
export const META_LEADER = 'fencelock-leader';
/** The machine-readable cause of a refusal: one of FenceLockReason (src/protocol/reasons.ts). */
export const META_REASON = 'fencelock-reason';
/** The key's current watermark, on fencing refusals. */
export const META_WATERMARK = 'fencelock-watermark';
/** The key a refusal is about (percent-encoded UTF-8). */
export const META_KEY = 'fencelock-key';
/** With WRONG_LOCK for a key: the lock that key belongs to (percent-encoded UTF-8). */
export const META_KEY_LOCK = 'fencelock-key-lock';
/** With RESOURCE_EXHAUSTED, reason QUOTA_EXCEEDED: the name of the per-identity quota (docs/auth.md). */
export const META_QUOTA = 'fencelock-quota';
/** With FAILED_PRECONDITION, reason LOCK_DELAYED: when the lock's delay ends by the leader's clock (ms since the epoch). */
export const META_DELAYED_UNTIL = 'fencelock-delayed-until';

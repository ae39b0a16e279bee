// Limits on what one client connection may hold open on the client listener, so that no client can make a
// node buffer without bound or crowd out the others (issue 10). Every value is in docs/limits.md.
//
// A connection is one HTTP/2 connection (one TCP connection), told apart by its peer address and port
// (call.getPeer()). The client library gives every FenceLockClient connections of its own (one per node it
// talks to) and opens on each one Pipeline stream, one KeepAlive stream and one Watch stream per watch(), so
// it stays far below these caps; they are sized for hand-written clients that share one connection widely.
// An attacker can still open many connections: the per-identity quotas (docs/auth.md) bound the sum.

/**
 * HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS of the client listener. Every call (a unary call too) is a stream; an
 * idle one costs the node about 13 KiB, and one whose request is still arriving up to the 4 MiB message
 * limit. Above the stream caps below, so that their clear RESOURCE_EXHAUSTED comes first: a client over this
 * limit is not refused but waits (its HTTP/2 library queues new streams until others end).
 */
export const MAX_CONCURRENT_STREAMS_PER_CONNECTION = 1_024;

/**
 * Lock.Watch streams open at once on one connection. Each may hold MAX_WATCH_BACKLOG_EVENTS unsent events, so
 * this bounds what watches can pin per connection to a few tens of MiB; an application watching more locks
 * through one connection than this is unusual (the library opens one stream per watch()).
 */
export const MAX_WATCHES_PER_CONNECTION = 256;

/** Pipeline.Calls streams open at once on one connection (the library opens one). */
export const MAX_PIPELINES_PER_CONNECTION = 64;

/** Session.KeepAlive streams open at once on one connection (the library opens one, for all its sessions). */
export const MAX_KEEPALIVES_PER_CONNECTION = 64;

/**
 * Pipeline calls on one stream that are in flight or answered but not yet sent to the client. Beyond it a
 * call is refused, so one stream cannot pile up unbounded work; counting unsent answers means a client that
 * does not read its answers cannot make the node hold more of them.
 */
export const MAX_CALLS_IN_FLIGHT_PER_STREAM = 4_096;

/** The same, summed over all Pipeline streams of one connection: two full streams. */
export const MAX_PIPELINE_CALLS_PER_CONNECTION = 8_192;

/**
 * Events a Watch stream may have waiting to be sent (beyond what HTTP/2 flow control has in flight, about
 * 64 KiB or some 800 events) before the node ends it with RESOURCE_EXHAUSTED, reason WATCH_BEHIND. A reader
 * that keeps up never gets near it; one that stops reading would otherwise make the node keep every event of
 * the lock for it. A burst of events from one apply batch counts too (over 256 entries of one lock, which a
 * follower catching up may apply at once): the watcher is then told it missed events, as after a snapshot.
 */
export const MAX_WATCH_BACKLOG_EVENTS = 512;

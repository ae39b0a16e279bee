// The HTTP listener's limits (docs/limits.md "HTTP gateway"). Per identity, the gateway's streams count
// against the same quotas as gRPC streams (watch_streams, keepalive_streams), because it calls the same
// capped handlers (servedMethods.ts); what is below protects the listener itself.
import { MAX_OPS_PER_WRITE, MAX_WRITE_BYTES } from '../../state/limits';

/**
 * The largest request body read. The largest legal request is a fenced write at its limits: MAX_WRITE_BYTES
 * of keys and values, base64 in JSON (4/3), plus the JSON around each op (under 128 bytes) and 4 KiB for the
 * rest (header, lock, session, token). About 700 KiB; a larger body is refused (413) before it is parsed.
 */
export const MAX_HTTP_BODY_BYTES = Math.ceil((MAX_WRITE_BYTES * 4) / 3) + MAX_OPS_PER_WRITE * 128 + 4096;

/** Request line and headers together (Node's own default, made explicit); above it: 431. */
export const MAX_HTTP_HEADER_BYTES = 16 * 1024;

/** A client must have sent its whole header block within this long of connecting (slowloris). */
export const HTTP_HEADERS_TIMEOUT_MS = 5_000;

/** ... and its whole request, body included, within this long. */
export const HTTP_REQUEST_TIMEOUT_MS = 15_000;

/** How often Node checks the two deadlines above (its default, 30 s, would let a drip live that long). */
export const HTTP_DEADLINE_CHECK_MS = 1_000;

/** A TLS handshake not done within this long is dropped. */
export const HTTP_TLS_HANDSHAKE_TIMEOUT_MS = 5_000;

/** An idle kept-alive connection is closed after this long. */
export const HTTP_KEEPALIVE_IDLE_MS = 5_000;

/** Open connections at once, over all clients; beyond it new ones are closed at once. */
export const MAX_HTTP_CONNECTIONS = 1_024;

/** An event stream (SSE) sends a comment this often, so proxies and clients see it alive. */
export const SSE_HEARTBEAT_MS = 15_000;

/** A renewal that gets no answer within this long (the node could not confirm its leadership) is 504. */
export const HTTP_RENEWAL_WAIT_MS = 5_000;

// The peer transport's own limits, whatever the carrier: each default is a constructor option.

/** Hard limit of one frame (one encoded MessageBatch) on the peer link: room for snapshot chunks. */
export const MAX_PEER_MESSAGE_BYTES = 64 * 1024 * 1024;

/** Defaults of the transport's own limits (each is a constructor option). */
export const DEFAULT_MAX_QUEUED_MESSAGES_PER_PEER = 1_024;
export const DEFAULT_MAX_QUEUED_BYTES_PER_PEER = 64 * 1024 * 1024;
/** A flush cuts the queue into batches of at most this many (estimated) bytes; one message may exceed it. */
export const DEFAULT_MAX_BATCH_BYTES = 4 * 1024 * 1024;
/** The policy's reconnect backoff for the peer stream. */
export const DEFAULT_RECONNECT_BACKOFF_MIN_MS = 50;
export const DEFAULT_RECONNECT_BACKOFF_MAX_MS = 1_000;
/**
 * A stream the peer has not accepted after this long is abandoned together with its connection. A SYN
 * into a black hole would otherwise wait for the kernel's retries (up to minutes; grpc-js sets no connect
 * timeout) and the core would not hear that the peer is unreachable.
 */
export const DEFAULT_CONNECT_TIMEOUT_MS = 2_000;
/** close() waits this long for each outgoing stream to end cleanly before cancelling it. */
export const CLOSE_GRACE_MS = 500;

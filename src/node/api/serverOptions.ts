// Options of the client listener's grpc.Server (the public API: Session, Lock, KV, Pipeline, Cluster).
//
// Why 4 MiB. grpc-js buffers a whole message before anything of ours runs, so this limit is what one
// request can make the node allocate before validation. The largest request the API accepts is one fenced
// write at its limits (src/state/limits.ts): MAX_OPS_PER_WRITE (64) ops whose keys and values sum to
// MAX_WRITE_BYTES (512 KiB). Its framing adds little: per op a tag and length for the Op, its key and its
// value (under 16 bytes), then the header (client id up to 128 bytes and two varints), the lock name (up to
// 256 bytes), the session id (32) and the token; carried on the Pipeline stream, a CallRequest adds its
// call_id, timeout and one more tag and length. That is under 530 KiB. 4 MiB leaves room for growth of
// those limits and for clients that encode wastefully, while a client can no longer make a node buffer
// 64 MiB per call (the peer listener's limit, MAX_PEER_MESSAGE_BYTES in src/transport/options.ts, which
// stays: snapshot chunks need it). A request above the limit is refused by grpc-js with RESOURCE_EXHAUSTED
// before it is decoded; one between ~530 KiB and 4 MiB is decoded and refused by validation with
// INVALID_ARGUMENT naming the field and the limit.
//
// Only what the node receives is capped here. Responses are not: a List of MAX_LIST_LIMIT items may be
// larger than 4 MiB.
import type { ChannelOptions } from '@grpc/grpc-js';
import { SERVER_KEEPALIVE_OPTIONS } from '../../transport';
import { MAX_OPS_PER_WRITE, MAX_WRITE_BYTES } from '../../state/limits';
import { MAX_CONCURRENT_STREAMS_PER_CONNECTION } from './streamLimits';

/** Hard limit of one message a client sends to the public API (after decompression). */
export const MAX_CLIENT_MESSAGE_BYTES = 4 * 1024 * 1024;

/**
 * Upper bound of the encoded size of the largest request the API accepts (see above): the write payload,
 * 16 bytes of framing per op, and 1 KiB for everything else. Kept here so a test can check the limit
 * stays above it.
 */
export const MAX_LEGAL_REQUEST_BYTES = MAX_WRITE_BYTES + MAX_OPS_PER_WRITE * 16 + 1024;

/**
 * Options for the client listener's grpc.Server. The keepalive policy is the peer listener's
 * (SERVER_KEEPALIVE_OPTIONS in src/transport/options.ts): clients may ping every second, with or without
 * calls, and the server pings them so that dead connections are cleaned up. Streams per connection: see
 * streamLimits.ts.
 */
export const CLIENT_SERVER_OPTIONS: ChannelOptions = {
  ...SERVER_KEEPALIVE_OPTIONS,
  'grpc.max_receive_message_length': MAX_CLIENT_MESSAGE_BYTES,
  'grpc.max_concurrent_streams': MAX_CONCURRENT_STREAMS_PER_CONNECTION,
};

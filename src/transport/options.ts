// gRPC channel and server options for the Raft peer links (the transport's own limits are in limits.ts).
//
// Why these values (docs/containers.md#reconnects): grpc-js with default options kept using a dead
// HTTP/2 connection for minutes after a peer came back at a new address. Keepalive every ~2 s (also
// without calls), a short DNS re-resolution interval and a short reconnect backoff bring recovery to a
// few seconds. The server side must accept those pings, or a strict server answers with GOAWAY
// (too_many_pings) and the client doubles its ping interval.
import type { ChannelOptions } from '@grpc/grpc-js';
import { MAX_PEER_MESSAGE_BYTES } from './limits';

export {
  CLOSE_GRACE_MS,
  DEFAULT_CONNECT_TIMEOUT_MS,
  DEFAULT_MAX_BATCH_BYTES,
  DEFAULT_MAX_QUEUED_BYTES_PER_PEER,
  DEFAULT_MAX_QUEUED_MESSAGES_PER_PEER,
  DEFAULT_RECONNECT_BACKOFF_MAX_MS,
  DEFAULT_RECONNECT_BACKOFF_MIN_MS,
  MAX_PEER_MESSAGE_BYTES,
} from './limits';

export const KEEPALIVE_TIME_MS = 2_000;
export const KEEPALIVE_TIMEOUT_MS = 1_000;

/** Options of the client channel to one peer. */
export const PEER_CHANNEL_OPTIONS: ChannelOptions = {
  'grpc.keepalive_time_ms': KEEPALIVE_TIME_MS,
  'grpc.keepalive_timeout_ms': KEEPALIVE_TIMEOUT_MS,
  'grpc.keepalive_permit_without_calls': 1,
  'grpc.initial_reconnect_backoff_ms': 100,
  'grpc.max_reconnect_backoff_ms': 1_000,
  'grpc.dns_min_time_between_resolutions_ms': 1_000,
  'grpc.max_send_message_length': MAX_PEER_MESSAGE_BYTES,
  'grpc.max_receive_message_length': MAX_PEER_MESSAGE_BYTES,
  // The stream is long-lived and reconnected by the transport itself. With retries on, grpc-js keeps a
  // copy of every written message until the call commits: no use here, only memory and copies.
  'grpc.enable_retries': 0,
  // One subchannel per peer client, not shared through the process-wide pool: closing one transport
  // (tests run several in one process) never touches another's connection.
  'grpc.use_local_subchannel_pool': 1,
};

/**
 * Options the node passes when it creates its grpc.Server (shared by the peer service and the public
 * API). grpc-js servers do not police client pings today, but a grpc-core based server does, and these
 * are the knobs that make it accept a ping every 2 s, with or without calls. The server also pings its
 * clients so that the inbound half of a dead connection is cleaned up.
 */
export const SERVER_KEEPALIVE_OPTIONS: ChannelOptions = {
  'grpc.keepalive_permit_without_calls': 1,
  'grpc.http2.min_ping_interval_without_data_ms': 1_000,
  'grpc.http2.min_time_between_pings_ms': 1_000,
  'grpc.http2.max_ping_strikes': 0,
  'grpc.keepalive_time_ms': 10_000,
  'grpc.keepalive_timeout_ms': 5_000,
};

/** Options of the peer listener's grpc.Server: the keepalive policy above, and room for snapshot chunks. */
export const PEER_SERVER_OPTIONS: ChannelOptions = {
  ...SERVER_KEEPALIVE_OPTIONS,
  'grpc.max_receive_message_length': MAX_PEER_MESSAGE_BYTES,
  'grpc.max_send_message_length': MAX_PEER_MESSAGE_BYTES,
};

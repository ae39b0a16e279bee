export { GrpcPeerTransport } from './grpcPeerTransport';
export type { GrpcPeerTransportOptions, PeerStats, TransportLogger } from './grpcPeerTransport';
export { PEER_CHANNEL_OPTIONS, PEER_SERVER_OPTIONS, SERVER_KEEPALIVE_OPTIONS, MAX_PEER_MESSAGE_BYTES } from './options';
export { RAFT_PEER_SERVICE, RAFT_PEER_SERVICE_NAME, RAFT_PEER_STREAM_PATH } from './service';
export { MemoryPeerTransport, type MemoryNetwork } from './memoryPeerTransport';
export type { PeerTransport } from './peerTransport';

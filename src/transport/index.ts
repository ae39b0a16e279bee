export { GrpcPeerTransport } from './grpcPeerTransport';
export type { GrpcPeerTransportOptions } from './grpcPeerTransport';
export { PeerPolicy, type PeerPolicyOptions, type PeerStats, type TransportLogger } from './peerPolicy';
export type { Carrier, InboundStream, OutboundStream, PeerDialer, PeerHello, Refusal } from './carrier';
export { GrpcCarrier } from './grpcCarrier';
export { PEER_CHANNEL_OPTIONS, PEER_SERVER_OPTIONS, SERVER_KEEPALIVE_OPTIONS, MAX_PEER_MESSAGE_BYTES } from './options';
export { RAFT_PEER_SERVICE, RAFT_PEER_SERVICE_NAME, RAFT_PEER_STREAM_PATH } from './service';
export { MemoryCarrier, type MemoryWire } from './memoryCarrier';
export type { PeerTransport } from './peerTransport';

// The peer policy (peerPolicy.ts) over the gRPC carrier (grpcCarrier.ts): the node's peer transport as it
// was before the carrier split, kept for A/B measurement against the TLS framing carrier.
import type * as grpc from '@grpc/grpc-js';
import { GrpcCarrier, type GrpcCarrierOptions } from './grpcCarrier';
import { PeerPolicy, type PeerPolicyOptions } from './peerPolicy';

// The node creates its grpc.Server with these; re-exported so that one import gives the whole transport.
export { PEER_CHANNEL_OPTIONS, PEER_SERVER_OPTIONS } from './options';
export { CLUSTER_ID_METADATA, PEER_ADDRESS_METADATA, PEER_ID_METADATA } from './grpcCarrier';
export type { PeerStats, TransportLogger } from './peerPolicy';

export type GrpcPeerTransportOptions = PeerPolicyOptions & GrpcCarrierOptions;

export class GrpcPeerTransport extends PeerPolicy {
  private readonly grpcCarrier: GrpcCarrier;

  constructor(opts: GrpcPeerTransportOptions) {
    const carrier = new GrpcCarrier(opts);
    super(opts, carrier);
    this.grpcCarrier = carrier;
  }

  /** Adds the RaftPeer service to the node's server. Create the server with PEER_SERVER_OPTIONS. */
  register(server: grpc.Server): void {
    this.grpcCarrier.register(server);
  }
}

// The node's peer transport and the listener it is served on: the peer policy over the carrier the config
// names (docs/architecture.md#peer-transport). Only the peer messaging is reached there, never the public API.
import * as grpc from '@grpc/grpc-js';
import { GrpcPeerTransport, PEER_SERVER_OPTIONS } from '../transport/grpcPeerTransport';
import { PeerPolicy, type PeerPolicyOptions, type TransportLogger } from '../transport/peerPolicy';
import { TlsCarrier } from '../transport/tlsCarrier';
import type { NodeConfig } from './config';
import { bind, shutdown } from './grpcListen';
import type { Timers } from './runtime/ports';
import type { CertificateFiles } from './tls/certificateFiles';
import { peerChannelCredentials, peerServerCredentials } from './tls/credentials';

export interface PeerListener {
  readonly transport: PeerPolicy;
  /** Binds `peerListen`; the transport takes inbound streams from then on. */
  listen(): Promise<void>;
  /** New connections use the certificate files as they are now (SIGHUP). */
  refreshCredentials(): void;
  /** Ends the streams (in order, briefly), then stops listening. */
  close(): Promise<void>;
}

/** `timers`: the node's (runtime ports), which bound how long a stopping listener waits for its calls. */
export function openPeerListener(config: NodeConfig, certificates: CertificateFiles | null, logger: TransportLogger, timers: Pick<Timers, 'setTimeout' | 'clearTimeout'>): PeerListener {
  const peers = Object.fromEntries(Object.entries(config.members).map(([id, m]) => [id, m.peer]));
  const options: PeerPolicyOptions = {
    selfId: config.id,
    peers: { ...peers, ...config.peerAddresses },
    clusterId: config.clusterId,
    selfAddress: config.members[config.id]?.peer,
    logger,
  };
  return config.peerCarrier === 'tls' ? tlsListener(config, certificates, options) : grpcListener(config, certificates, options, timers);
}

function tlsListener(config: NodeConfig, certificates: CertificateFiles | null, options: PeerPolicyOptions): PeerListener {
  const carrier = new TlsCarrier({ credentials: certificates ? () => certificates.pem() : null });
  const transport = new PeerPolicy(options, carrier);
  return {
    transport,
    listen: async () => void (await carrier.bind(config.peerListen)),
    refreshCredentials: () => carrier.refreshCredentials(),
    close: async () => {
      // Streams end with END before the listener goes: the peers then log a stop, not a broken link.
      await transport.close();
      await carrier.close();
    },
  };
}

function grpcListener(config: NodeConfig, certificates: CertificateFiles | null, options: PeerPolicyOptions, timers: Pick<Timers, 'setTimeout' | 'clearTimeout'>): PeerListener {
  const server = new grpc.Server(PEER_SERVER_OPTIONS);
  const transport = new GrpcPeerTransport({
    ...options,
    channelCredentials: (peer) => peerChannelCredentials(certificates, peer),
    authenticatePeers: certificates !== null,
  });
  transport.register(server);
  return {
    transport,
    listen: () => bind(server, config.peerListen, peerServerCredentials(certificates)),
    // grpc-js's certificate providers hear the reload themselves (CertificateFiles).
    refreshCredentials: () => undefined,
    close: async () => {
      // Peer streams end with OK before the server goes (else it cancels them after its grace).
      await transport.close();
      await shutdown(server, timers);
    },
  };
}

// The gRPC carrier: one bidirectional RaftPeer.Stream call per outgoing stream, one grpc.Client (an HTTP/2
// connection) per peer, the hello in the call's metadata, a refusal as the call's status. Kept beside the
// TLS framing carrier for A/B measurement (`npm run bench:ab`) and for tools that speak the RaftPeer proto.
import * as grpc from '@grpc/grpc-js';
import { nodeIdOf } from '../certs/identity';
import type { NodeId } from '../raft/types';
import type { Carrier, InboundHandlers, InboundStream, OutboundEvents, OutboundStream, PeerDialer, PeerHello, Refusal, StreamEnd } from './carrier';
import { PEER_CHANNEL_OPTIONS } from './options';
import { isRemovalNotice, REMOVED_METADATA, removedRefusal } from './removalNotice';
import { RAFT_PEER_SERVICE, RAFT_PEER_STREAM_PATH, toBuffer } from './service';

/** Metadata key of the cluster id on peer streams. */
export const CLUSTER_ID_METADATA = 'fencelock-cluster-id';
/** Metadata keys of the sender's node id (trusted only without peer certificates) and peer address. */
export const PEER_ID_METADATA = 'fencelock-peer-id';
export const PEER_ADDRESS_METADATA = 'fencelock-peer-address';

export interface GrpcCarrierOptions {
  /** Extra client channel options, merged over PEER_CHANNEL_OPTIONS. */
  channelOptions?: grpc.ChannelOptions;
  /** Credentials to dial a peer (mutual TLS in production); plaintext when absent. */
  channelCredentials?: (peer: NodeId) => grpc.ChannelCredentials;
  /**
   * Inbound streams name their sender by the certificate they present. Needs the peer listener to require
   * client certificates.
   */
  authenticatePeers?: boolean;
}

type PeerCall = grpc.ClientDuplexStream<Uint8Array, Uint8Array>;
type InboundCall = grpc.ServerDuplexStream<Uint8Array, Uint8Array>;

const noop = (): void => {};

function identity(buf: Buffer): Buffer {
  return buf;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The refusal a status carries, as far as the policy acts on one (the removal notice). */
function refusalOf(code: grpc.status | undefined, metadata: grpc.Metadata | undefined): Refusal | undefined {
  const id = metadata?.get(REMOVED_METADATA)[0];
  if (typeof id !== 'string' || !isRemovalNotice(id, code, metadata)) return undefined;
  return { kind: 'removed', id, by: '' };
}

function statusOf(refusal: Refusal): Partial<grpc.StatusObject> {
  switch (refusal.kind) {
    case 'removed':
      return removedRefusal(refusal.id, refusal.by);
    case 'denied':
      return { code: grpc.status.PERMISSION_DENIED, details: refusal.why };
    case 'malformed':
      return { code: grpc.status.INVALID_ARGUMENT, details: refusal.why };
    case 'unavailable':
      return { code: grpc.status.UNAVAILABLE, details: refusal.why };
  }
}

class GrpcOutbound implements OutboundStream {
  private done = false;

  constructor(private readonly call: PeerCall, events: OutboundEvents) {
    const finish = (end: StreamEnd): void => {
      if (this.done) return;
      this.detach();
      events.closed(end);
    };
    // Response headers: the peer accepted the stream.
    call.on('metadata', () => {
      if (!this.done) events.open();
    });
    call.on('drain', () => {
      if (!this.done) events.drain();
    });
    call.on('data', noop); // PeerAck: nothing to do, but keep the readable side flowing
    call.on('error', (err: grpc.ServiceError) =>
      finish({ clean: false, why: `${err.code ?? ''} ${err.details ?? err.message}`, refusal: refusalOf(err.code, err.metadata) }));
    call.on('status', (status: grpc.StatusObject) =>
      finish({ clean: status.code === grpc.status.OK, why: `${status.code} ${status.details}`, refusal: refusalOf(status.code, status.metadata) }));
  }

  write(frame: Uint8Array): boolean {
    return this.call.write(frame);
  }

  end(graceMs: number): Promise<void> {
    this.done = true;
    const call = this.call;
    return new Promise<void>((resolve) => {
      const timer = setTimeout(finished, graceMs);
      function finished(): void {
        clearTimeout(timer);
        resolve();
      }
      call.removeAllListeners();
      call.on('status', finished);
      call.on('error', noop);
      call.end();
    });
  }

  cancel(): void {
    this.detach();
  }

  private detach(): void {
    this.done = true;
    this.call.removeAllListeners();
    this.call.on('error', noop);
    this.call.cancel(); // no-op when the call already has its status
  }
}

class GrpcDialer implements PeerDialer {
  private client: grpc.Client | null = null;

  constructor(
    private readonly address: string,
    private readonly credentials: () => grpc.ChannelCredentials,
    private readonly channelOptions: grpc.ChannelOptions,
  ) {}

  open(hello: PeerHello, events: OutboundEvents): OutboundStream {
    this.client ??= new grpc.Client(this.address, this.credentials(), this.channelOptions);
    const metadata = new grpc.Metadata();
    if (hello.clusterId) metadata.set(CLUSTER_ID_METADATA, hello.clusterId);
    metadata.set(PEER_ID_METADATA, hello.nodeId);
    if (hello.address) metadata.set(PEER_ADDRESS_METADATA, hello.address);
    const call = this.client.makeBidiStreamRequest<Uint8Array, Uint8Array>(RAFT_PEER_STREAM_PATH, toBuffer, identity, metadata, {});
    return new GrpcOutbound(call, events);
  }

  openTimedOut(): void {
    // A channel still CONNECTING is stuck in a TCP connect (a SYN into a partition: the kernel retries for
    // about two minutes, and grpc-js sets no connect timeout) or in the HTTP/2 handshake with a hung peer.
    // (grpc-js does not abort the old channel's pending connect: it ends when the kernel gives up or the
    // peer answers, at most one per attempt.) A READY channel is left to keepalive.
    if (this.client?.getChannel().getConnectivityState(false) === grpc.connectivityState.CONNECTING) this.reset();
  }

  reset(): void {
    this.client?.close();
    this.client = null;
  }

  close(): void {
    this.reset();
  }
}

class GrpcInbound implements InboundStream {
  readonly hello: PeerHello;
  readonly remote: string;
  private onData: ((buf: Buffer) => void) | null = null;

  constructor(private readonly call: InboundCall, authenticate: boolean) {
    const first = (key: string): string => String(call.metadata.get(key)[0] ?? '');
    this.hello = { clusterId: first(CLUSTER_ID_METADATA), nodeId: first(PEER_ID_METADATA), address: first(PEER_ADDRESS_METADATA) };
    this.remote = call.getPeer();
    this.verifiedId = authenticate ? nodeIdOf(call.getAuthContext()?.sslPeerCertificate) : undefined;
  }

  readonly verifiedId: NodeId | undefined;

  accept(handlers: InboundHandlers): void {
    const call = this.call;
    const gone = (): void => handlers.closed();
    call.on('cancelled', gone);
    call.on('close', gone);
    call.on('finish', gone);
    call.on('error', (err: Error) => handlers.closed(errorText(err)));
    // The client's half-close ends the call with OK.
    call.on('end', () => {
      this.end();
      handlers.closed();
    });
    // Response headers at once: the client counts itself connected when it sees them.
    call.sendMetadata(new grpc.Metadata());
    this.onData = (buf) => handlers.frame(buf);
    call.on('data', this.onData);
  }

  refuse(refusal: Refusal): void {
    if (this.onData) this.call.removeListener('data', this.onData);
    this.onData = null;
    this.call.emit('error', statusOf(refusal));
  }

  end(): void {
    if (this.call.writableEnded || this.call.destroyed) return;
    try {
      this.call.end();
    } catch {
      // already ended underneath
    }
  }
}

export class GrpcCarrier implements Carrier {
  readonly authenticates: boolean;
  private readonly channelOptions: grpc.ChannelOptions;
  private readonly credentials: (peer: NodeId) => grpc.ChannelCredentials;
  private accept: ((stream: InboundStream) => void) | null = null;

  constructor(opts: GrpcCarrierOptions = {}) {
    this.authenticates = opts.authenticatePeers ?? false;
    this.channelOptions = { ...PEER_CHANNEL_OPTIONS, ...opts.channelOptions };
    this.credentials = opts.channelCredentials ?? (() => grpc.credentials.createInsecure());
  }

  dialer(peer: NodeId, address: string): PeerDialer {
    return new GrpcDialer(address, () => this.credentials(peer), this.channelOptions);
  }

  listen(accept: (stream: InboundStream) => void): void {
    this.accept = accept;
  }

  /** Adds the RaftPeer service to the node's server. Create the server with PEER_SERVER_OPTIONS. */
  register(server: grpc.Server): void {
    const handler: grpc.handleBidiStreamingCall<Uint8Array, Uint8Array> = (call) => {
      const stream = new GrpcInbound(call, this.authenticates);
      if (this.accept) this.accept(stream);
      else stream.refuse({ kind: 'unavailable', why: 'peer transport is not listening' });
    };
    server.addService(RAFT_PEER_SERVICE, { Stream: handler });
  }
}

// Raft peer messaging over gRPC: one long-lived outgoing stream per peer, per-turn batching, bounded
// queues, reconnects with backoff. Knows nothing of locks, and nothing of Raft beyond `Message.to`.
//
// Delivery contract: none, as Raft expects. Messages may be lost (queue overflow, a stream that breaks
// with writes in flight, a peer that is down) and reordered across reconnects; within one healthy stream
// order is kept and nothing is duplicated. send() never blocks and never throws.
//
// Batching: send() only queues; one setImmediate per turn flushes every peer that got messages, one
// MessageBatch per peer (cut at maxBatchBytes). setImmediate rather than a microtask so that everything
// the node produces in one turn of the event loop, across several callbacks, shares a batch.
//
// Overflow drops the OLDEST queued message. Raft messages are superseded by newer ones (a newer
// heartbeat carries a newer commit, votes and appends of an older term are ignored, the leader resends
// from the follower's match index anyway), so keeping the newest gets the peer to the current state
// soonest; dropping the newest would deliver only stale messages after a long outage.
import type { PeerTransport } from './peerTransport';
import * as grpc from '@grpc/grpc-js';
import { decodeMessageBatch, encodeMessageBatch } from '../codec/raftCodec';
import type { Message, NodeId } from '../raft/types';
import {
  CLOSE_GRACE_MS,
  DEFAULT_CONNECT_TIMEOUT_MS,
  DEFAULT_MAX_BATCH_BYTES,
  DEFAULT_MAX_QUEUED_BYTES_PER_PEER,
  DEFAULT_MAX_QUEUED_MESSAGES_PER_PEER,
  DEFAULT_RECONNECT_BACKOFF_MAX_MS,
  DEFAULT_RECONNECT_BACKOFF_MIN_MS,
  MAX_PEER_MESSAGE_BYTES,
  PEER_CHANNEL_OPTIONS,
} from './options';
import { nodeIdOf } from '../certs/identity';
import { MessageQueue } from './queue';
import { ReturnRoutes } from './returnRoutes';
import { isRemovalNotice, RemovalNotices, removedRefusal } from './removalNotice';
import { RAFT_PEER_SERVICE, RAFT_PEER_STREAM_PATH, toBuffer } from './service';

// The node creates its grpc.Server with these; re-exported so that one import gives the whole transport.
export { PEER_CHANNEL_OPTIONS, PEER_SERVER_OPTIONS } from './options';

/** The subset of a pino logger the transport uses. */
export interface TransportLogger {
  warn(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
}

export interface GrpcPeerTransportOptions {
  selfId: NodeId;
  /** Every other voter: id -> "host:port". An entry for selfId is ignored. */
  peers: Record<NodeId, string>;
  logger?: TransportLogger;
  /** Bound of each peer's outbox in messages; the oldest are dropped beyond it. Default 1024. */
  maxQueuedMessagesPerPeer?: number;
  /** Bound of each peer's outbox in estimated bytes; the oldest are dropped beyond it. Default 64 MiB. */
  maxQueuedBytesPerPeer?: number;
  /** Target size of one MessageBatch (estimated bytes); a single larger message goes alone. Default 4 MiB. */
  maxBatchBytes?: number;
  /** Reconnect backoff of the peer stream: starts here, doubles (with jitter) up to the max. 50 ms .. 1 s. */
  reconnectBackoffMinMs?: number;
  reconnectBackoffMaxMs?: number;
  /** Give up on a stream without response headers after this long, and redial on a new channel. 2 s. */
  connectTimeoutMs?: number;
  /** Extra client channel options, merged over PEER_CHANNEL_OPTIONS. */
  channelOptions?: grpc.ChannelOptions;
  /** Sent on every outgoing stream and required on every inbound one; streams of another cluster are refused. */
  clusterId?: string;
  /** Credentials to dial a peer (mutual TLS in production); plaintext when absent. */
  channelCredentials?: (peer: NodeId) => grpc.ChannelCredentials;
  /**
   * Accept an inbound stream only from a certificate that names another configured member, and drop every
   * message on it whose `from` is not that member. Needs the peer listener to require client certificates.
   */
  authenticatePeers?: boolean;
  /**
   * This node's peer address as the others reach it, sent on every outgoing stream: a member whose log does
   * not name this node yet (it missed the change that added it) answers this node's messages there.
   */
  selfAddress?: string;
}

/** Metadata key of the cluster id on peer streams. */
export const CLUSTER_ID_METADATA = 'fencelock-cluster-id';
/** Metadata keys of the sender's node id (trusted only without peer certificates) and peer address. */
export const PEER_ID_METADATA = 'fencelock-peer-id';
export const PEER_ADDRESS_METADATA = 'fencelock-peer-address';

export interface PeerStats {
  /** The outgoing stream is established (the peer answered with response headers). */
  connected: boolean;
  /** MessageBatch writes handed to the stream. */
  sentBatches: number;
  /** Messages in those batches. */
  sentMessages: number;
  /** Messages dropped before reaching the stream: queue overflow, unencodable, or pending at close(). */
  dropped: number;
  /** Streams opened again after a previous one failed (attempts, successful or not). */
  reconnects: number;
}

type LinkState = 'idle' | 'connecting' | 'connected' | 'backoff' | 'closed';
type PeerCall = grpc.ClientDuplexStream<Uint8Array, Uint8Array>;
type InboundCall = grpc.ServerDuplexStream<Uint8Array, Uint8Array>;

/** A stream that stayed up this long resets the reconnect backoff when it breaks. */
const HEALTHY_STREAM_MS = 1_000;

const NOOP_LOGGER: TransportLogger = { warn() {}, debug() {} };
const noop = (): void => {};

function identity(buf: Buffer): Buffer {
  return buf;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Everything the transport knows about one peer. */
class PeerLink {
  state: LinkState = 'idle';
  client: grpc.Client | null = null;
  call: PeerCall | null = null;
  /** The stream accepts writes (no backpressure). Meaningful only while connected. */
  writable = false;
  connectedAt = 0;
  backoffMs: number;
  /** The backoff timer or the connect timer, whichever the state needs. */
  timer: NodeJS.Timeout | null = null;
  readonly queue: MessageQueue;
  sentBatches = 0;
  sentMessages = 0;
  dropped = 0;
  reconnects = 0;
  /** A message from the peer already cut this outage's backoff short (see redialEarly). */
  redialedEarly = false;

  constructor(
    readonly id: NodeId,
    readonly address: string,
    maxMessages: number,
    maxBytes: number,
    backoffMinMs: number,
  ) {
    this.queue = new MessageQueue(maxMessages, maxBytes);
    this.backoffMs = backoffMinMs;
  }

  clearTimer(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
  }
}

function positive(name: string, value: number | undefined, fallback: number): number {
  const v = value ?? fallback;
  if (!Number.isFinite(v) || v <= 0) throw new RangeError(`${name} must be a positive number, got ${value}`);
  return v;
}

export class GrpcPeerTransport implements PeerTransport {
  private readonly selfId: NodeId;
  private readonly logger: TransportLogger;
  private readonly links = new Map<NodeId, PeerLink>();
  private readonly maxBatchBytes: number;
  private readonly backoffMinMs: number;
  private readonly backoffMaxMs: number;
  private readonly connectTimeoutMs: number;
  private readonly channelOptions: grpc.ChannelOptions;
  private readonly clusterId: string;
  private readonly channelCredentials: (peer: NodeId) => grpc.ChannelCredentials;
  private readonly authenticatePeers: boolean;
  private readonly maxQueuedMessages: number;
  private readonly maxQueuedBytes: number;
  private readonly selfAddress: string;
  /** The members given by the constructor or setPeers; `links` also holds return routes. */
  private members: Record<NodeId, string> = {};
  private readonly returnRoutes = new ReturnRoutes();

  private messageHandler: ((messages: Message[]) => void) | null = null;
  private unreachableHandler: ((peer: NodeId) => void) | null = null;
  private readonly removal = new RemovalNotices();

  /** Peers with queued messages since the last flush. */
  private readonly dirty = new Set<PeerLink>();
  private flushScheduled: NodeJS.Immediate | null = null;

  private readonly inbound = new Set<InboundCall>();
  private closed = false;
  private closing: Promise<void> | null = null;

  constructor(opts: GrpcPeerTransportOptions) {
    if (!opts.selfId) throw new Error('selfId must not be empty');
    this.selfId = opts.selfId;
    this.logger = opts.logger ?? NOOP_LOGGER;
    const maxMessages = Math.floor(positive('maxQueuedMessagesPerPeer', opts.maxQueuedMessagesPerPeer, DEFAULT_MAX_QUEUED_MESSAGES_PER_PEER));
    const maxQueuedBytes = positive('maxQueuedBytesPerPeer', opts.maxQueuedBytesPerPeer, DEFAULT_MAX_QUEUED_BYTES_PER_PEER);
    this.maxBatchBytes = positive('maxBatchBytes', opts.maxBatchBytes, DEFAULT_MAX_BATCH_BYTES);
    this.backoffMinMs = positive('reconnectBackoffMinMs', opts.reconnectBackoffMinMs, DEFAULT_RECONNECT_BACKOFF_MIN_MS);
    this.backoffMaxMs = Math.max(this.backoffMinMs, positive('reconnectBackoffMaxMs', opts.reconnectBackoffMaxMs, DEFAULT_RECONNECT_BACKOFF_MAX_MS));
    this.connectTimeoutMs = positive('connectTimeoutMs', opts.connectTimeoutMs, DEFAULT_CONNECT_TIMEOUT_MS);
    this.channelOptions = { ...PEER_CHANNEL_OPTIONS, ...opts.channelOptions };
    this.clusterId = opts.clusterId ?? '';
    this.channelCredentials = opts.channelCredentials ?? (() => grpc.credentials.createInsecure());
    this.authenticatePeers = opts.authenticatePeers ?? false;
    this.maxQueuedMessages = maxMessages;
    this.maxQueuedBytes = maxQueuedBytes;
    this.selfAddress = opts.selfAddress ?? '';
    for (const [id, address] of Object.entries(opts.peers)) {
      if (id !== this.selfId && !address) throw new Error(`peer ${id} has no address`);
    }
    this.setPeers(opts.peers);
  }

  /**
   * The members changed: dial new ones, stop dialling (and accepting streams from) those that left, and
   * redial one whose address changed. Queued messages for a member that left are dropped.
   */
  setPeers(peers: Record<NodeId, string>): void {
    if (this.closed) return;
    this.members = { ...peers };
    this.returnRoutes.forgetMembers(peers);
    this.updateLinks();
  }

  /** Links for the members and the return routes; a member's configured address wins. */
  private updateLinks(): void {
    const peers = { ...this.returnRoutes.all(), ...this.members };
    for (const link of [...this.links.values()]) {
      if (peers[link.id] === link.address) continue;
      this.links.delete(link.id);
      this.dirty.delete(link);
      void this.closeLink(link);
    }
    for (const [id, address] of Object.entries(peers)) {
      if (id === this.selfId || this.links.has(id) || !address) continue;
      this.links.set(id, new PeerLink(id, address, this.maxQueuedMessages, this.maxQueuedBytes, this.backoffMinMs));
    }
  }

  /**
   * Opens the stream to every peer now rather than with the first message. A node that just started has
   * nothing to say until its election timeout; dialling at once names it to every peer (its stream's
   * certificate or `fencelock-peer-id`), and a leader backing off from it redials at once (redialEarly).
   */
  connectAll(): void {
    if (this.closed) return;
    for (const link of this.links.values()) if (link.state === 'idle') this.openStream(link);
  }

  /** Adds the RaftPeer service to the node's server. Create the server with PEER_SERVER_OPTIONS. */
  register(server: grpc.Server): void {
    const handler: grpc.handleBidiStreamingCall<Uint8Array, Uint8Array> = (call) => this.handleInbound(call);
    server.addService(RAFT_PEER_SERVICE, { Stream: handler });
  }

  /** Inbound batches, delivered synchronously as each one is decoded. One handler; a later call replaces it. */
  onMessages(handler: (messages: Message[]) => void): void {
    this.messageHandler = handler;
  }

  /** Called when a stream to a peer breaks or cannot be opened while messages wait for it. */
  onUnreachable(handler: (peer: NodeId) => void): void {
    this.unreachableHandler = handler;
  }

  /** Streams from a node `check` names are refused with the removal notice (removalNotice.ts). */
  answerRemovedMembers(check: (id: NodeId) => boolean): void {
    this.removal.answerFor(check);
  }

  /** Called once, with the member that said so, when a member answers that this node was removed. */
  onRemoved(handler: (by: NodeId) => void): void {
    this.removal.onRemoved(handler);
  }

  /**
   * Queues messages for their peers and schedules one flush for the current turn of the event loop.
   * Never blocks, never throws. Messages to unknown peers (or to self) are dropped.
   */
  send(messages: Message[]): void {
    try {
      if (this.closed) {
        if (messages.length > 0) this.logger.debug({ count: messages.length }, 'transport closed: dropping messages');
        return;
      }
      for (const m of messages) {
        const link = this.links.get(m.to);
        if (!link) {
          this.logger.debug({ to: m.to, type: m.type }, 'dropping message to unknown peer');
          continue;
        }
        let dropped: number;
        try {
          dropped = link.queue.push(m);
        } catch (err) {
          // Not even sizeable (a malformed message): it could never be encoded either.
          link.dropped++;
          this.logger.warn({ peer: link.id, type: m.type, err: errorText(err) }, 'dropping a malformed message');
          continue;
        }
        if (dropped > 0) {
          link.dropped += dropped;
          this.logger.debug({ peer: link.id, dropped, state: link.state }, 'peer queue full: dropped oldest messages');
        }
        this.dirty.add(link);
      }
    } catch (err) {
      // Only reachable with an argument that is not an array of objects.
      this.logger.warn({ err: errorText(err) }, 'send failed; messages dropped');
    } finally {
      if (this.dirty.size > 0 && !this.flushScheduled && !this.closed) {
        this.flushScheduled = setImmediate(() => this.flushNow());
      }
    }
  }

  /** Writes everything queued now instead of at the end of the turn (the caller knows its batch is complete). */
  flush(): void {
    if (!this.flushScheduled) return;
    clearImmediate(this.flushScheduled);
    this.flushNow();
  }

  stats(): Record<NodeId, PeerStats> {
    const out: Record<NodeId, PeerStats> = {};
    for (const link of this.links.values()) {
      out[link.id] = {
        connected: link.state === 'connected',
        sentBatches: link.sentBatches,
        sentMessages: link.sentMessages,
        dropped: link.dropped,
        reconnects: link.reconnects,
      };
    }
    return out;
  }

  /**
   * Ends every outgoing stream (cleanly if it ends within a short grace, else cancelled), closes the
   * channels, ends inbound streams and refuses new ones. Queued messages are dropped. Idempotent.
   */
  close(): Promise<void> {
    if (this.closing) return this.closing;
    this.closed = true;
    if (this.flushScheduled) {
      clearImmediate(this.flushScheduled);
      this.flushScheduled = null;
    }
    this.dirty.clear();
    for (const call of this.inbound) this.endInbound(call);
    this.inbound.clear();
    this.closing = Promise.all([...this.links.values()].map((link) => this.closeLink(link))).then(noop);
    return this.closing;
  }

  // ---- outgoing ----

  private flushNow(): void {
    this.flushScheduled = null;
    if (this.closed) return;
    const links = [...this.dirty];
    this.dirty.clear();
    for (const link of links) {
      if (link.state === 'idle') this.openStream(link);
      this.flushLink(link);
    }
  }

  /** Writes the queue as batches of at most maxBatchBytes while the stream takes them. */
  private flushLink(link: PeerLink): void {
    while (link.state === 'connected' && link.writable && link.call && link.queue.length > 0) {
      const chunk = link.queue.take(this.maxBatchBytes);
      if (!this.writeChunk(link, link.call, chunk)) {
        link.writable = false; // wait for 'drain'; meanwhile the queue absorbs (bounded)
        this.logger.debug({ peer: link.id, queued: link.queue.length }, 'peer stream backpressure: waiting for drain');
      }
    }
  }

  /** Encodes and writes one batch; returns the stream's write() result (true when nothing was written). */
  private writeChunk(link: PeerLink, call: PeerCall, chunk: Message[]): boolean {
    let bytes: Uint8Array;
    try {
      bytes = encodeMessageBatch(chunk);
    } catch (err) {
      return this.splitOrDrop(link, call, chunk, `encode failed: ${errorText(err)}`);
    }
    if (bytes.byteLength > MAX_PEER_MESSAGE_BYTES) {
      return this.splitOrDrop(link, call, chunk, `batch of ${bytes.byteLength} bytes is over the ${MAX_PEER_MESSAGE_BYTES} byte limit`);
    }
    link.sentBatches++;
    link.sentMessages += chunk.length;
    return call.write(bytes);
  }

  /** Isolates what cannot be sent: halves the batch until the bad message stands alone, then drops it. */
  private splitOrDrop(link: PeerLink, call: PeerCall, chunk: Message[], why: string): boolean {
    if (chunk.length === 1) {
      link.dropped++;
      this.logger.warn({ peer: link.id, type: chunk[0]?.type, why }, 'dropping a message that cannot be sent');
      return true;
    }
    const mid = chunk.length >> 1;
    const a = this.writeChunk(link, call, chunk.slice(0, mid));
    const b = this.writeChunk(link, call, chunk.slice(mid));
    return a && b;
  }

  private openStream(link: PeerLink): void {
    if (this.closed) return;
    if (!link.client) {
      link.client = new grpc.Client(link.address, this.channelCredentials(link.id), this.channelOptions);
    }
    const metadata = new grpc.Metadata();
    if (this.clusterId) metadata.set(CLUSTER_ID_METADATA, this.clusterId);
    metadata.set(PEER_ID_METADATA, this.selfId);
    if (this.selfAddress) metadata.set(PEER_ADDRESS_METADATA, this.selfAddress);
    const call = link.client.makeBidiStreamRequest<Uint8Array, Uint8Array>(
      RAFT_PEER_STREAM_PATH, toBuffer, identity, metadata, {});
    link.call = call;
    link.state = 'connecting';
    link.writable = false;
    link.clearTimer();
    link.timer = setTimeout(() => this.onConnectTimeout(link, call), this.connectTimeoutMs);
    link.timer.unref();

    call.on('metadata', () => {
      if (link.call !== call || link.state !== 'connecting') return;
      link.clearTimer();
      link.state = 'connected';
      link.writable = true;
      link.connectedAt = Date.now();
      link.redialedEarly = false;
      this.logger.debug({ peer: link.id, address: link.address }, 'peer stream connected');
      this.flushLink(link);
    });
    call.on('drain', () => {
      if (link.call !== call || link.state !== 'connected') return;
      link.writable = true;
      this.flushLink(link);
    });
    call.on('data', noop); // PeerAck: nothing to do, but keep the readable side flowing
    call.on('error', (err: grpc.ServiceError) => {
      this.noticeRemoval(link, err.code, err.metadata);
      this.onStreamEnd(link, call, `${err.code ?? ''} ${err.details ?? err.message}`);
    });
    call.on('status', (status: grpc.StatusObject) => {
      this.noticeRemoval(link, status.code, status.metadata);
      this.onStreamEnd(link, call, `${status.code} ${status.details}`, status.code === grpc.status.OK);
    });
  }

  /** A member's answer that this node was removed reaches the node (once; it stops). */
  private noticeRemoval(link: PeerLink, code: grpc.status | undefined, metadata: grpc.Metadata | undefined): void {
    if (isRemovalNotice(this.selfId, code, metadata)) this.removal.told(link.id);
  }

  private onConnectTimeout(link: PeerLink, call: PeerCall): void {
    if (link.call !== call || link.state !== 'connecting') return;
    link.timer = null;
    // A channel still CONNECTING is stuck in a TCP connect (a SYN into a partition: the kernel retries
    // for about two minutes, and grpc-js sets no connect timeout) or in the HTTP/2 handshake with a hung
    // peer. Start over on a fresh channel so that a healed partition is noticed within one attempt.
    // (grpc-js does not abort the old channel's pending connect: it ends when the kernel gives up or the
    // peer answers, at most one per attempt.) A READY channel is left to keepalive.
    const client = link.client;
    const stuck = client?.getChannel().getConnectivityState(false) === grpc.connectivityState.CONNECTING;
    if (stuck) link.client = null;
    this.onStreamEnd(link, call, `no response headers within ${this.connectTimeoutMs} ms`);
    if (stuck) client?.close();
  }

  /** `clean`: the peer ended the stream with OK, which it does only when it stops (close() below). */
  private onStreamEnd(link: PeerLink, call: PeerCall, why: string, clean = false): void {
    if (link.call !== call) return; // already handled (error and status both fire), or a stale stream
    link.call = null;
    link.clearTimer();
    const wasConnected = link.state === 'connected';
    link.writable = false;
    call.removeAllListeners();
    call.on('error', noop);
    call.cancel(); // no-op when the call already has its status
    if (this.closed || link.state === 'closed') return;

    if (wasConnected && Date.now() - link.connectedAt >= HEALTHY_STREAM_MS) link.backoffMs = this.backoffMinMs;
    if (wasConnected && clean) {
      this.logger.debug({ peer: link.id, address: link.address }, 'peer ended its stream (it is stopping)');
    } else if (wasConnected) {
      this.logger.warn({ peer: link.id, address: link.address, why }, 'peer stream broke');
    } else {
      this.logger.debug({ peer: link.id, address: link.address, why }, 'peer stream could not be opened');
    }
    // Tell the core when something was (possibly) lost or is waiting: it stops pipelining to the peer.
    // An idle link that keeps failing stays quiet.
    if (wasConnected || link.queue.length > 0) this.reportUnreachable(link.id);
    this.scheduleReconnect(link);
  }

  private scheduleReconnect(link: PeerLink): void {
    if (this.closed || link.state === 'closed') return;
    link.state = 'backoff';
    const base = link.backoffMs;
    const delay = base / 2 + Math.random() * (base / 2);
    link.backoffMs = Math.min(base * 2, this.backoffMaxMs);
    link.clearTimer();
    link.timer = setTimeout(() => {
      link.timer = null;
      if (this.closed || link.state !== 'backoff') return;
      link.reconnects++;
      this.openStream(link);
    }, delay);
    link.timer.unref();
  }

  /**
   * A message from a peer we are backing off from shows it is up again (typically restarted): dial it now
   * instead of when the backoff ends, on a fresh channel (the old one may be waiting out grpc-js's own
   * reconnect backoff). Once per outage, so that a one-way partition cannot turn backoff into a busy loop.
   * Saves a restarted node up to the maximum backoff before its leader reaches it again.
   */
  private redialEarly(peer: NodeId): void {
    const link = this.links.get(peer);
    if (!link || link.state !== 'backoff' || link.redialedEarly || this.closed) return;
    link.redialedEarly = true;
    link.clearTimer();
    const stale = link.client;
    link.client = null;
    stale?.close();
    link.reconnects++;
    this.logger.debug({ peer: link.id, address: link.address }, 'heard from a peer during backoff: redialling now');
    this.openStream(link);
  }

  private reportUnreachable(peer: NodeId): void {
    const handler = this.unreachableHandler;
    if (!handler) return;
    try {
      handler(peer);
    } catch (err) {
      this.logger.warn({ peer, err: errorText(err) }, 'unreachable handler threw');
    }
  }

  private async closeLink(link: PeerLink): Promise<void> {
    link.clearTimer();
    link.dropped += link.queue.clear();
    const call = link.call;
    const wasConnected = link.state === 'connected';
    link.call = null; // listeners of the old call now ignore it
    link.state = 'closed';
    link.writable = false;
    if (call) {
      if (wasConnected) {
        // Half-close and give the peer a moment to answer with its status, so that it sees a clean end.
        await new Promise<void>((resolve) => {
          const timer = setTimeout(done, CLOSE_GRACE_MS);
          function done(): void {
            clearTimeout(timer);
            resolve();
          }
          call.on('status', done);
          call.on('error', noop);
          call.end();
        });
      }
      call.removeAllListeners();
      call.on('error', noop);
      call.cancel();
    }
    link.client?.close();
    link.client = null;
  }

  // ---- incoming ----

  private handleInbound(call: InboundCall): void {
    if (this.closed) {
      call.emit('error', { code: grpc.status.UNAVAILABLE, details: 'peer transport is closed' });
      return;
    }
    const sender = this.admitInbound(call);
    if (sender === null) return;
    // A peer that opens a stream is up (typically just restarted): no need to wait for its first message.
    const named = sender ?? String(call.metadata.get(PEER_ID_METADATA)[0] ?? '');
    if (named !== '') this.redialEarly(named);
    this.inbound.add(call);
    const forget = (): void => {
      this.inbound.delete(call);
    };
    call.on('cancelled', forget);
    call.on('close', forget);
    call.on('finish', forget);
    call.on('error', (err: Error) => {
      forget();
      this.logger.debug({ peer: call.getPeer(), err: errorText(err) }, 'inbound peer stream error');
    });
    // The client's half-close ends the call with OK.
    call.on('end', () => this.endInbound(call));
    // Response headers at once: the client counts itself connected when it sees them.
    call.sendMetadata(new grpc.Metadata());

    let misaddressed = 0;
    let spoofed = 0;
    const onData = (buf: Buffer): void => {
      if (this.closed) return;
      // A stream opened while its node was a member outlives the node's removal (a paused or cut-off node
      // keeps its connection): once the node is no longer dialled, it is told, as at admission.
      if (named !== '' && !Object.hasOwn(this.members, named) && this.refusedAsRemoved(call, named)) {
        call.removeListener('data', onData);
        forget();
        return;
      }
      let messages: Message[];
      try {
        messages = decodeMessageBatch(buf);
      } catch (err) {
        call.removeListener('data', onData);
        this.logger.warn({ peer: call.getPeer(), bytes: buf.byteLength, err: errorText(err) },
          'malformed MessageBatch from peer: ending its stream');
        forget();
        call.emit('error', { code: grpc.status.INVALID_ARGUMENT, details: `malformed MessageBatch: ${errorText(err)}` });
        return;
      }
      this.deliver(this.fromSender(messages, sender, call, () => spoofed++ === 0), call, () => misaddressed++ === 0);
    };
    call.on('data', onData);
  }

  /**
   * Checks the cluster id and, when peers are authenticated, who the certificate names. Returns the sender's
   * node id (undefined when peers are not authenticated), or null after refusing the stream.
   */
  private admitInbound(call: InboundCall): NodeId | undefined | null {
    const refuse = (code: grpc.status, why: string, details: object): null => {
      this.logger.warn({ peer: call.getPeer(), ...details, why }, 'refusing inbound peer stream');
      call.emit('error', { code, details: why });
      return null;
    };
    const theirCluster = String(call.metadata.get(CLUSTER_ID_METADATA)[0] ?? '');
    if (this.clusterId && theirCluster !== this.clusterId) {
      return refuse(grpc.status.PERMISSION_DENIED, `cluster id "${theirCluster}" is not this cluster's ("${this.clusterId}")`, {});
    }
    const address = String(call.metadata.get(PEER_ADDRESS_METADATA)[0] ?? '');
    if (!this.authenticatePeers) {
      // Plaintext runs on loopback only (config.ts): the id a peer claims is all there is to go by.
      const claimed = String(call.metadata.get(PEER_ID_METADATA)[0] ?? '');
      if (claimed !== '' && this.refusedAsRemoved(call, claimed)) return null;
      if (claimed !== '' && claimed !== this.selfId) this.learnReturnRoute(claimed, address);
      return undefined;
    }
    const cert = call.getAuthContext()?.sslPeerCertificate;
    const named = nodeIdOf(cert);
    if (named === undefined || named === this.selfId) {
      return refuse(grpc.status.PERMISSION_DENIED, `certificate names no other node of this cluster (${named ?? 'no node identity'})`, { named });
    }
    if (this.refusedAsRemoved(call, named)) return null;
    // A node of this cluster's CA that our log does not name may be the leader of a configuration we have
    // not learned yet; the core takes only a leader's messages from it (RawNode.mayHearFrom).
    if (!this.links.has(named) && !this.learnReturnRoute(named, address)) {
      return refuse(grpc.status.PERMISSION_DENIED, `certificate names ${named}, which is no member here and gave no address to answer at`, { named });
    }
    return named;
  }

  /** Ends the stream of a node our committed configuration removed, telling it so; false for any other node. */
  private refusedAsRemoved(call: InboundCall, id: NodeId): boolean {
    if (!this.removal.isRemoved(id)) return false;
    this.logger.warn({ peer: call.getPeer(), removed: id }, 'a removed node dialled in: telling it that it was removed');
    call.emit('error', removedRefusal(id, this.selfId));
    return true;
  }

  /** A route back to a node that is not our member; false when it gave no usable address. */
  private learnReturnRoute(id: NodeId, address: string): boolean {
    if (this.members[id] !== undefined) return true;
    if (!this.returnRoutes.remember(id, address)) return false;
    this.updateLinks();
    return true;
  }

  /** Keeps only the messages whose `from` is the authenticated sender of the stream; warns once per stream. */
  private fromSender(messages: Message[], sender: NodeId | undefined, call: InboundCall, firstSpoof: () => boolean): Message[] {
    if (sender === undefined) return messages;
    const forged = messages.find((m) => m.from !== sender);
    if (forged === undefined) return messages;
    if (firstSpoof()) {
      this.logger.warn({ peer: call.getPeer(), authenticated: sender, claimed: forged.from, type: forged.type },
        'dropping peer messages whose sender is not the authenticated peer');
    }
    return messages.filter((m) => m.from === sender);
  }

  private deliver(messages: Message[], call: InboundCall, firstMisaddressed: () => boolean): void {
    // A message for another node (a peer with a wrong address book) must not be stepped here.
    let accepted = messages;
    const other = messages.find((m) => m.to !== this.selfId);
    if (other !== undefined) {
      accepted = messages.filter((m) => m.to === this.selfId);
      if (firstMisaddressed()) {
        this.logger.warn({ peer: call.getPeer(), self: this.selfId, to: other.to, from: other.from },
          'dropping messages addressed to another node (check the peer address configuration)');
      }
    }
    const [firstAccepted] = accepted;
    if (firstAccepted !== undefined) this.redialEarly(firstAccepted.from);
    const handler = this.messageHandler;
    if (!handler || accepted.length === 0) return;
    try {
      handler(accepted);
    } catch (err) {
      this.logger.warn({ err: errorText(err), count: accepted.length }, 'message handler threw');
    }
  }

  private endInbound(call: InboundCall): void {
    this.inbound.delete(call);
    if (call.writableEnded || call.destroyed) return;
    try {
      call.end();
    } catch (err) {
      this.logger.debug({ err: errorText(err) }, 'ending inbound peer stream failed');
    }
  }
}

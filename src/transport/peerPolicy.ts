// The peer POLICY: everything between the node's Ready loop and a carrier (carrier.ts) that moves frames.
// One long-lived outgoing stream per peer, per-turn batching, bounded queues, reconnects with backoff, and
// admission of inbound streams: cluster id, certificate identity, return routes, the removal notice, and
// every message bound to the authenticated sender. Knows nothing of locks, nothing of Raft beyond a
// message's `from` and `to`, and nothing of the wire below a frame (one encoded MessageBatch).
//
// Delivery contract: none, as Raft expects. Messages may be lost (queue overflow, a stream that breaks
// with writes in flight, a peer that is down) and reordered across reconnects; within one healthy stream
// order is kept and nothing is duplicated. send() never blocks and never throws.
//
// Batching: send() only queues; one deferred flush per turn (setImmediate) writes every peer that got
// messages, one MessageBatch per peer (cut at maxBatchBytes), so that everything the node produces in one
// turn of the event loop, across several callbacks, shares a batch.
//
// Overflow drops the OLDEST queued message. Raft messages are superseded by newer ones (a newer
// heartbeat carries a newer commit, votes and appends of an older term are ignored, the leader resends
// from the follower's match index anyway), so keeping the newest gets the peer to the current state
// soonest; dropping the newest would deliver only stale messages after a long outage.
import { decodeMessageBatch, encodeMessageBatch } from '../codec/raftCodec';
import type { Message, NodeId } from '../raft/types';
import type { Carrier, InboundStream, OutboundStream, PeerHello, Refusal, StreamEnd } from './carrier';
import {
  CLOSE_GRACE_MS,
  DEFAULT_CONNECT_TIMEOUT_MS,
  DEFAULT_MAX_BATCH_BYTES,
  DEFAULT_MAX_QUEUED_BYTES_PER_PEER,
  DEFAULT_MAX_QUEUED_MESSAGES_PER_PEER,
  DEFAULT_RECONNECT_BACKOFF_MAX_MS,
  DEFAULT_RECONNECT_BACKOFF_MIN_MS,
  MAX_PEER_MESSAGE_BYTES,
} from './limits';
import { PeerLink } from './peerLink';
import type { PeerTransport } from './peerTransport';
import { realTransportPorts, type TransportPorts, type TransportTimerHandle } from './ports';
import { RemovalNotices } from './removalNotice';
import { ReturnRoutes } from './returnRoutes';

/** The subset of a pino logger the transport uses. */
export interface TransportLogger {
  warn(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
}

export interface PeerPolicyOptions {
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
  /** Give up on a stream the peer has not accepted after this long, and redial on a fresh connection. 2 s. */
  connectTimeoutMs?: number;
  /** Sent on every outgoing stream and required on every inbound one; streams of another cluster are refused. */
  clusterId?: string;
  /**
   * This node's peer address as the others reach it, sent on every outgoing stream: a member whose log does
   * not name this node yet (it missed the change that added it) answers this node's messages there.
   */
  selfAddress?: string;
  /** Time, timers and randomness; Node's own by default (the simulator passes virtual ones). */
  ports?: TransportPorts;
}

export interface PeerStats {
  /** The outgoing stream is established (the peer accepted it). */
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

/** How often inbound streams are checked for nodes our committed configuration removed (sweepRemoved). */
const REMOVAL_SWEEP_MS = 1_000;

/** A stream that stayed up this long resets the reconnect backoff when it breaks. */
const HEALTHY_STREAM_MS = 1_000;

const NOOP_LOGGER: TransportLogger = { warn() {}, debug() {} };

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function positive(name: string, value: number | undefined, fallback: number): number {
  const v = value ?? fallback;
  if (!Number.isFinite(v) || v <= 0) throw new RangeError(`${name} must be a positive number, got ${value}`);
  return v;
}

export class PeerPolicy implements PeerTransport {
  protected readonly selfId: NodeId;
  protected readonly logger: TransportLogger;
  private readonly links = new Map<NodeId, PeerLink>();
  private readonly maxBatchBytes: number;
  private readonly backoffMinMs: number;
  private readonly backoffMaxMs: number;
  private readonly connectTimeoutMs: number;
  private readonly clusterId: string;
  private readonly maxQueuedMessages: number;
  private readonly maxQueuedBytes: number;
  private readonly hello: PeerHello;
  private readonly ports: TransportPorts;
  /** The members given by the constructor or setPeers; `links` also holds return routes. */
  private members: Record<NodeId, string> = {};
  private readonly returnRoutes = new ReturnRoutes();

  private messageHandler: ((messages: Message[]) => void) | null = null;
  private unreachableHandler: ((peer: NodeId) => void) | null = null;
  private readonly removal = new RemovalNotices();

  /** Peers with queued messages since the last flush. */
  private readonly dirty = new Set<PeerLink>();
  /** The deferred flush that counts (an earlier one, overtaken by flush(), finds another number). */
  private flushTurn = 0;
  private flushScheduled = false;

  /** Accepted inbound streams, each with the node it comes from ('' when unknown) and how to refuse it. */
  private readonly inbound = new Map<InboundStream, { named: NodeId; stop: (refusal: Refusal) => void }>();
  /** The periodic check that tells quiet removed nodes (sweepRemoved). */
  private sweepTimer: TransportTimerHandle | null = null;
  private closed = false;
  private closing: Promise<void> | null = null;

  constructor(opts: PeerPolicyOptions, private readonly carrier: Carrier) {
    if (!opts.selfId) throw new Error('selfId must not be empty');
    this.selfId = opts.selfId;
    this.logger = opts.logger ?? NOOP_LOGGER;
    this.maxQueuedMessages = Math.floor(positive('maxQueuedMessagesPerPeer', opts.maxQueuedMessagesPerPeer, DEFAULT_MAX_QUEUED_MESSAGES_PER_PEER));
    this.maxQueuedBytes = positive('maxQueuedBytesPerPeer', opts.maxQueuedBytesPerPeer, DEFAULT_MAX_QUEUED_BYTES_PER_PEER);
    this.maxBatchBytes = positive('maxBatchBytes', opts.maxBatchBytes, DEFAULT_MAX_BATCH_BYTES);
    this.backoffMinMs = positive('reconnectBackoffMinMs', opts.reconnectBackoffMinMs, DEFAULT_RECONNECT_BACKOFF_MIN_MS);
    this.backoffMaxMs = Math.max(this.backoffMinMs, positive('reconnectBackoffMaxMs', opts.reconnectBackoffMaxMs, DEFAULT_RECONNECT_BACKOFF_MAX_MS));
    this.connectTimeoutMs = positive('connectTimeoutMs', opts.connectTimeoutMs, DEFAULT_CONNECT_TIMEOUT_MS);
    this.clusterId = opts.clusterId ?? '';
    this.hello = { clusterId: this.clusterId, nodeId: this.selfId, address: opts.selfAddress ?? '' };
    this.ports = opts.ports ?? realTransportPorts();
    for (const [id, address] of Object.entries(opts.peers)) {
      if (id !== this.selfId && !address) throw new Error(`peer ${id} has no address`);
    }
    this.setPeers(opts.peers);
    carrier.listen((stream) => this.handleInbound(stream));
    this.scheduleSweep();
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
    this.sweepRemoved();
  }

  /**
   * Tells every node on an inbound stream that our committed configuration removed that it was removed. A
   * removed node that missed the commit of its removal and has nothing to say (the removal it appended keeps
   * it from campaigning) keeps its healthy stream open and silent: neither a redial nor a message of its
   * would reach the checks at admission or on a frame, and the leader that could have told it may be gone.
   * The notice is final (removalNotice.ts), so it need not wait for the linger window of the dialled set.
   * Runs when the members change and every REMOVAL_SWEEP_MS, since our commit of the removal comes later.
   */
  private sweepRemoved(): void {
    for (const [stream, { named, stop }] of [...this.inbound]) {
      if (named === '' || !this.removal.isRemoved(named)) continue;
      this.logRemoved(stream, named);
      stop({ kind: 'removed', id: named, by: this.selfId });
    }
  }

  private scheduleSweep(): void {
    this.sweepTimer = this.ports.timers.setTimeout(() => {
      if (this.closed) return;
      this.sweepRemoved();
      this.scheduleSweep();
    }, REMOVAL_SWEEP_MS);
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
      const dialer = this.carrier.dialer(id, address);
      this.links.set(id, new PeerLink(id, address, dialer, this.maxQueuedMessages, this.maxQueuedBytes, this.backoffMinMs));
    }
  }

  /**
   * Opens the stream to every peer now rather than with the first message. A node that just started has
   * nothing to say until its election timeout; dialling at once names it to every peer, and a leader
   * backing off from it redials at once (redialEarly).
   */
  connectAll(): void {
    if (this.closed) return;
    for (const link of this.links.values()) if (link.state === 'idle') this.openStream(link);
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
      for (const m of messages) this.enqueue(m);
    } catch (err) {
      // Only reachable with an argument that is not an array of objects.
      this.logger.warn({ err: errorText(err) }, 'send failed; messages dropped');
    } finally {
      if (this.dirty.size > 0 && !this.flushScheduled && !this.closed) this.scheduleFlush();
    }
  }

  private enqueue(m: Message): void {
    const link = this.links.get(m.to);
    if (!link) {
      this.logger.debug({ to: m.to, type: m.type }, 'dropping message to unknown peer');
      return;
    }
    let dropped: number;
    try {
      dropped = link.queue.push(m);
    } catch (err) {
      // Not even sizeable (a malformed message): it could never be encoded either.
      link.dropped++;
      this.logger.warn({ peer: link.id, type: m.type, err: errorText(err) }, 'dropping a malformed message');
      return;
    }
    if (dropped > 0) {
      link.dropped += dropped;
      this.logger.debug({ peer: link.id, dropped, state: link.state }, 'peer queue full: dropped oldest messages');
    }
    this.dirty.add(link);
  }

  private scheduleFlush(): void {
    this.flushScheduled = true;
    const turn = ++this.flushTurn;
    this.ports.timers.defer(() => {
      if (turn === this.flushTurn && this.flushScheduled) this.flushNow();
    });
  }

  /** Writes everything queued now instead of at the end of the turn (the caller knows its batch is complete). */
  flush(): void {
    if (!this.flushScheduled) return;
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
   * connections, ends inbound streams and refuses new ones. Queued messages are dropped. Idempotent.
   */
  close(): Promise<void> {
    if (this.closing) return this.closing;
    this.closed = true;
    this.flushScheduled = false;
    this.dirty.clear();
    if (this.sweepTimer) this.ports.timers.clearTimeout(this.sweepTimer);
    for (const stream of this.inbound.keys()) stream.end();
    this.inbound.clear();
    this.closing = Promise.all([...this.links.values()].map((link) => this.closeLink(link))).then(() => undefined);
    return this.closing;
  }

  // ---- outgoing ----

  private flushNow(): void {
    this.flushScheduled = false;
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
    while (link.state === 'connected' && link.writable && link.stream && link.queue.length > 0) {
      const chunk = link.queue.take(this.maxBatchBytes);
      if (!this.writeChunk(link, link.stream, chunk)) {
        link.writable = false; // wait for 'drain'; meanwhile the queue absorbs (bounded)
        this.logger.debug({ peer: link.id, queued: link.queue.length }, 'peer stream backpressure: waiting for drain');
      }
    }
  }

  /** Encodes and writes one batch; returns the stream's write() result (true when nothing was written). */
  private writeChunk(link: PeerLink, stream: OutboundStream, chunk: Message[]): boolean {
    let bytes: Uint8Array;
    try {
      bytes = encodeMessageBatch(chunk);
    } catch (err) {
      return this.splitOrDrop(link, stream, chunk, `encode failed: ${errorText(err)}`);
    }
    if (bytes.byteLength > MAX_PEER_MESSAGE_BYTES) {
      return this.splitOrDrop(link, stream, chunk, `batch of ${bytes.byteLength} bytes is over the ${MAX_PEER_MESSAGE_BYTES} byte limit`);
    }
    link.sentBatches++;
    link.sentMessages += chunk.length;
    return stream.write(bytes);
  }

  /** Isolates what cannot be sent: halves the batch until the bad message stands alone, then drops it. */
  private splitOrDrop(link: PeerLink, stream: OutboundStream, chunk: Message[], why: string): boolean {
    if (chunk.length === 1) {
      link.dropped++;
      this.logger.warn({ peer: link.id, type: chunk[0]?.type, why }, 'dropping a message that cannot be sent');
      return true;
    }
    const mid = chunk.length >> 1;
    const a = this.writeChunk(link, stream, chunk.slice(0, mid));
    const b = this.writeChunk(link, stream, chunk.slice(mid));
    return a && b;
  }

  private openStream(link: PeerLink): void {
    if (this.closed) return;
    link.state = 'connecting';
    link.writable = false;
    this.clearTimer(link);
    // The events of a stream that is no longer the link's (ended, replaced) are ignored.
    let stream: OutboundStream | null = null;
    const current = (): boolean => stream !== null && link.stream === stream;
    stream = link.dialer.open(this.hello, {
      open: () => {
        if (!current() || link.state !== 'connecting') return;
        this.clearTimer(link);
        link.state = 'connected';
        link.writable = true;
        link.connectedAt = this.ports.clock.monotonicMs();
        link.redialedEarly = false;
        this.logger.debug({ peer: link.id, address: link.address }, 'peer stream connected');
        this.flushLink(link);
      },
      drain: () => {
        if (!current() || link.state !== 'connected') return;
        link.writable = true;
        this.flushLink(link);
      },
      closed: (end) => {
        if (current()) this.onStreamEnd(link, end);
      },
    });
    link.stream = stream;
    const opened = stream;
    link.timer = this.ports.timers.setTimeout(() => this.onConnectTimeout(link, opened), this.connectTimeoutMs);
  }

  private clearTimer(link: PeerLink): void {
    if (link.timer) this.ports.timers.clearTimeout(link.timer);
    link.timer = null;
  }

  private onConnectTimeout(link: PeerLink, stream: OutboundStream): void {
    if (link.stream !== stream || link.state !== 'connecting') return;
    link.timer = null;
    // A connection still connecting is stuck (a SYN into a partition, or a hung peer): the carrier starts
    // over on a fresh one, so that a healed partition is noticed within one attempt.
    link.dialer.openTimedOut();
    this.onStreamEnd(link, { clean: false, why: `not accepted within ${this.connectTimeoutMs} ms` });
  }

  private onStreamEnd(link: PeerLink, end: StreamEnd): void {
    const stream = link.stream;
    if (!stream) return;
    link.stream = null;
    this.clearTimer(link);
    const wasConnected = link.state === 'connected';
    link.writable = false;
    stream.cancel();
    // A member's answer that this node was removed reaches the node (once; it stops).
    if (end.refusal?.kind === 'removed' && end.refusal.id === this.selfId) this.removal.told(link.id);
    if (this.closed || link.state === 'closed') return;

    const now = this.ports.clock.monotonicMs();
    if (wasConnected && now - link.connectedAt >= HEALTHY_STREAM_MS) link.backoffMs = this.backoffMinMs;
    if (wasConnected && end.clean) {
      this.logger.debug({ peer: link.id, address: link.address }, 'peer ended its stream (it is stopping)');
    } else if (wasConnected) {
      this.logger.warn({ peer: link.id, address: link.address, why: end.why }, 'peer stream broke');
    } else {
      this.logger.debug({ peer: link.id, address: link.address, why: end.why }, 'peer stream could not be opened');
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
    const delay = base / 2 + this.ports.random.fraction() * (base / 2);
    link.backoffMs = Math.min(base * 2, this.backoffMaxMs);
    this.clearTimer(link);
    link.timer = this.ports.timers.setTimeout(() => {
      link.timer = null;
      if (this.closed || link.state !== 'backoff') return;
      link.reconnects++;
      this.openStream(link);
    }, delay);
  }

  /**
   * A message from a peer we are backing off from shows it is up again (typically restarted): dial it now
   * instead of when the backoff ends, on a fresh connection (the old one may be waiting out a backoff of its
   * own). Once per outage, so that a one-way partition cannot turn backoff into a busy loop.
   * Saves a restarted node up to the maximum backoff before its leader reaches it again.
   */
  private redialEarly(peer: NodeId): void {
    const link = this.links.get(peer);
    if (!link || link.state !== 'backoff' || link.redialedEarly || this.closed) return;
    link.redialedEarly = true;
    this.clearTimer(link);
    link.dialer.reset();
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
    this.clearTimer(link);
    link.dropped += link.queue.clear();
    const stream = link.stream;
    const wasConnected = link.state === 'connected';
    link.stream = null; // events of the old stream now go nowhere
    link.state = 'closed';
    link.writable = false;
    // Half-close and give the peer a moment to answer, so that it sees a clean end.
    if (stream && wasConnected) await stream.end(CLOSE_GRACE_MS);
    stream?.cancel();
    link.dialer.close();
  }

  // ---- incoming ----

  private handleInbound(stream: InboundStream): void {
    if (this.closed) {
      stream.refuse({ kind: 'unavailable', why: 'peer transport is closed' });
      return;
    }
    const sender = this.admitInbound(stream);
    if (sender === null) return;
    // A peer that opens a stream is up (typically just restarted): no need to wait for its first message.
    const named = sender ?? stream.hello.nodeId;
    if (named !== '') this.redialEarly(named);
    let misaddressed = 0;
    let spoofed = 0;
    let open = true;
    const stop = (refusal: Refusal): void => {
      open = false;
      this.inbound.delete(stream);
      stream.refuse(refusal);
    };
    this.inbound.set(stream, { named, stop });
    stream.accept({
      closed: (why) => {
        open = false;
        this.inbound.delete(stream);
        if (why !== undefined) this.logger.debug({ peer: stream.remote, err: why }, 'inbound peer stream error');
      },
      frame: (bytes) => {
        if (this.closed || !open) return;
        // A stream opened while its node was a member outlives the node's removal (a paused or cut-off node
        // keeps its connection): once the node is no longer dialled, it is told, as at admission.
        if (named !== '' && !Object.hasOwn(this.members, named) && this.removal.isRemoved(named)) {
          this.logRemoved(stream, named);
          stop({ kind: 'removed', id: named, by: this.selfId });
          return;
        }
        let messages: Message[];
        try {
          messages = decodeMessageBatch(bytes);
        } catch (err) {
          this.logger.warn({ peer: stream.remote, bytes: bytes.byteLength, err: errorText(err) },
            'malformed MessageBatch from peer: ending its stream');
          stop({ kind: 'malformed', why: `malformed MessageBatch: ${errorText(err)}` });
          return;
        }
        this.deliver(this.fromSender(messages, sender, stream, () => spoofed++ === 0), stream, () => misaddressed++ === 0);
      },
    });
  }

  /**
   * Checks the cluster id and, when the carrier authenticates peers, who the certificate names. Returns the
   * sender's node id (undefined when peers are not authenticated), or null after refusing the stream.
   */
  private admitInbound(stream: InboundStream): NodeId | undefined | null {
    const refuse = (why: string, details: object): null => {
      this.logger.warn({ peer: stream.remote, ...details, why }, 'refusing inbound peer stream');
      stream.refuse({ kind: 'denied', why });
      return null;
    };
    const { hello } = stream;
    if (this.clusterId && hello.clusterId !== this.clusterId) {
      return refuse(`cluster id "${hello.clusterId}" is not this cluster's ("${this.clusterId}")`, {});
    }
    if (!this.carrier.authenticates) {
      // Plaintext runs on loopback only (config.ts): the id a peer claims is all there is to go by.
      const claimed = hello.nodeId;
      if (claimed !== '' && this.refusedAsRemoved(stream, claimed)) return null;
      if (claimed !== '' && claimed !== this.selfId) this.learnReturnRoute(claimed, hello.address);
      return undefined;
    }
    const named = stream.verifiedId;
    if (named === undefined || named === this.selfId) {
      return refuse(`certificate names no other node of this cluster (${named ?? 'no node identity'})`, { named });
    }
    if (this.refusedAsRemoved(stream, named)) return null;
    // A node of this cluster's CA that our log does not name may be the leader of a configuration we have
    // not learned yet; the core takes only a leader's messages from it (RawNode.mayHearFrom).
    if (!this.links.has(named) && !this.learnReturnRoute(named, hello.address)) {
      return refuse(`certificate names ${named}, which is no member here and gave no address to answer at`, { named });
    }
    return named;
  }

  /** Ends the stream of a node our committed configuration removed, telling it so; false for any other node. */
  private refusedAsRemoved(stream: InboundStream, id: NodeId): boolean {
    if (!this.removal.isRemoved(id)) return false;
    this.logRemoved(stream, id);
    stream.refuse({ kind: 'removed', id, by: this.selfId });
    return true;
  }

  private logRemoved(stream: InboundStream, id: NodeId): void {
    this.logger.warn({ peer: stream.remote, removed: id }, 'a removed node dialled in: telling it that it was removed');
  }

  /** A route back to a node that is not our member; false when it gave no usable address. */
  private learnReturnRoute(id: NodeId, address: string): boolean {
    if (this.members[id] !== undefined) return true;
    if (!this.returnRoutes.remember(id, address)) return false;
    this.updateLinks();
    return true;
  }

  /** Keeps only the messages whose `from` is the authenticated sender of the stream; warns once per stream. */
  private fromSender(messages: Message[], sender: NodeId | undefined, stream: InboundStream, firstSpoof: () => boolean): Message[] {
    if (sender === undefined) return messages;
    const forged = messages.find((m) => m.from !== sender);
    if (forged === undefined) return messages;
    if (firstSpoof()) {
      this.logger.warn({ peer: stream.remote, authenticated: sender, claimed: forged.from, type: forged.type },
        'dropping peer messages whose sender is not the authenticated peer');
    }
    return messages.filter((m) => m.from === sender);
  }

  private deliver(messages: Message[], stream: InboundStream, firstMisaddressed: () => boolean): void {
    // A message for another node (a peer with a wrong address book) must not be stepped here.
    let accepted = messages;
    const other = messages.find((m) => m.to !== this.selfId);
    if (other !== undefined) {
      accepted = messages.filter((m) => m.to === this.selfId);
      if (firstMisaddressed()) {
        this.logger.warn({ peer: stream.remote, self: this.selfId, to: other.to, from: other.from },
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
}

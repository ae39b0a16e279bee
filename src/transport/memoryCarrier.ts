// The memory carrier: streams between nodes of one process, over a network the caller (the whole-node
// simulator) controls: it decides when each dial, frame and end arrives, and whether it does. The nodes run
// the shipped peer policy (peerPolicy.ts) over it, so the simulator checks the policy's admission, sender
// binding, removal notice and redial, not a copy of them. Frames are bytes (encoded MessageBatches), so a node
// never shares an object with its peers, as over a real connection.
//
// What the network knows stands in for the certificate: a stream's dialler is the node that dialled (the
// network names it), and a dial that reaches another node than the one meant fails, as mutual TLS does.
import type { NodeId } from '../raft/types';
import type { Carrier, InboundHandlers, InboundStream, OutboundEvents, OutboundStream, PeerDialer, PeerHello, Refusal, StreamEnd } from './carrier';

/** The network under a memory carrier. Each `run` happens later, at the receiving node, or never. */
export interface MemoryWire {
  /** Carries a dial from `from` to whatever listens at `address`; `at` is undefined when nothing does. Never runs over a cut link. */
  dial(from: NodeId, address: string, run: (at: MemoryCarrier | undefined) => void): void;
  /** Carries a stream's acceptance, refusal or end from `from` to `to`'s running incarnation. Never over a cut link. */
  signal(from: NodeId, to: NodeId, run: (at: MemoryCarrier | undefined) => void): void;
  /** Carries a frame: like signal, but the network may lose it, deliver it twice, or rewrite it. */
  frame(from: NodeId, to: NodeId, frame: Uint8Array, run: (at: MemoryCarrier | undefined, frame: Uint8Array) => void): void;
}

type ConnectionState = 'dialling' | 'open' | 'closed';

/** One stream, seen from both ends. Each end acts only while its node's carrier is the one that took part. */
export class MemoryConnection {
  state: ConnectionState = 'dialling';
  listener: MemoryCarrier | undefined;
  inbound: InboundHandlers | undefined;
  /** The listener's end no longer takes frames (refused, ended, or reset). */
  listenerDone = false;

  constructor(
    readonly dialler: MemoryCarrier,
    readonly hello: PeerHello,
    readonly events: OutboundEvents,
  ) {}

  /** The dialler hears, across the network, that the stream ended. */
  endAtDialler(from: NodeId, end: StreamEnd): void {
    this.dialler.wire.signal(from, this.dialler.selfId, (at) => {
      if (at !== this.dialler || this.state === 'closed') return;
      this.state = 'closed';
      this.events.closed(end);
    });
  }

  /** The listener hears, across the network, that the dialler went. */
  endAtListener(): void {
    const listener = this.listener;
    if (!listener || this.listenerDone) return;
    this.dialler.wire.signal(this.dialler.selfId, listener.selfId, (at) => {
      if (at !== listener || this.listenerDone) return;
      this.listenerDone = true;
      this.inbound?.closed();
    });
  }
}

class MemoryOutbound implements OutboundStream {
  constructor(private readonly conn: MemoryConnection) {}

  write(frame: Uint8Array): boolean {
    const conn = this.conn;
    const listener = conn.listener;
    if (conn.state !== 'open' || !listener) return true;
    const copy = frame.slice();
    conn.dialler.wire.frame(conn.dialler.selfId, listener.selfId, copy, (at, arrived) => {
      if (at !== listener) {
        // The node restarted or stopped since it took the stream: its host answers with a reset.
        if (at !== undefined || !conn.listenerDone) conn.endAtDialler(listener.selfId, { clean: false, why: 'connection reset by peer' });
        conn.listenerDone = true;
        return;
      }
      if (!conn.listenerDone) conn.inbound?.frame(arrived);
    });
    return true; // memory takes everything: the policy's queue bounds what waits
  }

  end(): Promise<void> {
    this.cancel();
    return Promise.resolve();
  }

  cancel(): void {
    if (this.conn.state === 'closed') return;
    this.conn.state = 'closed';
    this.conn.endAtListener();
  }
}

class MemoryInbound implements InboundStream {
  readonly verifiedId: NodeId;
  readonly remote: string;

  constructor(
    private readonly conn: MemoryConnection,
    private readonly self: MemoryCarrier,
  ) {
    this.verifiedId = conn.dialler.selfId;
    this.remote = `memory:${conn.dialler.selfId}`;
  }

  get hello(): PeerHello {
    return this.conn.hello;
  }

  accept(handlers: InboundHandlers): void {
    const conn = this.conn;
    conn.inbound = handlers;
    this.self.wire.signal(this.self.selfId, conn.dialler.selfId, (at) => {
      if (at !== conn.dialler || conn.state !== 'dialling') return;
      conn.state = 'open';
      conn.events.open();
    });
  }

  refuse(refusal: Refusal): void {
    this.finish({ clean: false, why: refusal.kind === 'removed' ? `${refusal.id} was removed (said by ${refusal.by})` : refusal.why, refusal });
  }

  end(): void {
    this.finish({ clean: true, why: 'the peer is stopping' });
  }

  private finish(end: StreamEnd): void {
    if (this.conn.listenerDone) return;
    this.conn.listenerDone = true;
    this.conn.endAtDialler(this.self.selfId, end);
  }
}

class MemoryDialer implements PeerDialer {
  constructor(
    private readonly carrier: MemoryCarrier,
    private readonly peer: NodeId,
    private readonly address: string,
  ) {}

  open(hello: PeerHello, events: OutboundEvents): OutboundStream {
    const conn = new MemoryConnection(this.carrier, hello, events);
    this.carrier.wire.dial(this.carrier.selfId, this.address, (at) => {
      if (at === undefined) return conn.endAtDialler(this.peer, { clean: false, why: `connection refused at ${this.address}` });
      if (at.selfId !== this.peer) {
        return conn.endAtDialler(at.selfId, { clean: false, why: `peer at ${this.address} is ${at.selfId}, expected ${this.peer}` });
      }
      at.arrive(conn);
    });
    return new MemoryOutbound(conn);
  }

  openTimedOut(): void {}

  reset(): void {}

  close(): void {}
}

export class MemoryCarrier implements Carrier {
  readonly authenticates = true;
  private accept: ((stream: InboundStream) => void) | undefined;
  private closed = false;

  constructor(
    readonly selfId: NodeId,
    readonly wire: MemoryWire,
  ) {}

  dialer(peer: NodeId, address: string): PeerDialer {
    return new MemoryDialer(this, peer, address);
  }

  listen(accept: (stream: InboundStream) => void): void {
    this.accept = accept;
  }

  /** This node stops listening (its process is gone): dials that reach it are refused. */
  stop(): void {
    this.closed = true;
  }

  /** A dial reached this node. */
  arrive(conn: MemoryConnection): void {
    if (this.closed || !this.accept) {
      conn.endAtDialler(this.selfId, { clean: false, why: 'connection refused' });
      return;
    }
    conn.listener = this;
    this.accept(new MemoryInbound(conn, this));
  }
}

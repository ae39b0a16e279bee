// The seam between the peer POLICY (peerPolicy.ts: queues, batching, redial, admission, binding every message
// to the authenticated member) and a CARRIER, which only moves frames: it dials a peer and hands back a frame
// stream to a node whose identity it checked, and it hands over inbound streams with the identity the
// dialler proved. hashicorp/raft draws the same line (NetworkTransport over a StreamLayer). A frame is one
// encoded MessageBatch; a carrier never looks inside one.
import type { NodeId } from '../raft/types';

/** What a dialler says of itself when it opens a stream: claims, which the policy checks. */
export interface PeerHello {
  /** The dialler's cluster id ('' when it has none). */
  clusterId: string;
  /** The node id the dialler claims (believed only by a carrier that does not authenticate). */
  nodeId: NodeId;
  /** Where the dialler is reached (host:port, or ''): the return route of a node our log does not name. */
  address: string;
}

/** Why the policy refuses or ends an inbound stream; the carrier tells the dialler. */
export type Refusal =
  | { kind: 'denied'; why: string }
  | { kind: 'malformed'; why: string }
  | { kind: 'unavailable'; why: string }
  /** `id` was removed by `by`'s committed configuration (removalNotice.ts). */
  | { kind: 'removed'; id: NodeId; by: NodeId };

/** How an outgoing stream ended. */
export interface StreamEnd {
  /** The peer ended it in order, which it does only when it stops. */
  clean: boolean;
  why: string;
  /** The peer's refusal, when it gave one. */
  refusal?: Refusal;
}

/** What the carrier reports of one outgoing stream; `closed` comes at most once, and nothing after it. */
export interface OutboundEvents {
  /** The peer accepted the stream: frames may be written. */
  open(): void;
  /** A write that returned false has drained. */
  drain(): void;
  closed(end: StreamEnd): void;
}

export interface OutboundStream {
  /** Queues one frame; false when the stream's buffer is full (wait for `drain`). */
  write(frame: Uint8Array): boolean;
  /** Half-closes and waits at most `graceMs` for the peer's end. No event follows. */
  end(graceMs: number): Promise<void>;
  /** Drops the stream at once. No event follows. */
  cancel(): void;
}

/** The way to one peer: opens streams, and keeps whatever connection state the carrier needs between them. */
export interface PeerDialer {
  open(hello: PeerHello, events: OutboundEvents): OutboundStream;
  /** The stream did not open in time: drop a connection that is still stuck connecting. */
  openTimedOut(): void;
  /** The next open starts on a fresh connection (the peer came back; the old one may be waiting out a backoff). */
  reset(): void;
  close(): void;
}

/** What the policy hears of an inbound stream it accepted. */
export interface InboundHandlers {
  frame(bytes: Uint8Array): void;
  /** The stream is gone (ended by either side, or broken); `why` when it broke. */
  closed(why?: string): void;
}

export interface InboundStream {
  readonly hello: PeerHello;
  /** The node id the dialler's certificate names; undefined when it names none or the carrier does not authenticate. */
  readonly verifiedId: NodeId | undefined;
  /** Where it comes from, for logs. */
  readonly remote: string;
  /** Takes the stream: the dialler sees it open, frames flow to `handlers`. */
  accept(handlers: InboundHandlers): void;
  /** Ends the stream with a refusal; no frame reaches the policy after it. */
  refuse(refusal: Refusal): void;
  /** Ends the stream in order (this node stops). */
  end(): void;
}

export interface Carrier {
  /** Inbound streams carry the dialler's proven identity (mutual TLS, or the simulator's network). */
  readonly authenticates: boolean;
  dialer(peer: NodeId, address: string): PeerDialer;
  /** Inbound streams go to `accept` from now on. */
  listen(accept: (stream: InboundStream) => void): void;
}

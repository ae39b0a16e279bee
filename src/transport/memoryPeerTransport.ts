import { decodeMessageBatch, encodeMessageBatch } from '../codec/raftCodec';
import type { Message, NodeId } from '../raft/types';
import type { PeerTransport } from './peerTransport';

/** Carries encoded batches between nodes; the simulator decides when (and whether) each one arrives. */
export interface MemoryNetwork {
  /** A batch from `from` to `to`, in the wire encoding, handed to the network. */
  carry(from: NodeId, to: NodeId, batch: Uint8Array): void;
}

/**
 * The in-memory twin of GrpcPeerTransport: the same PeerTransport interface and the same wire encoding (a
 * MessageBatch per peer per send), with the network in the caller's hands. Messages are decoded on arrival,
 * so a node never shares an object with its peers, as over a real connection.
 */
export class MemoryPeerTransport implements PeerTransport {
  private handler: ((messages: Message[]) => void) | undefined;
  private unreachable: ((peer: NodeId) => void) | undefined;
  private closed = false;

  constructor(
    readonly selfId: NodeId,
    private readonly network: MemoryNetwork,
  ) {}

  send(messages: Message[]): void {
    if (this.closed) return;
    const byPeer = new Map<NodeId, Message[]>();
    for (const m of messages) {
      const list = byPeer.get(m.to);
      if (list) list.push(m);
      else byPeer.set(m.to, [m]);
    }
    for (const [to, batch] of byPeer) this.network.carry(this.selfId, to, encodeMessageBatch(batch));
  }

  onMessages(handler: (messages: Message[]) => void): void {
    this.handler = handler;
  }

  onUnreachable(handler: (peer: NodeId) => void): void {
    this.unreachable = handler;
  }

  /** A batch arrived from the network. Like the gRPC transport, only messages from the sending peer pass. */
  deliver(from: NodeId, batch: Uint8Array): void {
    if (this.closed || !this.handler) return;
    const messages = decodeMessageBatch(batch).filter((m) => m.from === from && m.to === this.selfId);
    if (messages.length > 0) this.handler(messages);
  }

  /** The network could not reach `peer` (a cut link): the core stops pipelining to it. */
  reportUnreachable(peer: NodeId): void {
    if (!this.closed) this.unreachable?.(peer);
  }

  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }
}

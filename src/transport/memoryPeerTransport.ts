import { decodeMessageBatch, encodeMessageBatch } from '../codec/raftCodec';
import type { Message, NodeId } from '../raft/types';
import type { PeerTransport } from './peerTransport';
import { RemovalNotices } from './removalNotice';

/** Carries encoded batches between nodes; the simulator decides when (and whether) each one arrives. */
export interface MemoryNetwork {
  /** A batch from `from` to `to`, in the wire encoding, handed to the network. */
  carry(from: NodeId, to: NodeId, batch: Uint8Array): void;
  /** Member `by` refuses `to` as removed (the gRPC transport's removal notice): the network carries the answer. */
  tellRemoved?(by: NodeId, to: NodeId): void;
}

/**
 * The in-memory twin of GrpcPeerTransport: the same PeerTransport interface and the same wire encoding (a
 * MessageBatch per peer per send), with the network in the caller's hands. Messages are decoded on arrival,
 * so a node never shares an object with its peers, as over a real connection.
 */
export class MemoryPeerTransport implements PeerTransport {
  private handler: ((messages: Message[]) => void) | undefined;
  private unreachable: ((peer: NodeId) => void) | undefined;
  private readonly removal = new RemovalNotices();
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

  answerRemovedMembers(check: (id: NodeId) => boolean): void {
    this.removal.answerFor(check);
  }

  onRemoved(handler: (by: NodeId) => void): void {
    this.removal.onRemoved(handler);
  }

  /**
   * `from` opened a stream to this node (the gRPC transport keeps one to every configured peer, redialling
   * while it is broken): a node our committed configuration removed is told so. Returns false then.
   */
  admit(from: NodeId): boolean {
    if (this.closed || !this.removal.isRemoved(from)) return true;
    this.network.tellRemoved?.(this.selfId, from);
    return false;
  }

  /** Member `by` answered that this node was removed: the handler hears it once. */
  removedBy(by: NodeId): void {
    if (!this.closed) this.removal.told(by);
  }

  /** A batch arrived from the network. Like the gRPC transport, only messages from the sending peer pass. */
  deliver(from: NodeId, batch: Uint8Array): void {
    if (this.closed || !this.handler || !this.admit(from)) return;
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

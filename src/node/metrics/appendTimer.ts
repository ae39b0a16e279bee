import { MessageType, type Message, type NodeId } from '../../raft/types';
import type { PeerTransport } from '../../transport/peerTransport';
import type { RaftMetrics } from './raftMetrics';

/** Appends awaiting acknowledgement per peer: beyond this many (a peer that stopped answering), the oldest go. */
const MAX_TIMED_PER_PEER = 1_024;

interface SentAppend {
  /** The last index the append carries: an acknowledgement of this index or above answers it. */
  lastIndex: number;
  sentMs: number;
}

/**
 * The node's peer transport, timing each AppendEntries from when the leader sends it to when the peer
 * acknowledges its last index (network both ways plus the peer's fsync). A rejection (log mismatch)
 * forgets what was in flight to that peer: those appends will be sent again.
 */
export class AppendTimer implements PeerTransport {
  private readonly inFlight = new Map<NodeId, SentAppend[]>();

  constructor(
    private readonly inner: PeerTransport,
    private readonly metrics: RaftMetrics,
    private readonly nowMs: () => number,
  ) {}

  send(messages: Message[]): void {
    const now = this.nowMs();
    for (const m of messages) {
      if (m.type !== MessageType.App) continue;
      const queue = this.inFlight.get(m.to) ?? [];
      queue.push({ lastIndex: m.prevLogIndex + m.entries.length, sentMs: now });
      if (queue.length > MAX_TIMED_PER_PEER) queue.shift();
      this.inFlight.set(m.to, queue);
    }
    this.inner.send(messages);
  }

  flush(): void {
    this.inner.flush?.();
  }

  onMessages(handler: (messages: Message[]) => void): void {
    this.inner.onMessages((messages) => {
      for (const m of messages) if (m.type === MessageType.AppResp) this.acknowledged(m);
      handler(messages);
    });
  }

  onUnreachable(handler: (peer: NodeId) => void): void {
    this.inner.onUnreachable((peer) => {
      this.inFlight.delete(peer);
      handler(peer);
    });
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  private acknowledged(m: Extract<Message, { type: MessageType.AppResp }>): void {
    const queue = this.inFlight.get(m.from);
    if (!queue) return;
    if (m.reject) {
      this.inFlight.delete(m.from);
      return;
    }
    const now = this.nowMs();
    let answered = 0;
    for (const sent of queue) {
      if (sent.lastIndex > m.matchIndex) break;
      this.metrics.appendRoundTrip.observe({ peer: m.from }, (now - sent.sentMs) / 1000);
      answered++;
    }
    queue.splice(0, answered);
  }
}

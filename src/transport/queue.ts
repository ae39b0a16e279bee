// The bounded per-peer outbox: FIFO, limited by message count and (estimated) bytes, drops the oldest.
import { TRANSFER_CONTEXT } from '../raft/messages';
import { MessageType, type Message, type SnapshotMeta } from '../raft/types';

/** Fixed cost of one message in the estimate: its scalar fields and framing, rounded up. */
const MESSAGE_OVERHEAD_BYTES = 64;
const ENTRY_OVERHEAD_BYTES = 24;

/**
 * An upper-leaning estimate of a message's encoded size, without encoding it. Used only to cut batches
 * and to bound the queue; the hard wire limit is checked on the real encoded bytes.
 */
export function estimateMessageBytes(m: Message): number {
  return MESSAGE_OVERHEAD_BYTES + m.from.length + m.to.length + payloadBytes(m);
}

/** What a message carries beyond its scalars: bytes, entries, snapshot data and meta. */
function payloadBytes(m: Message): number {
  switch (m.type) {
    case MessageType.PreVote:
    case MessageType.Vote:
      return m.transfer ? TRANSFER_CONTEXT.byteLength : 0;
    case MessageType.Heartbeat:
    case MessageType.HeartbeatResp:
    case MessageType.ReadIndex:
    case MessageType.ReadIndexResp:
      return m.context.byteLength;
    case MessageType.App: {
      let n = 0;
      for (const e of m.entries) n += ENTRY_OVERHEAD_BYTES + e.data.byteLength;
      return n;
    }
    case MessageType.Snap:
      return m.data.byteLength + metaBytes(m.meta);
    case MessageType.SnapResp:
      return metaBytes(m.meta);
    default:
      return 0;
  }
}

function metaBytes(meta: SnapshotMeta): number {
  let n = 32;
  for (const v of [...meta.config.voters, ...(meta.config.learners ?? []), ...(meta.config.removed ?? [])]) n += 4 + v.length;
  for (const a of Object.values(meta.config.addresses ?? {})) n += 12 + a.client.length + a.peer.length;
  return n;
}

export class MessageQueue {
  private items: (Message | undefined)[] = [];
  private sizes: number[] = [];
  private head = 0;
  private queuedBytes = 0;

  constructor(
    private readonly maxMessages: number,
    private readonly maxBytes: number,
  ) {
    if (!(maxMessages >= 1)) throw new RangeError(`maxMessages must be >= 1, got ${maxMessages}`);
    if (!(maxBytes >= 1)) throw new RangeError(`maxBytes must be >= 1, got ${maxBytes}`);
  }

  get length(): number {
    return this.items.length - this.head;
  }

  get bytes(): number {
    return this.queuedBytes;
  }

  /**
   * Appends a message; returns how many of the oldest messages were dropped to respect the bounds.
   * The newest message is always kept, even if it alone is over the byte bound.
   */
  push(m: Message): number {
    const size = estimateMessageBytes(m);
    this.items.push(m);
    this.sizes.push(size);
    this.queuedBytes += size;
    let dropped = 0;
    while (this.length > this.maxMessages || (this.queuedBytes > this.maxBytes && this.length > 1)) {
      this.shift();
      dropped++;
    }
    return dropped;
  }

  /**
   * Removes and returns the oldest messages whose estimated sizes add up to at most maxBytes
   * (at least one message when the queue is not empty).
   */
  take(maxBytes: number): Message[] {
    const out: Message[] = [];
    let bytes = 0;
    while (this.length > 0) {
      const size = this.headSize();
      if (out.length > 0 && bytes + size > maxBytes) break;
      bytes += size;
      out.push(this.shift());
    }
    return out;
  }

  /** Empties the queue; returns how many messages it held. */
  clear(): number {
    const n = this.length;
    this.items = [];
    this.sizes = [];
    this.head = 0;
    this.queuedBytes = 0;
    return n;
  }

  /** The estimated size of the oldest message; the queue must not be empty. */
  private headSize(): number {
    const size = this.sizes[this.head];
    if (size === undefined) throw new Error('MessageQueue: no message at the head of the queue');
    return size;
  }

  private shift(): Message {
    const m = this.items[this.head];
    if (m === undefined) throw new Error('MessageQueue: no message at the head of the queue');
    this.queuedBytes -= this.headSize();
    this.items[this.head] = undefined;
    this.head++;
    if (this.head === this.items.length) {
      this.items = [];
      this.sizes = [];
      this.head = 0;
    } else if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.sizes = this.sizes.slice(this.head);
      this.head = 0;
    }
    return m;
  }
}

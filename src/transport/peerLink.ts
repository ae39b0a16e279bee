// What the peer policy knows about one peer: its outgoing stream's state, its outbox and its counters.
import type { NodeId } from '../raft/types';
import type { OutboundStream, PeerDialer } from './carrier';
import type { TransportTimerHandle } from './ports';
import { MessageQueue } from './queue';

export type LinkState = 'idle' | 'connecting' | 'connected' | 'backoff' | 'closed';

export class PeerLink {
  state: LinkState = 'idle';
  stream: OutboundStream | null = null;
  /** The stream accepts writes (no backpressure). Meaningful only while connected. */
  writable = false;
  connectedAt = 0;
  backoffMs: number;
  /** The backoff timer or the connect timer, whichever the state needs. */
  timer: TransportTimerHandle | null = null;
  readonly queue: MessageQueue;
  sentBatches = 0;
  sentMessages = 0;
  dropped = 0;
  reconnects = 0;
  /** A message from the peer already cut this outage's backoff short (see PeerPolicy.redialEarly). */
  redialedEarly = false;

  constructor(
    readonly id: NodeId,
    readonly address: string,
    readonly dialer: PeerDialer,
    maxMessages: number,
    maxBytes: number,
    backoffMinMs: number,
  ) {
    this.queue = new MessageQueue(maxMessages, maxBytes);
    this.backoffMs = backoffMinMs;
  }
}

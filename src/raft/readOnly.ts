// ReadIndex bookkeeping on the leader (thesis 6.4): each request records the commit index at the
// time it was received; it may be served once a quorum has answered a heartbeat carrying its context,
// which proves that no newer leader had been elected when the index was recorded.

import { invariant } from './errors';
import type { NodeId } from './types';

export interface ReadRequest {
  index: number;
  context: Uint8Array;
  /** Who asked: the leader itself, or the follower that forwarded the request. */
  from: NodeId;
  acks: Set<NodeId>;
}

/** Contexts are compared by content. */
export function contextKey(context: Uint8Array): string {
  let s = '';
  for (const byte of context) s += String.fromCharCode(byte);
  return s;
}

export class ReadOnly {
  private readonly pending = new Map<string, ReadRequest>();
  /** Keys in arrival order. */
  private queue: string[] = [];

  /** Returns false (and records nothing) when a request with the same context is already waiting. */
  add(index: number, context: Uint8Array, from: NodeId, self: NodeId): boolean {
    const key = contextKey(context);
    if (this.pending.has(key)) return false;
    this.pending.set(key, { index, context, from, acks: new Set([self]) });
    this.queue.push(key);
    return true;
  }

  /**
   * Records that `from` answered a heartbeat carrying `context`; returns how many of `voters` have (a
   * learner's answer, or the leader's own while it is being removed, confirms nothing).
   */
  recvAck(from: NodeId, context: Uint8Array, voters: readonly NodeId[]): number {
    const req = this.pending.get(contextKey(context));
    if (req === undefined) return 0;
    req.acks.add(from);
    let n = 0;
    for (const v of voters) if (req.acks.has(v)) n++;
    return n;
  }

  /**
   * The request with `context` is confirmed: so is every request queued before it, since the
   * confirming heartbeat round started after they were recorded. Returns them in arrival order.
   */
  advance(context: Uint8Array): ReadRequest[] {
    const key = contextKey(context);
    const at = this.queue.indexOf(key);
    if (at < 0) return [];
    const done = this.queue.slice(0, at + 1);
    this.queue = this.queue.slice(at + 1);
    return done.map((k) => {
      const req = this.pending.get(k);
      invariant(req !== undefined, 'every queued read request is pending');
      this.pending.delete(k);
      return req;
    });
  }

  /** Context of the newest waiting request: heartbeats carry it. */
  lastPendingContext(): Uint8Array | undefined {
    const key = this.queue.at(-1);
    if (key === undefined) return undefined;
    const req = this.pending.get(key);
    invariant(req !== undefined, 'every queued read request is pending');
    return req.context;
  }

  size(): number {
    return this.queue.length;
  }
}

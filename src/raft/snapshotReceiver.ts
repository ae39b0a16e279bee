// Follower side of a chunked InstallSnapshot: reassembles the chunks of one transfer in order.
//
// A transfer is identified by (leader, term, snapshot index, snapshot term). Chunks must arrive in
// offset order. A chunk at offset 0 starts a new transfer (one not already under way); a duplicate of
// data already held is ignored; a chunk beyond what we hold (a gap: something was lost or reordered) is
// not kept. Every answer tells the leader how much we hold, and it continues (or resends) from there:
// reordering and duplication cost retransmission, never a wrong or stuck transfer.

import type { NodeId, Snapshot, SnapshotMeta } from './types';

export type ChunkOutcome =
  | { kind: 'progress'; received: number }
  | { kind: 'gap'; received: number }
  | { kind: 'too-large' }
  | { kind: 'complete'; snapshot: Snapshot };

interface Assembly {
  from: NodeId;
  term: number;
  meta: SnapshotMeta;
  chunks: Uint8Array[];
  received: number;
}

export class SnapshotReceiver {
  private current: Assembly | undefined;

  /** A transfer that would hold more than maxBytes is dropped whole (see RaftConfig.maxSnapshotBytes). */
  constructor(private readonly maxBytes: number) {}

  receive(from: NodeId, term: number, meta: SnapshotMeta, offset: number, data: Uint8Array, done: boolean): ChunkOutcome {
    if (offset === 0 && (this.current === undefined || !sameTransfer(this.current, from, term, meta))) {
      this.current = { from, term, meta, chunks: [], received: 0 };
    }
    const cur = this.current;
    if (cur === undefined || !sameTransfer(cur, from, term, meta)) {
      return { kind: 'gap', received: 0 };
    }
    if (offset < cur.received) return { kind: 'progress', received: cur.received };
    if (offset > cur.received) return { kind: 'gap', received: cur.received };
    if (cur.received + data.byteLength > this.maxBytes) {
      this.current = undefined;
      return { kind: 'too-large' };
    }
    cur.chunks.push(data);
    cur.received += data.byteLength;
    if (!done) return { kind: 'progress', received: cur.received };
    this.current = undefined;
    return { kind: 'complete', snapshot: { meta: cur.meta, data: concat(cur.chunks, cur.received) } };
  }

  reset(): void {
    this.current = undefined;
  }
}

function sameTransfer(a: Assembly, from: NodeId, term: number, meta: SnapshotMeta): boolean {
  return a.from === from && a.term === term && a.meta.index === meta.index && a.meta.term === meta.term;
}

function concat(chunks: Uint8Array[], total: number): Uint8Array {
  const [only] = chunks;
  if (chunks.length === 1 && only !== undefined) return only;
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

// What the leader knows about one follower (etcd's tracker.Progress), and how it sends to it:
//   probe:     position unknown; one App at a time, the next only after an answer (or a heartbeat answer)
//   replicate: position known; App messages are pipelined up to the inflight window
//   snapshot:  the follower needs entries we compacted; an InstallSnapshot is being streamed

import { Inflights } from './inflights';
import type { Snapshot } from './types';

export type ProgressState = 'probe' | 'replicate' | 'snapshot';

/** An InstallSnapshot in flight: chunks up to `sent` are sent, up to `acked` acknowledged. */
export interface OutgoingSnapshot {
  snapshot: Snapshot;
  sent: number;
  acked: number;
  /** The chunk carrying snapshotDone has been sent (since the last rewind). */
  doneSent: boolean;
  /** Ticks since the follower last acknowledged a chunk: a silent transfer is restarted. */
  idleTicks: number;
}

export class Progress {
  match = 0;
  next: number;
  state: ProgressState = 'probe';
  /** Probe state: an App is out and unanswered. */
  probeSent = false;
  readonly inflights: Inflights;
  /**
   * Leader tick at which the newest heartbeat this follower answered was sent. Measured from the send,
   * not the answer, so delayed or duplicated answers never make the follower look more recent than it is.
   */
  lastAckTick = -Infinity;
  /** Tick of the last retry triggered by a heartbeat answer (re-probe or resync): at most one per heartbeat. */
  lastRetryTick = -Infinity;
  outgoing: OutgoingSnapshot | undefined;

  constructor(next: number, maxInflight: number) {
    this.next = next;
    this.inflights = new Inflights(maxInflight);
  }

  becomeProbe(): void {
    this.state = 'probe';
    this.next = this.match + 1;
    this.probeSent = false;
    this.inflights.reset();
    this.outgoing = undefined;
  }

  becomeReplicate(): void {
    this.state = 'replicate';
    this.next = this.match + 1;
    this.probeSent = false;
    this.inflights.reset();
    this.outgoing = undefined;
  }

  becomeSnapshot(snapshot: Snapshot): void {
    this.state = 'snapshot';
    this.probeSent = false;
    this.inflights.reset();
    this.outgoing = { snapshot, sent: 0, acked: 0, doneSent: false, idleTicks: 0 };
  }

  /** The follower has every entry up to `n`. Returns whether that is news. */
  maybeUpdate(n: number): boolean {
    let updated = false;
    if (this.match < n) {
      this.match = n;
      this.probeSent = false;
      updated = true;
    }
    this.next = Math.max(this.next, n + 1);
    return updated;
  }

  /**
   * The follower rejected an App whose preceding index was `rejected`; `probeHint` is where the
   * leader should probe next (fast backtracking). Returns false for stale rejections.
   */
  maybeDecrTo(rejected: number, probeHint: number): boolean {
    if (this.state === 'replicate') {
      // Already known to match up to `match`: a rejection at or below it is stale.
      if (rejected <= this.match) return false;
      this.next = this.match + 1;
      return true;
    }
    if (this.state === 'snapshot') return false;
    // Probe: only the answer to the probe in flight counts.
    if (this.next - 1 !== rejected) return false;
    this.next = Math.max(Math.min(rejected, probeHint + 1), this.match + 1);
    this.probeSent = false;
    return true;
  }

  isPaused(): boolean {
    switch (this.state) {
      case 'probe':
        return this.probeSent;
      case 'replicate':
        return this.inflights.full();
      case 'snapshot':
        return true;
    }
  }

  /** An App carrying entries up to `lastIndex` (count `count`) was just sent. */
  sentEntries(lastIndex: number, count: number): void {
    if (this.state === 'replicate') {
      if (count > 0) {
        this.next = lastIndex + 1;
        this.inflights.add(lastIndex);
      }
    } else if (this.state === 'probe') {
      this.probeSent = true;
    }
  }
}

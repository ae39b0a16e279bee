// What the leader knows about one follower (etcd's tracker.Progress), and how it sends to it:
//   probe:     position unknown; one App at a time, the next only after an answer (or a heartbeat answer)
//   replicate: position known; App messages are pipelined up to the inflight window
//   snapshot:  the follower needs entries we compacted; an InstallSnapshot is being streamed
// Each state carries the fields only it has, so none lingers from an earlier state.

import { Inflights } from './inflights';
import type { Snapshot } from './types';

export interface ProbeState {
  kind: 'probe';
  /** An App is out and unanswered. */
  probeSent: boolean;
}

export interface ReplicateState {
  kind: 'replicate';
  inflights: Inflights;
}

/** An InstallSnapshot in flight: chunks up to `sent` are sent, up to `acked` acknowledged. */
export interface SnapshotState {
  kind: 'snapshot';
  snapshot: Snapshot;
  sent: number;
  acked: number;
  /** The chunk carrying `done` has been sent (since the last rewind). */
  doneSent: boolean;
  /** Ticks since the follower last acknowledged a chunk: a silent transfer is restarted. */
  idleTicks: number;
}

export type ProgressState = ProbeState | ReplicateState | SnapshotState;
export type ProgressStateKind = ProgressState['kind'];

/** Bounds of the replicate state's inflight window (RaftConfig.maxInflight, maxInflightBytes). */
export interface InflightLimits {
  count: number;
  bytes: number;
}

export class Progress {
  match = 0;
  next: number;
  state: ProgressState = { kind: 'probe', probeSent: false };
  /**
   * Leader tick at which the newest heartbeat this follower answered was sent. Measured from the send,
   * not the answer, so delayed or duplicated answers never make the follower look more recent than it is.
   */
  lastAckTick = -Infinity;
  /** Tick of the last retry triggered by a heartbeat answer (re-probe or resync): at most one per heartbeat. */
  lastRetryTick = -Infinity;
  private readonly limits: InflightLimits;

  constructor(next: number, maxInflight: number, maxInflightBytes = Infinity) {
    this.next = next;
    this.limits = { count: maxInflight, bytes: maxInflightBytes };
  }

  becomeProbe(): void {
    this.resetState({ kind: 'probe', probeSent: false });
  }

  becomeReplicate(): void {
    this.resetState({ kind: 'replicate', inflights: new Inflights(this.limits.count, this.limits.bytes) });
  }

  /**
   * Probe and replicate both resume right after what the follower is known to hold; the new state drops
   * everything of the one before (probe flag, window, transfer).
   */
  private resetState(state: ProbeState | ReplicateState): void {
    this.state = state;
    this.next = this.match + 1;
  }

  /** `next` stays: the transfer ends in leaveSnapshotState, which resets it from the follower's answer. */
  becomeSnapshot(snapshot: Snapshot): SnapshotState {
    const state: SnapshotState = { kind: 'snapshot', snapshot, sent: 0, acked: 0, doneSent: false, idleTicks: 0 };
    this.state = state;
    return state;
  }

  /** The follower has every entry up to `n`. Returns whether that is news. */
  maybeUpdate(n: number): boolean {
    let updated = false;
    if (this.match < n) {
      this.match = n;
      if (this.state.kind === 'probe') this.state.probeSent = false;
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
    const state = this.state;
    if (state.kind === 'replicate') {
      // Already known to match up to `match`: a rejection at or below it is stale.
      if (rejected <= this.match) return false;
      this.next = this.match + 1;
      return true;
    }
    if (state.kind === 'snapshot') return false;
    // Probe: only the answer to the probe in flight counts.
    if (this.next - 1 !== rejected) return false;
    this.next = Math.max(Math.min(rejected, probeHint + 1), this.match + 1);
    state.probeSent = false;
    return true;
  }

  isPaused(): boolean {
    switch (this.state.kind) {
      case 'probe':
        return this.state.probeSent;
      case 'replicate':
        return this.state.inflights.full();
      case 'snapshot':
        return true;
    }
  }

  /** An App carrying `count` entries (`bytes` of data) up to `lastIndex` was just sent. */
  sentEntries(lastIndex: number, count: number, bytes = 0): void {
    if (this.state.kind === 'replicate') {
      if (count > 0) {
        this.next = lastIndex + 1;
        this.state.inflights.add(lastIndex, bytes);
      }
    } else if (this.state.kind === 'probe') {
      this.state.probeSent = true;
    }
  }

  /** App messages in flight (replicate state only). */
  inflightCount(): number {
    return this.state.kind === 'replicate' ? this.state.inflights.count() : 0;
  }
}

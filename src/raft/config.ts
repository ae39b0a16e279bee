import type { NodeId, TestOnlyBugs } from './types';

/** Every knob of the Raft core, in ticks and counts. The core has no clock: the caller ticks it. */
export interface RaftConfig {
  id: NodeId;
  /** Voters of the initial configuration (ignored when a snapshot carries one). */
  voters: NodeId[];
  /** A follower that hears no leader for electionTicks..2*electionTicks-1 ticks campaigns. */
  electionTicks: number;
  /** The leader sends heartbeats every heartbeatTicks ticks. Must be < electionTicks. */
  heartbeatTicks: number;
  /** Uniform random number in [0, 1) for election jitter; inject a seeded source for determinism. */
  random: () => number;
  /** Pre-vote (thesis 9.6): on by default. */
  preVote?: boolean;
  /** A leader that has not heard from a quorum for electionTicks steps down: on by default. */
  checkQuorum?: boolean;
  /** Upper bound on the summed data size of the entries in one App message. */
  maxMsgBytes?: number;
  /** Upper bound on App messages in flight to one follower in replicate state (pipelining window). */
  maxInflight?: number;
  /** Upper bound on entries not yet committed; proposals beyond it are refused. */
  maxUncommittedEntries?: number;
  /** Upper bound on the bytes of one InstallSnapshot chunk. */
  snapshotChunkBytes?: number;
  /** Upper bound on InstallSnapshot chunks sent to one follower and not yet acknowledged. */
  snapshotInflightChunks?: number;
  /** Upper bound on ReadIndex requests waiting on the leader (for leadership confirmation or its no-op). */
  maxPendingReads?: number;
  /**
   * Followers learn a new commit index from the next append or heartbeat instead of an empty append of its
   * own. Under a light load that halves the messages (and the follower Readies) per proposal; followers
   * then apply up to heartbeatTicks later. Safety does not depend on when followers learn the commit.
   */
  lazyCommitNotice?: boolean;
  testOnlyBugs?: TestOnlyBugs;
}

export const RAFT_DEFAULTS = {
  preVote: true,
  checkQuorum: true,
  maxMsgBytes: 1 << 20,
  maxInflight: 64,
  maxUncommittedEntries: 100_000,
  snapshotChunkBytes: 1 << 20,
  snapshotInflightChunks: 4,
  maxPendingReads: 10_000,
  lazyCommitNotice: false,
} as const;

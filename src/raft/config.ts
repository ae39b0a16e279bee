import { crc32 } from './crc32';
import type { MemberAddress, NodeId, Snapshot } from './types';

/** Every knob of the Raft core, in ticks and counts. The core has no clock: the caller ticks it. */
export interface RaftConfig {
  id: NodeId;
  /**
   * The bootstrap configuration: it counts only while the log holds none of its own (no snapshot, no
   * ConfChange entry). After that the configuration comes from the log and snapshots (confChange.ts).
   */
  voters: NodeId[];
  /** Bootstrap learners (a node that joins an existing cluster starts as one). Default none. */
  learners?: NodeId[];
  /** Bootstrap member addresses, carried in configurations for the application. Default none. */
  addresses?: Record<NodeId, MemberAddress>;
  /** A learner is promoted only within this many entries of the leader's commit index. Default 1,000. */
  maxPromoteLag?: number;
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
  /**
   * Upper bound on the entry data of the App messages in flight to one follower: a window of single
   * entries larger than maxMsgBytes (each goes alone) cannot hold maxInflight of them. Default
   * maxInflight * maxMsgBytes, so that for entries up to maxMsgBytes the count is always the binding
   * limit (k < maxInflight messages carry less than k * maxMsgBytes). With the default maxMsgBytes (1 MiB)
   * no command the state machine accepts is that large (src/state/limits.ts), so nothing changes there.
   */
  maxInflightBytes?: number;
  /** Upper bound on entries not yet committed; proposals beyond it are refused. */
  maxUncommittedEntries?: number;
  /** Upper bound on the bytes of one InstallSnapshot chunk. */
  snapshotChunkBytes?: number;
  /**
   * Upper bound on the bytes of one snapshot a follower assembles from a leader's chunks. A transfer that
   * grows past it is dropped, so no peer can make a node hold more than this for a snapshot. Far above the
   * largest state the limits allow (src/state/limits.ts).
   */
  maxSnapshotBytes?: number;
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
  /**
   * CRC-32 (IEEE, as zlib's crc32) of a snapshot's data, set in its meta by compact() and checked on every
   * snapshot received. Default: a pure implementation (crc32.ts); the server may inject a native one.
   * Every node must compute the same function.
   */
  checksum?: (data: Uint8Array) => number;
  /**
   * Called with a snapshot received from the leader, whole and with a matching checksum, before anything
   * of it is persisted or installed: the application decodes it fully and returns false (or throws) if it
   * is not a valid state. A refused snapshot is dropped (the leader sends it again later). Default: accept.
   */
  validateSnapshot?: (snapshot: Snapshot) => boolean;
  /**
   * Told of every peer message the core drops because it contradicts the protocol (a snapshot refused, an
   * append that would overwrite a committed entry), for the caller to log. Default: nothing.
   */
  onRefused?: (reason: string, from: NodeId) => void;
}

export const RAFT_DEFAULTS = {
  preVote: true,
  checkQuorum: true,
  maxMsgBytes: 1 << 20,
  maxInflight: 64,
  maxUncommittedEntries: 100_000,
  snapshotChunkBytes: 1 << 20,
  maxSnapshotBytes: 2 ** 30,
  snapshotInflightChunks: 4,
  maxPendingReads: 10_000,
  lazyCommitNotice: false,
  maxPromoteLag: 1_000,
  learners: [] as string[],
  addresses: {} as Record<string, MemberAddress>,
  checksum: crc32,
  validateSnapshot: (): boolean => true,
  onRefused: (): void => undefined,
} as const;

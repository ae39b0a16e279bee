/**
 * Fault profiles: how hostile the world is during the safety phase. All durations are in ticks except
 * network and disk delays, which are in time units (TICK units per tick) so that messages and syncs
 * interleave with ticks at a finer grain.
 */

/** Virtual time units per tick. */
export const TICK = 10;

export type PartitionKind = 'symmetric' | 'oneWay' | 'leaderMinority';

export interface FaultProfile {
  name: string;
  description: string;
  // Core configuration
  electionTicks: number;
  heartbeatTicks: number;
  preVote: boolean | 'random';
  checkQuorum: boolean | 'random';
  maxMsgBytes?: number;
  maxInflight?: number;
  snapshotChunkBytes?: number;
  /** A node compacts its log every this many applied entries. */
  compactEvery: number;
  // Network (per message)
  loss: number;
  dup: number;
  /** Delivery delay in units, uniform. */
  delay: [number, number];
  /** Probability that a message is held back much longer (a stale message arriving late). */
  longDelayRate: number;
  longDelay: [number, number];
  // Partitions (rates are per tick)
  partitionRate: number;
  partitionTicks: [number, number];
  partitionKinds: Record<PartitionKind, number>;
  // Crashes (rates are per tick)
  crashRate: number;
  /** Probability that a crash picks the leader when there is one. */
  crashLeaderBias: number;
  crashAllRate: number;
  /** Fraction of crashes that hit their node between issuing its next write and that write's sync. */
  crashBeforeSyncRate: number;
  downTicks: [number, number];
  /**
   * Probability that a newly elected leader is deposed (crashed or isolated with a minority) a few ticks
   * into its term, typically while it is still re-replicating older entries.
   */
  deposeNewLeaderRate: number;
  /** Delay in units between issuing a write and its becoming durable. */
  syncDelay: [number, number];
  // Workload and operator actions (expected count per tick)
  proposalRate: number;
  readRate: number;
  transferRate: number;
  campaignRate: number;
}

const base: FaultProfile = {
  name: 'base',
  description: '',
  electionTicks: 10,
  heartbeatTicks: 2,
  preVote: true,
  checkQuorum: true,
  compactEvery: 25,
  loss: 0.02,
  dup: 0.01,
  delay: [1, 8],
  longDelayRate: 0,
  longDelay: [30, 100],
  partitionRate: 0.002,
  partitionTicks: [10, 50],
  partitionKinds: { symmetric: 1, oneWay: 1, leaderMinority: 1 },
  crashRate: 0.002,
  crashLeaderBias: 0.3,
  crashAllRate: 0,
  crashBeforeSyncRate: 0.3,
  downTicks: [5, 40],
  deposeNewLeaderRate: 0,
  syncDelay: [0, 6],
  proposalRate: 0.5,
  readRate: 0.1,
  transferRate: 0.002,
  campaignRate: 0,
};

export const PROFILES: readonly FaultProfile[] = [
  { ...base, name: 'calm', description: 'light loss, rare partitions and crashes' },
  {
    ...base,
    name: 'lossy',
    description: 'up to 30% loss, duplication, heavy reordering, late stale messages',
    loss: 0.3,
    dup: 0.15,
    delay: [1, 30],
    longDelayRate: 0.05,
    longDelay: [30, 150],
    partitionRate: 0.005,
    crashRate: 0.003,
    syncDelay: [0, 10],
    proposalRate: 0.6,
  },
  {
    ...base,
    name: 'partitions',
    description: 'frequent symmetric, one-way and leader-minority partitions',
    loss: 0.05,
    dup: 0.05,
    delay: [1, 15],
    partitionRate: 0.06,
    partitionTicks: [5, 60],
    partitionKinds: { symmetric: 1, oneWay: 1, leaderMinority: 1.5 },
    crashRate: 0.003,
    proposalRate: 0.6,
    transferRate: 0.005,
  },
  {
    ...base,
    name: 'crashes',
    description: 'frequent crashes (often between write and sync), whole-cluster restarts, slow disks',
    heartbeatTicks: 1,
    loss: 0.05,
    partitionRate: 0.01,
    crashRate: 0.02,
    crashLeaderBias: 0.5,
    crashAllRate: 0.003,
    crashBeforeSyncRate: 0.6,
    downTicks: [1, 30],
    syncDelay: [0, 40],
    proposalRate: 0.8,
    compactEvery: 15,
  },
  {
    ...base,
    name: 'chaos',
    description: 'everything at once, small messages, chunked snapshots, small pipelines, random pre-vote/check-quorum',
    preVote: 'random',
    checkQuorum: 'random',
    maxMsgBytes: 64,
    maxInflight: 4,
    snapshotChunkBytes: 256,
    compactEvery: 10,
    loss: 0.15,
    dup: 0.1,
    delay: [1, 25],
    longDelayRate: 0.03,
    partitionRate: 0.03,
    partitionTicks: [5, 40],
    crashRate: 0.01,
    crashAllRate: 0.002,
    crashBeforeSyncRate: 0.5,
    downTicks: [1, 30],
    syncDelay: [0, 25],
    proposalRate: 0.7,
    transferRate: 0.01,
    campaignRate: 0.01,
  },
  {
    ...base,
    name: 'churn',
    description: 'leader churn with partial replication: one entry per append, short leader-isolating partitions, forced campaigns',
    preVote: 'random',
    checkQuorum: 'random',
    maxMsgBytes: 1,
    maxInflight: 2,
    loss: 0.1,
    dup: 0.05,
    delay: [1, 20],
    longDelayRate: 0.02,
    partitionRate: 0.08,
    partitionTicks: [3, 25],
    partitionKinds: { symmetric: 1, oneWay: 0.5, leaderMinority: 3 },
    crashRate: 0.01,
    crashLeaderBias: 0.7,
    crashBeforeSyncRate: 0.5,
    downTicks: [1, 20],
    deposeNewLeaderRate: 0.2,
    syncDelay: [0, 20],
    proposalRate: 1,
    transferRate: 0.02,
    campaignRate: 0.03,
    compactEvery: 20,
  },
  {
    ...base,
    name: 'figure8',
    description:
      'leaders isolated again and again while they take proposals, one entry per append: divergent ' +
      'uncommitted suffixes of several terms, then partial re-replication by the next leader (Raft paper, Figure 8)',
    preVote: 'random',
    checkQuorum: 'random',
    electionTicks: 8,
    heartbeatTicks: 2,
    maxMsgBytes: 1,
    maxInflight: 1,
    loss: 0.05,
    dup: 0.02,
    delay: [1, 12],
    partitionRate: 0.15,
    partitionTicks: [4, 20],
    partitionKinds: { symmetric: 0.5, oneWay: 0.3, leaderMinority: 4 },
    crashRate: 0.02,
    crashLeaderBias: 0.8,
    crashBeforeSyncRate: 0.3,
    downTicks: [1, 15],
    deposeNewLeaderRate: 0.5,
    syncDelay: [0, 10],
    proposalRate: 1.5,
    transferRate: 0.01,
    campaignRate: 0.03,
    compactEvery: 30,
  },
  {
    ...base,
    name: 'nopv',
    description: 'pre-vote and check-quorum off: disruptive candidates, partitions and crashes',
    preVote: false,
    checkQuorum: false,
    loss: 0.08,
    dup: 0.05,
    delay: [1, 15],
    partitionRate: 0.04,
    partitionTicks: [5, 40],
    crashRate: 0.01,
    crashLeaderBias: 0.5,
    crashBeforeSyncRate: 0.5,
    syncDelay: [0, 15],
    proposalRate: 0.7,
    campaignRate: 0.02,
  },
];

export function findProfile(name: string): FaultProfile {
  const p = PROFILES.find((x) => x.name === name);
  if (!p) throw new Error(`unknown profile '${name}' (known: ${PROFILES.map((x) => x.name).join(', ')})`);
  return p;
}

/** What the world looks like in the liveness phase: no faults, no loss, short delays, fast disks. */
export function healed(p: FaultProfile): FaultProfile {
  return {
    ...p,
    loss: 0,
    dup: 0,
    delay: [1, 5],
    longDelayRate: 0,
    partitionRate: 0,
    crashRate: 0,
    crashAllRate: 0,
    crashBeforeSyncRate: 0,
    deposeNewLeaderRate: 0,
    syncDelay: [0, 3],
    proposalRate: 0,
    readRate: 0,
    transferRate: 0,
    campaignRate: 0,
  };
}

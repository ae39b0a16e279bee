/**
 * Fault profiles of the whole-node simulator. Every seed runs one (chosen from the seed unless named); each
 * chaos step (every CHAOS_EVERY_MS of simulated time) draws its faults with these probabilities.
 */
import type { RuntimeOptions } from '../../src/node/runtime/nodeRuntime';

export interface NodeSimProfile {
  name: string;
  /** Split the cluster (clients go to either side). */
  partition: number;
  /** Power loss on one node (un-synced writes lost), restarted a little later. */
  crash: number;
  /** A node's event loop stops for a while, then catches up. */
  stallNode: number;
  /** A client stops for a while (a holder paused past its lease). */
  stallClient: number;
  /** A node's wall clock steps forward or back. */
  clockStep: number;
  /** Per-message loss and duplication while the profile runs. */
  drop: number;
  duplicate: number;
  maxDelayMs: number;
  /** A new leader is crashed or cut off within 400 ms of its election, with this probability. */
  deposeNewLeader?: number;
  /** Replication settings of every node (defaults otherwise). */
  raftTuning?: RuntimeOptions['raftTuning'];
}

export const CHAOS_EVERY_MS = 250;

export const NODE_SIM_PROFILES: readonly NodeSimProfile[] = [
  { name: 'calm', partition: 0, crash: 0, stallNode: 0, stallClient: 0, clockStep: 0, drop: 0, duplicate: 0, maxDelayMs: 3 },
  { name: 'partitions', partition: 0.08, crash: 0, stallNode: 0, stallClient: 0.01, clockStep: 0, drop: 0.01, duplicate: 0.01, maxDelayMs: 10 },
  { name: 'crashes', partition: 0, crash: 0.06, stallNode: 0, stallClient: 0.01, clockStep: 0, drop: 0.01, duplicate: 0.01, maxDelayMs: 5 },
  { name: 'clocks', partition: 0.02, crash: 0, stallNode: 0, stallClient: 0.02, clockStep: 0.12, drop: 0, duplicate: 0, maxDelayMs: 5 },
  { name: 'stalls', partition: 0.04, crash: 0.02, stallNode: 0.08, stallClient: 0.04, clockStep: 0.02, drop: 0.01, duplicate: 0, maxDelayMs: 5 },
  { name: 'lossy', partition: 0.02, crash: 0.01, stallNode: 0.01, stallClient: 0.01, clockStep: 0, drop: 0.08, duplicate: 0.05, maxDelayMs: 40 },
  { name: 'mixed', partition: 0.05, crash: 0.03, stallNode: 0.04, stallClient: 0.03, clockStep: 0.04, drop: 0.02, duplicate: 0.02, maxDelayMs: 15 },
  // Raft's Figure 8: one entry per append and no pipelining, so a new leader re-replicates an old term's
  // entries one at a time, and leaders deposed soon after winning.
  { name: 'figure8', partition: 0.05, crash: 0.1, stallNode: 0, stallClient: 0.01, clockStep: 0, drop: 0.02, duplicate: 0.02, maxDelayMs: 30, deposeNewLeader: 0.9, raftTuning: { maxMsgBytes: 1, maxInflight: 1 } },
];

/**
 * The profile a seed runs unless one is named. Consecutive seeds pair up (3 nodes, then 5); the first seven
 * profiles cycle over the pairs as they did before figure8 existed, and figure8 takes every eighth pair, so
 * that every seed pinned before it still runs what it ran.
 */
export function profileForSeed(seed: number): NodeSimProfile {
  const pair = Math.floor(Math.abs(Math.trunc(seed)) / 2);
  const cycle = NODE_SIM_PROFILES.length - 1;
  return pair % (cycle + 1) === cycle ? NODE_SIM_PROFILES[cycle]! : NODE_SIM_PROFILES[pair % cycle]!;
}

export function findNodeSimProfile(name: string): NodeSimProfile {
  const p = NODE_SIM_PROFILES.find((x) => x.name === name);
  if (!p) throw new Error(`unknown profile ${name}; known: ${NODE_SIM_PROFILES.map((x) => x.name).join(', ')}`);
  return p;
}

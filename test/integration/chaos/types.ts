// What the caller needs of a chaos run: its options and its result.
import type { History, FinalRead } from '../../checker';
import type { WorkloadOptions, WorkloadStats } from '../../chaos/workload';
import type { LocalCluster } from '../harness';
import type { WorkerClock } from './clientWorkers';
import type { FaultContext } from './context';
import type { Failover } from './failovers';
import type { NodeFaultKind, ScheduledFault } from './schedule';

export interface ChaosOptions {
  nodes: 3 | 5;
  seed: number;
  /** How long the nemesis runs (ms); the workload runs for this plus the heal and a calm tail. Unused with `steps`. */
  durationMs: number;
  /**
   * Scripted steps instead of the nemesis (membership changes: test/integration/membership.test.ts), run
   * while the clients run; they may change the members (ctx.view.admit / retire). No proxies needed then.
   */
  steps?: (ctx: FaultContext) => Promise<void>;
  /** The members when the run starts (default every node of the cluster; nodes made for a later add are not). */
  members?: string[];
  /**
   * What the clients dial (default every node of the cluster). Leader hints never add endpoints, so a client
   * reaches a node added later only if it is told its address up front.
   */
  endpoints?: string[];
  /** In-process recorded clients (default 6). */
  clients?: number;
  /** Client worker processes (default 2) and clients in each (default 2). */
  workers?: number;
  workerClients?: number;
  /** Only these node-lane fault kinds (default all of the cluster size). */
  kinds?: NodeFaultKind[];
  /** A fixed schedule instead of the seed's (regression scenarios). */
  schedule?: ScheduledFault[];
  /** Bound on "one agreed leader and a lock cycle served" after everything healed (default 20 s). */
  healBoundMs?: number;
  /** Workload time after the cluster served again, before the clients stop (default 2 s). */
  calmTailMs?: number;
  /** A running cluster with proxies to reuse (the soak); otherwise one is created and destroyed. */
  cluster?: LocalCluster;
  /** Lock namespace (default chaos-<seed>). Runs against one cluster must use distinct namespaces. */
  namespace?: string;
  /** Cluster knobs when the runner creates it. */
  snapshotEveryEntries?: number;
  /** Workload overrides (both in-process and workers). */
  workload?: Partial<Omit<WorkloadOptions, 'endpoints' | 'recorder' | 'createClient' | 'logger' | 'namespace' | 'seed' | 'clients'>>;
  /** Progress lines. */
  log?: (line: string) => void;
}

export interface ChaosRun {
  seed: number;
  nodes: number;
  namespace: string;
  schedule: ScheduledFault[];
  history: History;
  finalState: Map<string, FinalRead>;
  /** Fault timeline lines (run clock). */
  timeline: string[];
  failovers: Failover[];
  /** ms from "everything healed" to one agreed leader and a served lock cycle. */
  recoveryMs: number;
  /** Operations that completed ok, called after the cluster served again. */
  okAfterHeal: number;
  workloadStats: WorkloadStats;
  workerStats: Array<Record<string, number> | undefined>;
  /** Minority probes sent (and how many got an ok: must be 0 inside windows, see the invariant). */
  probes: { sent: number; ok: number };
  /** Per worker: measured clock offset and the slack added to its intervals (ms). */
  clocks: WorkerClock[];
  dir: string;
}

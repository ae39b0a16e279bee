// Everything a fault handler may touch, in one record: the cluster and what the runner sees of it, the
// bookkeeping shared by faults that overlap, and the run's clock, recorder and notes.
import type { Recorder } from '../../chaos/recorder';
import type { LinkCuts } from '../../support/links';
import type { LocalCluster } from '../harness';
import type { WorkerHandle } from './clientWorkers';
import type { ClusterView } from './clusterView';
import type { FailoverWatch } from './failovers';
import type { MinorityProbes } from './minorityProbes';
import type { ScheduledFault } from './schedule';

export interface FaultContext {
  /** Faults go through its ClusterControl verbs; delays need its proxies. */
  cluster: LocalCluster;
  ids: string[];
  view: ClusterView;
  recorder: Recorder;
  /** The run clock (ms since the run's epoch), shared with the workers. */
  clock(): number;
  /** A line on the fault timeline (and the log). */
  note(line: string): void;
  /** Sleeps, but wakes at once when the nemesis ends, so every hold is cut short then. */
  pause(ms: number): Promise<void>;
  /** Aborted when the nemesis ends. */
  signal: AbortSignal;
  /** Nodes whose process an active fault owns (killed, stopped or paused): no other fault takes them. */
  busy: Set<string>;
  cuts: LinkCuts;
  probes: MinorityProbes;
  failovers: FailoverWatch;
  workers: WorkerHandle[];
  /** The delay fault active now (one at a time: two would fight over every link's delay). */
  delayOwner?: ScheduledFault;
}

/** The element `r` (in [0, 1)) points at; undefined for an empty list. */
export const pickFrom = <T>(xs: readonly T[], r: number): T | undefined => (xs.length === 0 ? undefined : xs[Math.floor(r * xs.length) % xs.length]);

/** Nodes that are up and that no active fault owns. */
export const freeNodes = (ctx: FaultContext): string[] => ctx.ids.filter((id) => !ctx.busy.has(id) && ctx.view.up(id));

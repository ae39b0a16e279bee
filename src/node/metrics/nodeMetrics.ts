import { collectDefaultMetrics, Registry } from 'prom-client';
import type { LockApp } from '../lockApp';
import { ApiMetrics } from './apiMetrics';
import { LockMetrics } from './lockMetrics';
import { RaftMetrics, type MeasuredDriver } from './raftMetrics';

/**
 * Every metric of one node, in a registry of its own (never prom-client's global one), so that nodes
 * sharing a process (the simulator, tests) never mix their figures. Names and meanings: docs/metrics.md.
 */
export class NodeMetrics {
  readonly registry = new Registry();
  readonly raft: RaftMetrics;
  readonly locks: LockMetrics;
  readonly api: ApiMetrics;

  /**
   * `processDefaults`: also the process's own metrics (CPU, memory, event loop lag, GC): for the server,
   * where the process is the node. `lockLabelDepth`: the config's metricsLockLabelDepth (docs/metrics.md).
   */
  constructor(nodeId: string, nowMs: () => number, processDefaults = false, lockLabelDepth = 0) {
    this.registry.setDefaultLabels({ node: nodeId });
    this.raft = new RaftMetrics(this.registry);
    this.locks = new LockMetrics(this.registry, lockLabelDepth);
    this.api = new ApiMetrics(this.registry, nowMs);
    if (processDefaults) collectDefaultMetrics({ register: this.registry });
  }

  /** Reads positions and counts from the node's driver and state machine from now on. */
  watch(driver: MeasuredDriver, app: LockApp): void {
    this.raft.watch(driver);
    this.locks.watch(app);
  }

  /** The Prometheus text exposition of every metric. */
  scrape(): Promise<string> {
    return this.registry.metrics();
  }
}

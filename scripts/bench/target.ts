// What the side-by-side benchmark needs from each system it measures: a running cluster, and
// per-client workers that run one operation of each workload. The driver (bench.ts) times the
// operations, so a target only does the work, the same work on every system.

/** One simulated client: its own connection and its own session (fencelock) or lease (etcd). */
export interface BenchWorker {
  /** acquire `lock` -> one fenced write under the returned token -> release. */
  lockCycle(lock: string): Promise<void>;
  /** Takes `lock` once, before the timed loop of fencedWrite. */
  holdLock(lock: string): Promise<void>;
  /** One durable write to `key` that the resource checks against the token of the held lock. */
  fencedWrite(key: string, value: string): Promise<void>;
  /** One linearizable read of `key`. */
  linearizableRead(key: string): Promise<void>;
  close(): Promise<void>;
}

export interface BenchTarget {
  readonly name: string;
  /** Server process ids, for the CPU column. */
  readonly pids: number[];
  newWorker(index: number): Promise<BenchWorker>;
  /** Stops every server process and removes the data directories. */
  stop(): Promise<void>;
}

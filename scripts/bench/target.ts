// What the side-by-side benchmark needs from each system it measures: a running cluster, and
// per-client workers that run one operation of each workload. The driver (bench.ts) times the
// operations, so a target only does the work, the same work on every system.

/** Primitives some systems lack; a workload that needs one is not applicable (n/a) on a target without it. */
export type Feature = 'semaphore' | 'readWriteLock';

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
  /**
   * Only where the target has 'semaphore': take one permit of `semaphore` (`permits` in all) -> one fenced write
   * under it to the key of its slot (`<semaphore>/slot-<n>`) -> release.
   */
  permitCycle?(semaphore: string, permits: number): Promise<void>;
  /**
   * Only where the target has 'readWriteLock': take `lock` shared -> one linearizable read of `<lock>/value` ->
   * release; or exclusive (`exclusive`) -> one fenced write of `<lock>/value` -> release.
   */
  readWriteCycle?(lock: string, exclusive: boolean): Promise<void>;
  close(): Promise<void>;
}

export interface BenchTarget {
  readonly name: string;
  /** Server process ids, for the CPU column. */
  readonly pids: number[];
  /** The features this system has no primitive for, each with why (shown where its rows say n/a). */
  readonly lacks?: Partial<Record<Feature, string>>;
  newWorker(index: number): Promise<BenchWorker>;
  /** Stops every server process and removes the data directories. */
  stop(): Promise<void>;
}

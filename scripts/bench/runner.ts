// The workloads of the side-by-side benchmark and the loop that times them: N workers of one target run
// one workload's operation back to back for a fixed time, in this process; latencies, errors and the CPU
// used by the servers and by this process over the timed window are recorded.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { BenchTarget, BenchWorker, Feature } from './target';

export interface Workload {
  readonly name: string;
  /** A primitive the workload needs: on a target that lacks it the row is not applicable (n/a), not run. */
  readonly needs?: Feature;
  /** Once per target, before its first row of this workload. */
  seed?(target: BenchTarget): Promise<void>;
  /** Once per worker, before the warm-up. */
  prepare?(worker: BenchWorker, index: number): Promise<void>;
  /** The timed operation; `n` counts this worker's operations. */
  op(worker: BenchWorker, index: number, n: number): Promise<void>;
}

/**
 * Every lock name and key of the workloads starts with this (a lock cycle writes `<lock>/value`): with auth
 * on, the workers' role has a lock, a write and a read rule on it.
 */
export const BENCH_NAME_PREFIX = 'bench/';

const READ_LOCK = `${BENCH_NAME_PREFIX}read`;
const READ_KEY = `${READ_LOCK}/value`;

/**
 * The permits of the semaphore row's one semaphore. 4: one client never waits, 8 clients keep it full with a
 * queue as long as the holders, 64 with a long queue; so the row shows both an uncontended permit cycle and
 * the hand-off of slots under contention, with several writers at once (unlike cycles-hot's one).
 */
export const SEMAPHORE_PERMITS = 4;
const SEMAPHORE = `${BENCH_NAME_PREFIX}sem`;
const READ_WRITE_LOCK = `${BENCH_NAME_PREFIX}rw`;
/** One cycle in this many of the read-mostly row takes the lock exclusive and writes; the others read shared. */
const WRITE_EVERY = 10;

/** Why `target` cannot run `workload` (it lacks the primitive), or undefined when it can. */
export function notApplicable(target: BenchTarget, workload: Workload): string | undefined {
  return workload.needs === undefined ? undefined : target.lacks?.[workload.needs];
}

function needsMethod<K extends 'permitCycle' | 'readWriteCycle'>(w: BenchWorker, method: K): NonNullable<BenchWorker[K]> {
  const run = w[method];
  if (!run) throw new Error(`this worker has no ${method}: its target should declare it lacks the feature`);
  return run.bind(w) as NonNullable<BenchWorker[K]>;
}

export const WORKLOADS: readonly Workload[] = [
  {
    name: 'cycles-distinct',
    op: (w, i) => w.lockCycle(`${BENCH_NAME_PREFIX}lock-${i}`),
  },
  {
    name: 'cycles-hot',
    op: (w) => w.lockCycle(`${BENCH_NAME_PREFIX}hot`),
  },
  {
    name: 'fenced-writes',
    prepare: (w, i) => w.holdLock(`${BENCH_NAME_PREFIX}w-${i}`),
    op: (w, i, n) => w.fencedWrite(`${BENCH_NAME_PREFIX}w-${i}/value`, `client ${i} write ${n}`),
  },
  {
    name: 'reads',
    seed: async (target) => {
      const w = await target.newWorker(0);
      try {
        await w.holdLock(READ_LOCK);
        await w.fencedWrite(READ_KEY, 'a value written once, read by every client');
      } finally {
        await w.close();
      }
    },
    op: (w) => w.linearizableRead(READ_KEY),
  },
  {
    name: 'semaphore',
    needs: 'semaphore',
    op: (w) => needsMethod(w, 'permitCycle')(SEMAPHORE, SEMAPHORE_PERMITS),
  },
  {
    name: 'read-mostly',
    needs: 'readWriteLock',
    // The value exists before the first shared read (a ZooKeeper getData of a missing znode fails).
    seed: async (target) => {
      const w = await target.newWorker(0);
      try {
        await needsMethod(w, 'readWriteCycle')(READ_WRITE_LOCK, true);
      } finally {
        await w.close();
      }
    },
    // Every worker writes on every WRITE_EVERY-th cycle, offset by its index so the writes spread over time
    // rather than coming in bursts from all workers at once: exactly 1 in WRITE_EVERY cycles is exclusive.
    op: (w, i, n) => needsMethod(w, 'readWriteCycle')(READ_WRITE_LOCK, (n + i) % WRITE_EVERY === 0),
  },
];

/** One timed run of one row (workload x clients) on one target. */
export interface Measurement {
  /** Successful operations; failed ones are in `errors` and not in the latencies. */
  ops: number;
  errors: number;
  firstError?: string;
  elapsedS: number;
  opsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  /** CPU of the target's server processes, % of one core; undefined where /proc is not readable. */
  serverCpuPct?: number;
  /** CPU of this process (all clients of the target), % of one core. */
  clientCpuPct: number;
}

// A failing operation often fails at once; without a pause the loop would spin and starve the other clients.
const ERROR_BACKOFF_MS = 10;

export function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

function clockTicksPerSecond(): number {
  try {
    const n = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    return n > 0 ? n : 100;
  } catch {
    return 100;
  }
}

let ticksPerSecond: number | undefined;

/** utime + stime of all threads of `pid` in seconds, from /proc/<pid>/stat; undefined if unreadable. */
function processCpuSeconds(pid: number): number | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  ticksPerSecond ??= clockTicksPerSecond();
  // The command name (field 2) is in parentheses and may contain spaces; fields after it start at state (3).
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[14 - 3]) + Number(fields[15 - 3])) / ticksPerSecond;
}

function serversCpuSeconds(pids: readonly number[]): number | undefined {
  let sum = 0;
  for (const pid of pids) {
    const s = processCpuSeconds(pid);
    if (s === undefined) return undefined;
    sum += s;
  }
  return sum;
}

/** Nearest-rank percentile of sorted values. */
function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * p) - 1)];
}

interface LoopResult {
  ops: number;
  errors: number;
  firstError?: string;
}

async function loop(workers: BenchWorker[], workload: Workload, seconds: number, latencies: number[] | undefined, counters: number[]): Promise<LoopResult> {
  const result: LoopResult = { ops: 0, errors: 0 };
  const end = performance.now() + seconds * 1000;
  await Promise.all(
    workers.map(async (w, i) => {
      while (performance.now() < end) {
        const start = performance.now();
        try {
          await workload.op(w, i, counters[i]++);
          latencies?.push(performance.now() - start);
          result.ops++;
        } catch (e) {
          result.errors++;
          result.firstError ??= errorMessage(e);
          await sleep(ERROR_BACKOFF_MS);
        }
      }
    }),
  );
  return result;
}

/**
 * Workers opening at once. Each opens its own connections (with TLS, a handshake per node); 64 at once on a
 * busy 2-CPU machine kept the event loop from answering their first calls within the client's 2 s deadline.
 */
const OPEN_CONCURRENCY = 16;

async function openWorkers(target: BenchTarget, workload: Workload, clients: number): Promise<BenchWorker[]> {
  const opened: Array<PromiseSettledResult<BenchWorker>> = [];
  for (let first = 0; first < clients; first += OPEN_CONCURRENCY) {
    const batch = Array.from({ length: Math.min(OPEN_CONCURRENCY, clients - first) }, (_, k) => target.newWorker(first + k));
    opened.push(...(await Promise.allSettled(batch)));
  }
  const workers = opened.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const failed = opened.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  try {
    if (failed) throw new Error(`opening ${clients - workers.length} of ${clients} workers failed: ${errorMessage(failed.reason)}`);
    if (workload.prepare) await Promise.all(workers.map((w, i) => workload.prepare!(w, i)));
    return workers;
  } catch (e) {
    await closeWorkers(workers);
    throw e;
  }
}

async function closeWorkers(workers: BenchWorker[]): Promise<void> {
  const closed = await Promise.allSettled(workers.map((w) => w.close()));
  const failed = closed.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed.length > 0) console.error(`  warning: closing ${failed.length} worker(s) failed: ${errorMessage(failed[0].reason)}`);
}

/**
 * Opens `clients` workers, runs the workload untimed for `warmupS`, then timed for `seconds`, and closes them.
 * Throws only when the workers cannot be set up; failing operations are counted instead.
 */
export async function runRow(target: BenchTarget, workload: Workload, clients: number, seconds: number, warmupS: number): Promise<Measurement> {
  const workers = await openWorkers(target, workload, clients);
  try {
    const counters = workers.map(() => 0);
    if (warmupS > 0) await loop(workers, workload, warmupS, undefined, counters);

    const latencies: number[] = [];
    const serverCpu0 = serversCpuSeconds(target.pids);
    const clientCpu0 = process.cpuUsage();
    const t0 = performance.now();
    // Operations still in flight when the time is up are waited for and counted, so the window ends with the last.
    const result = await loop(workers, workload, seconds, latencies, counters);
    const elapsedS = (performance.now() - t0) / 1000;
    const clientCpu = process.cpuUsage(clientCpu0);
    const serverCpu1 = serversCpuSeconds(target.pids);

    const sorted = Float64Array.from(latencies).sort();
    return {
      ...result,
      elapsedS,
      opsPerSec: result.ops / elapsedS,
      p50Ms: percentile(sorted, 0.5),
      p99Ms: percentile(sorted, 0.99),
      serverCpuPct: serverCpu0 === undefined || serverCpu1 === undefined ? undefined : ((serverCpu1 - serverCpu0) / elapsedS) * 100,
      clientCpuPct: ((clientCpu.user + clientCpu.system) / 1e6 / elapsedS) * 100,
    };
  } finally {
    await closeWorkers(workers);
  }
}

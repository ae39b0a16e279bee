// The run's recorded clients: an in-process Workload and client worker processes on the same lock
// namespace, all stamping the run clock (worker offsets measured and corrected, see clientWorker.ts).
import { setTimeout as sleep } from 'node:timers/promises';
import type { Recorder } from '../../chaos/recorder';
import { Workload, type WorkloadStats } from '../../chaos/workload';
import { calibrateWorker, startClientWorker, type WorkerClock, type WorkerHandle } from './clientWorkers';
import type { ChaosOptions } from './types';

/** Short sessions and deadlines, so that faults expire leases and leave operations of unknown outcome. */
function workloadOptions(o: ChaosOptions) {
  return { hotLocks: 3, coldLocks: 200, waitTimeoutMs: 1_500, sessionTtlMs: 3_000, requestTimeoutMs: 1_000, totalTimeoutMs: 4_000, thinkMs: 5, ...o.workload };
}

export class RunClients {
  readonly workers: WorkerHandle[] = [];
  readonly clocks: WorkerClock[] = [];
  private workload: Workload | undefined;
  private readonly options: ReturnType<typeof workloadOptions>;

  constructor(
    private readonly o: ChaosOptions,
    private readonly ns: string,
    private readonly epoch: number,
    private readonly endpoints: string[],
  ) {
    this.options = workloadOptions(o);
  }

  /** Starts the workers, measures their clocks, then starts the in-process workload; returns a description. */
  async start(recorder: Recorder, clock: () => number): Promise<string> {
    const nWorkers = this.o.workers ?? 2;
    for (let i = 0; i < nWorkers; i++) this.workers.push(this.startWorker(i));
    await Promise.all(this.workers.map((w) => w.ready));
    for (const w of this.workers) this.clocks.push({ ...(await calibrateWorker(w, clock)), name: w.name });
    this.workload = new Workload({ ...this.options, endpoints: this.endpoints, clients: this.o.clients ?? 6, namespace: this.ns, seed: this.o.seed, recorder });
    this.workload.start();
    const offsets = this.clocks.map((c) => `${c.name} ${c.offsetMs.toFixed(3)}±${c.slackMs.toFixed(3)} ms`).join(', ');
    return `workload: ${this.o.clients ?? 6} in-process clients, ${nWorkers} workers x ${this.o.workerClients ?? 2} clients; clock offsets ${offsets}`;
  }

  private startWorker(i: number): WorkerHandle {
    const o = this.options;
    return startClientWorker({
      name: `w${i + 1}`,
      epoch: this.epoch,
      workload: { ...o, endpoints: this.endpoints, clients: this.o.workerClients ?? 2, namespace: this.ns, seed: this.o.seed * 31 + i + 1 },
      holder: { holdMs: 300, ttlMs: o.sessionTtlMs, waitMs: o.waitTimeoutMs },
    });
  }

  /** Lets every client finish its operation and stop (workers that hang 30 s are killed, the workload aborted). */
  async stop(): Promise<void> {
    const stopWorkers = Promise.all(
      this.workers.map(async (w) => {
        w.child.stdin!.write('stop\n');
        const t = setTimeout(() => w.child.kill('SIGKILL'), 30_000);
        await w.exited;
        clearTimeout(t);
      }),
    );
    const workload = this.workload!;
    const stopLocal = Promise.race([workload.stop(), sleep(30_000).then(() => workload.stop({ abort: true }))]);
    await Promise.all([stopWorkers, stopLocal]);
  }

  /** Ends whatever still runs, at once (after an error, too). */
  async kill(): Promise<void> {
    for (const w of this.workers) {
      if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGKILL');
    }
    await Promise.all(this.workers.map((w) => w.exited));
    await this.workload?.stop({ abort: true }).catch(() => undefined);
  }

  workloadStats(): WorkloadStats {
    return this.workload?.stats() ?? ({} as WorkloadStats);
  }
}

// The chaos workload: N concurrent simulated clients, each with its own FenceLockClient (its own client id,
// channels and keepalive stream) and session, looping
//
//   acquire(lock, wait) -> fenced write of a unique value to the lock's key(s) -> maybe get -> release
//
// over a few hot locks (contention, FIFO waits, try-locks that fail) and many distinct cold ones, until
// stopped. Every call goes through a Recorder, so the run leaves a history for test/checker. Endpoints are
// plain host:port strings: local processes or containers alike.
//
//   const w = new Workload({ endpoints, clients: 8 });
//   w.start();            // or: const history = await w.run(30_000);
//   ... inject faults, w.recorder.fault('partition', ['n1'], { minority: ['127.0.0.1:7001'] }) ...
//   await w.stop();
//   const final = await w.readFinalState();   // every key written, read after the faults healed
//   checkLinearizability(w.recorder.operations()); checkInvariants(w.recorder.operations(), { finalState: final });
//
// Values are unique (`<process>#<n>`), keys belong to one lock (`<lock>/k`, `<lock>/k2`), so the checker can
// tell every write apart. Choices come from a seeded generator; timing (and so the history) does not.
// With `mix`, a share of the cycles exercises semaphores, read-write locks and AcquireAll instead
// (primitiveCycles.ts).
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { FenceLockClient, silentLogger, type Logger, type Session } from '../../src/client';
import type { FenceLockClientOptions } from '../../src/client';
import type { FinalRead, History, KeyWrite } from '../checker/history';
import { pickCycle, runCycle, type CycleContext, type PrimitiveCounts, type PrimitiveMix } from './primitiveCycles';
import { Recorder } from './recorder';
import { mulberry32 } from '../support/prng';

export interface WorkloadOptions {
  /** host:port of the cluster's nodes. */
  endpoints: string[];
  /** Concurrent simulated clients (default 8). */
  clients?: number;
  /** Contended locks (default 3) and uncontended ones picked at random (default 500). */
  hotLocks?: number;
  coldLocks?: number;
  /** Probability that a cycle picks a hot lock (default 0.5). */
  hotProbability?: number;
  /** Blocking acquire wait (default 2,000 ms). */
  waitTimeoutMs?: number;
  /** Probability of a try-lock (wait 0) instead of a blocking acquire (default 0.2). */
  tryProbability?: number;
  /** Probability of a get after the write (default 0.5). */
  readProbability?: number;
  /** Probability that a write also puts the lock's second key (default 0.2) or deletes it (default 0.05). */
  multiKeyProbability?: number;
  deleteProbability?: number;
  /** Session TTL (default 5,000 ms; the server's minimum is 3,000 by default). */
  sessionTtlMs?: number;
  /** Client deadlines: one attempt (default 1,000 ms), one operation with retries (default 5,000 ms). */
  requestTimeoutMs?: number;
  totalTimeoutMs?: number;
  /** Pause between cycles, uniform in [0, thinkMs] (default 5 ms). */
  thinkMs?: number;
  /** Prefix of lock names and client ids, so runs against one cluster do not mix (default random). */
  namespace?: string;
  /** Seed of the workload's choices (default 1). */
  seed?: number;
  /** Probability of a permit, read-write or AcquireAll cycle instead of the plain one (default 0 each). */
  mix?: Partial<PrimitiveMix>;
  /** Where operations go (default a new Recorder). */
  recorder?: Recorder;
  /** Makes a client (tests may wrap or fake it). */
  createClient?: (opts: FenceLockClientOptions) => FenceLockClient;
  logger?: Logger;
}

export interface WorkloadStats {
  cycles: number;
  acquired: number;
  notAcquired: number;
  acquireUnknown: number;
  writesOk: number;
  writesRefused: number;
  writesUnknown: number;
  reads: number;
  releases: number;
  releaseUnknown: number;
  sessionsOpened: number;
  /** Errors thrown by the loop itself (not by recorded operations). */
  loopErrors: number;
  /** Grants of the primitive cycles (also counted in `acquired`) and readers' writes refused SHARED_GRANT. */
  primitives: PrimitiveCounts;
}

export class Workload {
  readonly recorder: Recorder;
  readonly namespace: string;
  private readonly o: Required<Omit<WorkloadOptions, 'recorder' | 'createClient' | 'logger' | 'namespace' | 'mix'>> & { mix: PrimitiveMix };
  private readonly createClient: (opts: FenceLockClientOptions) => FenceLockClient;
  private readonly logger: Logger;
  private readonly rnd: () => number;
  private readonly clients = new Set<FenceLockClient>();
  private readonly keyLocks = new Map<string, string>();
  private readonly counts: WorkloadStats = {
    cycles: 0,
    acquired: 0,
    notAcquired: 0,
    acquireUnknown: 0,
    writesOk: 0,
    writesRefused: 0,
    writesUnknown: 0,
    reads: 0,
    releases: 0,
    releaseUnknown: 0,
    sessionsOpened: 0,
    loopErrors: 0,
    primitives: { permitsGranted: 0, sharedGranted: 0, exclusiveGranted: 0, setsGranted: 0, sharedWritesRefused: 0 },
  };
  private loops: Promise<void>[] = [];
  private stopping = false;
  private aborting = false;

  constructor(opts: WorkloadOptions) {
    if (opts.endpoints.length === 0) throw new Error('workload: no endpoints');
    this.o = {
      endpoints: [...opts.endpoints],
      clients: opts.clients ?? 8,
      hotLocks: opts.hotLocks ?? 3,
      coldLocks: opts.coldLocks ?? 500,
      hotProbability: opts.hotProbability ?? 0.5,
      waitTimeoutMs: opts.waitTimeoutMs ?? 2_000,
      tryProbability: opts.tryProbability ?? 0.2,
      readProbability: opts.readProbability ?? 0.5,
      multiKeyProbability: opts.multiKeyProbability ?? 0.2,
      deleteProbability: opts.deleteProbability ?? 0.05,
      sessionTtlMs: opts.sessionTtlMs ?? 5_000,
      requestTimeoutMs: opts.requestTimeoutMs ?? 1_000,
      totalTimeoutMs: opts.totalTimeoutMs ?? 5_000,
      thinkMs: opts.thinkMs ?? 5,
      seed: opts.seed ?? 1,
      mix: { permit: opts.mix?.permit ?? 0, rw: opts.mix?.rw ?? 0, set: opts.mix?.set ?? 0 },
    };
    this.namespace = opts.namespace ?? `wl${Math.floor(Math.random() * 0xffffff).toString(16)}`;
    this.recorder = opts.recorder ?? new Recorder();
    this.createClient = opts.createClient ?? ((c) => new FenceLockClient(c));
    this.logger = opts.logger ?? silentLogger;
    this.rnd = mulberry32(this.o.seed);
    this.recorder.meta.workload = { ...this.o, namespace: this.namespace };
  }

  /** Starts the clients (once). */
  start(): void {
    if (this.loops.length > 0) throw new Error('workload: already started');
    this.recorder.meta.startedAt = this.recorder.time();
    for (let i = 0; i < this.o.clients; i++) this.loops.push(this.loop(i));
  }

  /**
   * Stops the clients: each finishes its current operation, releases what it holds, closes its session and
   * its client. With `abort`, the clients are closed at once: calls in flight end CANCELLED (recorded as
   * unknown), and sessions are left to expire.
   */
  async stop(opts: { abort?: boolean } = {}): Promise<void> {
    this.stopping = true;
    if (opts.abort) {
      this.aborting = true;
      await Promise.allSettled([...this.clients].map((c) => c.close()));
    }
    await Promise.allSettled(this.loops);
    this.recorder.meta.stoppedAt = this.recorder.time();
  }

  /** start(), wait durationMs, stop(); returns the history. */
  async run(durationMs: number): Promise<History> {
    this.start();
    await sleep(durationMs);
    await this.stop();
    return this.recorder.history();
  }

  stats(): WorkloadStats {
    return { ...this.counts, primitives: { ...this.counts.primitives } };
  }

  /** Every key a write was attempted on, with its lock. */
  keys(): Map<string, string> {
    return new Map(this.keyLocks);
  }

  /**
   * Reads every key a write was attempted on (linearizable gets, recorded like any other operation, by the
   * process `<namespace>-final`). Call after the workload stopped and the faults healed. Keys whose read
   * failed are missing from the map (the invariants then skip them).
   */
  async readFinalState(opts: { concurrency?: number; client?: FenceLockClient } = {}): Promise<Map<string, FinalRead>> {
    const process = `${this.namespace}-final`;
    const client = opts.client ?? this.createClient(this.clientOptions(process));
    const out = new Map<string, FinalRead>();
    const todo = [...this.keyLocks].sort((a, b) => (a[0] < b[0] ? -1 : 1));
    const worker = async (): Promise<void> => {
      for (let item = todo.shift(); item !== undefined; item = todo.shift()) {
        const [key, lock] = item;
        const r = await this.recorder.get(process, client, key, lock);
        if (r.value) out.set(key, { found: r.value.found!, value: r.value.value ?? null, token: r.value.token! });
      }
    };
    try {
      await Promise.all(Array.from({ length: opts.concurrency ?? 8 }, () => worker()));
    } finally {
      if (!opts.client) await client.close();
    }
    return out;
  }

  // ---- one simulated client ---------------------------------------------------------------------------------

  private clientOptions(clientId: string): FenceLockClientOptions {
    return {
      endpoints: this.o.endpoints,
      clientId,
      requestTimeoutMs: this.o.requestTimeoutMs,
      totalTimeoutMs: this.o.totalTimeoutMs,
      logger: this.logger,
    };
  }

  private cycleContext(process: string, client: FenceLockClient, session: Session, nextValue: () => string): CycleContext {
    return {
      rec: this.recorder,
      client,
      session,
      process,
      namespace: this.namespace,
      rnd: this.rnd,
      waitMs: this.o.waitTimeoutMs,
      tryProbability: this.o.tryProbability,
      readProbability: this.o.readProbability,
      nextValue,
      noteKey: (key, resource) => this.keyLocks.set(key, resource),
      aborting: () => this.aborting,
      countAcquire: (o) => {
        if (o.outcome === 'ok') this.counts.acquired++;
        else if (o.outcome === 'unknown') this.counts.acquireUnknown++;
        else this.counts.notAcquired++;
      },
      countWrite: (o) => {
        if (o.outcome === 'ok') this.counts.writesOk++;
        else if (o.outcome === 'fail') this.counts.writesRefused++;
        else this.counts.writesUnknown++;
      },
      counts: this.counts.primitives,
    };
  }

  private pickLock(): string {
    return this.rnd() < this.o.hotProbability
      ? `${this.namespace}/hot-${Math.floor(this.rnd() * this.o.hotLocks)}`
      : `${this.namespace}/cold-${Math.floor(this.rnd() * this.o.coldLocks)}`;
  }

  private async think(): Promise<void> {
    const ms = this.rnd() * this.o.thinkMs;
    if (ms >= 1 && !this.stopping) await sleep(ms);
    else await new Promise<void>((resolve) => setImmediate(resolve));
  }

  private async loop(i: number): Promise<void> {
    const process = `${this.namespace}-c${i}`;
    const rec = this.recorder;
    const client = this.createClient(this.clientOptions(process));
    this.clients.add(client);
    let session: Session | undefined;
    let counter = 0;
    let retryLock: string | undefined;
    try {
      while (!this.stopping) {
        try {
          if (session === undefined || session.isLost() || session.isClosed()) {
            session = (await rec.open(process, client, this.o.sessionTtlMs)).value;
            if (session === undefined) {
              await sleep(50 + this.rnd() * 200);
              continue;
            }
            this.counts.sessionsOpened++;
          }
          this.counts.cycles++;
          // Drawn only with a mix, so that plain runs make the same choices as before.
          const withMix = this.o.mix.permit + this.o.mix.rw + this.o.mix.set > 0;
          const kind = retryLock === undefined && withMix ? pickCycle(this.o.mix, this.rnd()) : undefined;
          if (kind !== undefined) {
            await runCycle(kind, this.cycleContext(process, client, session, () => `${process}#${counter++}`));
            await this.think();
            continue;
          }
          const lock = retryLock ?? this.pickLock();
          retryLock = undefined;
          const wait = this.rnd() < this.o.tryProbability ? 0 : this.o.waitTimeoutMs;
          const a = await rec.acquire(process, client, session, lock, wait);
          const handle = a.value;
          if (handle === undefined) {
            if (a.op.outcome === 'unknown') {
              this.counts.acquireUnknown++;
              // The grant may have happened: sometimes ask again at once (a re-entrant acquire reveals it).
              if (this.rnd() < 0.5) retryLock = lock;
            } else {
              this.counts.notAcquired++;
            }
            await this.think();
            continue;
          }
          this.counts.acquired++;
          const value = `${process}#${counter++}`;
          const writes: KeyWrite[] = [{ key: `${lock}/k`, value }];
          const roll = this.rnd();
          if (roll < this.o.multiKeyProbability) writes.push({ key: `${lock}/k2`, value: `${value}/2` });
          else if (roll < this.o.multiKeyProbability + this.o.deleteProbability) writes.push({ key: `${lock}/k2`, value: null });
          for (const w of writes) this.keyLocks.set(w.key, lock);
          const w = await rec.write(process, client, session, lock, handle.token, writes);
          if (w.op.outcome === 'ok') this.counts.writesOk++;
          else if (w.op.outcome === 'fail') this.counts.writesRefused++;
          else this.counts.writesUnknown++;
          if (this.rnd() < this.o.readProbability && !this.aborting) {
            await rec.get(process, client, writes[Math.floor(this.rnd() * writes.length)]!.key, lock);
            this.counts.reads++;
          }
          if (this.aborting || handle.isReleased()) continue;
          const r = await rec.release(process, client, handle);
          this.counts.releases++;
          if (r.op.outcome === 'unknown') {
            // The lock may still be ours: give the session up, the leader frees it when the lease runs out.
            this.counts.releaseUnknown++;
            session.abandon('release outcome unknown');
          }
          await this.think();
        } catch (err) {
          this.counts.loopErrors++;
          this.logger.warn({ err, process }, 'workload: loop error');
          if (!this.stopping) await sleep(100);
        }
      }
    } finally {
      if (session !== undefined && !this.aborting && !session.isClosed() && !session.isLost()) {
        await rec.close(process, client, session, this.o.totalTimeoutMs);
      }
      await client.close().catch(() => undefined);
      this.clients.delete(client);
    }
  }
}

/** Monotonic now, the clock of every recorded operation (re-exported for fault injectors). */
export const now = (): number => performance.now();

// The process-level chaos run, shared by test/integration/chaos.test.ts (short runs in CI) and
// scripts/chaos.ts (the soak): real node processes on 127.0.0.1 with a fault-injecting proxy on every
// directed peer link (faultProxy.ts), many concurrent recorded clients (an in-process test/chaos Workload
// plus client worker processes, clientWorker.ts), and a seeded nemesis. At the end every fault is healed,
// the cluster must elect a leader and serve within a bound, and the merged history goes to test/checker.
//
//   const run = await runChaos({ nodes: 3, seed: 7, durationMs: 10_000, log: console.log });
//   const verdict = checkRun(run);           // checkHistory over the merged history + final reads
//   console.log(summarize(run, verdict));
//
// The nemesis. A seed gives a deterministic SCHEDULE (printed by describeSchedule): which fault, when, for
// how long, on which node "slot"; the targets that depend on the cluster at that moment ("the leader") are
// resolved when the fault starts, so a replay with the same seed runs the same schedule, not the same
// history. Two lanes run at once:
//   node lane    kill-leader, kill-random (SIGKILL, restart on the same data after the hold), kill-all,
//                stop-leader (SIGTERM: graceful shutdown with leadership transfer; a shutdown that takes
//                over 10 s is noted and SIGKILLed), pause-leader (SIGSTOP/SIGCONT), isolate-leader,
//                split (2/3 of 5 nodes, moved around), one-way-leader (the leader cannot send to anyone; it still hears everyone), one-way
//                (one random directed link), flap (random links cut and healed every 100-400 ms, connections
//                reset: reconnects, lost and late messages), delay (latency on every link). Faults may overlap (a step
//                sometimes starts before the previous one healed); cuts are reference counted per link.
//   client lane  pause-client: SIGSTOP a client worker at a random moment for 1-6 s (sessions have a 3 s
//                TTL). pause-holder: the frozen holder. Wait until the worker's slow holder announces a
//                grant (clientWorker.ts), SIGSTOP the worker at once for 4-8 s: its lease expires, the lock
//                goes to a waiter who writes, and the holder wakes up to write under its old token.
// Partitions are recorded with their minority side (the endpoints of the cut-off nodes); one-way cuts of
// single links and delays name no minority. While a minority window lasts, the runner PROBES every node on
// the minority side directly (raw gRPC to that one node: no retries, no leader hints followed): a try-lock
// under a live session and a linearizable get. They are recorded with the node as their endpoint, and the
// checker's minority-answer invariant requires that none completes ok inside the window (DESIGN.md 1.5).
//
// History hygiene before checking (sanitize(), each rule weakens the history, so the check stays sound):
// - Workload operations carry no `endpoint` in the checked history (they are kept in meta.endpoints). The
//   recorder stamps client.currentEndpoint() at return, which is the client's SHARED current endpoint: the
//   keepalive stream of the same client moves it on its own. Seed 14 (5 nodes) showed a release answered
//   by the majority's leader but labelled with a node on the minority side: a false minority-answer.
// - A blocking acquire that ended NOT_FOUND / UNKNOWN_SESSION becomes 'unknown'. The waiter may have been
//   granted (a release handed it the lock) before its session expired; a retry of the same request then finds
//   no session and says so. Seed 11 (3 nodes): a worker frozen while queued on a hot lock was handed the lock,
//   its session expired 3 s later, and its retried Acquire got UNKNOWN_SESSION, recorded as "did not take
//   effect": the checker then saw the lock held by nobody yet refused to everyone (a false violation). See
//   the "seed 11" regression in chaos.test.ts.
//
// Clock: every recorder of the run (this process and the workers) stamps
// `performance.timeOrigin + performance.now() - epoch` (clientWorker.ts explains why that is one clock);
// the residual offset of each worker is measured with ping/pong, corrected, and its uncertainty added to
// both ends of the worker's operations (wider intervals only admit more orders: sound).
import { spawn, type ChildProcess } from 'node:child_process';
import { setMaxListeners } from 'node:events';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import * as readline from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import { FenceLockClient, type NodeStatus } from '../../src/client';
import { Recorder } from '../chaos/recorder';
import { Workload, type WorkloadOptions, type WorkloadStats } from '../chaos/workload';
import {
  checkHistory,
  finalStateToJSON,
  historyFromJSON,
  historyToJSON,
  keysOf,
  type FinalRead,
  type History,
  type HistoryVerdict,
  type Operation,
} from '../checker';
import { runClock, type WorkerConfig } from './clientWorker';
import type { FaultProxy } from './faultProxy';
import { LocalCluster, PROJECT_ROOT } from './harness';
import { header, rawClient, type RawNodeClient } from './rawClient';
import { mulberry32 } from '../support/prng';

export const WORKER_MAIN = path.join(PROJECT_ROOT, 'dist/test/integration/clientWorker.js');
const CHECKER_MAIN = path.join(PROJECT_ROOT, 'dist/test/checker/index.js');

// ---- the schedule -----------------------------------------------------------------------------------------

export type NodeFaultKind =
  | 'kill-leader'
  | 'kill-random'
  | 'kill-all'
  | 'stop-leader'
  | 'pause-leader'
  | 'isolate-leader'
  | 'split'
  | 'one-way-leader'
  | 'one-way'
  | 'flap'
  | 'delay';
export type FaultKind = NodeFaultKind | 'pause-client' | 'pause-holder';

export interface ScheduledFault {
  kind: FaultKind;
  /** Offset from the start of the nemesis (ms). */
  at: number;
  holdMs: number;
  /** A random number in [0, 1) that picks targets at run time (a node, a pair, a 2-set, a worker). */
  pick: number;
  /** How a cut treats established connections (faultProxy.ts). */
  existing: 'freeze' | 'reset';
  /** delay: ms per chunk. */
  delayMs?: number;
}

const NODE_WEIGHTS: Record<3 | 5, Array<[NodeFaultKind, number]>> = {
  3: [
    ['kill-leader', 3],
    ['kill-random', 2],
    ['kill-all', 0.6],
    ['stop-leader', 1],
    ['pause-leader', 3],
    ['isolate-leader', 3],
    ['one-way-leader', 2],
    ['one-way', 1.5],
    ['flap', 1],
    ['delay', 1],
  ],
  5: [
    ['kill-leader', 2],
    ['kill-random', 2],
    ['kill-all', 0.5],
    ['stop-leader', 1],
    ['pause-leader', 2],
    ['isolate-leader', 2],
    ['split', 4],
    ['one-way-leader', 1.5],
    ['one-way', 1.5],
    ['flap', 1],
    ['delay', 1],
  ],
};

export interface ScheduleOptions {
  nodes: 3 | 5;
  durationMs: number;
  /** Client worker processes (no pause-client faults without them). */
  workers: number;
  /** Restrict the node lane to these kinds. */
  kinds?: NodeFaultKind[];
}

/** The deterministic fault schedule of a seed. */
export function makeSchedule(seed: number, o: ScheduleOptions): ScheduledFault[] {
  const rnd = mulberry32(seed ^ 0x5eed);
  const between = (lo: number, hi: number): number => Math.round(lo + rnd() * (hi - lo));
  const weights = NODE_WEIGHTS[o.nodes].filter(([k]) => !o.kinds || o.kinds.includes(k));
  if (weights.length === 0) throw new Error('makeSchedule: no fault kinds');
  const total = weights.reduce((s, [, w]) => s + w, 0);
  const pickKind = (): NodeFaultKind => {
    let x = rnd() * total;
    for (const [k, w] of weights) if ((x -= w) < 0) return k;
    return weights[weights.length - 1]![0];
  };
  const out: ScheduledFault[] = [];
  // Node lane: a first quiet moment, then faults with gaps, sometimes overlapping the previous one.
  let t = between(300, 800);
  let prevOverlapped = false;
  while (t < o.durationMs - 300) {
    const kind = pickKind();
    const holdMs = kind === 'kill-all' ? between(200, 1_500) : kind === 'delay' ? between(1_000, 3_000) : between(700, 2_600);
    const f: ScheduledFault = { kind, at: t, holdMs, pick: rnd(), existing: rnd() < 0.7 ? 'freeze' : 'reset' };
    if (kind === 'delay') f.delayMs = between(10, 120);
    out.push(f);
    // Sometimes the next step starts while this one is still active (never after a kill-all, never twice in
    // a row); otherwise after this one healed and a calm gap.
    const overlapNext: boolean = kind !== 'kill-all' && !prevOverlapped && rnd() < 0.25;
    t = overlapNext ? f.at + Math.round(holdMs * (0.3 + rnd() * 0.5)) : f.at + holdMs + between(300, 1_300);
    prevOverlapped = overlapNext;
  }
  // Client lane.
  if (o.workers > 0) {
    let c = between(500, 2_000);
    while (c < o.durationMs - 500) {
      const holder = rnd() < 0.5;
      // A frozen holder must outlast its 3 s lease, and failovers restart leases: up to 8 s.
      const holdMs = holder ? between(4_000, 8_000) : between(1_000, 6_000);
      out.push({ kind: holder ? 'pause-holder' : 'pause-client', at: c, holdMs, pick: rnd(), existing: 'freeze' });
      c += holdMs + between(500, 2_500);
    }
  }
  return out.sort((a, b) => a.at - b.at);
}

export function describeSchedule(s: readonly ScheduledFault[]): string {
  return s
    .map((f) => `  +${String(f.at).padStart(6)} ms  ${f.kind.padEnd(15)} hold ${String(f.holdMs).padStart(5)} ms  pick ${f.pick.toFixed(3)}` +
      `${f.kind === 'delay' ? `  ${f.delayMs} ms/chunk` : ''}${['isolate-leader', 'split', 'one-way-leader', 'one-way'].includes(f.kind) ? `  (${f.existing})` : ''}`)
    .join('\n');
}

// ---- the run ----------------------------------------------------------------------------------------------

export interface ChaosOptions {
  nodes: 3 | 5;
  seed: number;
  /** How long the nemesis runs (ms); the workload runs for this plus the heal and a calm tail. */
  durationMs: number;
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

export interface Failover {
  kind: FaultKind;
  /** The leader the fault hit. */
  from: string;
  /** Offset of the fault on the run clock. */
  at: number;
  /** The first other leader seen (id), with a higher term; undefined when none within the hold (or 4 s). */
  to?: string;
  /** ms from the fault to that leader. */
  ms?: number;
  /** isolate-leader / one-way-leader: ms until the old leader no longer said it was leader. */
  stepDownMs?: number;
  /** Operations (of every client) that returned without success while the cluster had no leader. */
  failedOps?: number;
  /** Another node-lane fault was active when this one began, or began before a new leader was seen. */
  overlapped: boolean;
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
  clocks: Array<{ name: string; offsetMs: number; slackMs: number }>;
  dir: string;
}

/** A client worker process (clientWorker.ts) and what it streamed so far. */
export interface WorkerHandle {
  name: string;
  child: ChildProcess;
  ops: Map<number, Operation>;
  ready: Promise<void>;
  exited: Promise<void>;
  stats?: Record<string, number>;
  paused: boolean;
  pongs: Map<number, (t: number) => void>;
  /** Called on the next "holding" announcement of the worker's slow holder. */
  onHolding?: (lock: string, token: string) => void;
  /** Every other line the worker printed (session, waiter-done, ...), parsed. */
  events: Array<Record<string, unknown>>;
  onEvent?: (e: Record<string, unknown>) => void;
  stderr: string[];
}

/** Starts a client worker process (compiled clientWorker.js); resolve `ready` before using it. */
export function startClientWorker(cfg: WorkerConfig): WorkerHandle {
  const child = spawn(process.execPath, [WORKER_MAIN, JSON.stringify(cfg)], { stdio: ['pipe', 'pipe', 'pipe'] });
  const w: WorkerHandle = {
    name: cfg.name,
    child,
    ops: new Map(),
    ready: Promise.resolve(),
    exited: Promise.resolve(),
    paused: false,
    pongs: new Map(),
    events: [],
    stderr: [],
  };
  w.exited = new Promise((resolve) => child.once('exit', () => resolve()));
  w.ready = new Promise((resolve, reject) => {
    child.once('exit', (code, signal) => reject(new Error(`worker ${cfg.name} exited before it was ready (${code ?? signal}): ${w.stderr.join('')}`)));
    readline.createInterface({ input: child.stdout! }).on('line', (line) => {
      const msg = JSON.parse(line) as { k: string; seq?: number; t?: number; stats?: Record<string, number>; lock?: string; token?: string };
      if (msg.k === 'call' || msg.k === 'done') {
        const op = historyFromJSON(line).ops[0]!;
        w.ops.set(op.id, op);
      } else if (msg.k === 'pong') {
        w.pongs.get(msg.seq!)?.(msg.t!);
      } else if (msg.k === 'holding') {
        const cb = w.onHolding;
        w.onHolding = undefined;
        cb?.(msg.lock!, msg.token!);
      } else if (msg.k === 'ready') {
        resolve();
      } else if (msg.k === 'end') {
        w.stats = msg.stats;
      } else {
        w.events.push(msg);
        w.onEvent?.(msg);
      }
    });
  });
  w.ready.catch(() => undefined);
  child.stderr!.on('data', (b: Buffer) => {
    if (w.stderr.length < 50) w.stderr.push(b.toString());
  });
  return w;
}

/** Offset of the worker's clock against `clock`, from the ping with the shortest round trip. */
export async function calibrateWorker(w: WorkerHandle, clock: () => number): Promise<{ name: string; offsetMs: number; slackMs: number }> {
  let best = { offsetMs: 0, slackMs: Number.POSITIVE_INFINITY };
  for (let seq = 0; seq < 7; seq++) {
    const t0 = clock();
    const tw = await new Promise<number>((resolve) => {
      w.pongs.set(seq, resolve);
      w.child.stdin!.write(`ping ${seq}\n`);
    });
    const t1 = clock();
    const half = (t1 - t0) / 2;
    if (half < best.slackMs) best = { offsetMs: tw - (t0 + t1) / 2, slackMs: half };
  }
  return { name: w.name, offsetMs: best.offsetMs, slackMs: best.slackMs + 0.05 };
}

/** Runs one chaos round and returns its merged history (not yet checked: see checkRun). */
export async function runChaos(o: ChaosOptions): Promise<ChaosRun> {
  const log = o.log ?? ((): void => undefined);
  const ns = o.namespace ?? `chaos-${o.seed}`;
  const nWorkers = o.workers ?? 2;
  const schedule = o.schedule ?? makeSchedule(o.seed, { nodes: o.nodes, durationMs: o.durationMs, workers: nWorkers, kinds: o.kinds });
  const own = o.cluster === undefined;
  const cluster =
    o.cluster ?? (await LocalCluster.create({ size: o.nodes, proxies: true, snapshotEveryEntries: o.snapshotEveryEntries ?? 1_000, logLevel: 'info' }));
  if (!cluster.hasProxies) throw new Error('runChaos: the cluster needs proxies');
  const ids = cluster.nodes.map((n) => n.id);
  const addressOf = (id: string): string => cluster.node(id).address;

  const epoch = performance.timeOrigin + performance.now();
  const clock = runClock(epoch);
  const recorder = new Recorder({ now: clock });
  const timeline: string[] = [];
  const note = (line: string): void => {
    const text = `${(clock() / 1000).toFixed(3).padStart(8)} s  ${line}`;
    timeline.push(text);
    log(`[chaos] ${text}`);
  };
  recorder.meta.seed = o.seed;
  recorder.meta.nodes = o.nodes;
  recorder.meta.epoch = epoch;
  recorder.meta.members = Object.fromEntries(cluster.nodes.map((n) => [n.id, n.address]));

  const statusClient = new FenceLockClient({ endpoints: cluster.endpoints, requestTimeoutMs: 400, totalTimeoutMs: 1_500 });
  const workers: WorkerHandle[] = [];
  let workload: Workload | undefined;
  const failovers: Failover[] = [];

  const statuses = async (among: string[] = ids): Promise<Map<string, NodeStatus>> => {
    const out = new Map<string, NodeStatus>();
    await Promise.all(
      among
        .filter((id) => cluster.isRunning(id) && !cluster.node(id).paused)
        .map(async (id) => {
          try {
            out.set(id, await statusClient.status(addressOf(id)));
          } catch {
            /* unreachable right now */
          }
        }),
    );
    return out;
  };
  /** The leader with the highest term among the nodes that answer (undefined when none says leader). */
  const leaderNow = async (among: string[] = ids): Promise<NodeStatus | undefined> => {
    let best: NodeStatus | undefined;
    for (const s of (await statuses(among)).values()) if (s.role === 'leader' && (!best || s.term > best.term)) best = s;
    return best;
  };
  const agreedLeader = async (): Promise<NodeStatus | undefined> => {
    const st = await statuses();
    if (st.size !== ids.length) return undefined;
    const leaders = [...st.values()].filter((s) => s.role === 'leader');
    if (leaders.length !== 1) return undefined;
    return [...st.values()].every((s) => s.leader === leaders[0]!.id && s.term === leaders[0]!.term) ? leaders[0] : undefined;
  };
  const waitFor = async <T>(what: string, fn: () => Promise<T | undefined>, timeoutMs: number): Promise<T> => {
    const deadline = Date.now() + timeoutMs;
    let lastErr: unknown;
    while (Date.now() < deadline) {
      try {
        const v = await fn();
        if (v !== undefined) return v;
      } catch (err) {
        lastErr = err;
      }
      await sleep(50);
    }
    throw new Error(`chaos: timed out after ${timeoutMs} ms waiting for ${what}${lastErr ? `: ${String(lastErr)}` : ''}\n${diagnose()}`);
  };
  /** Node process states and the tail of the cluster log, for a failure message. */
  const diagnose = (): string => {
    const states = cluster.nodes
      .map((n) => `${n.id} ${n.paused ? 'paused' : cluster.isRunning(n.id) ? 'running' : `down (exit ${n.process?.exitCode ?? n.process?.signalCode ?? '?'})`}`)
      .join(', ');
    let tail = '';
    try {
      tail = readFileSync(path.join(cluster.dir, 'cluster.log'), 'utf8').split('\n').slice(-30).join('\n');
    } catch {
      /* no log yet */
    }
    return `nodes: ${states}; links: ${cluster.links().filter((p) => p.faulty).map((p) => p.describe()).join('; ') || 'all healed'}\ncluster.log (tail):\n${tail}`;
  };

  // ---- link cuts, reference counted (faults may overlap) --------------------------------------------------
  const cutCount = new Map<FaultProxy, number>();
  const cutLinks = (links: FaultProxy[], existing: 'freeze' | 'reset'): void => {
    for (const p of links) {
      const n = cutCount.get(p) ?? 0;
      cutCount.set(p, n + 1);
      if (n === 0) p.cut({ existing });
    }
  };
  const healLinks = (links: FaultProxy[]): void => {
    for (const p of links) {
      const n = cutCount.get(p) ?? 0;
      if (n <= 1) {
        cutCount.delete(p);
        p.heal();
      } else {
        cutCount.set(p, n - 1);
      }
    }
  };
  const linksAround = (group: string[]): FaultProxy[] => {
    const inside = new Set(group);
    const out: FaultProxy[] = [];
    for (const a of ids) for (const b of ids) if (a !== b && inside.has(a) !== inside.has(b)) out.push(cluster.link(a, b));
    return out;
  };
  // ---- minority probes ------------------------------------------------------------------------------------
  const probes = { sent: 0, ok: 0 };
  const raw = new Map<string, RawNodeClient>();
  const rawFor = (id: string): RawNodeClient => {
    let c = raw.get(id);
    if (!c) raw.set(id, (c = rawClient(addressOf(id))));
    return c;
  };
  let probeSession: string | undefined;
  const probeOwner = new FenceLockClient({ endpoints: cluster.endpoints, clientId: `${ns}-probe-owner`, requestTimeoutMs: 1_000, totalTimeoutMs: 5_000 });
  /** Probes the nodes of `minority` one after the other until `over` resolves. */
  const probeMinority = async (minority: string[], over: Promise<void>): Promise<void> => {
    let done = false;
    void over.then(() => (done = true));
    const one = async (id: string, n: number): Promise<void> => {
      const process = `probe-${id}`;
      const endpoint = addressOf(id);
      const lock = `${ns}-probe/minority-${id}`;
      const kind = n % 2 === 0 && probeSession !== undefined ? 'acquire' : 'get';
      const o =
        kind === 'acquire'
          ? recorder.begin(process, 'acquire', { lock, session: probeSession!, waitMs: 0 })
          : recorder.begin(process, 'get', { key: `${lock}/k`, lock });
      probes.sent++;
      try {
        if (kind === 'acquire') {
          const res = await rawFor(id).call('Lock', 'Acquire', { header: header(`${ns}-probe-${id}`), lock, sessionId: probeSession, waitTimeoutMs: '0' }, 800);
          if (res.acquired) recorder.ok(o, { token: BigInt(res.token as string) }, endpoint);
          else {
            o.ret = clock();
            o.outcome = 'fail';
            o.error = { code: 'NOT_ACQUIRED', reason: 'LOCK_HELD' };
            o.endpoint = endpoint;
          }
          if (res.acquired) probes.ok++;
        } else {
          const res = await rawFor(id).call('KV', 'Get', { key: `${lock}/k` }, 800);
          const value = res.found ? Buffer.from(res.value as Uint8Array).toString('utf8') : null;
          recorder.ok(o, { found: !!res.found, value, token: BigInt((res.token as string) || '0'), lock: (res.lock as string) ?? '' }, endpoint);
          probes.ok++;
        }
      } catch (err) {
        // Any error of a raw call may hide an effect (a timeout): unknown, never 'fail'.
        o.ret = clock();
        o.outcome = 'unknown';
        o.error = { code: String((err as { code?: unknown }).code ?? 'UNKNOWN'), message: (err as Error).message };
        o.endpoint = endpoint;
      }
    };
    let n = 0;
    while (!done) {
      await Promise.all(minority.filter((id) => cluster.isRunning(id) && !cluster.node(id).paused).map((id) => one(id, n)));
      n++;
      await sleep(100);
    }
  };
  const probing: Promise<void>[] = [];

  /** Nodes whose process another active fault owns (killed or paused). */
  const busy = new Set<string>();
  let delayOwner: ScheduledFault | undefined;

  // ---- the workers ----------------------------------------------------------------------------------------
  const workloadDefaults = {
    hotLocks: 3,
    coldLocks: 200,
    waitTimeoutMs: 1_500,
    sessionTtlMs: 3_000,
    requestTimeoutMs: 1_000,
    totalTimeoutMs: 4_000,
    thinkMs: 5,
    ...o.workload,
  };
  const startWorker = (i: number): WorkerHandle =>
    startClientWorker({
      name: `w${i + 1}`,
      epoch,
      workload: { ...workloadDefaults, endpoints: cluster.endpoints, clients: o.workerClients ?? 2, namespace: ns, seed: o.seed * 31 + i + 1 },
      holder: { holdMs: 300, ttlMs: workloadDefaults.sessionTtlMs, waitMs: workloadDefaults.waitTimeoutMs },
    });
  const calibrate = (w: WorkerHandle): Promise<{ offsetMs: number; slackMs: number }> => calibrateWorker(w, clock);
  const signalWorker = (w: WorkerHandle, sig: 'SIGSTOP' | 'SIGCONT'): void => {
    if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill(sig);
    w.paused = sig === 'SIGSTOP';
  };

  // ---- faults ---------------------------------------------------------------------------------------------
  const abort = new AbortController();
  setMaxListeners(0, abort.signal);
  const pause = async (ms: number): Promise<void> => {
    if (ms <= 0 || abort.signal.aborted) return;
    await sleep(ms, undefined, { signal: abort.signal }).catch(() => undefined);
  };
  const pickFrom = <T>(xs: readonly T[], r: number): T | undefined => (xs.length === 0 ? undefined : xs[Math.floor(r * xs.length) % xs.length]);
  const free = (): string[] => ids.filter((id) => !busy.has(id) && cluster.isRunning(id) && !cluster.node(id).paused);

  /** Watches for a new leader (not `from`, higher term) while a fault lasts; fills the Failover record. */
  const watchFailover = (f: Failover, oldTerm: bigint, t0: number, healed: Promise<void>, stepDown: boolean): Promise<void> => {
    // Watch while the fault lasts and at least 4 s (a short fault may heal before the others elect).
    let done = false;
    void Promise.all([healed, sleep(4_000)]).then(() => (done = true));
    const others = ids.filter((id) => id !== f.from);
    const newLeader = (async () => {
      while (!done) {
        const l = await leaderNow(others).catch(() => undefined);
        if (l && l.term > oldTerm) {
          f.to = l.id;
          f.ms = Math.round(performance.now() - t0);
          return;
        }
        await sleep(25);
      }
    })();
    const down = (async () => {
      if (!stepDown) return;
      while (!done) {
        try {
          const s = await statusClient.status(addressOf(f.from));
          if (s.role !== 'leader') {
            f.stepDownMs = Math.round(performance.now() - t0);
            return;
          }
        } catch {
          /* not answering */
        }
        await sleep(25);
      }
    })();
    return Promise.all([newLeader, down]).then(() => undefined);
  };

  let activeNodeFaults = 0;
  const watching = new Set<Failover>();
  /** Applies one scheduled fault, holds it, heals it. */
  const runFault = async (f: ScheduledFault): Promise<void> => {
    if (f.kind === 'pause-client' || f.kind === 'pause-holder') return runClientFault(f);
    activeNodeFaults++;
    // A failover still being measured when another node fault begins says little about failover time.
    for (const fo of watching) if (fo.to === undefined) fo.overlapped = true;
    try {
      await runNodeFault(f);
    } finally {
      activeNodeFaults--;
    }
  };
  const runClientFault = async (f: ScheduledFault): Promise<void> => {
    if (abort.signal.aborted) return;
    if (f.kind === 'pause-client') {
      const w = pickFrom(workers.filter((x) => !x.paused), f.pick);
      if (!w) return note(`pause-client: skipped (no running worker)`);
      signalWorker(w, 'SIGSTOP');
      const ev = recorder.fault('pause-client', [w.name]);
      note(`pause-client ${w.name} (SIGSTOP) for ${f.holdMs} ms`);
      await pause(f.holdMs);
      signalWorker(w, 'SIGCONT');
      recorder.endFault(ev);
      note(`resume-client ${w.name} (SIGCONT)`);
      return;
    }
    if (f.kind === 'pause-holder') {
      const w = pickFrom(workers.filter((x) => !x.paused), f.pick);
      if (!w) return note(`pause-holder: skipped (no running worker)`);
      // Freeze the worker the moment its holder announces a grant (before it writes under the token).
      const grant = await Promise.race([
        new Promise<{ lock: string; token: string }>((resolve) => (w.onHolding = (lock, token) => {
          if (!abort.signal.aborted) signalWorker(w, 'SIGSTOP');
          resolve({ lock, token });
        })),
        pause(3_000).then(() => undefined),
      ]);
      w.onHolding = undefined;
      if (!grant || !w.paused) return note(`pause-holder: skipped (${w.name}'s holder got no grant in time)`);
      const ev = recorder.fault('pause-client', [w.name], { note: `holder of ${grant.lock} token ${grant.token}` });
      note(`pause-holder ${w.name} (SIGSTOP) right after its holder got ${grant.lock} token ${grant.token}, for ${f.holdMs} ms`);
      await pause(f.holdMs);
      signalWorker(w, 'SIGCONT');
      recorder.endFault(ev);
      note(`resume-client ${w.name} (SIGCONT): the holder writes under token ${grant.token}`);
    }
  };
  const runNodeFault = async (f: ScheduledFault): Promise<void> => {
    if (abort.signal.aborted) return;
    const leader = f.kind === 'delay' ? undefined : await leaderNow(free()).catch(() => undefined);
    if (abort.signal.aborted) return;
    const t0 = performance.now();
    let held: Promise<void> = Promise.resolve();
    let release: () => void = () => undefined;
    const holding = new Promise<void>((r) => (release = r));
    const failover = (from: string, term: bigint, stepDown: boolean): void => {
      const fo: Failover = { kind: f.kind, from, at: clock(), overlapped: activeNodeFaults > 1 };
      failovers.push(fo);
      watching.add(fo);
      held = watchFailover(fo, term, t0, holding, stepDown).finally(() => watching.delete(fo));
    };
    switch (f.kind) {
      case 'kill-leader':
      case 'kill-random': {
        const target = f.kind === 'kill-leader' && leader && !busy.has(leader.id) ? leader.id : pickFrom(free(), f.pick);
        if (!target) return note(`${f.kind}: skipped (no free node)`);
        busy.add(target);
        await cluster.kill(target);
        const ev = recorder.fault('kill', [target], { note: f.kind });
        note(`${f.kind}: SIGKILL ${target}${leader?.id === target ? ` (leader, term ${leader.term})` : ''}; restart in ${f.holdMs} ms`);
        if (leader?.id === target) failover(target, leader.term, false);
        await pause(f.holdMs);
        release();
        if (!cluster.isRunning(target)) cluster.start(target);
        busy.delete(target);
        recorder.endFault(ev);
        note(`restart ${target}`);
        break;
      }
      case 'kill-all': {
        if (busy.size > 0) return note('kill-all: skipped (another process fault is active)');
        for (const id of ids) busy.add(id);
        await Promise.all(ids.map((id) => cluster.kill(id)));
        const ev = recorder.fault('kill', [...ids], { note: 'kill-all' });
        note(`kill-all: SIGKILL ${ids.join(' ')}; restart in ${f.holdMs} ms`);
        await pause(f.holdMs);
        release();
        for (const id of ids) if (!cluster.isRunning(id)) cluster.start(id);
        for (const id of ids) busy.delete(id);
        recorder.endFault(ev);
        note('restart all');
        break;
      }
      case 'stop-leader': {
        const target = leader && !busy.has(leader.id) ? leader.id : undefined;
        if (!target) return note('stop-leader: skipped (no free leader)');
        busy.add(target);
        const ev = recorder.fault('stop', [target], { note: 'SIGTERM' });
        note(`stop-leader: SIGTERM ${target} (term ${leader!.term}); restart ${f.holdMs} ms after it exits`);
        failover(target, leader!.term, false);
        const s0 = performance.now();
        const exited = await Promise.race([cluster.stop(target).then(() => true), sleep(10_000).then(() => false)]);
        if (!exited) {
          note(`stop-leader: ${target} still running 10 s after SIGTERM: SIGKILL (graceful shutdown hung)`);
          await cluster.kill(target);
        } else {
          note(`${target} exited ${Math.round(performance.now() - s0)} ms after SIGTERM`);
        }
        await pause(f.holdMs);
        release();
        if (!cluster.isRunning(target)) cluster.start(target);
        busy.delete(target);
        recorder.endFault(ev);
        note(`restart ${target}`);
        break;
      }
      case 'pause-leader': {
        const target = leader && !busy.has(leader.id) ? leader.id : undefined;
        if (!target) return note('pause-leader: skipped (no free leader)');
        busy.add(target);
        cluster.pause(target);
        const ev = recorder.fault('pause', [target]);
        note(`pause-leader: SIGSTOP ${target} (term ${leader!.term}) for ${f.holdMs} ms`);
        failover(target, leader!.term, false);
        await pause(f.holdMs);
        release();
        if (cluster.isRunning(target)) cluster.resume(target);
        busy.delete(target);
        recorder.endFault(ev);
        note(`SIGCONT ${target}`);
        break;
      }
      case 'isolate-leader':
      case 'split':
      case 'one-way-leader':
      case 'one-way': {
        let links: FaultProxy[];
        let minority: string[] | undefined;
        let what: string;
        if (f.kind === 'isolate-leader') {
          const target = leader?.id ?? pickFrom(ids, f.pick)!;
          links = linksAround([target]);
          minority = [target];
          what = `isolate ${target}${leader ? ` (leader, term ${leader.term})` : ' (no leader known)'}`;
        } else if (f.kind === 'split') {
          // A 2-node side chosen by `pick` among the 10 pairs; the leader may be on either side.
          const pairs: string[][] = [];
          for (let a = 0; a < ids.length; a++) for (let b = a + 1; b < ids.length; b++) pairs.push([ids[a]!, ids[b]!]);
          minority = pickFrom(pairs, f.pick)!;
          links = linksAround(minority);
          what = `split ${minority.join(',')} | ${ids.filter((id) => !minority!.includes(id)).join(',')}${leader ? ` (leader ${leader.id}, term ${leader.term})` : ''}`;
        } else if (f.kind === 'one-way-leader') {
          const target = leader?.id ?? pickFrom(ids, f.pick)!;
          links = ids.filter((id) => id !== target).map((id) => cluster.link(target, id));
          minority = [target];
          what = `one-way: ${target}${leader ? ' (leader)' : ''} cannot send to ${ids.filter((id) => id !== target).join(',')}`;
        } else {
          const pairs: Array<[string, string]> = [];
          for (const a of ids) for (const b of ids) if (a !== b) pairs.push([a, b]);
          const [a, b] = pickFrom(pairs, f.pick)!;
          links = [cluster.link(a, b)];
          what = `one-way: ${a} cannot send to ${b}`;
        }
        cutLinks(links, f.existing);
        const ev = recorder.fault('partition', minority ?? [], minority ? { minority: minority.map(addressOf), note: f.kind } : { note: `${f.kind} ${what}` });
        note(`${what} (${f.existing}) for ${f.holdMs} ms`);
        if (leader && minority?.includes(leader.id)) failover(leader.id, leader.term, true);
        if (minority) probing.push(probeMinority(minority, holding));
        await pause(f.holdMs);
        recorder.endFault(ev);
        release();
        healLinks(links);
        note(`heal ${what}`);
        break;
      }
      case 'flap': {
        // Random directed links go down and up every 100-400 ms (connections reset), for the hold.
        const rnd = mulberry32(Math.floor(f.pick * 2 ** 31));
        const pairs: Array<[string, string]> = [];
        for (const a of ids) for (const b of ids) if (a !== b) pairs.push([a, b]);
        const ev = recorder.fault('flap', [], { note: 'random links cut and healed every 100-400 ms' });
        note(`flap: random links cut and healed every 100-400 ms for ${f.holdMs} ms`);
        const end = performance.now() + f.holdMs;
        let down: FaultProxy[] = [];
        let flips = 0;
        while (performance.now() < end && !abort.signal.aborted) {
          healLinks(down);
          down = pairs.filter(() => rnd() < 0.3).map(([a, b]) => cluster.link(a, b));
          cutLinks(down, 'reset');
          flips++;
          await pause(100 + rnd() * 300);
        }
        healLinks(down);
        recorder.endFault(ev);
        note(`flap over (${flips} flips)`);
        break;
      }
      case 'delay': {
        if (delayOwner) return note('delay: skipped (a delay is active)');
        delayOwner = f;
        for (const p of cluster.links()) p.delay(f.delayMs ?? 50);
        const ev = recorder.fault('delay', [], { note: `${f.delayMs} ms per chunk on every link` });
        note(`delay ${f.delayMs} ms per chunk on every link for ${f.holdMs} ms`);
        await pause(f.holdMs);
        for (const p of cluster.links()) p.delay(0);
        delayOwner = undefined;
        recorder.endFault(ev);
        note('delay off');
        break;
      }
    }
    await held;
  };

  /** Ends every fault: links, delays, paused and killed nodes, paused workers. Idempotent. */
  const healAll = (): void => {
    cluster.healLinks();
    cutCount.clear();
    for (const id of ids) {
      if (!cluster.isRunning(id)) cluster.start(id);
      else if (cluster.node(id).paused) cluster.resume(id);
    }
    busy.clear();
    for (const w of workers) if (w.paused) signalWorker(w, 'SIGCONT');
  };

  let recoveryMs = -1;
  let healedAt = 0;
  const clocks: ChaosRun['clocks'] = [];
  let finalState = new Map<string, FinalRead>();
  try {
    if (own) cluster.startAll();
    const first = await waitFor('a first leader', agreedLeader, 20_000);
    note(`cluster of ${o.nodes} up, leader ${first.id} (term ${first.term}); seed ${o.seed}, namespace ${ns}`);
    log(`[chaos] schedule of seed ${o.seed}${o.schedule ? ' (scripted)' : ''}:\n${describeSchedule(schedule)}`);

    probeSession = (await probeOwner.openSession({ ttlMs: 30_000, name: `${ns}-probe` })).id;
    for (let i = 0; i < nWorkers; i++) workers.push(startWorker(i));
    await Promise.all(workers.map((w) => w.ready));
    for (const w of workers) clocks.push({ ...(await calibrate(w)), name: w.name });
    workload = new Workload({ ...workloadDefaults, endpoints: cluster.endpoints, clients: o.clients ?? 6, namespace: ns, seed: o.seed, recorder });
    workload.start();
    note(`workload: ${o.clients ?? 6} in-process clients, ${nWorkers} workers x ${o.workerClients ?? 2} clients; clock offsets ${clocks.map((c) => `${c.name} ${c.offsetMs.toFixed(3)}±${c.slackMs.toFixed(3)} ms`).join(', ')}`);

    // The nemesis: every scheduled fault at its offset, concurrently (overlaps are in the schedule).
    const start = performance.now();
    const faults = schedule.map(async (f) => {
      await pause(f.at - (performance.now() - start));
      await runFault(f);
    });
    await pause(o.durationMs - (performance.now() - start));
    abort.abort();
    await Promise.all(faults);
    await Promise.all(probing);
    healAll();
    healedAt = clock();
    recorder.fault('heal', [...ids], { note: 'every fault healed' });
    note('nemesis over: everything healed');

    // Liveness: one agreed leader and a served lock cycle within the bound.
    const h0 = performance.now();
    const healBound = o.healBoundMs ?? 20_000;
    const probe = new FenceLockClient({ endpoints: cluster.endpoints, requestTimeoutMs: 1_000, totalTimeoutMs: 3_000 });
    try {
      const leader = await waitFor('one agreed leader after healing', agreedLeader, healBound);
      await waitFor(
        'a lock cycle served after healing',
        async () =>
          probe.withLock(`${ns}-probe/after-heal`, async (_t, lock) => {
            await lock.write([{ put: `${ns}-probe/after-heal/k`, value: 'x' }]);
            return true;
          }, { ttlMs: 3_000, waitTimeoutMs: 1_000 }),
        Math.max(1_000, healBound - (performance.now() - h0)),
      );
      recoveryMs = Math.round(performance.now() - h0);
      note(`recovered in ${recoveryMs} ms: leader ${leader.id} (term ${leader.term}) and a lock cycle served`);
    } finally {
      await probe.close().catch(() => undefined);
    }
    await sleep(o.calmTailMs ?? 2_000);

    // Stop the clients (workers: let them finish their operations; kill them if they hang).
    const stopWorkers = Promise.all(
      workers.map(async (w) => {
        w.child.stdin!.write('stop\n');
        const t = setTimeout(() => w.child.kill('SIGKILL'), 30_000);
        await w.exited;
        clearTimeout(t);
      }),
    );
    const stopLocal = Promise.race([workload.stop(), sleep(30_000).then(() => workload!.stop({ abort: true }))]);
    await Promise.all([stopWorkers, stopLocal]);
    note('clients stopped');

    // Final reads of every key any client wrote (recorded: linearizable gets on the healed cluster).
    const merged = mergeOps(recorder.operations(), workers, clocks);
    finalState = await readFinal(recorder, cluster.endpoints, `${ns}-final`, merged);
    note(`final reads: ${finalState.size} keys`);
  } finally {
    abort.abort();
    for (const w of workers) {
      if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGKILL');
    }
    await Promise.all(workers.map((w) => w.exited));
    await workload?.stop({ abort: true }).catch(() => undefined);
    await statusClient.close().catch(() => undefined);
    await probeOwner.close().catch(() => undefined);
    for (const c of raw.values()) c.close();
    // Leave a reused cluster healed (after an error, too); a cluster of our own goes away.
    try {
      healAll();
    } catch {
      /* a node that cannot be started again shows in the next round */
    }
    if (own) await cluster.destroy();
  }

  const merged = mergeOps(recorder.operations(), workers, clocks);
  const { ops, endpoints, reclassified } = sanitize(merged);
  if (reclassified.length > 0) note(`sanitize: ${reclassified.length} blocking acquire(s) ended UNKNOWN_SESSION, checked as unknown (ops ${reclassified.join(', ')})`);
  const history: History = { ops, faults: recorder.history().faults, meta: { ...recorder.meta, schedule, endpoints, reclassified } };
  for (const fo of failovers) {
    const ms = fo.ms;
    if (ms === undefined) continue;
    fo.failedOps = ops.filter((x) => x.op !== 'open' && x.op !== 'keepalive' && x.outcome !== 'ok' && x.ret !== undefined && x.ret >= fo.at && x.ret <= fo.at + ms).length;
  }
  const okAfterHeal = ops.filter((x) => x.outcome === 'ok' && x.call > healedAt && !x.process.endsWith('-final')).length;
  return {
    seed: o.seed,
    nodes: o.nodes,
    namespace: ns,
    schedule,
    history,
    finalState,
    timeline,
    failovers,
    recoveryMs,
    okAfterHeal,
    workloadStats: workload?.stats() ?? ({} as WorkloadStats),
    workerStats: workers.map((w) => w.stats),
    clocks,
    probes,
    dir: cluster.dir,
  };
}

/**
 * The history as checked (see the header): workload operations lose their unreliable `endpoint` (returned
 * separately, by op id); blocking acquires that ended UNKNOWN_SESSION become 'unknown'. Probe operations
 * (process probe-*) keep their endpoint: they went to exactly that node.
 */
export function sanitize(ops: readonly Operation[]): { ops: Operation[]; endpoints: Record<number, string>; reclassified: number[] } {
  const endpoints: Record<number, string> = {};
  const reclassified: number[] = [];
  const out = ops.map((o) => {
    const x: Operation = { ...o };
    if (x.endpoint !== undefined && !x.process.startsWith('probe-')) {
      endpoints[x.id] = x.endpoint;
      delete x.endpoint;
    }
    if (x.op === 'acquire' && x.outcome === 'fail' && (x.args.waitMs ?? 0) > 0 && x.error?.reason === 'UNKNOWN_SESSION') {
      x.outcome = 'unknown';
      x.error = { ...x.error, message: `${x.error.message ?? ''} [chaos: a blocking acquire may have been granted before its session ended]` };
      reclassified.push(x.id);
    }
    return x;
  });
  return { ops: out, endpoints, reclassified };
}

/** The in-process ops plus every worker's (clock-corrected, widened), renumbered in call order. */
export function mergeOps(local: Operation[], workers: WorkerHandle[], clocks: ChaosRun['clocks']): Operation[] {
  const all: Operation[] = local.map((x) => ({ ...x }));
  for (const w of workers) {
    const c = clocks.find((x) => x.name === w.name) ?? { offsetMs: 0, slackMs: 1 };
    for (const op of w.ops.values()) {
      const x: Operation = { ...op, call: op.call - c.offsetMs - c.slackMs };
      if (op.ret !== undefined) x.ret = op.ret - c.offsetMs + c.slackMs;
      all.push(x);
    }
  }
  all.sort((a, b) => a.call - b.call || a.process.localeCompare(b.process));
  return all.map((x, i) => ({ ...x, id: i }));
}

async function readFinal(recorder: Recorder, endpoints: string[], process: string, ops: Operation[]): Promise<Map<string, FinalRead>> {
  const client = new FenceLockClient({ endpoints, clientId: process, requestTimeoutMs: 2_000, totalTimeoutMs: 10_000 });
  const out = new Map<string, FinalRead>();
  const todo = [...keysOf(ops)].filter(([, lock]) => lock !== undefined).sort((a, b) => (a[0] < b[0] ? -1 : 1));
  const worker = async (): Promise<void> => {
    for (let item = todo.shift(); item !== undefined; item = todo.shift()) {
      const [key, lock] = item;
      const r = await recorder.get(process, client, key, lock);
      if (r.value) out.set(key, { found: r.value.found!, value: r.value.value ?? null, token: r.value.token! });
    }
  };
  try {
    await Promise.all(Array.from({ length: 8 }, () => worker()));
  } finally {
    await client.close();
  }
  return out;
}

// ---- checking and reporting -------------------------------------------------------------------------------

export interface CheckedRun {
  verdict: HistoryVerdict;
  checkMs: number;
}

/** checkHistory over the run (in this thread). */
export function checkRun(run: ChaosRun, budgetMs = 60_000): CheckedRun {
  const t0 = performance.now();
  const verdict = checkHistory(run.history, { finalState: run.finalState, budgetMs });
  return { verdict, checkMs: Math.round(performance.now() - t0) };
}

/**
 * checkHistory in a worker thread (the compiled checker under dist/), so that a long check does not stall
 * this event loop: the proxies of a running cluster and the node log pipes live on it (the soak).
 */
export function checkRunInThread(run: ChaosRun, budgetMs = 60_000): Promise<CheckedRun> {
  const code = `
    const { parentPort, workerData } = require('node:worker_threads');
    const { performance } = require('node:perf_hooks');
    const c = require(workerData.checker);
    const h = c.historyFromJSON(workerData.history);
    const t0 = performance.now();
    const v = c.checkHistory(h, { finalState: c.finalStateFromJSON(workerData.finalState), budgetMs: workerData.budgetMs });
    const checkMs = Math.round(performance.now() - t0);
    parentPort.postMessage(c.historyToJSON({ ops: [], faults: [], meta: { verdict: v, checkMs } }));
  `;
  return new Promise((resolve, reject) => {
    const w = new Worker(code, {
      eval: true,
      workerData: { checker: CHECKER_MAIN, history: historyToJSON(run.history), finalState: finalStateToJSON(run.finalState), budgetMs },
    });
    w.once('message', (text: string) => {
      const meta = (JSON.parse(text) as { meta: { verdict: HistoryVerdict; checkMs: number } }).meta;
      resolve({ verdict: meta.verdict, checkMs: meta.checkMs });
    });
    w.once('error', reject);
    w.once('exit', (code) => {
      if (code !== 0) reject(new Error(`checker thread exited with ${code}`));
    });
  });
}

export function historyStats(h: History): { ops: number; byKind: Record<string, number>; byOutcome: Record<string, number>; processes: number; locks: number } {
  const byKind: Record<string, number> = {};
  const byOutcome: Record<string, number> = {};
  const processes = new Set<string>();
  const locks = new Set<string>();
  for (const o of h.ops) {
    byKind[o.op] = (byKind[o.op] ?? 0) + 1;
    byOutcome[o.outcome] = (byOutcome[o.outcome] ?? 0) + 1;
    processes.add(o.process);
    if (o.args.lock !== undefined) locks.add(o.args.lock);
  }
  return { ops: h.ops.length, byKind, byOutcome, processes: processes.size, locks: locks.size };
}

/** A readable account of a run and its verdict. */
export function summarize(run: ChaosRun, checked?: CheckedRun): string {
  const s = historyStats(run.history);
  const lines = [
    `chaos run: seed ${run.seed}, ${run.nodes} nodes, namespace ${run.namespace}`,
    `history: ${s.ops} operations (${Object.entries(s.byKind).map(([k, v]) => `${k} ${v}`).join(', ')}); ` +
      `outcomes ${Object.entries(s.byOutcome).map(([k, v]) => `${k} ${v}`).join(', ')}; ${s.processes} processes, ${s.locks} locks; final reads ${run.finalState.size} keys`,
    `workload: ${JSON.stringify(run.workloadStats)}`,
    `workers: ${run.workerStats.map((w, i) => `w${i + 1} ${w ? `${w.cycles} cycles, ${w.acquired} grants, ${w.writesRefused} writes refused` : 'no stats'}`).join('; ')}`,
    `slow holders: ${describeHolderWrites(run.history)}`,
    `failovers: ${run.failovers.length === 0 ? 'none' : run.failovers.map(formatFailover).join('; ')}`,
    `recovery after healing: ${run.recoveryMs} ms; ${run.okAfterHeal} operations ok after healing`,
    `minority probes: ${run.probes.sent} sent, ${run.probes.ok} answered ok (any ok inside a window fails minority-answer)`,
  ];
  if (checked) {
    const v = checked.verdict;
    lines.push(
      `checker: ${v.ok ? 'OK' : 'FAILED'} in ${checked.checkMs} ms (linearizability ${v.linearizability.outcome}, ` +
        `${v.linearizability.stats.partitions} partitions, ${v.linearizability.stats.opsChecked} ops checked; invariants: ${v.invariants.length} violations)`,
    );
    if (!v.ok) lines.push(v.report);
  }
  lines.push('fault timeline:', ...run.timeline.map((l) => `  ${l}`));
  return lines.join('\n');
}

/** Writes of the slow holders (clientWorker.ts) by outcome and refusal reason. */
export function holderWrites(h: History): Record<string, number> {
  const out: Record<string, number> = {};
  for (const o of h.ops) {
    if (o.op !== 'write' || !o.process.endsWith('-holder')) continue;
    const k = o.outcome === 'fail' ? `refused ${o.error?.reason ?? o.error?.code ?? '?'}` : o.outcome;
    out[k] = (out[k] ?? 0) + 1;
  }
  return out;
}

function describeHolderWrites(h: History): string {
  const w = holderWrites(h);
  const parts = Object.entries(w).map(([k, v]) => `${k} ${v}`);
  return parts.length === 0 ? 'no writes' : `writes ${parts.join(', ')}`;
}

function formatFailover(f: Failover): string {
  const overlap = f.overlapped ? ' [overlapping another fault]' : '';
  const to = f.to === undefined ? 'no other leader within the hold' : `${f.to} after ${f.ms} ms (${f.failedOps ?? 0} ops failed meanwhile)`;
  return `${f.kind} ${f.from} -> ${to}${f.stepDownMs !== undefined ? `, old leader stepped down after ${f.stepDownMs} ms` : ''}${overlap}`;
}

/** Writes the history, the final state and the summary to `dir` (for post-mortems and replays). */
export function dumpRun(run: ChaosRun, dir: string, checked?: CheckedRun): string {
  mkdirSync(dir, { recursive: true });
  const base = path.join(dir, `chaos-seed${run.seed}-n${run.nodes}`);
  writeFileSync(`${base}.history.json`, historyToJSON(run.history, 1));
  writeFileSync(`${base}.final.json`, finalStateToJSON(run.finalState));
  writeFileSync(`${base}.txt`, summarize(run, checked));
  return base;
}

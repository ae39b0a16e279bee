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
// checker's minority-answer invariant requires that none completes ok inside the window (docs/architecture.md#promises, promise 5).
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
//
// The pieces live in ./chaos/: schedule.ts (the seeded schedule), nemesis.ts (the table of fault handlers:
// processFaults.ts, linkFaults.ts, clientFaults.ts), the bookkeeping they share (context.ts, failovers.ts,
// minorityProbes.ts, clusterView.ts; link cuts are counted by test/support/links.ts), the clients (clients.ts,
// clientWorkers.ts), the history (history.ts) and the report (report.ts). This file runs the phases in order.
import { setMaxListeners } from 'node:events';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { FenceLockClient } from '../../src/client';
import { Recorder } from '../chaos/recorder';
import type { FinalRead, History } from '../checker';
import { LinkCuts } from '../support/links';
import { RunClients } from './chaos/clients';
import { ClusterView } from './chaos/clusterView';
import type { FaultContext } from './chaos/context';
import { FailoverWatch } from './chaos/failovers';
import { mergeOps, readFinal, sanitize } from './chaos/history';
import { MinorityProbes } from './chaos/minorityProbes';
import { healAll, runNemesis } from './chaos/nemesis';
import { describeSchedule, makeSchedule, type ScheduledFault } from './chaos/schedule';
import type { ChaosOptions, ChaosRun } from './chaos/types';
import { waitFor } from './chaos/waitFor';
import { runClock } from './clientWorker';
import { LocalCluster } from './harness';

export { calibrateWorker, startClientWorker, WORKER_MAIN, type WorkerHandle } from './chaos/clientWorkers';
export type { Failover } from './chaos/failovers';
export { mergeOps, sanitize } from './chaos/history';
export { checkRun, checkRunInThread, dumpRun, historyStats, holderWrites, longestPause, summarize, type CheckedRun } from './chaos/report';
export { describeSchedule, makeSchedule, type FaultKind, type NodeFaultKind, type ScheduledFault, type ScheduleOptions } from './chaos/schedule';
export type { ChaosOptions, ChaosRun } from './chaos/types';

/** A run in progress: the faults' context and what the phases around the nemesis share. */
interface Run {
  o: ChaosOptions;
  ctx: FaultContext;
  abort: AbortController;
  ns: string;
  epoch: number;
  timeline: string[];
  clients: RunClients;
  schedule: ScheduledFault[];
}

/** Runs one chaos round and returns its merged history (not yet checked: see checkRun). */
export async function runChaos(o: ChaosOptions): Promise<ChaosRun> {
  const schedule = o.steps ? [] : (o.schedule ?? makeSchedule(o.seed, { nodes: o.nodes, durationMs: o.durationMs, workers: o.workers ?? 2, kinds: o.kinds }));
  const own = o.cluster === undefined;
  const cluster =
    o.cluster ?? (await LocalCluster.create({ size: o.nodes, proxies: true, snapshotEveryEntries: o.snapshotEveryEntries ?? 1_000, logLevel: 'info' }));
  if (!cluster.hasProxies && !o.steps) throw new Error('runChaos: the cluster needs proxies');
  const run = prepare(o, cluster, schedule);
  let recoveryMs = -1;
  let healedAt = 0;
  let finalState = new Map<string, FinalRead>();
  try {
    if (own) cluster.startAll();
    await startClients(run);
    if (o.steps) await runSteps(run, o.steps);
    else await runNemesis(run.ctx, schedule, o.durationMs, run.abort);
    healAll(run.ctx);
    healedAt = run.ctx.clock();
    run.ctx.recorder.fault('heal', [...run.ctx.ids], { note: 'every fault healed' });
    run.ctx.note('nemesis over: everything healed');
    recoveryMs = await awaitRecovery(run, o.healBoundMs ?? 20_000);
    await sleep(o.calmTailMs ?? 2_000);
    await run.clients.stop();
    run.ctx.note('clients stopped');
    finalState = await readFinalState(run);
  } finally {
    await tearDown(run, own);
  }
  return collect(run, finalState, recoveryMs, healedAt);
}

/** The run's clock, recorder, timeline and fault context, before anything starts. */
function prepare(o: ChaosOptions, cluster: LocalCluster, schedule: ScheduledFault[]): Run {
  const ns = o.namespace ?? `chaos-${o.seed}`;
  const epoch = performance.timeOrigin + performance.now();
  const clock = runClock(epoch);
  const recorder = new Recorder({ now: clock });
  Object.assign(recorder.meta, { seed: o.seed, nodes: o.nodes, epoch, members: Object.fromEntries(cluster.nodes.map((n) => [n.id, n.address])) });
  const timeline: string[] = [];
  const note = (line: string): void => {
    const text = `${(clock() / 1000).toFixed(3).padStart(8)} s  ${line}`;
    timeline.push(text);
    o.log?.(`[chaos] ${text}`);
  };
  const abort = new AbortController();
  // Every hold of every fault listens to this one signal.
  setMaxListeners(0, abort.signal);
  const pause = async (ms: number): Promise<void> => {
    if (ms <= 0 || abort.signal.aborted) return;
    await sleep(ms, undefined, { signal: abort.signal }).catch(() => undefined);
  };
  const view = new ClusterView(cluster, o.members);
  const clients = new RunClients(o, ns, epoch, o.endpoints ?? cluster.endpoints);
  const ctx: FaultContext = {
    cluster,
    ids: view.ids,
    view,
    recorder,
    clock,
    note,
    pause,
    signal: abort.signal,
    busy: new Set(),
    cuts: new LinkCuts(cluster),
    probes: new MinorityProbes(ns, cluster, view, recorder, clock),
    failovers: new FailoverWatch(view, clock),
    workers: clients.workers,
  };
  return { o, ctx, abort, ns, epoch, timeline, clients, schedule };
}

/** Waits for the first leader, then starts the probes' session, the workers and the workload. */
async function startClients(run: Run): Promise<void> {
  const { o, ctx } = run;
  const first = await waitFor(ctx.cluster, 'a first leader', () => ctx.view.agreedLeader(), 20_000);
  ctx.note(`cluster of ${o.nodes} up, leader ${first.id} (term ${first.term}); seed ${o.seed}, namespace ${run.ns}`);
  o.log?.(`[chaos] schedule of seed ${o.seed}${o.schedule ? ' (scripted)' : ''}:\n${describeSchedule(run.schedule)}`);
  await ctx.probes.openSession();
  ctx.note(await run.clients.start(ctx.recorder, ctx.clock));
}

/** The scripted steps in place of the nemesis; then every hold is cut short, as at the nemesis's end. */
async function runSteps(run: Run, steps: (ctx: FaultContext) => Promise<void>): Promise<void> {
  try {
    await steps(run.ctx);
  } finally {
    run.abort.abort();
  }
}

/** Liveness after healing: one agreed leader and a served lock cycle within `healBound`; returns the ms. */
async function awaitRecovery(run: Run, healBound: number): Promise<number> {
  const { ctx, ns } = run;
  const h0 = performance.now();
  const probe = new FenceLockClient({ endpoints: ctx.cluster.endpoints, requestTimeoutMs: 1_000, totalTimeoutMs: 3_000 });
  try {
    const leader = await waitFor(ctx.cluster, 'one agreed leader after healing', () => ctx.view.agreedLeader(), healBound);
    const cycle = (): Promise<boolean> =>
      probe.withLock(`${ns}-probe/after-heal`, async (_t, lock) => {
        await lock.write([{ put: `${ns}-probe/after-heal/k`, value: 'x' }]);
        return true;
      }, { ttlMs: 3_000, waitTimeoutMs: 1_000 });
    await waitFor(ctx.cluster, 'a lock cycle served after healing', cycle, Math.max(1_000, healBound - (performance.now() - h0)));
    const recoveryMs = Math.round(performance.now() - h0);
    ctx.note(`recovered in ${recoveryMs} ms: leader ${leader.id} (term ${leader.term}) and a lock cycle served`);
    return recoveryMs;
  } finally {
    await probe.close().catch(() => undefined);
  }
}

/** Final reads of every key any client wrote (recorded: linearizable gets on the healed cluster). */
async function readFinalState(run: Run): Promise<Map<string, FinalRead>> {
  const { ctx } = run;
  const merged = mergeOps(ctx.recorder.operations(), run.clients.workers, run.clients.clocks);
  const finalState = await readFinal(ctx.recorder, ctx.cluster.endpoints, `${run.ns}-final`, merged);
  ctx.note(`final reads: ${finalState.size} keys`);
  return finalState;
}

/** Stops everything the run started; leaves a reused cluster healed (after an error, too), removes our own. */
async function tearDown(run: Run, own: boolean): Promise<void> {
  run.abort.abort();
  await run.clients.kill();
  await run.ctx.view.close().catch(() => undefined);
  await run.ctx.probes.close();
  try {
    healAll(run.ctx);
  } catch {
    /* a node that cannot be started again shows in the next round */
  }
  if (own) await run.ctx.cluster.destroy();
}

/** The checked history (sanitized) and the run's measurements. */
function collect(run: Run, finalState: Map<string, FinalRead>, recoveryMs: number, healedAt: number): ChaosRun {
  const { o, ctx, clients } = run;
  const merged = mergeOps(ctx.recorder.operations(), clients.workers, clients.clocks);
  const { ops, endpoints, reclassified } = sanitize(merged);
  if (reclassified.length > 0) ctx.note(`sanitize: ${reclassified.length} blocking acquire(s) ended UNKNOWN_SESSION, checked as unknown (ops ${reclassified.join(', ')})`);
  const history: History = { ops, faults: ctx.recorder.history().faults, meta: { ...ctx.recorder.meta, schedule: run.schedule, endpoints, reclassified } };
  const failovers = ctx.failovers.list;
  for (const fo of failovers) {
    const ms = fo.ms;
    if (ms === undefined) continue;
    fo.failedOps = ops.filter((x) => x.op !== 'open' && x.op !== 'keepalive' && x.outcome !== 'ok' && x.ret !== undefined && x.ret >= fo.at && x.ret <= fo.at + ms).length;
  }
  const okAfterHeal = ops.filter((x) => x.outcome === 'ok' && x.call > healedAt && !x.process.endsWith('-final')).length;
  return {
    seed: o.seed,
    nodes: o.nodes,
    namespace: run.ns,
    schedule: run.schedule,
    history,
    finalState,
    timeline: run.timeline,
    failovers,
    recoveryMs,
    okAfterHeal,
    workloadStats: clients.workloadStats(),
    workerStats: clients.workers.map((w) => w.stats),
    clocks: clients.clocks,
    probes: ctx.probes.counts,
    dir: ctx.cluster.dir,
  };
}

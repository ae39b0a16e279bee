// The nemesis: every scheduled fault at its offset, concurrently (overlaps are in the schedule), each run by
// its handler from the table below; then everything healed at once.
import { performance } from 'node:perf_hooks';
import { pauseClient, pauseHolder, type ClientFault } from './clientFaults';
import { signalWorker } from './clientWorkers';
import { freeNodes, type FaultContext } from './context';
import { FaultHold } from './failovers';
import { delay, flap, PARTITIONS } from './linkFaults';
import type { NodeFault } from './nodeFault';
import { killAll, killOne, pauseLeader, stopLeader } from './processFaults';
import type { FaultKind, NodeFaultKind, ScheduledFault } from './schedule';

const NODE_FAULTS: Record<NodeFaultKind, NodeFault> = {
  'kill-leader': killOne,
  'kill-random': killOne,
  'kill-all': killAll,
  'stop-leader': stopLeader,
  'pause-leader': pauseLeader,
  ...PARTITIONS,
  flap,
  delay,
};

const CLIENT_FAULTS: Record<Exclude<FaultKind, NodeFaultKind>, ClientFault> = {
  'pause-client': pauseClient,
  'pause-holder': pauseHolder,
};

const isClientFault = (kind: FaultKind): kind is Exclude<FaultKind, NodeFaultKind> => kind in CLIENT_FAULTS;

/** Runs the schedule for `durationMs`, then cuts every hold short and waits for the faults and probes. */
export async function runNemesis(ctx: FaultContext, schedule: readonly ScheduledFault[], durationMs: number, abort: AbortController): Promise<void> {
  const start = performance.now();
  const faults = schedule.map(async (f) => {
    await ctx.pause(f.at - (performance.now() - start));
    await runFault(ctx, f);
  });
  await ctx.pause(durationMs - (performance.now() - start));
  abort.abort();
  await Promise.all(faults);
  await ctx.probes.settled();
}

/** Applies one scheduled fault, holds it, heals it. */
async function runFault(ctx: FaultContext, f: ScheduledFault): Promise<void> {
  if (isClientFault(f.kind)) {
    if (!ctx.signal.aborted) await CLIENT_FAULTS[f.kind](ctx, f);
    return;
  }
  ctx.failovers.begin();
  try {
    await runNodeFault(ctx, f, NODE_FAULTS[f.kind]);
  } finally {
    ctx.failovers.end();
  }
}

/** Finds the leader among the free nodes (delays need none), then runs the handler and its failover watch. */
async function runNodeFault(ctx: FaultContext, f: ScheduledFault, handler: NodeFault): Promise<void> {
  if (ctx.signal.aborted) return;
  const leader = f.kind === 'delay' ? undefined : await ctx.view.leaderNow(freeNodes(ctx)).catch(() => undefined);
  if (ctx.signal.aborted) return;
  const hold = new FaultHold(f.kind, ctx.failovers);
  await handler(ctx, f, leader, hold);
  await hold.measured();
}

/** Ends every fault: links, delays, paused and killed nodes, paused workers. Idempotent. */
export function healAll(ctx: FaultContext): void {
  ctx.cluster.heal();
  ctx.cuts.clear();
  for (const id of ctx.ids) {
    if (!ctx.cluster.isRunning(id)) ctx.cluster.start(id);
    else if (ctx.cluster.node(id).paused) ctx.cluster.resume(id);
  }
  ctx.busy.clear();
  for (const w of ctx.workers) if (w.paused) signalWorker(w, 'SIGCONT');
}

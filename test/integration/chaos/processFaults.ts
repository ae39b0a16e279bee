// Node faults on processes: SIGKILL one node or all, SIGTERM the leader, SIGSTOP the leader. Each owns
// its targets (ctx.busy) until it has started or resumed them again.
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { freeNodes, pickFrom, type FaultContext } from './context';
import type { NodeFault } from './nodeFault';

/** Starts `id` again unless something already did, and gives it back to the other faults. */
function restart(ctx: FaultContext, id: string): void {
  if (!ctx.cluster.isRunning(id)) ctx.cluster.start(id);
  ctx.busy.delete(id);
}

/** kill-leader, kill-random: SIGKILL, restart on the same data after the hold. */
export const killOne: NodeFault = async (ctx, f, leader, hold) => {
  const target = f.kind === 'kill-leader' && leader && !ctx.busy.has(leader.id) ? leader.id : pickFrom(freeNodes(ctx), f.pick);
  if (!target) return ctx.note(`${f.kind}: skipped (no free node)`);
  ctx.busy.add(target);
  await ctx.cluster.kill(target);
  const ev = ctx.recorder.fault('kill', [target], { note: f.kind });
  ctx.note(`${f.kind}: SIGKILL ${target}${leader?.id === target ? ` (leader, term ${leader.term})` : ''}; restart in ${f.holdMs} ms`);
  if (leader?.id === target) hold.failover(target, leader.term, false);
  await ctx.pause(f.holdMs);
  hold.end();
  restart(ctx, target);
  ctx.recorder.endFault(ev);
  ctx.note(`restart ${target}`);
};

/** kill-all: every node at once (nothing acknowledged may be lost), only when no other fault owns a node. */
export const killAll: NodeFault = async (ctx, f, _leader, hold) => {
  if (ctx.busy.size > 0) return ctx.note('kill-all: skipped (another process fault is active)');
  for (const id of ctx.ids) ctx.busy.add(id);
  await Promise.all(ctx.ids.map((id) => ctx.cluster.kill(id)));
  const ev = ctx.recorder.fault('kill', [...ctx.ids], { note: 'kill-all' });
  ctx.note(`kill-all: SIGKILL ${ctx.ids.join(' ')}; restart in ${f.holdMs} ms`);
  await ctx.pause(f.holdMs);
  hold.end();
  for (const id of ctx.ids) if (!ctx.cluster.isRunning(id)) ctx.cluster.start(id);
  for (const id of ctx.ids) ctx.busy.delete(id);
  ctx.recorder.endFault(ev);
  ctx.note('restart all');
};

/** stop-leader: graceful shutdown with leadership transfer; restart the hold after it exited. */
export const stopLeader: NodeFault = async (ctx, f, leader, hold) => {
  const target = leader && !ctx.busy.has(leader.id) ? leader.id : undefined;
  if (!target) return ctx.note('stop-leader: skipped (no free leader)');
  ctx.busy.add(target);
  const ev = ctx.recorder.fault('stop', [target], { note: 'SIGTERM' });
  ctx.note(`stop-leader: SIGTERM ${target} (term ${leader!.term}); restart ${f.holdMs} ms after it exits`);
  hold.failover(target, leader!.term, false);
  await stopOrKill(ctx, target);
  await ctx.pause(f.holdMs);
  hold.end();
  restart(ctx, target);
  ctx.recorder.endFault(ev);
  ctx.note(`restart ${target}`);
};

/** SIGTERM; a shutdown that takes over 10 s is a hang worth noting, and gets SIGKILL. */
async function stopOrKill(ctx: FaultContext, target: string): Promise<void> {
  const s0 = performance.now();
  const exited = await Promise.race([ctx.cluster.stop(target).then(() => true), sleep(10_000).then(() => false)]);
  if (!exited) {
    ctx.note(`stop-leader: ${target} still running 10 s after SIGTERM: SIGKILL (graceful shutdown hung)`);
    await ctx.cluster.kill(target);
  } else {
    ctx.note(`${target} exited ${Math.round(performance.now() - s0)} ms after SIGTERM`);
  }
}

/** pause-leader: SIGSTOP for the hold (a long GC pause), then SIGCONT. */
export const pauseLeader: NodeFault = async (ctx, f, leader, hold) => {
  const target = leader && !ctx.busy.has(leader.id) ? leader.id : undefined;
  if (!target) return ctx.note('pause-leader: skipped (no free leader)');
  ctx.busy.add(target);
  ctx.cluster.pause(target);
  const ev = ctx.recorder.fault('pause', [target]);
  ctx.note(`pause-leader: SIGSTOP ${target} (term ${leader!.term}) for ${f.holdMs} ms`);
  hold.failover(target, leader!.term, false);
  await ctx.pause(f.holdMs);
  hold.end();
  if (ctx.cluster.isRunning(target)) ctx.cluster.resume(target);
  ctx.busy.delete(target);
  ctx.recorder.endFault(ev);
  ctx.note(`SIGCONT ${target}`);
};

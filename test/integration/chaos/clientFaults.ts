// Client-lane faults: freeze a client worker process (SIGSTOP) for the hold. pause-holder freezes it the
// moment its slow holder announces a grant, so that its lease expires, the lock moves on, and the holder
// wakes up to write under its old token (which must be refused).
import { signalWorker, type WorkerHandle } from './clientWorkers';
import { pickFrom, type FaultContext } from './context';
import type { ScheduledFault } from './schedule';

export type ClientFault = (ctx: FaultContext, f: ScheduledFault) => Promise<void>;

/** pause-client: a running worker, frozen at a random moment. */
export const pauseClient: ClientFault = async (ctx, f) => {
  const w = pickFrom(ctx.workers.filter((x) => !x.paused), f.pick);
  if (!w) return ctx.note(`pause-client: skipped (no running worker)`);
  signalWorker(w, 'SIGSTOP');
  const ev = ctx.recorder.fault('pause-client', [w.name]);
  ctx.note(`pause-client ${w.name} (SIGSTOP) for ${f.holdMs} ms`);
  await ctx.pause(f.holdMs);
  signalWorker(w, 'SIGCONT');
  ctx.recorder.endFault(ev);
  ctx.note(`resume-client ${w.name} (SIGCONT)`);
};

/** pause-holder: a running worker, frozen right after its holder's next grant (skipped if none in 3 s). */
export const pauseHolder: ClientFault = async (ctx, f) => {
  const w = pickFrom(ctx.workers.filter((x) => !x.paused), f.pick);
  if (!w) return ctx.note(`pause-holder: skipped (no running worker)`);
  const grant = await freezeOnGrant(ctx, w);
  if (!grant || !w.paused) return ctx.note(`pause-holder: skipped (${w.name}'s holder got no grant in time)`);
  const ev = ctx.recorder.fault('pause-client', [w.name], { note: `holder of ${grant.lock} token ${grant.token}` });
  ctx.note(`pause-holder ${w.name} (SIGSTOP) right after its holder got ${grant.lock} token ${grant.token}, for ${f.holdMs} ms`);
  await ctx.pause(f.holdMs);
  signalWorker(w, 'SIGCONT');
  ctx.recorder.endFault(ev);
  ctx.note(`resume-client ${w.name} (SIGCONT): the holder writes under token ${grant.token}`);
};

/** SIGSTOPs the worker inside its "holding" announcement (before it writes under the token); 3 s at most. */
async function freezeOnGrant(ctx: FaultContext, w: WorkerHandle): Promise<{ lock: string; token: string } | undefined> {
  const grant = await Promise.race([
    new Promise<{ lock: string; token: string }>((resolve) => (w.onHolding = (lock, token) => {
      if (!ctx.signal.aborted) signalWorker(w, 'SIGSTOP');
      resolve({ lock, token });
    })),
    ctx.pause(3_000).then(() => undefined),
  ]);
  w.onHolding = undefined;
  return grant;
}

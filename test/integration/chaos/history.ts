// The run's history before checking: every recorder's operations on one clock and numbered in call order,
// then made safe to check (sanitize; why each rule is sound is in chaosRunner.ts's header), and the final
// reads of every key written.
import { FenceLockClient } from '../../../src/client';
import type { Recorder } from '../../chaos/recorder';
import { keysOf, type FinalRead, type Operation } from '../../checker';
import type { WorkerClock, WorkerHandle } from './clientWorkers';

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
export function mergeOps(local: Operation[], workers: WorkerHandle[], clocks: WorkerClock[]): Operation[] {
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

/** Linearizable gets of every key the operations wrote, recorded as process `process`. */
export async function readFinal(recorder: Recorder, endpoints: string[], process: string, ops: Operation[]): Promise<Map<string, FinalRead>> {
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

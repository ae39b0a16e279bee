// The nemesis's fault schedule: a seed gives a deterministic list of faults (which kind, when, for how long,
// and a number that picks the targets when the fault starts), in two lanes, node faults and client pauses.
// A replay with the same seed runs the same schedule (not the same history): keep every draw from `rnd`
// in its order, or old seeds stop replaying.
import { mulberry32 } from '../../support/prng';

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

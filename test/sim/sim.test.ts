// The seeded whole-cluster simulation in CI: seeds 1..400 (odd seeds 3 nodes, even seeds 5, cycling
// through every fault profile), each a safety phase of 1000 ticks under faults followed by the liveness
// phase. A failure names its seed; replay it verbosely with `npm run sim:raft -- --seed N`.
// SIM_SEEDS / SIM_TICKS scale the run up (e.g. nightly) without editing the file.
import { describe, expect, it } from 'vitest';
import { PROFILES } from './profiles';
import { rawNodeFactory } from './rawNodeFactory';
import { DEFAULT_SAFETY_TICKS, runSeed, type SimStats } from './simulator';

const SEEDS = Number(process.env.SIM_SEEDS ?? 400);
const TICKS = Number(process.env.SIM_TICKS ?? DEFAULT_SAFETY_TICKS);
const CHUNK = 50;

describe(`simulation: seeds 1..${SEEDS}, 3 and 5 nodes, ${PROFILES.length} fault profiles, ${TICKS} ticks`, () => {
  const totals: Partial<Record<keyof SimStats, number>> & { seeds: number } = { seeds: 0 };
  const profilesSeen = new Set<string>();
  const sizesSeen = new Set<number>();

  for (let from = 1; from <= SEEDS; from += CHUNK) {
    const to = Math.min(SEEDS, from + CHUNK - 1);
    it(`seeds ${from}..${to} keep every invariant and converge`, () => {
      const failures: string[] = [];
      for (let seed = from; seed <= to; seed++) {
        const r = runSeed({ seed, factory: rawNodeFactory, safetyTicks: TICKS });
        totals.seeds++;
        profilesSeen.add(r.profile);
        sizesSeen.add(r.nodes);
        for (const [k, v] of Object.entries(r.stats) as Array<[keyof SimStats, number]>) totals[k] = (totals[k] ?? 0) + v;
        if (!r.ok) {
          const v = r.violation!;
          failures.push(
            `seed ${seed} (${r.nodes} nodes, ${r.profile}): ${v.invariant} at tick ${v.tick}: ${v.detail}\n` +
              `    replay: npm run sim:raft -- --seed ${seed}${TICKS === DEFAULT_SAFETY_TICKS ? '' : ` --ticks ${TICKS}`}`,
          );
        }
      }
      expect(failures, failures.join('\n')).toEqual([]);
    });
  }

  it('exercised every kind of fault and the interesting paths of the core', () => {
    if (totals.seeds < SEEDS) return; // the seed tests were filtered out
    console.log(`simulation totals over ${totals.seeds} seeds: ${JSON.stringify(totals)}`);
    expect([...sizesSeen].sort()).toEqual([3, 5]);
    expect(profilesSeen.size).toBe(PROFILES.length);
    expect(totals.partitions).toBeGreaterThan(0);
    expect(totals.crashesLosingWrites).toBeGreaterThan(0);
    expect(totals.messagesDuplicated).toBeGreaterThan(0);
    expect(totals.snapshotsInstalled).toBeGreaterThan(0);
    expect(totals.compactions).toBeGreaterThan(0);
    expect(totals.readStates).toBeGreaterThan(0);
    expect(totals.acked).toBeGreaterThan(1000);
    expect(totals.leaderTerms).toBeGreaterThan(totals.seeds * 2);
  });
});

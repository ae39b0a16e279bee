// Simulated histories with shared grants (simHistory.ts against the real state machine: readers granted
// together and by handover, their writes refused SHARED_GRANT, lost requests and replies, expiries,
// re-entrant reveals): the extended checker must accept every one of them (no false violation), and reject
// the same history with one refusal turned into an acknowledged write.
import { describe, expect, it } from 'vitest';
import { checkHistory } from './index';
import type { Operation } from './history';
import { simulateHistory } from './simHistory';

const SEEDS = 12;

describe('simulated read-write histories', () => {
  it(`accepts ${SEEDS} seeds of readers and writers on the real state machine`, () => {
    const seen = { shared: 0, sharedUnknown: 0, sharedGrantRefusals: 0, sharedReleases: 0, ops: 0 };
    for (let seed = 1; seed <= SEEDS; seed++) {
      const run = simulateHistory({ seed, sharedProbability: 0.5 });
      const v = checkHistory({ ops: run.ops, faults: [] }, { finalState: run.final, minorityWindows: [], budgetMs: 20_000 });
      if (!v.ok) throw new Error(`seed ${seed}: ${v.report}`);
      const shared = run.ops.filter((o) => o.args.mode === 'shared');
      seen.shared += shared.filter((o) => o.op === 'acquire' && o.outcome === 'ok').length;
      seen.sharedUnknown += shared.filter((o) => o.op === 'acquire' && o.outcome === 'unknown').length;
      seen.sharedReleases += shared.filter((o) => o.op === 'release' && o.outcome === 'ok').length;
      seen.sharedGrantRefusals += run.ops.filter((o) => o.error?.reason === 'SHARED_GRANT').length;
      seen.ops += run.ops.length;
    }
    // The seeds exercised what the model's shared rules are about.
    expect(seen.shared).toBeGreaterThan(200);
    expect(seen.sharedUnknown).toBeGreaterThan(5);
    expect(seen.sharedGrantRefusals).toBeGreaterThan(100);
    expect(seen.sharedReleases).toBeGreaterThan(100);
  });

  it('rejects the same history with a reader write acknowledged instead of refused', () => {
    const run = simulateHistory({ seed: 3, sharedProbability: 0.5 });
    const ops: Operation[] = run.ops.map((o) => ({ ...o }));
    const i = ops.findIndex((o) => o.error?.reason === 'SHARED_GRANT');
    expect(i).toBeGreaterThanOrEqual(0);
    const { error: _e, ...rest } = ops[i]!;
    ops[i] = { ...rest, outcome: 'ok', result: { token: rest.args.token! } };
    const v = checkHistory({ ops, faults: [] }, { minorityWindows: [], budgetMs: 20_000 });
    expect(v.linearizability.outcome).toBe('violation');
    expect(v.invariants.map((x) => x.invariant)).toContain('shared-write');
  });
});

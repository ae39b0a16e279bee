// Simulated histories of issue 33's primitives (simHistory.ts against the real state machine, with lost
// requests and replies, expiries and re-entrant reveals): readers granted together and by handover, their
// writes refused SHARED_GRANT; permits of 2-permit semaphores with writes per slot; AcquireAll of 2 of 3
// locks in random orders. The extended checker must accept every one of them (no false violation), and
// reject the same history with one fact changed.
import { describe, expect, it } from 'vitest';
import { checkHistory } from './index';
import type { Operation } from './history';
import { simulateHistory } from './simHistory';

const SEEDS = 12;

describe("simulated histories of issue 33's primitives", () => {
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

  it(`accepts ${SEEDS} seeds of permits and sets, with plain locks and readers around them`, () => {
    const seen = { permits: 0, permitsUnknown: 0, permitWrites: 0, sets: 0, setsUnknown: 0, setsWaited: 0, ops: 0 };
    for (let seed = 1; seed <= SEEDS; seed++) {
      const run = simulateHistory({ seed, sharedProbability: 0.2, permitProbability: 0.35, setProbability: 0.35 });
      const v = checkHistory({ ops: run.ops, faults: [] }, { finalState: run.final, minorityWindows: [], budgetMs: 20_000 });
      if (!v.ok) throw new Error(`seed ${seed}: ${v.report}`);
      const of = (kind: Operation['op']): Operation[] => run.ops.filter((o) => o.op === kind);
      seen.permits += of('acquirePermit').filter((o) => o.outcome === 'ok').length;
      seen.permitsUnknown += of('acquirePermit').filter((o) => o.outcome === 'unknown').length;
      seen.permitWrites += of('write').filter((o) => o.outcome === 'ok' && o.args.semaphore !== undefined).length;
      seen.sets += of('acquireAll').filter((o) => o.outcome === 'ok').length;
      seen.setsUnknown += of('acquireAll').filter((o) => o.outcome === 'unknown').length;
      seen.setsWaited += of('acquireAll').filter((o) => o.outcome === 'ok' && o.ret! - o.call > 10).length;
      seen.ops += run.ops.length;
    }
    expect(seen.permits).toBeGreaterThan(200);
    expect(seen.permitsUnknown).toBeGreaterThan(5);
    expect(seen.permitWrites).toBeGreaterThan(150);
    expect(seen.sets).toBeGreaterThan(200);
    expect(seen.setsUnknown).toBeGreaterThan(5);
    expect(seen.setsWaited).toBeGreaterThan(20);
  });

  it('rejects a permit history with one slot handed to a second holder under a lower token', () => {
    const run = simulateHistory({ seed: 5, permitProbability: 0.5 });
    const ops: Operation[] = run.ops.map((o) => ({ ...o }));
    const grants = ops.filter((o) => o.op === 'acquirePermit' && o.outcome === 'ok');
    // The last grant of a slot answers the token of the first grant of that slot: tokens must go up per slot.
    const last = grants[grants.length - 1]!;
    const first = grants.find((g) => g.result!.slot === last.result!.slot && g.args.semaphore === last.args.semaphore && g.args.session !== last.args.session)!;
    expect(first).toBeDefined();
    const i = ops.indexOf(last);
    ops[i] = { ...last, result: { ...last.result, token: first.result!.token! } };
    const v = checkHistory({ ops, faults: [] }, { minorityWindows: [], budgetMs: 20_000 });
    expect(v.ok).toBe(false);
  });

  it('rejects a set history with one set answering two tokens', () => {
    const run = simulateHistory({ seed: 5, setProbability: 0.5 });
    const ops: Operation[] = run.ops.map((o) => ({ ...o }));
    const i = ops.findIndex((o) => o.op === 'acquireAll' && o.outcome === 'ok');
    const t = ops[i]!.result!.tokens!;
    ops[i] = { ...ops[i]!, result: { ...ops[i]!.result, tokens: [t[0]!, t[1]! + 1n] } };
    const v = checkHistory({ ops, faults: [] }, { minorityWindows: [], budgetMs: 20_000 });
    expect(v.invariants.map((x) => x.invariant)).toContain('set-token');
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

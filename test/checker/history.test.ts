import { describe, expect, it } from 'vitest';
import { HistoryBuilder } from './builder';
import {
  finalStateFromJSON,
  finalStateToJSON,
  formatOp,
  historyFromJSON,
  historyToJSON,
  keysOf,
  minorityWindows,
  validateHistory,
  type History,
} from './history';
import { checkHistory } from './index';
import { checkLinearizability } from './linearizability';
import { simulateHistory } from './simHistory';

describe('history format', () => {
  it('round-trips through JSON with bigints as decimal strings', () => {
    const b = new HistoryBuilder();
    b.acquire('a', 'L', [0.25, 1.5], 18446744073709551615n);
    b.write('a', 'L', [2, 3], 18446744073709551615n, { 'L/k': 'v', 'L/j': null }, 'a', 12n);
    b.writeRefused('b', 'L', [4, 5], 3n, { 'L/k': 'w' }, 'STALE_TOKEN').error!.watermark = 9n;
    b.writeUnknown('a', 'L', 6, 7n, { 'L/k': 'x' });
    b.get('c', 'L/k', [7, 8], 'v', 18446744073709551615n, 'L');
    const h: History = {
      ops: b.ops,
      faults: [{ at: 3, end: 9, kind: 'partition', targets: ['n1'], minority: ['127.0.0.1:7001'], note: 'n1 alone' }],
      meta: { seed: 7 },
    };
    const text = historyToJSON(h, 2);
    expect(text).toContain('"18446744073709551615"');
    const back = historyFromJSON(text);
    expect(back).toEqual(h);
    expect(back.ops[3]!.ret).toBeUndefined();
    expect(typeof back.ops[0]!.result!.token).toBe('bigint');
    const state = new Map([['L/k', { found: true, value: 'v', token: 18446744073709551615n }]]);
    expect(finalStateFromJSON(finalStateToJSON(state))).toEqual(state);
  });

  it('round-trips a simulated history and checks the same', () => {
    const run = simulateHistory({ seed: 3 });
    const back = historyFromJSON(historyToJSON({ ops: run.ops, faults: [] }));
    expect(back.ops).toEqual(run.ops);
    expect(checkLinearizability(back.ops).outcome).toBe('ok');
  });

  it('validates', () => {
    const b = new HistoryBuilder();
    b.acquire('a', 'L', [5, 4], 1n);
    b.write('a', 'L', [1, 2], 1n, {});
    const bad = { ...b.ops[0]!, id: 0 };
    delete bad.ret;
    b.ops.push(bad);
    const problems = validateHistory(b.ops);
    expect(problems.join('\n')).toMatch(/returns \(4\) before its call/);
    expect(problems.join('\n')).toMatch(/no keys written/);
    expect(problems.join('\n')).toMatch(/duplicate id/);
    expect(problems.join('\n')).toMatch(/needs a return time/);
    expect(() => checkLinearizability(b.ops)).toThrow(/malformed history/);
  });

  it("round-trips, validates and formats issue 33's operations (modes, permits, sets)", () => {
    const b = new HistoryBuilder();
    b.acquireShared('a', 'L', [0, 1], 5n);
    b.permit('a', 'pool', 3, [2, 3], 2, 7n);
    b.writePermit('a', 'pool', 2, [4, 5], 7n, { 'pool/2/k': 'v' });
    b.acquireAll('a', ['A', 'B'], [6, 7], 9n);
    const back = historyFromJSON(historyToJSON({ ops: b.ops, faults: [] }));
    expect(back.ops).toEqual(b.ops);
    expect(typeof back.ops[3]!.result!.tokens![1]).toBe('bigint');
    expect(validateHistory(b.ops)).toEqual([]);
    expect(formatOp(b.ops[1]!)).toBe('#1 [2.0, 3.0] a acquirePermit sem=pool/3 s=a wait=1000 -> ok token=7 slot=2');
    expect(formatOp(b.ops[3]!)).toBe('#3 [6.0, 7.0] a acquireAll [A,B] s=a wait=1000 -> ok token=9 tokens=9,9');
    expect([...keysOf(b.ops)]).toEqual([['pool/2/k', 'sem:pool#2']]);
    const broken = [
      { ...b.ops[1]!, result: { token: 7n } },
      { ...b.ops[2]!, args: { ...b.ops[2]!.args, slot: undefined } },
      { ...b.ops[3]!, result: { token: 9n, tokens: [9n] } },
    ];
    const problems = validateHistory(broken).join('\n');
    expect(problems).toMatch(/ok permit without slot/);
    expect(problems).toMatch(/no slot/);
    expect(problems).toMatch(/without a token per lock/);
  });

  it('formats operations and derives keys and minority windows', () => {
    const b = new HistoryBuilder();
    const w = b.write('p1', 'L', [1, 2.5], 7n, { 'L/k': 'v1', 'L/j': null });
    expect(formatOp(w)).toBe('#0 [1.0, 2.5] p1 write L s=p1 token=7 {L/k=v1, -L/j} -> ok token=7');
    const u = b.acquireUnknown('p2', 'L', 3, 'p2', 9);
    expect(formatOp(u)).toBe('#1 [3.0, ∞] p2 acquire L s=p2 wait=1000 -> unknown UNAVAILABLE');
    b.get('p3', 'L/x', [4, 5], null, 0n);
    expect([...keysOf(b.ops)]).toEqual([
      ['L/k', 'L'],
      ['L/j', 'L'],
      ['L/x', undefined],
    ]);
    expect(minorityWindows([{ at: 1, kind: 'partition', targets: [], minority: ['e1'] }, { at: 2, end: 3, kind: 'pause', targets: ['n2'] }], 50)).toEqual([
      { start: 1, end: 50, endpoints: ['e1'] },
    ]);
  });
});

describe('checkHistory', () => {
  it('runs both checkers and reports what failed', () => {
    const run = simulateHistory({ seed: 11 });
    const good = checkHistory({ ops: run.ops, faults: [] }, { finalState: run.final });
    expect(good.ok).toBe(true);
    expect(good.report).toBe('');

    const b = new HistoryBuilder();
    b.acquire('a', 'L', [0, 1], 5n);
    b.acquire('b', 'L', [2, 3], 9n);
    b.write('a', 'L', [4, 5], 5n, { 'L/k': 'a1' }).endpoint = 'n1:1';
    const bad = checkHistory({ ops: b.ops, faults: [{ at: 3.5, end: 6, kind: 'partition', targets: ['n1'], minority: ['n1:1'] }] });
    expect(bad.ok).toBe(false);
    expect(bad.linearizability.outcome).toBe('violation');
    expect(bad.invariants.map((v) => v.invariant).sort()).toEqual(['minority-answer', 'stale-write']);
    expect(bad.report).toContain('NOT LINEARIZABLE');
    expect(bad.report).toContain('#2 [4.0, 5.0] a write L');
  });
});

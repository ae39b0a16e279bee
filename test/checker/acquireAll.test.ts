// The checker's rules for AcquireAll (docs/architecture.md#atomic-multi-lock): projected onto each of its
// locks (projection.ts), with the cross-lock invariants set-token and grant-order for what the projection
// loses. For each rule, a history it accepts and one it rejects that it would accept without it.
import { describe, expect, it } from 'vitest';
import { HistoryBuilder } from './builder';
import { brokenInvariants, expectLinearizable, expectNotLinearizable } from './verdicts';

describe('AcquireAll in the linearizability model', () => {
  it('the set is a grant of each lock: it waits for the holder of one of them', () => {
    const ok = new HistoryBuilder();
    ok.acquire('b', 'B', [0, 1], 5n);
    ok.acquireAll('a', ['A', 'B'], [2, 10], 9n);
    ok.write('b', 'B', [3, 4], 5n, { 'B/k': 'b1' });
    ok.release('b', 'B', [5, 6], 5n);
    ok.write('a', 'A', [11, 12], 9n, { 'A/k': 'a1' });
    ok.write('a', 'B', [11, 12], 9n, { 'B/k': 'a1' });
    expectLinearizable(ok.ops);
    const bad = new HistoryBuilder();
    bad.acquire('b', 'B', [0, 1], 5n);
    bad.acquireAll('a', ['A', 'B'], [2, 3], 9n);
    bad.write('b', 'B', [4, 5], 5n, { 'B/k': 'b1' }); // b still writing under 5 after the set was granted B
    expectNotLinearizable(bad.ops, 'B');
  });

  it('each lock of a set is released on its own', () => {
    const bad = new HistoryBuilder();
    bad.acquireAll('a', ['A', 'B'], [0, 1], 9n);
    bad.release('a', 'A', [2, 3], 9n);
    bad.write('a', 'A', [4, 5], 9n, { 'A/k': 'a1' });
    bad.write('a', 'B', [4, 5], 9n, { 'B/k': 'a1' });
    expectNotLinearizable(bad.ops, 'A');
  });

  it('a set of unknown outcome may have been granted: each lock admits STALE_TOKEN', () => {
    const ok = new HistoryBuilder();
    ok.acquire('b', 'B', [0, 1], 5n);
    ok.acquireAllUnknown('a', ['A', 'B'], 2);
    ok.writeRefused('b', 'B', [3, 4], 5n, { 'B/k': 'b1' }, 'STALE_TOKEN');
    expectLinearizable(ok.ops);
  });

  it('a try-lock refused on a free lock that a set names is fine (a waiting set keeps it free); elsewhere not', () => {
    const ok = new HistoryBuilder();
    ok.acquireAllHeld('a', ['A', 'B'], [0, 1]);
    ok.acquireHeld('c', 'A', [2, 3]);
    expectLinearizable(ok.ops);
    const bad = new HistoryBuilder();
    bad.acquireAllHeld('a', ['B'], [0, 1]);
    bad.acquireHeld('c', 'A', [2, 3]);
    expectNotLinearizable(bad.ops, 'A');
  });
});

describe('AcquireAll in the invariants', () => {
  it('set-token: one grant, one token for every lock of the set', () => {
    const ok = new HistoryBuilder();
    ok.acquireAll('a', ['A', 'B', 'C'], [0, 1], 9n);
    expect(brokenInvariants(ok.ops)).toEqual([]);
    const bad = new HistoryBuilder();
    bad.acquireAll('a', ['A', 'B', 'C'], [0, 1], [9n, 9n, 11n]);
    expect(brokenInvariants(bad.ops)).toEqual(['set-token']);
  });

  it('grant-order: a set called after another grant returned has a larger token (its entry came later)', () => {
    const ok = new HistoryBuilder();
    ok.acquire('b', 'C', [0, 1], 12n);
    ok.acquireAll('a', ['A', 'B'], [2, 3], 15n);
    expect(brokenInvariants(ok.ops)).toEqual([]);
    const bad = new HistoryBuilder();
    bad.acquire('b', 'C', [0, 1], 12n);
    bad.acquireAll('a', ['A', 'B'], [2, 3], 9n);
    expectLinearizable(bad.ops); // each lock alone is fine: only the order across locks shows it
    expect(brokenInvariants(bad.ops)).toEqual(['grant-order']);
  });

  it('grant-order: a partial set (B granted at the set entry, A long before) shows as a token out of order', () => {
    // b's permit returned token 12 before the set was called; the set's answer names an entry before it.
    const bad = new HistoryBuilder();
    bad.permit('b', 'pool', 2, [0, 1], 0, 12n);
    bad.acquireAll('a', ['A', 'B'], [2, 30], 12n);
    expect(brokenInvariants(bad.ops)).toEqual(['grant-order']);
  });

  it('grant-order spares re-entrant answers: a session asking again may get its older token', () => {
    const b = new HistoryBuilder();
    b.acquireAllUnknown('a', ['A', 'B'], 0);
    b.acquire('c', 'C', [1, 2], 12n);
    b.acquireAll('a', ['A', 'B'], [3, 4], 9n); // the unknown attempt was granted at 9, before c's grant
    expect(brokenInvariants(b.ops)).toEqual([]);
    expectLinearizable(b.ops);
  });
});

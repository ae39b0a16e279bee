import { describe, expect, it } from 'vitest';
import { HistoryBuilder } from './builder';
import type { FinalRead, Operation } from './history';
import { checkInvariants, type InvariantName, type InvariantOptions } from './invariants';
import { simulateHistory } from './simHistory';

const L = 'L';
const K = 'L/k';

function names(ops: Operation[], opts?: InvariantOptions): InvariantName[] {
  return [...new Set(checkInvariants(ops, opts).map((v) => v.invariant))].sort();
}

const final = (entries: Array<[string, string | null, bigint]>): Map<string, FinalRead> =>
  new Map(entries.map(([key, value, token]) => [key, { found: value !== null, value, token }]));

describe('invariants', () => {
  it('passes a valid history with concurrency, unknown outcomes and an expiry handover', () => {
    const b = new HistoryBuilder();
    b.acquire('a', L, [0, 1], 5n);
    b.acquire('b', L, [0.5, 20], 9n); // blocked, granted on a's expiry
    b.write('a', L, [2, 3], 5n, { [K]: 'a1' }, 'a', 6n);
    b.acquire('a', L, [4, 5], 5n); // re-entrant
    b.writeUnknown('a', L, 6, 5n, { [K]: 'a2' });
    b.get('c', K, [7, 8], 'a1', 5n, L);
    b.write('b', L, [21, 22], 9n, { [K]: 'b1' }, 'b', 23n);
    b.writeRefused('a', L, [23, 24], 5n, { [K]: 'a3' }, 'STALE_TOKEN');
    b.get('c', K, [25, 26], 'b1', 9n, L);
    b.get('c', 'L/never', [25, 26], null, 0n, L);
    expect(checkInvariants(b.ops, { finalState: final([[K, 'b1', 9n], ['L/never', null, 0n]]) })).toEqual([]);
    // The unknown write may have landed last (it was refused in the real run, but the client cannot know).
    expect(checkInvariants(b.ops.slice(0, 6), { finalState: final([[K, 'a2', 5n]]) })).toEqual([]);
  });

  it('passes simulated histories with their final state', () => {
    for (let seed = 1; seed <= 30; seed++) {
      const run = simulateHistory({ seed });
      expect(checkInvariants(run.ops, { finalState: run.final }), `seed ${seed}`).toEqual([]);
    }
  });

  it('token-order: a grant returned before another was called has the smaller token', () => {
    const b = new HistoryBuilder();
    b.acquire('a', L, [0, 1], 9n);
    b.release('a', L, [2, 3], 9n);
    b.acquire('b', L, [4, 5], 7n);
    expect(names(b.ops)).toContain('token-order');
    // Concurrent grants may come back in either order.
    const c = new HistoryBuilder();
    c.acquire('a', L, [0, 10], 9n);
    c.acquire('b', L, [1, 5], 7n);
    expect(names(c.ops)).not.toContain('token-order');
  });

  it('token-unique: one token, one session (per lock; across locks a handover entry may repeat it)', () => {
    const b = new HistoryBuilder();
    b.acquire('a', L, [0, 1], 5n);
    b.acquire('b', L, [0, 1], 5n);
    expect(names(b.ops)).toContain('token-unique');
    const c = new HistoryBuilder();
    c.acquire('a', 'L1', [0, 1], 5n);
    c.acquire('a', 'L2', [0, 1], 5n);
    expect(names(c.ops)).toEqual([]);
  });

  it('stale-write: a write accepted under an older token after a newer grant returned', () => {
    const b = new HistoryBuilder();
    b.acquire('a', L, [0, 1], 5n);
    b.acquire('b', L, [2, 3], 9n);
    b.write('a', L, [4, 5], 5n, { [K]: 'a1' });
    expect(names(b.ops)).toContain('stale-write');
  });

  it('write-token: two sessions writing under one token, or a write under a token granted to another', () => {
    const b = new HistoryBuilder();
    b.acquire('a', L, [0, 1], 5n);
    b.write('a', L, [2, 3], 5n, { [K]: 'a1' });
    b.write('b', L, [4, 5], 5n, { [K]: 'b1' });
    expect(names(b.ops)).toContain('write-token');
    const c = new HistoryBuilder();
    c.write('a', L, [2, 3], 5n, { [K]: 'a1' });
    c.write('b', L, [2, 3], 5n, { 'L/j': 'b1' });
    expect(names(c.ops)).toContain('write-token');
  });

  it('write-order and write-index: watermarks never go back; a write applies after its grant', () => {
    const b = new HistoryBuilder();
    b.write('b', L, [0, 1], 9n, { [K]: 'b1' });
    b.write('a', L, [2, 3], 5n, { [K]: 'a1' });
    expect(names(b.ops)).toContain('write-order');
    const c = new HistoryBuilder();
    c.acquire('a', L, [0, 1], 5n);
    c.write('a', L, [2, 3], 5n, { [K]: 'a1' }, 'a', 4n);
    expect(names(c.ops)).toEqual(['write-index']);
  });

  it('stale-read and phantom-read', () => {
    const b = new HistoryBuilder();
    b.acquire('a', L, [0, 1], 5n);
    b.write('a', L, [2, 3], 5n, { [K]: 'a1' });
    b.get('c', K, [4, 5], null, 0n, L); // the acknowledged write is not visible
    expect(names(b.ops)).toContain('stale-read');
    const c = new HistoryBuilder();
    c.acquire('a', L, [0, 1], 5n);
    c.writeRefused('a', L, [2, 3], 5n, { [K]: 'a1' }, 'LOCK_NOT_HELD');
    c.get('c', K, [4, 5], 'a1', 5n, L); // a refused write's value
    c.get('c', K, [6, 7], 'ghost', 5n, L); // a value nobody wrote
    const v = checkInvariants(c.ops).filter((x) => x.invariant === 'phantom-read');
    expect(v).toHaveLength(2);
    expect(v[0]!.message).toContain('refused write op 1');
    // A read may see a write of unknown outcome, but not one called after the read returned.
    const d = new HistoryBuilder();
    d.acquire('a', L, [0, 1], 5n);
    d.get('c', K, [2, 3], 'a1', 5n, L);
    d.writeUnknown('a', L, 4, 5n, { [K]: 'a1' });
    expect(names(d.ops)).toEqual(['phantom-read']);
  });

  it('lost-write: acknowledged writes are in the final state unless overwritten', () => {
    const b = new HistoryBuilder();
    b.acquire('a', L, [0, 1], 5n);
    b.write('a', L, [2, 3], 5n, { [K]: 'a1' });
    b.write('a', L, [4, 5], 5n, { [K]: 'a2', 'L/j': 'j1' });
    b.release('a', L, [6, 7], 5n);
    expect(names(b.ops, { finalState: final([[K, 'a2', 5n], ['L/j', 'j1', 5n]]) })).toEqual([]);
    expect(names(b.ops, { finalState: final([[K, 'a1', 5n]]) })).toEqual(['lost-write']); // overwritten by a1's successor
    expect(names(b.ops, { finalState: final([['L/j', null, 0n]]) })).toEqual(['lost-write']); // vanished
    expect(names(b.ops, { finalState: final([[K, 'zz', 5n]]) })).toEqual(['lost-write']); // never written
    expect(names(b.ops, { finalState: final([[K, 'a2', 3n]]) })).toEqual(['lost-write']); // watermark went back
    // A later grant's write of unknown outcome may have overwritten it.
    b.acquire('c', L, [8, 9], 12n);
    b.writeUnknown('c', L, 10, 12n, { [K]: 'c1' });
    expect(names(b.ops, { finalState: final([[K, 'c1', 12n]]) })).toEqual([]);
    b.writeUnknown('c', L, 11, 12n, { 'L/j': null });
    expect(names(b.ops, { finalState: final([['L/j', null, 12n]]) })).toEqual([]);
  });

  it('minority-answer: nothing completes ok from a minority endpoint', () => {
    const b = new HistoryBuilder();
    b.acquire('a', L, [10, 11], 5n).endpoint = 'n1:7001';
    b.get('c', K, [12, 13], null, 0n, L).endpoint = 'n2:7002';
    b.acquire('d', 'M', [25, 26], 7n).endpoint = 'n1:7001';
    const windows = [{ start: 5, end: 20, endpoints: ['n1:7001'] }];
    const v = checkInvariants(b.ops, { minorityWindows: windows });
    expect(v.map((x) => [x.invariant, x.ops[0]!.id])).toEqual([['minority-answer', 0]]);
    expect(checkInvariants(b.ops)).toEqual([]); // skipped without windows
  });

  it('caps the number of reports per invariant', () => {
    const b = new HistoryBuilder();
    for (let i = 0; i < 50; i++) b.get('c', `k${i}`, [i, i + 0.5], 'ghost', 1n);
    expect(checkInvariants(b.ops, { maxPerInvariant: 5 })).toHaveLength(5);
  });
});

import { describe, expect, it } from 'vitest';
import { HistoryBuilder } from './builder';
import type { Operation } from './history';
import { checkLinearizability, partitionByLock, type LinearizabilityResult } from './linearizability';
import { simulateHistory } from './simHistory';

const L = 'L';
const K = 'L/k';

function verdict(ops: Operation[], budgetMs = 5_000): LinearizabilityResult {
  return checkLinearizability(ops, { budgetMs });
}

function expectOk(ops: Operation[]): void {
  const r = verdict(ops);
  if (r.outcome === 'violation') throw new Error(r.explanation);
  expect(r.outcome).toBe('ok');
}

function expectViolation(ops: Operation[]): Extract<LinearizabilityResult, { outcome: 'violation' }> {
  const r = verdict(ops);
  expect(r.outcome).toBe('violation');
  if (r.outcome !== 'violation') throw new Error('unreachable');
  // The reported sub-history is itself a violation.
  expect(checkLinearizability(r.ops, { budgetMs: 5_000, noShrink: true }).outcome).toBe('violation');
  return r;
}

describe('linearizability: valid histories', () => {
  it('accepts an empty history and one of only opens and keepalives', () => {
    expectOk([]);
    const b = new HistoryBuilder();
    b.open('a', [0, 1]);
    expectOk(b.ops);
  });

  it('accepts sequential cycles with tokens that jump (log indexes are not consecutive)', () => {
    const b = new HistoryBuilder();
    b.acquire('a', L, [0, 1], 5n);
    b.write('a', L, [2, 3], 5n, { [K]: 'a1' });
    b.get('a', K, [4, 5], 'a1', 5n, L);
    b.release('a', L, [6, 7], 5n);
    b.acquire('b', L, [8, 9], 17n);
    b.write('b', L, [10, 11], 17n, { [K]: 'b1', 'L/k2': 'b2' });
    b.write('b', L, [12, 13], 17n, { 'L/k2': null });
    b.release('b', L, [14, 15], 17n);
    b.get('c', K, [16, 17], 'b1', 17n, L);
    b.get('c', 'L/k2', [18, 19], null, 17n, L);
    b.acquire('c', L, [20, 21], 40n);
    b.acquire('c', L, [22, 23], 40n); // re-entrant: the same token
    expectOk(b.ops);
  });

  it('accepts concurrency: a blocked acquire overlapping the holder, reads overlapping writes', () => {
    const b = new HistoryBuilder();
    b.acquire('a', L, [0, 2], 5n);
    b.acquire('b', L, [1, 30], 12n); // waits in the queue, granted when a releases
    b.acquireHeld('c', L, [3, 4]); // try-lock while a holds it
    b.write('a', L, [5, 10], 5n, { [K]: 'a1' });
    b.get('d', K, [6, 8], null, 0n, L); // before a's write applied
    b.get('e', K, [7, 11], 'a1', 5n, L); // after it
    b.release('a', L, [12, 31], 5n); // b is granted when this applies
    b.write('b', L, [32, 33], 12n, { [K]: 'b1' });
    b.get('d', K, [32, 34], 'b1', 12n, L);
    expectOk(b.ops);
  });

  it('accepts unknown operations that did happen', () => {
    const b = new HistoryBuilder();
    b.acquireUnknown('a', L, 0, 'a', 10); // granted 7, reply lost (the client gave up at 10)
    b.acquire('a', L, [11, 12], 7n); // re-entrant: reveals the token
    b.writeUnknown('a', L, 13, 7n, { [K]: 'a1' });
    b.get('c', K, [20, 21], 'a1', 7n, L);
    b.releaseUnknown('a', L, 22, 7n);
    b.acquire('b', L, [30, 31], 9n);
    expectOk(b.ops);
  });

  it('accepts unknown operations that did not happen', () => {
    const b = new HistoryBuilder();
    b.acquire('a', L, [0, 1], 5n);
    b.writeUnknown('a', L, 2, 5n, { [K]: 'lost' });
    b.get('c', K, [10, 11], null, 0n, L);
    b.acquireUnknown('b', L, 12);
    b.releaseUnknown('a', L, 13, 5n);
    b.acquire('c', L, [20, 21], 30n); // a's release (or expiry) freed it; b's acquire never happened
    b.write('c', L, [22, 23], 30n, { [K]: 'c1' });
    b.get('c', K, [24, 25], 'c1', 30n, L);
    expectOk(b.ops);
  });

  it('accepts an expiry handover: the paused holder is refused, the new holder keeps its value', () => {
    const b = new HistoryBuilder();
    b.acquire('a', L, [0, 1], 5n);
    b.write('a', L, [2, 3], 5n, { [K]: 'a1' });
    // a freezes; its session expires without any operation; b is granted.
    b.acquire('b', L, [10, 11], 9n);
    b.write('b', L, [12, 13], 9n, { [K]: 'b1' });
    b.writeRefused('a', L, [14, 15], 5n, { [K]: 'a2' }, 'STALE_TOKEN');
    b.releaseRefused('a', L, [16, 17], 5n, 'UNKNOWN_SESSION');
    b.get('c', K, [18, 19], 'b1', 9n, L);
    expectOk(b.ops);
  });

  it('accepts an expiry without a new grant: LOCK_NOT_HELD, then a refused stale write after the next grant', () => {
    const b = new HistoryBuilder();
    b.acquire('a', L, [0, 1], 5n);
    b.writeRefused('a', L, [10, 11], 5n, { [K]: 'a1' }, 'LOCK_NOT_HELD');
    b.acquire('b', L, [12, 13], 8n);
    b.writeRefused('a', L, [14, 15], 5n, { [K]: 'a2' }, 'STALE_TOKEN');
    b.get('c', K, [16, 17], null, 0n, L);
    expectOk(b.ops);
  });

  it('accepts a close that frees the lock', () => {
    const b = new HistoryBuilder();
    b.acquire('a', L, [0, 1], 5n);
    b.close('a', [2, 3]);
    b.acquire('b', L, [4, 5], 6n);
    expectOk(b.ops);
  });

  it('checks locks separately', () => {
    const b = new HistoryBuilder();
    for (let i = 0; i < 50; i++) {
      b.acquire(`p${i}`, `lock-${i}`, [i, i + 100], BigInt(1000 - i)); // all concurrent, tokens in any order across locks
    }
    const { partitions } = partitionByLock(b.ops);
    expect(partitions.size).toBe(50);
    expectOk(b.ops);
  });

  it('accepts simulated histories (real state machine, lost requests and replies, expiries)', () => {
    for (let seed = 1; seed <= 25; seed++) {
      const run = simulateHistory({ seed });
      const r = verdict(run.ops, 20_000);
      if (r.outcome === 'violation') throw new Error(`seed ${seed}: ${r.explanation}`);
      expect(r.outcome, `seed ${seed}`).toBe('ok');
    }
  });
});

describe('linearizability: violations', () => {
  it('rejects a stale write accepted after a newer grant', () => {
    const b = new HistoryBuilder();
    b.acquire('a', L, [0, 1], 5n);
    b.acquire('b', L, [10, 11], 9n); // a expired
    b.write('a', L, [12, 13], 5n, { [K]: 'a1' }); // must have been refused
    const r = expectViolation(b.ops);
    expect(r.partition).toBe(L);
    expect(r.ops.map((o) => o.id).sort()).toEqual([0, 1, 2]);
  });

  it('rejects a token that goes back', () => {
    const b = new HistoryBuilder();
    b.acquire('a', L, [0, 1], 9n);
    b.release('a', L, [2, 3], 9n);
    b.acquire('b', L, [4, 5], 5n);
    expectViolation(b.ops);
  });

  it('rejects two holders at once with accepted writes', () => {
    const b = new HistoryBuilder();
    b.acquire('a', L, [0, 1], 5n);
    b.acquire('b', L, [2, 3], 9n);
    b.write('b', L, [4, 5], 9n, { [K]: 'b1' });
    b.write('a', L, [6, 7], 5n, { [K]: 'a1' });
    expectViolation(b.ops);
  });

  it('rejects the same token granted to two sessions', () => {
    const b = new HistoryBuilder();
    b.acquire('a', L, [0, 1], 5n);
    b.acquire('b', L, [2, 3], 5n);
    expectViolation(b.ops);
  });

  it('rejects a lost acknowledged write', () => {
    const b = new HistoryBuilder();
    b.acquire('a', L, [0, 1], 5n);
    b.write('a', L, [2, 3], 5n, { [K]: 'a1' });
    b.write('a', L, [4, 5], 5n, { [K]: 'a2' });
    b.release('a', L, [6, 7], 5n);
    b.get('c', K, [8, 9], 'a1', 5n, L);
    expectViolation(b.ops);
  });

  it('rejects a read of a value never written', () => {
    const b = new HistoryBuilder();
    b.acquire('a', L, [0, 1], 5n);
    b.write('a', L, [2, 3], 5n, { [K]: 'a1' });
    b.get('c', K, [4, 5], 'ghost', 5n, L);
    expectViolation(b.ops);
    // ...also for a key no write ever touched (its own partition).
    const c = new HistoryBuilder();
    c.get('c', 'nowhere', [0, 1], 'ghost', 3n);
    expect(verdict(c.ops).outcome).toBe('violation');
  });

  it('rejects a read of a refused write', () => {
    const b = new HistoryBuilder();
    b.acquire('a', L, [0, 1], 5n);
    b.acquire('b', L, [2, 3], 9n);
    b.writeRefused('a', L, [4, 5], 5n, { [K]: 'a1' }, 'STALE_TOKEN');
    b.get('c', K, [6, 7], 'a1', 5n, L);
    expectViolation(b.ops);
  });

  it('rejects a STALE_TOKEN refusal while no newer grant exists', () => {
    const b = new HistoryBuilder();
    b.acquire('a', L, [0, 1], 5n);
    b.writeRefused('a', L, [2, 3], 5n, { [K]: 'a1' }, 'STALE_TOKEN');
    expectViolation(b.ops);
  });

  it('rejects a try-lock refused while the lock is free', () => {
    const b = new HistoryBuilder();
    b.acquire('a', L, [0, 1], 5n);
    b.release('a', L, [2, 3], 5n);
    b.acquireHeld('b', L, [4, 5]);
    expectViolation(b.ops);
  });

  it('rejects an acknowledged write after the holder released', () => {
    const b = new HistoryBuilder();
    b.acquire('a', L, [0, 1], 5n);
    b.release('a', L, [2, 3], 5n);
    b.write('a', L, [4, 5], 5n, { [K]: 'a1' });
    expectViolation(b.ops);
  });

  it('rejects a read that goes back in time', () => {
    const b = new HistoryBuilder();
    b.acquire('a', L, [0, 1], 5n);
    b.write('a', L, [2, 3], 5n, { [K]: 'a1' });
    b.write('a', L, [4, 5], 5n, { [K]: 'a2' });
    b.get('c', K, [6, 7], 'a2', 5n, L);
    b.get('d', K, [8, 9], 'a1', 5n, L);
    expectViolation(b.ops);
  });

  it('shrinks a violation buried in a long history to the operations that cause it', () => {
    const run = simulateHistory({ seed: 7, clients: 6, cycles: 60 });
    const ops = run.ops.map((o) => ({ ...o }));
    // Turn one refused stale write, called after a newer grant of its lock had returned, into an accepted one.
    const victim = ops.find(
      (o) =>
        o.op === 'write' &&
        o.outcome === 'fail' &&
        o.error?.reason === 'STALE_TOKEN' &&
        ops.some((g) => g.op === 'acquire' && g.outcome === 'ok' && g.args.lock === o.args.lock && g.result!.token! > o.args.token! && g.ret! < o.call),
    );
    expect(victim, 'the simulation produced a stale write').toBeDefined();
    victim!.outcome = 'ok';
    delete victim!.error;
    victim!.result = { token: victim!.args.token! };
    const r = expectViolation(ops);
    expect(r.partition).toBe(victim!.args.lock);
    expect(r.ops.some((o) => o.id === victim!.id)).toBe(true);
    expect(r.ops.length).toBeLessThanOrEqual(6);
    expect(r.partitionSize).toBeGreaterThan(r.ops.length);
    expect(r.explanation).toContain(`#${victim!.id}`);
  });

  it('catches mutations of simulated histories: a token that goes back, a lost acknowledged write', () => {
    let caught = 0;
    for (let seed = 100; seed < 110; seed++) {
      const run = simulateHistory({ seed, clients: 5, cycles: 30 });
      const ops = run.ops.map((o) => ({ ...o, result: o.result ? { ...o.result } : undefined }));
      // A grant on a hot lock returns a token below one that had already been returned before it was called.
      const grants = ops.filter((o) => o.op === 'acquire' && o.outcome === 'ok' && o.args.lock === 'hot-0');
      const later = grants.find((g) => grants.some((f) => f.ret! < g.call && f.result!.token! < g.result!.token! && f.args.session !== g.args.session));
      if (!later) continue;
      const earlier = grants.find((f) => f.ret! < later.call && f.result!.token! < later.result!.token! && f.args.session !== later.args.session)!;
      later.result!.token = earlier.result!.token! - 1n;
      const r = verdict(ops, 20_000);
      expect(r.outcome, `seed ${seed}`).toBe('violation');
      caught++;
    }
    expect(caught).toBeGreaterThan(5);
  });
});

describe('linearizability: budget and scale', () => {
  it('answers unknown, never ok, when the budget runs out', () => {
    // Twenty concurrent writes of unknown outcome under one grant, then a read of a value none of them wrote:
    // before saying "violation" the search has to try every subset and order of the writes.
    const b = new HistoryBuilder();
    b.acquire('a', L, [0, 1], 5n);
    for (let i = 0; i < 20; i++) b.writeUnknown('a', L, 2 + i / 100, 5n, { [K]: `v${i}`, [`L/x${i % 3}`]: `w${i}` });
    b.get('z', K, [200, 201], 'never', 5n, L);
    const r = checkLinearizability(b.ops, { budgetMs: 50 });
    expect(r.outcome).toBe('unknown');
    if (r.outcome === 'unknown') expect(r.unfinished).toEqual([L]);
    // Other partitions are still checked, and a violation elsewhere is still reported.
    b.acquire('x', 'M', [0, 1], 9n);
    b.release('x', 'M', [2, 3], 9n);
    b.acquire('y', 'M', [4, 5], 3n);
    expect(checkLinearizability(b.ops, { budgetMs: 50 }).outcome).toBe('violation');
  });

  it('checks thousands of operations over many locks within a generous bound', () => {
    const run = simulateHistory({ seed: 42, clients: 32, cycles: 120, hotLocks: 4, coldLocks: 400 });
    expect(run.ops.length).toBeGreaterThan(8_000);
    const t0 = performance.now();
    const r = checkLinearizability(run.ops, { budgetMs: 60_000 });
    const ms = performance.now() - t0;
    if (r.outcome === 'violation') throw new Error(r.explanation);
    expect(r.outcome).toBe('ok');
    expect(ms).toBeLessThan(60_000);
    console.log(
      `[checker] ${run.ops.length} ops (${run.stats.unknown} unknown, ${run.stats.expiries} expiries), ${r.stats.partitions} partitions: ${ms.toFixed(0)} ms; slowest: ` +
        r.stats.slowest.map((p) => `${p.partition} ${p.ops} ops ${p.ms.toFixed(0)} ms ${p.nodes} nodes`).join(', '),
    );
  });
});

// The checker's rules for read-write locks (docs/architecture.md#read-write-locks): for each rule, a history
// it accepts and one it rejects that it would accept without the rule.
import { describe, expect, it } from 'vitest';
import { HistoryBuilder } from './builder';
import { brokenInvariants, expectLinearizable, expectNotLinearizable } from './verdicts';

const L = 'L';
const K = 'L/k';

describe('read-write locks in the linearizability model', () => {
  it('shared holders hold together: two readers overlap, each releases its own grant', () => {
    const b = new HistoryBuilder();
    b.acquireShared('a', L, [0, 1], 5n);
    b.acquireShared('b', L, [2, 3], 7n);
    b.releaseShared('a', L, [4, 5], 5n);
    b.releaseShared('b', L, [6, 7], 7n);
    expectLinearizable(b.ops);
  });

  it('readers of one handover entry share its token; a writer and a reader never do', () => {
    const ok = new HistoryBuilder();
    ok.acquireShared('a', L, [0, 3], 5n);
    ok.acquireShared('b', L, [1, 3], 5n);
    ok.releaseShared('a', L, [4, 5], 5n);
    expectLinearizable(ok.ops);
    const bad = new HistoryBuilder();
    bad.acquire('a', L, [0, 3], 5n);
    bad.acquireShared('b', L, [1, 3], 5n);
    expectNotLinearizable(bad.ops, L);
  });

  it('an exclusive grant ends the shared ones: a reader released after a writer was granted is refused', () => {
    const ok = new HistoryBuilder();
    ok.acquireShared('a', L, [0, 1], 5n);
    ok.releaseShared('a', L, [2, 3], 5n);
    ok.acquire('b', L, [4, 5], 7n);
    expectLinearizable(ok.ops);
    const bad = new HistoryBuilder();
    bad.acquireShared('a', L, [0, 1], 5n);
    bad.acquire('b', L, [2, 3], 7n);
    bad.releaseShared('a', L, [4, 5], 5n);
    expectNotLinearizable(bad.ops, L);
  });

  it('a shared grant ends the exclusive one: the writer cannot write after a reader was granted', () => {
    const ok = new HistoryBuilder();
    ok.acquire('a', L, [0, 1], 5n);
    ok.write('a', L, [2, 3], 5n, { [K]: 'a1' });
    ok.acquireShared('b', L, [4, 5], 7n);
    expectLinearizable(ok.ops);
    const bad = new HistoryBuilder();
    bad.acquire('a', L, [0, 1], 5n);
    bad.acquireShared('b', L, [2, 3], 7n);
    bad.write('a', L, [4, 5], 5n, { [K]: 'a1' });
    expectNotLinearizable(bad.ops, L);
    // The same without tokens to compare: a writer of unknown grant and a reader, both still holding after.
    const together = new HistoryBuilder();
    together.acquireUnknown('a', L, 0);
    together.acquireShared('b', L, [1, 2], 7n);
    together.write('a', L, [3, 4], 9n, { [K]: 'a1' });
    together.releaseShared('b', L, [5, 6], 7n);
    expectNotLinearizable(together.ops, L);
  });

  it("an exclusive grant's token is above every earlier shared grant's", () => {
    const ok = new HistoryBuilder();
    ok.acquireShared('a', L, [0, 1], 9n);
    ok.releaseShared('a', L, [2, 3], 9n);
    ok.acquire('b', L, [4, 5], 12n);
    expectLinearizable(ok.ops);
    const bad = new HistoryBuilder();
    bad.acquireShared('a', L, [0, 1], 9n);
    bad.releaseShared('a', L, [2, 3], 9n);
    bad.acquire('b', L, [4, 5], 7n);
    expectNotLinearizable(bad.ops, L);
  });

  it('writes need the exclusive grant: a shared holder is refused SHARED_GRANT, never accepted', () => {
    const ok = new HistoryBuilder();
    ok.acquireShared('a', L, [0, 1], 5n);
    ok.writeRefused('a', L, [2, 3], 5n, { [K]: 'a1' }, 'SHARED_GRANT');
    ok.get('c', K, [4, 5], null, 0n, L);
    expectLinearizable(ok.ops);
    const bad = new HistoryBuilder();
    bad.acquireShared('a', L, [0, 1], 5n);
    bad.write('a', L, [2, 3], 5n, { [K]: 'a1' });
    expectNotLinearizable(bad.ops, L);
    expect(brokenInvariants(bad.ops)).toContain('shared-write');
    expect(brokenInvariants(ok.ops)).toEqual([]);
  });

  it('SHARED_GRANT names a live shared grant of the session: not an exclusive one, not one released', () => {
    const bad = new HistoryBuilder();
    bad.acquire('a', L, [0, 1], 5n);
    bad.writeRefused('a', L, [2, 3], 5n, { [K]: 'a1' }, 'SHARED_GRANT');
    expectNotLinearizable(bad.ops, L);
    const released = new HistoryBuilder();
    released.acquireShared('a', L, [0, 1], 5n);
    released.releaseShared('a', L, [2, 3], 5n);
    released.writeRefused('a', L, [4, 5], 5n, { [K]: 'a1' }, 'SHARED_GRANT');
    expectNotLinearizable(released.ops, L);
  });

  it('an exclusive try refused while readers hold the lock is fine; refused while it is free is not', () => {
    const ok = new HistoryBuilder();
    ok.acquireShared('a', L, [0, 1], 5n);
    ok.acquireHeld('b', L, [2, 3]);
    expectLinearizable(ok.ops);
    const bad = new HistoryBuilder();
    bad.acquireShared('a', L, [0, 1], 5n);
    bad.releaseShared('a', L, [2, 3], 5n);
    bad.acquireHeld('b', L, [4, 5]);
    expectNotLinearizable(bad.ops, L);
  });

  it('a shared try refused constrains nothing (a queued writer also turns readers away)', () => {
    const b = new HistoryBuilder();
    b.acquireShared('a', L, [0, 1], 5n);
    b.acquireSharedHeld('b', L, [2, 3]);
    b.releaseShared('a', L, [4, 5], 5n);
    expectLinearizable(b.ops);
  });

  it('a shared grant of unknown outcome may be a newer grant: it admits STALE_TOKEN at the latest token', () => {
    const ok = new HistoryBuilder();
    ok.acquire('a', L, [0, 1], 5n);
    ok.acquireSharedUnknown('b', L, 2);
    ok.writeRefused('a', L, [3, 4], 5n, { [K]: 'a1' }, 'STALE_TOKEN');
    expectLinearizable(ok.ops);
    const bad = new HistoryBuilder();
    bad.acquire('a', L, [0, 1], 5n);
    bad.writeRefused('a', L, [3, 4], 5n, { [K]: 'a1' }, 'STALE_TOKEN');
    expectNotLinearizable(bad.ops, L);
  });

  it('a shared grant of unknown outcome is revealed by a re-entrant acquire and then released', () => {
    const b = new HistoryBuilder();
    b.acquireSharedUnknown('a', L, 0);
    b.acquireShared('a', L, [5, 6], 8n);
    b.acquireShared('c', L, [7, 8], 9n);
    b.releaseShared('a', L, [9, 10], 8n);
    b.acquire('d', L, [11, 20], 15n);
    b.write('d', L, [21, 22], 15n, { [K]: 'd1' });
    expectLinearizable(b.ops);
  });

  it('token-unique and token-order leave readers of one entry and re-entrant readers alone', () => {
    const b = new HistoryBuilder();
    b.acquireShared('a', L, [0, 3], 5n);
    b.acquireShared('b', L, [1, 3], 5n);
    b.acquireShared('c', L, [4, 5], 9n);
    b.acquireShared('a', L, [6, 7], 5n); // re-entrant: a's grant again, below c's
    expect(brokenInvariants(b.ops)).toEqual([]);
    const bad = new HistoryBuilder();
    bad.acquire('a', L, [0, 3], 5n);
    bad.acquire('b', L, [1, 3], 5n);
    expect(brokenInvariants(bad.ops)).toContain('token-unique');
  });
});

// Resource limits, with the bounds shrunk (vi.mock) so that they can be reached in a unit test.
import { describe, expect, it, vi } from 'vitest';
import { Reason } from '../../src/state';
import { Harness, put, sid } from './harness';

vi.mock('../../src/state/limits', async (importOriginal) => ({
  ...(await importOriginal<typeof import('../../src/state/limits')>()),
  MAX_SESSIONS: 4,
  MAX_WAITERS_PER_LOCK: 2,
  MAX_LOCKS: 3,
  MAX_LOCKS_PER_SESSION: 2,
  MAX_KEYS: 4,
  MAX_STORE_BYTES: 40,
  DEDUP_MAX_RESULTS_PER_CLIENT: 5,
  DEDUP_MAX_CLIENTS: 3,
  DEDUP_MAX_RESULTS: 8,
}));

describe('limits', () => {
  it('TOO_MANY_SESSIONS beyond MAX_SESSIONS; closing one makes room', () => {
    const h = new Harness();
    const ids = [h.open(), h.open(), h.open(), h.open()];
    const out = h.apply(h.req('OpenSession', { sessionId: sid(100), ttlMs: 5_000, clientName: '' }));
    expect(out.result).toEqual({ status: 'refused', reason: Reason.TOO_MANY_SESSIONS, watermark: 0 });
    h.close(ids[0]!);
    h.open();
  });

  it('TOO_MANY_WAITERS beyond MAX_WAITERS_PER_LOCK', () => {
    const h = new Harness();
    const [a, b, c, d] = [h.open(), h.open(), h.open(), h.open()];
    const t = h.grant(a, 'L');
    h.acquire(b, 'L');
    h.acquire(c, 'L');
    expect(h.acquire(d, 'L').result).toEqual({ status: 'refused', reason: Reason.TOO_MANY_WAITERS, watermark: t });
    expect(h.acquire(d, 'L', true).result).toEqual({ status: 'held', holderToken: t }); // try-lock needs no slot
    expect(h.acquire(b, 'L').result).toMatchObject({ status: 'waiting', position: 1 }); // already queued: fine
  });

  it('TOO_MANY_LOCKS beyond MAX_LOCKS_PER_SESSION (held + waiting) and beyond MAX_LOCKS records', () => {
    const h = new Harness();
    const [a, b, c] = [h.open(), h.open(), h.open()];
    const t1 = h.grant(a, 'L1');
    h.grant(b, 'L2');
    h.acquire(b, 'L1'); // b: holds one, waits for one
    expect(h.acquire(b, 'L3').result).toEqual({ status: 'refused', reason: Reason.TOO_MANY_LOCKS, watermark: 0 });
    expect(h.acquire(b, 'L2').result).toMatchObject({ status: 'granted', newGrant: false }); // re-entrant: no new slot
    h.grant(a, 'L3'); // three lock records
    expect(h.acquire(c, 'L4').result).toEqual({ status: 'refused', reason: Reason.TOO_MANY_LOCKS, watermark: 0 });
    h.release(a, 'L1', t1); // handed to b: b still has two
    expect(h.m.getSession(b)).toMatchObject({ locks: ['L1', 'L2'], waiting: [] });
    expect(h.m.stats().locks).toBe(3);
  });

  it('STORE_FULL beyond MAX_KEYS or MAX_STORE_BYTES, atomically; tombstones count', () => {
    const h = new Harness();
    const a = h.open();
    const t = h.grant(a, 'L');
    expect(h.write(a, 'L', t, [put('a', '0123456789'), put('b', '0123456789')]).result).toMatchObject({ status: 'written' });
    // 22 bytes stored; 20 more would exceed 40
    expect(h.write(a, 'L', t, [put('c', '1'), put('d', '0123456789012345678')]).result).toEqual({
      status: 'refused',
      reason: Reason.STORE_FULL,
      watermark: t,
    });
    expect(h.m.get('c')).toBeUndefined();
    // overwriting frees bytes: allowed
    expect(h.write(a, 'L', t, [put('a', ''), put('c', '0123456789')]).result).toMatchObject({ status: 'written' });
    h.write(a, 'L', t, [{ type: 'delete', key: 'c' }]);
    expect(h.write(a, 'L', t, [put('d', ''), put('e', '')]).result).toMatchObject({ reason: Reason.STORE_FULL });
    expect(h.m.stats()).toMatchObject({ keys: 3, liveKeys: 2 });
    expect(h.write(a, 'L', t, [put('d', '')]).result).toMatchObject({ status: 'written' });
  });

  it('dedup bounds: per client, clients, and results overall (least recently used client first)', () => {
    const h = new Harness();
    const a = h.open();
    const cancel = (clientId: string) => h.req('CancelWait', { lock: 'L', sessionId: a, clientId });
    const c1 = cancel('c1');
    h.apply(c1);
    for (let i = 0; i < 6; i++) h.apply(cancel('c1'));
    expect(h.m.stats()).toMatchObject({ dedupResults: 5 + 1, dedupClients: 2 }); // + the harness client
    expect(h.apply(c1).result).toMatchObject({ reason: Reason.REQUEST_TOO_OLD });
    h.apply(cancel('c2'));
    h.apply(cancel('c2'));
    // 1 (client-1) + 5 (c1) + 2 (c2) = 8 results: at the bound; one more evicts the LRU client (client-1)
    h.apply(cancel('c2'));
    expect(h.m.stats()).toMatchObject({ dedupResults: 8, dedupClients: 2 });
    h.apply(cancel('c3')); // 9 results: c1 (5) is now the least recently used
    expect(h.m.stats()).toMatchObject({ dedupResults: 4, dedupClients: 2 });
    h.apply(cancel('c4'));
    h.apply(cancel('c5')); // a fourth client: c2 goes
    expect(h.m.stats()).toMatchObject({ dedupResults: 3, dedupClients: 3 });
    expect(h.m.checkInvariants()).toEqual([]);
  });
});

// Per-identity quotas (docs/auth.md "Quotas"): each refused with QUOTA_EXCEEDED naming the quota, counted per
// caller, never touching another identity; usage is derived and survives a snapshot.
import { describe, expect, it } from 'vitest';
import { DEFAULT_QUOTAS, LIMITS, LockStateMachine, type QuotaName, type Result } from '../../src/state';
import { Harness, put, roundTrip } from './harness';

const quotaExceeded = (quota: QuotaName): Result => ({ status: 'refused', reason: 'QUOTA_EXCEEDED', watermark: 0, subject: quota });

/** Auth on; alice and bob hold role `users` (every permission but admin on every name), whose `quota` is `value`. */
function withQuota(quota: QuotaName, value: number): Harness {
  const h = new Harness();
  h.auth({ op: 'enable', user: 'admin' });
  h.as('admin', () => {
    h.auth({ op: 'role_add', role: 'users' });
    for (const perm of ['lock', 'write', 'read'] as const) h.auth({ op: 'role_grant', role: 'users', perm, prefix: '' });
    h.auth({ op: 'role_quota', role: 'users', quota, value });
    for (const user of ['alice', 'bob']) {
      h.auth({ op: 'user_add', user });
      h.auth({ op: 'user_grant', user, role: 'users' });
    }
  });
  return h;
}

describe('quotas', () => {
  it('sessions: the identity’s open sessions; another identity is unaffected; closing one makes room', () => {
    const h = withQuota('sessions', 2);
    const [a1] = h.as('alice', () => [h.open(), h.open()]);
    expect(h.as('alice', () => h.apply(h.req('OpenSession', { sessionId: 'f'.repeat(32), ttlMs: 10_000, clientName: '' }))).result).toEqual(quotaExceeded('sessions'));
    h.as('bob', () => [h.open(), h.open()]);
    h.as('alice', () => h.close(a1!));
    h.as('alice', () => h.open());
    expect(h.m.auth.usage('alice')).toMatchObject({ sessions: 2 });
  });

  it('locks: held by the identity’s sessions (re-entrant acquires do not count)', () => {
    const h = withQuota('locks', 1);
    const a = h.as('alice', () => h.open());
    const b = h.as('bob', () => h.open());
    h.caller = 'alice';
    h.grant(a, 'L1');
    expect(h.acquire(a, 'L1').result).toMatchObject({ status: 'granted', newGrant: false });
    expect(h.acquire(a, 'L2').result).toEqual(quotaExceeded('locks'));
    h.caller = 'bob';
    h.grant(b, 'L2');
    expect(h.m.auth.usage('alice')).toMatchObject({ locks: 1 });
  });

  it('waiters: queued waits of the identity’s sessions; a cancel makes room', () => {
    const h = withQuota('waiters', 1);
    const b = h.as('bob', () => h.open());
    h.as('bob', () => ['L1', 'L2'].forEach((lock) => h.grant(b, lock)));
    const a = h.as('alice', () => h.open());
    h.caller = 'alice';
    expect(h.acquire(a, 'L1').result).toMatchObject({ status: 'waiting' });
    expect(h.acquire(a, 'L2').result).toEqual(quotaExceeded('waiters'));
    expect(h.acquire(a, 'L2', true).result).toMatchObject({ status: 'held' }); // a try-lock does not wait
    h.cancel(a, 'L1');
    expect(h.acquire(a, 'L2').result).toMatchObject({ status: 'waiting' });
    expect(h.m.auth.usage('alice')).toMatchObject({ waiters: 1 });
  });

  it('semaphores: the semaphores the identity is in (holding or waiting); joining one it is in is free; leaving one makes room; counts survive a snapshot', () => {
    const h = withQuota('semaphores', 2);
    const permit = (sessionId: string, semaphore: string, permits = 1): Result =>
      h.apply(h.req('SemaphoreAcquire', { semaphore, sessionId, permits, tryOnly: false, waitTimeoutMs: 0 })).result;
    const [a1, a2] = h.as('alice', () => [h.open(), h.open()]);
    const b = h.as('bob', () => h.open());
    h.caller = 'alice';
    expect(permit(a1!, 'S1')).toMatchObject({ status: 'permit_granted' });
    expect(permit(a1!, 'S2')).toMatchObject({ status: 'permit_granted' });
    expect(permit(a1!, 'S3')).toEqual(quotaExceeded('semaphores'));
    expect(h.m.describeSemaphore('S3')).toBeUndefined(); // nothing was made for the refused acquire
    // A second session of alice in S1 (waiting: S1 has one permit) enters no new semaphore.
    expect(permit(a2!, 'S1')).toMatchObject({ status: 'waiting' });
    h.caller = 'bob';
    expect(permit(b, 'S3')).toMatchObject({ status: 'permit_granted' });
    // Joining S3, which bob keeps, is entering a semaphore for alice: refused, whether it would wait or not.
    h.caller = 'alice';
    expect(permit(a2!, 'S3')).toEqual(quotaExceeded('semaphores'));
    const restored = new Harness(roundTrip(h.m));
    expect(restored.m.auth.usage('alice')).toMatchObject({ semaphores: 2 });
    const s2Token = h.m.describeSemaphore('S2')!.slots[0]!.latestToken;
    expect(h.apply(h.req('SemaphoreRelease', { semaphore: 'S2', sessionId: a1!, token: s2Token })).result).toMatchObject({ status: 'permit_released' });
    expect(h.m.auth.usage('alice')).toMatchObject({ semaphores: 1 });
    expect(permit(a2!, 'S3')).toMatchObject({ status: 'waiting' });
  });

  it('keys: keys the identity wrote last; rewriting its own key is free; another’s key costs', () => {
    const h = withQuota('keys', 2);
    const a = h.as('alice', () => h.open());
    const b = h.as('bob', () => h.open());
    const ta = h.as('alice', () => h.grant(a, 'A'));
    const tb = h.as('bob', () => h.grant(b, 'B'));
    h.as('bob', () => h.write(b, 'B', tb, [put('b/1', 'x')]));
    h.caller = 'alice';
    expect(h.write(a, 'A', ta, [put('a/1', 'x'), put('a/2', 'y')]).result).toMatchObject({ status: 'written' });
    expect(h.write(a, 'A', ta, [put('a/1', 'again'), { type: 'delete', key: 'a/2' }]).result).toMatchObject({ status: 'written' });
    expect(h.write(a, 'A', ta, [put('a/3', 'x')]).result).toEqual(quotaExceeded('keys'));
    expect(h.m.get('a/3')).toBeUndefined();
    expect(h.m.auth.usage('alice')).toMatchObject({ keys: 2 });
    expect(h.m.auth.usage('bob')).toMatchObject({ keys: 1 });
  });

  it('store_bytes: key and value bytes of the identity’s keys; shrinking a value is always allowed', () => {
    const h = withQuota('store_bytes', 10);
    const a = h.as('alice', () => h.open());
    const t = h.as('alice', () => h.grant(a, 'A'));
    h.caller = 'alice';
    expect(h.write(a, 'A', t, [put('k', '123456789')]).result).toMatchObject({ status: 'written' }); // 1 + 9 bytes
    expect(h.write(a, 'A', t, [put('k', '1234567890')]).result).toEqual(quotaExceeded('store_bytes'));
    expect(h.write(a, 'A', t, [put('k', '1')]).result).toMatchObject({ status: 'written' });
    expect(h.m.auth.usage('alice')).toMatchObject({ keys: 1, storeBytes: 2 });
    const b = h.as('bob', () => h.open());
    const tb = h.as('bob', () => h.grant(b, 'B'));
    expect(h.as('bob', () => h.write(b, 'B', tb, [put('m', '123456789')])).result).toMatchObject({ status: 'written' });
  });

  it('moves a key’s cost to the caller of the last write that touched it; caller \'\' counts for nobody', () => {
    const h = withQuota('keys', 5);
    h.as('admin', () => h.auth({ op: 'user_grant', user: 'bob', role: 'users' }));
    const s = h.as('alice', () => h.open());
    const t = h.as('alice', () => h.grant(s, 'L'));
    h.as('alice', () => h.write(s, 'L', t, [put('k', 'v')]));
    expect([h.m.auth.usage('alice').keys, h.m.auth.usage('bob').keys]).toEqual([1, 0]);
    // With auth off a session is anyone's, so another identity may write through it: the key moves to it.
    const off = new Harness();
    const so = off.as('address:1', () => off.open());
    const to = off.as('address:1', () => off.grant(so, 'L'));
    off.as('address:1', () => off.write(so, 'L', to, [put('k', 'v')]));
    off.as('address:2', () => off.write(so, 'L', to, [put('k', 'vv')]));
    expect([off.m.auth.usage('address:1').keys, off.m.auth.usage('address:2')]).toEqual([0, { sessions: 0, locks: 0, waiters: 0, keys: 1, storeBytes: 3, dedupClients: 1, dedupResults: 1, semaphores: 0 }]);
    off.write(so, 'L', to, [put('k', 'v')]); // the node's own (caller ''): nobody pays
    expect(off.m.auth.usage('address:2').keys).toBe(0);
  });

  it('applies the defaults to identities without roles (auth off included), and a lowered quota refuses only what would add', () => {
    const h = new Harness();
    expect(h.m.auth.quotaOf('address:10.0.0.1', 'sessions')).toBe(DEFAULT_QUOTAS.sessions);
    const h2 = withQuota('locks', 3);
    const a = h2.as('alice', () => h2.open());
    const tokens = h2.as('alice', () => ['L1', 'L2', 'L3'].map((lock) => h2.grant(a, lock)));
    h2.as('admin', () => h2.auth({ op: 'role_quota', role: 'users', quota: 'locks', value: 1 }));
    h2.caller = 'alice';
    expect(h2.acquire(a, 'L4').result).toEqual(quotaExceeded('locks'));
    expect(h2.release(a, 'L1', tokens[0]!).result).toMatchObject({ status: 'released' });
    expect(h2.m.auth.usage('alice')).toMatchObject({ locks: 2 });
  });

  it('usage is derived: recounted from a snapshot, and checked against a recount', () => {
    const h = withQuota('keys', 10);
    const a = h.as('alice', () => h.open());
    const b = h.as('bob', () => h.open());
    h.caller = 'alice';
    const t = h.grant(a, 'L');
    h.write(a, 'L', t, [put('k1', 'v'), put('k2', 'vv')]);
    h.as('bob', () => h.acquire(b, 'L'));
    const restored = roundTrip(h.m);
    for (const who of ['alice', 'bob', 'admin', 'nobody']) expect(restored.auth.usage(who), who).toEqual(h.m.auth.usage(who));
    expect(restored.auth.usage('alice')).toEqual({ sessions: 1, locks: 1, waiters: 0, keys: 2, storeBytes: 7, dedupClients: 1, dedupResults: 3, semaphores: 0 }); // 'k1' + 'v', 'k2' + 'vv'
    expect(restored.auth.usage('bob')).toMatchObject({ sessions: 1, waiters: 1 });
    // A handover moves the lock from alice's count to bob's; closing ends the counts.
    h.release(a, 'L', t);
    expect([h.m.auth.usage('alice').locks, h.m.auth.usage('bob').locks, h.m.auth.usage('bob').waiters]).toEqual([0, 1, 0]);
    h.close(a);
    h.as('bob', () => h.close(b));
    expect(h.m.auth.usage('bob')).toMatchObject({ sessions: 0, locks: 0 });
    // The invariant check notices a count that went wrong.
    const s = (h.m as unknown as { usage: { get(c: string): { keys: number } } }).usage.get('alice')!;
    s.keys++;
    expect(h.m.checkInvariants().join('\n')).toMatch(/usage of "alice"/);
    expect(LockStateMachine.readSnapshot(restored.writeSnapshot()).checkInvariants()).toEqual([]);
  });

  it('defaults keep one identity below every global limit (its retry results beyond DEDUP_MAX_RESULTS evict its own)', () => {
    expect(DEFAULT_QUOTAS.sessions).toBeLessThan(LIMITS.MAX_SESSIONS);
    expect(DEFAULT_QUOTAS.locks).toBeLessThan(LIMITS.MAX_LOCKS);
    expect(DEFAULT_QUOTAS.keys).toBeLessThan(LIMITS.MAX_KEYS);
    expect(DEFAULT_QUOTAS.store_bytes).toBeLessThan(LIMITS.MAX_STORE_BYTES);
    expect(DEFAULT_QUOTAS.dedup_clients).toBeLessThan(LIMITS.DEDUP_MAX_CLIENTS);
    // 1,000 clients of up to 1,000 results each can pass DEDUP_MAX_RESULTS: dedupIdentity.test.ts shows that
    // the identity then forgets its own clients, not another's.
    expect(DEFAULT_QUOTAS.dedup_clients * LIMITS.DEDUP_MAX_RESULTS_PER_CLIENT).toBeGreaterThan(LIMITS.DEDUP_MAX_RESULTS);
  });
});

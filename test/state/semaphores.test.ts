// Semaphores in the state machine (issue 33): permits fixed by the first Acquire, a slot and a token per
// grant, fencing per slot (a slot's watermark rises only with that slot's grants), FIFO waiters, try-acquire,
// cancel, a session's end handing its slot on, limits, and the snapshot (format 9; format 8 still read).
import { describe, expect, it } from 'vitest';
import { LockStateMachine, MAX_PERMITS, Reason, type Result } from '../../src/state';
import { Harness, referenceSnapshot } from './harness';
import { encodePlainSnapshot } from './snapshotOracle';

function acquire(h: Harness, sessionId: string, permits: number, opts: { tryOnly?: boolean; semaphore?: string } = {}): Result {
  return h.apply(h.req('SemaphoreAcquire', { semaphore: opts.semaphore ?? 'pool', sessionId, permits, tryOnly: opts.tryOnly ?? false, waitTimeoutMs: 0 })).result;
}

function release(h: Harness, sessionId: string, token: number): Result {
  return h.apply(h.req('SemaphoreRelease', { semaphore: 'pool', sessionId, token })).result;
}

describe('semaphores', () => {
  it('grants each permit its own slot and token, then queues FIFO; a tryOnly Acquire is told the permits are taken', () => {
    const h = new Harness();
    const [a, b, c, d] = [h.open(), h.open(), h.open(), h.open()];
    expect(acquire(h, a, 2)).toEqual({ status: 'permit_granted', token: h.index, slot: 0, permits: 2, newGrant: true });
    expect(acquire(h, b, 2)).toEqual({ status: 'permit_granted', token: h.index, slot: 1, permits: 2, newGrant: true });
    expect(acquire(h, c, 2, { tryOnly: true })).toEqual({ status: 'permits_full', permits: 2 });
    expect(acquire(h, c, 2)).toEqual({ status: 'waiting', holderToken: 0, position: 1 });
    expect(acquire(h, d, 2)).toEqual({ status: 'waiting', holderToken: 0, position: 2 });
    // Asked again: the same answers (re-entrant, and the queue position kept).
    expect(acquire(h, a, 2)).toMatchObject({ status: 'permit_granted', slot: 0, newGrant: false });
    expect(acquire(h, d, 2)).toEqual({ status: 'waiting', holderToken: 0, position: 2 });
  });

  it('refuses another number of permits while any is held, with the number in force; an idle semaphore takes a new one', () => {
    const h = new Harness();
    const [a, b] = [h.open(), h.open()];
    const granted = acquire(h, a, 3) as { token: number };
    expect(acquire(h, b, 5)).toEqual({ status: 'refused', reason: Reason.PERMITS_MISMATCH, watermark: 0, subject: 'permits 3' });
    expect(release(h, a, granted.token)).toEqual({ status: 'permit_released', token: granted.token, slot: 0 });
    expect(acquire(h, b, 5)).toMatchObject({ status: 'permit_granted', slot: 0, permits: 5 });
  });

  it('fences per slot: the freed slot goes to the first waiter under a higher token, the other slot is untouched', () => {
    const h = new Harness();
    const [a, b, c] = [h.open(), h.open(), h.open()];
    const first = acquire(h, a, 2) as { token: number };
    const second = acquire(h, b, 2) as { token: number };
    acquire(h, c, 2);
    const out = h.apply(h.req('SemaphoreRelease', { semaphore: 'pool', sessionId: a, token: first.token }));
    expect(out.result).toEqual({ status: 'permit_released', token: first.token, slot: 0, nextHolder: c, nextToken: h.index });
    expect(out.events).toEqual([
      { type: 'permit_released', semaphore: 'pool', sessionId: a, slot: 0, token: first.token, cause: 'released' },
      { type: 'permit_granted', semaphore: 'pool', sessionId: c, slot: 0, token: h.index, cause: 'released' },
    ]);
    const handed = h.index;
    const info = h.m.describeSemaphore('pool');
    expect(info?.slots.map((s) => [s.holder?.sessionId ?? null, s.latestToken])).toEqual([
      [c, h.index],
      [b, second.token],
    ]);
    // The old holder of slot 0 is no holder any more; its token is wrong for anyone.
    expect(release(h, a, first.token)).toMatchObject({ status: 'refused', reason: Reason.NOT_HOLDER });
    expect(release(h, c, first.token)).toMatchObject({ status: 'refused', reason: Reason.WRONG_TOKEN, watermark: handed });
  });

  it('hands an ending session\'s slot to the next live waiter, and drops the ended session\'s waits first', () => {
    const h = new Harness();
    const [a, b, c] = [h.open(), h.open(), h.open()];
    acquire(h, a, 1);
    acquire(h, b, 1);
    acquire(h, c, 1);
    // b's wait ends with it: c is next once a's session expires.
    h.apply({ type: 'ExpireSession', now: h.tick(), sessionIds: [b] });
    const out = h.apply({ type: 'ExpireSession', now: h.tick(), sessionIds: [a] });
    expect(out.events).toContainEqual({ type: 'permit_released', semaphore: 'pool', sessionId: a, slot: 0, token: expect.any(Number) as number, cause: 'expired' });
    expect(out.events).toContainEqual({ type: 'permit_granted', semaphore: 'pool', sessionId: c, slot: 0, token: h.index, cause: 'expired' });
    expect(h.m.describeSemaphore('pool')?.waiters).toEqual([]);
    // The last holder gone, the semaphore is forgotten.
    h.apply(h.req('CloseSession', { sessionId: c }));
    expect(h.m.describeSemaphore('pool')).toBeUndefined();
  });

  it('cancels a wait, and answers the grant when the wait had already ended in one', () => {
    const h = new Harness();
    const [a, b] = [h.open(), h.open()];
    const first = acquire(h, a, 1) as { token: number };
    acquire(h, b, 1);
    release(h, a, first.token);
    const grantToken = h.index;
    expect(h.apply(h.req('SemaphoreCancelWait', { semaphore: 'pool', sessionId: b })).result).toEqual({ status: 'permit_granted', token: grantToken, slot: 0, permits: 1, newGrant: false });
    acquire(h, a, 1);
    expect(h.apply(h.req('SemaphoreCancelWait', { semaphore: 'pool', sessionId: a })).result).toEqual({ status: 'cancelled' });
    expect(h.apply(h.req('SemaphoreCancelWait', { semaphore: 'pool', sessionId: a })).result).toEqual({ status: 'not_waiting' });
  });

  it('has explicit limits: 1..MAX_PERMITS permits, a well-formed name', () => {
    const h = new Harness();
    const a = h.open();
    expect(acquire(h, a, 0)).toMatchObject({ status: 'invalid', message: `permits must be an integer in [1, ${MAX_PERMITS}]` });
    expect(acquire(h, a, MAX_PERMITS + 1)).toMatchObject({ status: 'invalid' });
    expect(acquire(h, a, 1, { semaphore: '' })).toMatchObject({ status: 'invalid', message: 'semaphore name must not be empty' });
    expect(acquire(h, a, MAX_PERMITS)).toMatchObject({ status: 'permit_granted', permits: MAX_PERMITS });
  });

  it('is kept in snapshots (format 9, the oracle\'s bytes), and format-8 bytes still read (no semaphores)', () => {
    const h = new Harness();
    const [a, b, c] = [h.open(), h.open(), h.open()];
    acquire(h, a, 2);
    acquire(h, b, 2);
    acquire(h, c, 2);
    const plain = referenceSnapshot(h.m);
    expect(plain.semaphores).toHaveLength(1);
    const bytes = h.m.writeSnapshot();
    expect(Array.from(bytes)).toEqual(Array.from(encodePlainSnapshot(plain)));
    const restored = LockStateMachine.readSnapshot(bytes);
    expect(referenceSnapshot(restored)).toEqual(plain);
    // The restored machine goes on as the original: c gets a's slot when a closes.
    const h2 = new Harness(restored);
    h2.nextRequestId = h.nextRequestId;
    h2.apply(h2.req('CloseSession', { sessionId: a }));
    expect(h2.m.describeSemaphore('pool')?.slots[0]?.holder?.sessionId).toBe(c);
    const format8 = LockStateMachine.readSnapshot(encodePlainSnapshot({ ...plain, format: 8 }));
    expect(referenceSnapshot(format8)).toEqual({ ...plain, semaphores: [] });
  });

  it('counts permits with locks towards the locks quota, both ways, and waits towards the waiters quota', () => {
    const h = new Harness();
    h.auth({ op: 'enable', user: 'admin' });
    h.as('admin', () => {
      h.auth({ op: 'role_add', role: 'users' });
      h.auth({ op: 'role_grant', role: 'users', perm: 'lock', prefix: '' });
      h.auth({ op: 'role_quota', role: 'users', quota: 'locks', value: 1 });
      h.auth({ op: 'role_quota', role: 'users', quota: 'waiters', value: 1 });
      h.auth({ op: 'user_add', user: 'alice' });
      h.auth({ op: 'user_grant', user: 'alice', role: 'users' });
    });
    h.caller = 'alice';
    const [a, b] = [h.open(), h.open()];
    expect(acquire(h, a, 1)).toMatchObject({ status: 'permit_granted' });
    expect(acquire(h, b, 1, { semaphore: 'other' })).toEqual({ status: 'refused', reason: Reason.QUOTA_EXCEEDED, watermark: 0, subject: 'locks' });
    expect(h.apply(h.req('Acquire', { lock: 'L', sessionId: b, tryOnly: true })).result).toEqual({ status: 'refused', reason: Reason.QUOTA_EXCEEDED, watermark: 0, subject: 'locks' });
    expect(acquire(h, b, 1)).toMatchObject({ status: 'waiting' });
    expect(acquire(h, b, 1, { semaphore: 'third' })).toMatchObject({ status: 'refused', subject: 'locks' });
    h.caller = '';
    const c = h.open();
    acquire(h, c, 1, { semaphore: 'busy' });
    h.caller = 'alice';
    expect(acquire(h, a, 1, { semaphore: 'busy' })).toEqual({ status: 'refused', reason: Reason.QUOTA_EXCEEDED, watermark: 0, subject: 'waiters' });
  });

  it('takes the lock permission on its name when auth is on', () => {
    const h = new Harness();
    h.auth({ op: 'enable', user: 'admin' });
    h.as('admin', () => {
      h.auth({ op: 'role_add', role: 'pools' });
      h.auth({ op: 'role_grant', role: 'pools', perm: 'lock', prefix: 'pool' });
      h.auth({ op: 'user_add', user: 'alice' });
      h.auth({ op: 'user_grant', user: 'alice', role: 'pools' });
    });
    h.caller = 'alice';
    const a = h.open();
    expect(acquire(h, a, 1, { semaphore: 'jobs' })).toEqual({ status: 'refused', reason: Reason.PERMISSION_DENIED, watermark: 0, subject: 'lock jobs' });
    expect(acquire(h, a, 1)).toMatchObject({ status: 'permit_granted' });
  });

  it('writes the same bytes from a capture as from writeSnapshot, and a restore for a new cluster frees every permit', () => {
    const h = new Harness();
    const [a, b] = [h.open(), h.open()];
    acquire(h, a, 1);
    acquire(h, b, 1);
    const expected = Array.from(h.m.writeSnapshot());
    const encoding = h.m.captureSnapshot(1);
    // The state goes on changing while the capture is encoded: its bytes stay those of the capture.
    h.apply(h.req('CloseSession', { sessionId: a }));
    while (!encoding.step());
    expect(Array.from(encoding.bytes())).toEqual(expected);
    const { machine } = LockStateMachine.restoredForNewCluster(h.m.writeSnapshot(), h.index + 1);
    expect(machine.describeSemaphore('pool')).toBeUndefined();
    expect(machine.checkInvariants()).toEqual([]);
  });
});

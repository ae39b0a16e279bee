// Lock-delay (issue 34, docs/architecture.md#lock-delay): a grant that ends by expiry or revocation keeps
// its lock from everyone for the delay its Acquire asked for, until the leader's EndLockDelays; a release or
// a close by the holder starts none. Each rule of the state machine, and the snapshot of a delay in force.
import { describe, expect, it } from 'vitest';
import { LockStateMachine, MAX_LOCK_DELAY_MS, Reason, SNAPSHOT_FORMAT, type Result } from '../../src/state';
import { Harness, expectSameBytes, referenceSnapshot, roundTrip } from './harness';
import { encodePlainSnapshot } from './snapshotOracle';

const DELAY = 5_000;

function acquireWithDelay(h: Harness, sessionId: string, lock: string, lockDelayMs: number, tryOnly = false): Result {
  return h.apply(h.req('Acquire', { lock, sessionId, tryOnly, waitTimeoutMs: tryOnly ? 0 : 5_000, lockDelayMs })).result;
}

function endDelays(h: Harness, delays: Array<{ lock: string; since: number }>) {
  return h.apply({ type: 'EndLockDelays', now: h.tick(), delays });
}

/** A holder granted `lock` with a delay, and a waiter queued behind it. */
function heldWithWaiter(h: Harness, lock = 'L'): { holder: string; waiter: string; token: number } {
  const holder = h.open();
  const waiter = h.open();
  const r = acquireWithDelay(h, holder, lock, DELAY);
  expect(r).toMatchObject({ status: 'granted' });
  expect(acquireWithDelay(h, waiter, lock, 0)).toMatchObject({ status: 'waiting', position: 1 });
  return { holder, waiter, token: (r as { token: number }).token };
}

describe('lock-delay', () => {
  it('expiry of the holder starts the delay: the waiter stays queued, and is granted only by EndLockDelays, with its index as token', () => {
    const h = new Harness();
    const { holder, waiter, token } = heldWithWaiter(h);
    expect(h.m.describeLock('L')?.holder?.lockDelayMs).toBe(DELAY);
    const out = h.expire(holder);
    const since = h.index;
    expect(out.events.filter((e) => e.type === 'granted')).toEqual([]);
    expect(h.m.describeLock('L')).toMatchObject({ holder: null, latestToken: token, waiters: [waiter], delay: { since, delayMs: DELAY, until: h.now + DELAY } });
    expect(h.m.lockDelays()).toEqual([{ lock: 'L', since, delayMs: DELAY, until: h.now + DELAY }]);
    const end = endDelays(h, [{ lock: 'L', since }]);
    expect(end.result).toEqual({ status: 'delays_ended', ended: ['L'] });
    expect(end.events).toEqual([{ type: 'granted', lock: 'L', sessionId: waiter, token: h.index, cause: 'delay_ended' }]);
    expect(h.m.describeLock('L')).toMatchObject({ holder: { sessionId: waiter, token: h.index }, latestToken: h.index });
    expect(h.m.describeLock('L')?.delay).toBeUndefined();
    expect(h.index).toBeGreaterThan(token);
  });

  it('a release by the holder starts no delay: the waiter is granted at once', () => {
    const h = new Harness();
    const { holder, waiter, token } = heldWithWaiter(h);
    const out = h.release(holder, 'L', token);
    expect(out.result).toEqual({ status: 'released', token, nextHolder: waiter, nextToken: h.index });
    expect(h.m.lockDelays()).toEqual([]);
  });

  it('closing its own session is a release too: no delay', () => {
    const h = new Harness();
    const { holder, waiter } = heldWithWaiter(h);
    h.close(holder);
    expect(h.m.describeLock('L')?.holder?.sessionId).toBe(waiter);
    expect(h.m.lockDelays()).toEqual([]);
  });

  it('a revoke of the lock (RevokeLock) and of the session (RevokeSession) start the delay', () => {
    for (const revoke of ['lock', 'session'] as const) {
      const h = new Harness();
      const { holder, waiter } = heldWithWaiter(h);
      const out =
        revoke === 'lock'
          ? h.apply(h.req('RevokeLock', { lock: 'L', token: 0, reason: 'stuck' }))
          : h.apply(h.req('RevokeSession', { sessionId: holder }));
      expect(out.events.filter((e) => e.type === 'granted'), revoke).toEqual([]);
      if (revoke === 'lock') expect(out.result).toEqual({ status: 'released', token: 3 });
      expect(h.m.lockDelayOf('L'), revoke).toMatchObject({ since: h.index, delayMs: DELAY });
      expect(h.m.describeLock('L')?.waiters, revoke).toEqual([waiter]);
    }
  });

  it('a grant without a delay ends without one, whatever ends it', () => {
    const h = new Harness();
    const holder = h.open();
    const waiter = h.open();
    h.grant(holder, 'L');
    h.acquire(waiter, 'L');
    h.expire(holder);
    expect(h.m.describeLock('L')?.holder?.sessionId).toBe(waiter);
  });

  it('during the delay a try-acquire is refused LOCK_DELAYED, a waiting acquire queues, the lock is kept without waiters', () => {
    const h = new Harness();
    const holder = h.open();
    const other = h.open();
    const token = (acquireWithDelay(h, holder, 'L', DELAY) as { token: number }).token;
    h.expire(holder);
    const since = h.index;
    expect(h.m.describeLock('L')).toMatchObject({ holder: null, waiters: [], delay: { since } }); // kept: no record would forget the delay
    // Listed as busy (without includeIdle), with its delay.
    const listed = h.m.listLocks('', { limit: 10, includeIdle: false, maxWaiters: 10, visible: () => true });
    expect(listed).toEqual([{ name: 'L', holder: null, latestToken: token, delay: { since, delayMs: DELAY, until: h.now + DELAY }, waiters: [], waiterCount: 0 }]);
    expect(h.acquire(other, 'L', true).result).toEqual({ status: 'refused', reason: Reason.LOCK_DELAYED, watermark: token });
    expect(h.acquire(other, 'L').result).toEqual({ status: 'waiting', holderToken: 0, position: 1 });
    expect(h.acquire(other, 'L').result).toEqual({ status: 'waiting', holderToken: 0, position: 1 }); // a retry finds its place
    expect(h.cancel(other, 'L').result).toEqual({ status: 'cancelled' });
    expect(endDelays(h, [{ lock: 'L', since }]).result).toEqual({ status: 'delays_ended', ended: ['L'] });
    expect(h.m.describeLock('L')).toBeUndefined(); // idle without keys: forgotten once the delay is over
    expect(h.acquire(other, 'L', true).result).toMatchObject({ status: 'granted', token: h.index });
  });

  it('an EndLockDelays names its delay: a stale one (ended already, or for an earlier delay) ends nothing', () => {
    const h = new Harness();
    const { holder, waiter } = heldWithWaiter(h);
    h.expire(holder);
    const first = h.index;
    expect(endDelays(h, [{ lock: 'L', since: first }]).result).toEqual({ status: 'delays_ended', ended: ['L'] });
    // The waiter's own grant asked for no delay; a third session's does, and it expires: a second delay.
    const third = h.open();
    acquireWithDelay(h, third, 'L', 1_000);
    h.release(waiter, 'L', h.m.describeLock('L')?.holder?.token ?? 0);
    expect(h.m.describeLock('L')?.holder).toMatchObject({ sessionId: third, lockDelayMs: 1_000 });
    const last = h.open();
    h.acquire(last, 'L');
    h.expire(third);
    const second = h.index;
    // Another leader's proposal for the first delay, applied late, and a duplicate in one entry.
    expect(endDelays(h, [{ lock: 'L', since: first }, { lock: 'nothing', since: first }]).result).toEqual({ status: 'delays_ended', ended: [] });
    expect(h.m.lockDelayOf('L')?.since).toBe(second);
    const end = endDelays(h, [{ lock: 'L', since: second }, { lock: 'L', since: second }]);
    expect(end.result).toEqual({ status: 'delays_ended', ended: ['L'] });
    expect(h.m.describeLock('L')?.holder?.sessionId).toBe(last);
  });

  it('a waiter granted later gets the delay it asked for itself', () => {
    const h = new Harness();
    const holder = h.open();
    const waiter = h.open();
    const token = h.grant(holder, 'L');
    expect(acquireWithDelay(h, waiter, 'L', 2_500)).toMatchObject({ status: 'waiting' });
    h.release(holder, 'L', token);
    expect(h.m.describeLock('L')?.holder).toMatchObject({ sessionId: waiter, lockDelayMs: 2_500 });
    h.expire(waiter);
    expect(h.m.lockDelayOf('L')).toMatchObject({ delayMs: 2_500 });
  });

  it('a re-entrant Acquire keeps the grant\'s delay; a session that ends with several locks delays each', () => {
    const h = new Harness();
    const s = h.open();
    acquireWithDelay(h, s, 'A', 1_000);
    acquireWithDelay(h, s, 'A', 9_000);
    acquireWithDelay(h, s, 'B', 2_000);
    expect(h.m.describeLock('A')?.holder?.lockDelayMs).toBe(1_000);
    h.expire(s);
    expect(h.m.lockDelays().map((d) => [d.lock, d.delayMs])).toEqual([['A', 1_000], ['B', 2_000]]);
  });

  it('refuses a delay out of range or not an integer as invalid, naming the field', () => {
    const h = new Harness();
    const s = h.open();
    for (const lockDelayMs of [MAX_LOCK_DELAY_MS + 1, -1, 1.5]) {
      expect(acquireWithDelay(h, s, 'L', lockDelayMs)).toEqual({ status: 'invalid', message: `lockDelayMs must be an integer in [0, ${MAX_LOCK_DELAY_MS}]` });
    }
    expect(acquireWithDelay(h, s, 'L', MAX_LOCK_DELAY_MS)).toMatchObject({ status: 'granted' });
    expect(h.apply({ type: 'EndLockDelays', now: 1, delays: [{ lock: 'L', since: 0 }] }).result).toMatchObject({ status: 'invalid' });
  });

  it('a snapshot keeps a delay in force, its waiters and the delays they asked for, in the oracle\'s bytes', () => {
    const h = new Harness();
    const { holder } = heldWithWaiter(h);
    const later = h.open();
    acquireWithDelay(h, later, 'L', 700);
    h.expire(holder);
    const since = h.index;
    const bytes = h.m.writeSnapshot();
    expect(bytes[4]).toBe(SNAPSHOT_FORMAT);
    expectSameBytes(bytes, encodePlainSnapshot(referenceSnapshot(h.m)));
    const restored = roundTrip(h.m);
    expectSameBytes(restored.writeSnapshot(), bytes);
    expect(restored.lockDelayOf('L')).toEqual(h.m.lockDelayOf('L'));
    // The restored machine goes on as the original: the delay ends, the waiters keep their own delays.
    const again = new Harness(restored);
    again.now = h.now;
    endDelays(again, [{ lock: 'L', since }]);
    again.expire(again.m.describeLock('L')?.holder?.sessionId ?? '');
    expect(again.m.describeLock('L')?.holder?.lockDelayMs).toBe(700);
  });

  it('the formats before lock-delays (7 and older) still load, with no delay anywhere', () => {
    const h = new Harness();
    const { holder } = heldWithWaiter(h);
    h.release(holder, 'L', h.m.describeLock('L')?.holder?.token ?? 0);
    const plain = referenceSnapshot(h.m);
    const { waiterDelays: _w, lockDelayMs: _l, delayedSince: _s, delayedUntil: _u, ...lock } = plain.locks[0]!;
    for (const format of [7, 6, 5]) {
      const m = LockStateMachine.readSnapshot(encodePlainSnapshot({ ...plain, locks: [lock], format }));
      expect(m.checkInvariants(), `format ${format}`).toEqual([]);
      expect(m.lockDelays()).toEqual([]);
      expect(m.describeLock('L')?.holder?.lockDelayMs).toBeUndefined();
    }
  });

  it('refuses a snapshot whose delay contradicts its lock', () => {
    const h = new Harness();
    const { holder } = heldWithWaiter(h);
    const held = referenceSnapshot(h.m);
    const bad = (patch: object): Uint8Array => encodePlainSnapshot({ ...held, locks: [{ ...held.locks[0]!, ...patch }] });
    expect(() => LockStateMachine.readSnapshot(bad({ delayedSince: 2, delayedUntil: 9 }))).toThrow(/held lock "L" is in a lock-delay/);
    expect(() => LockStateMachine.readSnapshot(bad({ lockDelayMs: MAX_LOCK_DELAY_MS + 1 }))).toThrow(/lock-delay of 60001 ms/);
    h.expire(holder);
    const delayed = referenceSnapshot(h.m);
    const future = encodePlainSnapshot({ ...delayed, locks: [{ ...delayed.locks[0]!, delayedSince: delayed.lastApplied + 1 }] });
    expect(() => LockStateMachine.readSnapshot(future)).toThrow(/delayed since a future entry/);
  });
});

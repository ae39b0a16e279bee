// The lock rules: grants, tokens, FIFO queue, re-entrancy, release, handover on close and expiry.
import { describe, expect, it } from 'vitest';
import { LockStateMachine, MAX_SESSIONS_PER_EXPIRY, Reason, type LockEvent } from '../../src/state';
import { Harness, referenceSnapshot, sid } from './harness';

describe('acquire', () => {
  it('grants a free lock with token = index of the Acquire entry', () => {
    const h = new Harness();
    const a = h.open();
    const out = h.acquire(a, 'L');
    expect(out.result).toEqual({ status: 'granted', token: h.index, newGrant: true });
    expect(out.events).toEqual([{ type: 'granted', lock: 'L', sessionId: a, token: h.index, cause: 'acquired' }]);
    expect(h.m.describeLock('L')).toEqual({
      name: 'L',
      holder: { sessionId: a, clientName: 'test', labels: [], token: h.index, grantIndex: h.index, grantedAt: h.now },
      latestToken: h.index,
      waiters: [],
      waiterSessions: [],
    });
    expect(h.m.getSession(a)?.locks).toEqual(['L']);
  });

  it('is re-entrant: the holder gets the same token again and nothing changes', () => {
    const h = new Harness();
    const a = h.open();
    const token = h.grant(a, 'L');
    const before = referenceSnapshot(h.m).locks;
    const again = h.acquire(a, 'L');
    expect(again.result).toEqual({ status: 'granted', token, newGrant: false });
    expect(again.events).toEqual([]);
    expect(h.acquire(a, 'L', true).result).toEqual({ status: 'granted', token, newGrant: false });
    expect(referenceSnapshot(h.m).locks).toEqual(before);
  });

  it('try-lock on a held lock answers held with the holder token and changes nothing', () => {
    const h = new Harness();
    const [a, b] = [h.open(), h.open()];
    const token = h.grant(a, 'L');
    const out = h.acquire(b, 'L', true);
    expect(out.result).toEqual({ status: 'held', holderToken: token });
    expect(out.events).toEqual([]);
    expect(h.m.describeLock('L')?.waiters).toEqual([]);
  });

  it('queues waiters in FIFO order, once each', () => {
    const h = new Harness();
    const [a, b, c] = [h.open(), h.open(), h.open()];
    const token = h.grant(a, 'L');
    const qb = h.acquire(b, 'L');
    expect(qb.result).toEqual({ status: 'waiting', holderToken: token, position: 1 });
    expect(qb.events).toEqual([{ type: 'queued', lock: 'L', sessionId: b, position: 1 }]);
    expect(h.acquire(c, 'L').result).toEqual({ status: 'waiting', holderToken: token, position: 2 });
    // A second Acquire of a queued session: still waiting, same place, queue unchanged.
    const again = h.acquire(b, 'L');
    expect(again.result).toEqual({ status: 'waiting', holderToken: token, position: 1 });
    expect(again.events).toEqual([]);
    // Even a try-only Acquire of a queued session reports its wait.
    expect(h.acquire(c, 'L', true).result).toEqual({ status: 'waiting', holderToken: token, position: 2 });
    expect(h.m.describeLock('L')?.waiters).toEqual([b, c]);
    expect(h.m.sessionLockState('L', c)).toEqual({ state: 'waiting', position: 2 });
    expect(h.m.sessionLockState('L', a)).toEqual({ state: 'holder', token });

    const r1 = h.release(a, 'L', token);
    const t1 = h.index;
    expect(r1.result).toEqual({ status: 'released', token, nextHolder: b, nextToken: t1 });
    expect(r1.events).toEqual([
      { type: 'released', lock: 'L', sessionId: a, token, cause: 'released' },
      { type: 'granted', lock: 'L', sessionId: b, token: t1, cause: 'released' },
    ]);
    const r2 = h.release(b, 'L', t1);
    const t2 = h.index;
    expect(r2.events[1]).toEqual({ type: 'granted', lock: 'L', sessionId: c, token: t2, cause: 'released' });
    expect(h.m.describeLock('L')?.holder?.sessionId).toBe(c);
    expect(h.m.describeLock('L')?.holder?.grantedAt).toBe(h.now);
    expect(t2).toBeGreaterThan(t1);
  });

  it('refuses unknown sessions', () => {
    const h = new Harness();
    expect(h.acquire(sid(99), 'L').result).toEqual({ status: 'refused', reason: Reason.UNKNOWN_SESSION, watermark: 0 });
  });

  it('issues strictly increasing tokens per lock, equal to entry indexes, even across gaps', () => {
    const h = new Harness();
    const [a, b] = [h.open(), h.open()];
    const tokens: number[] = [];
    for (let i = 0; i < 20; i++) {
      const s = i % 2 === 0 ? a : b;
      h.index += i % 3; // entries the node does not apply (e.g. configuration changes) leave gaps
      const t = h.grant(s, 'L');
      expect(t).toBe(h.index);
      tokens.push(t);
      expect(h.release(s, 'L', t).result).toEqual({ status: 'released', token: t });
    }
    for (let i = 1; i < tokens.length; i++) expect(tokens[i]).toBeGreaterThan(tokens[i - 1]!);
  });

  it('rejects an apply whose index does not increase', () => {
    const m = new LockStateMachine();
    const expire = { type: 'ExpireSession' as const, now: 1, sessionIds: [sid(1)] };
    m.apply(5, expire);
    expect(() => m.apply(5, expire)).toThrow(/strictly increase/);
    expect(() => m.apply(4, expire)).toThrow(/strictly increase/);
    expect(m.lastApplied).toBe(5);
    expect(m.apply(6, expire).result).toEqual({ status: 'sessions_expired', ended: [] });
  });
});

describe('release', () => {
  it('needs the holder session and its token', () => {
    const h = new Harness();
    const [a, b] = [h.open(), h.open()];
    const token = h.grant(a, 'L');
    expect(h.release(a, 'L', token + 1).result).toEqual({ status: 'refused', reason: Reason.WRONG_TOKEN, watermark: token });
    expect(h.release(a, 'L', token - 1).result).toEqual({ status: 'refused', reason: Reason.WRONG_TOKEN, watermark: token });
    expect(h.release(b, 'L', token).result).toEqual({ status: 'refused', reason: Reason.NOT_HOLDER, watermark: token });
    expect(h.release(sid(77), 'L', token).result).toEqual({ status: 'refused', reason: Reason.UNKNOWN_SESSION, watermark: token });
    expect(h.release(a, 'other', token).result).toEqual({ status: 'refused', reason: Reason.NOT_HOLDER, watermark: 0 });
    expect(h.m.describeLock('L')?.holder?.token).toBe(token);
    expect(h.release(a, 'L', token).result).toEqual({ status: 'released', token });
    expect(h.release(a, 'L', token).result).toEqual({ status: 'refused', reason: Reason.NOT_HOLDER, watermark: 0 });
  });

  it('a waiter cannot release', () => {
    const h = new Harness();
    const [a, b] = [h.open(), h.open()];
    const token = h.grant(a, 'L');
    h.acquire(b, 'L');
    expect(h.release(b, 'L', token).result).toMatchObject({ reason: Reason.NOT_HOLDER });
    expect(h.m.describeLock('L')?.waiters).toEqual([b]);
  });

  it('forgets an idle lock without keys; its next grant still has a higher token', () => {
    const h = new Harness();
    const a = h.open();
    const t1 = h.grant(a, 'L');
    h.release(a, 'L', t1);
    expect(h.m.describeLock('L')).toBeUndefined();
    expect(h.m.stats().locks).toBe(0);
    const t2 = h.grant(a, 'L');
    expect(t2).toBeGreaterThan(t1);
  });
});

describe('cancel wait', () => {
  it('removes the waiter; the queue behind it moves up', () => {
    const h = new Harness();
    const [a, b, c] = [h.open(), h.open(), h.open()];
    const token = h.grant(a, 'L');
    h.acquire(b, 'L');
    h.acquire(c, 'L');
    const out = h.cancel(b, 'L');
    expect(out.result).toEqual({ status: 'cancelled' });
    expect(out.events).toEqual([{ type: 'wait_ended', lock: 'L', sessionId: b, cause: 'cancelled' }]);
    expect(h.m.sessionLockState('L', c)).toEqual({ state: 'waiting', position: 1 });
    expect(h.m.getSession(b)?.waiting).toEqual([]);
    h.release(a, 'L', token);
    expect(h.m.describeLock('L')?.holder?.sessionId).toBe(c);
  });

  it('answers granted with the token when the wait already ended in a grant', () => {
    const h = new Harness();
    const [a, b] = [h.open(), h.open()];
    const token = h.grant(a, 'L');
    h.acquire(b, 'L');
    h.release(a, 'L', token);
    const grantToken = h.index;
    const out = h.cancel(b, 'L');
    expect(out.result).toEqual({ status: 'granted', token: grantToken, newGrant: false });
    expect(out.events).toEqual([]);
    expect(h.m.describeLock('L')?.holder?.sessionId).toBe(b);
  });

  it('answers not_waiting when neither waiting nor holding, and refuses unknown sessions', () => {
    const h = new Harness();
    const [a, b] = [h.open(), h.open()];
    const token = h.grant(a, 'L');
    expect(h.cancel(b, 'L').result).toEqual({ status: 'not_waiting' });
    expect(h.cancel(b, 'nothing').result).toEqual({ status: 'not_waiting' });
    expect(h.cancel(sid(50), 'L').result).toEqual({ status: 'refused', reason: Reason.UNKNOWN_SESSION, watermark: token });
  });
});

describe('session end', () => {
  for (const cause of ['closed', 'expired'] as const) {
    it(`${cause}: releases every lock, hands each to its next live waiter with token = index of that entry`, () => {
      const h = new Harness();
      const [a, b, c] = [h.open(), h.open(), h.open()];
      const tx = h.grant(a, 'X');
      const ty = h.grant(a, 'Y');
      h.grant(c, 'Z');
      h.acquire(b, 'Y');
      h.acquire(c, 'Y');
      h.acquire(a, 'Z'); // a also waits somewhere
      const out = cause === 'closed' ? h.close(a) : h.expire(a);
      const index = h.index;
      expect(out.result).toEqual(cause === 'closed' ? { status: 'session_ended', sessionId: a, cause, released: ['X', 'Y'] } : { status: 'sessions_expired', ended: [a] });
      const events: LockEvent[] = [
        { type: 'wait_ended', lock: 'Z', sessionId: a, cause },
        { type: 'released', lock: 'X', sessionId: a, token: tx, cause },
        { type: 'released', lock: 'Y', sessionId: a, token: ty, cause },
        { type: 'granted', lock: 'Y', sessionId: b, token: index, cause },
        { type: 'session_ended', sessionId: a, cause },
      ];
      expect(out.events).toEqual(events);
      expect(h.m.getSession(a)).toBeUndefined();
      expect(h.m.describeLock('X')).toBeUndefined(); // idle, no keys: forgotten
      expect(h.m.describeLock('Y')).toMatchObject({ holder: { sessionId: b, token: index }, latestToken: index, waiters: [c] });
      expect(h.m.describeLock('Z')?.waiters).toEqual([]);
      expect(h.acquire(a, 'X').result).toMatchObject({ reason: Reason.UNKNOWN_SESSION });
      expect(h.m.sessionIds()).toEqual([b, c].sort());
    });
  }

  it('a waiter whose session ended is never granted: the grant skips to the next live waiter', () => {
    const h = new Harness();
    const [a, b, c, d] = [h.open(), h.open(), h.open(), h.open()];
    const token = h.grant(a, 'L');
    h.acquire(b, 'L');
    h.acquire(c, 'L');
    h.acquire(d, 'L');
    expect(h.expire(b).events).toEqual([
      { type: 'wait_ended', lock: 'L', sessionId: b, cause: 'expired' },
      { type: 'session_ended', sessionId: b, cause: 'expired' },
    ]);
    h.close(c);
    const out = h.release(a, 'L', token);
    expect(out.events[1]).toEqual({ type: 'granted', lock: 'L', sessionId: d, token: h.index, cause: 'released' });
  });

  it('expiry hands the lock to the next waiter with token = index of the Expire entry', () => {
    const h = new Harness();
    const [a, b] = [h.open(), h.open()];
    const token = h.grant(a, 'L');
    h.acquire(b, 'L');
    h.index += 7;
    const out = h.expire(a);
    expect(h.m.describeLock('L')?.holder).toMatchObject({ sessionId: b, token: h.index });
    expect(h.index).toBeGreaterThan(token);
    expect(out.events).toContainEqual({ type: 'granted', lock: 'L', sessionId: b, token: h.index, cause: 'expired' });
  });

  it('one entry expires several sessions together, skipping unknown and repeated ones; each lock is granted once', () => {
    const h = new Harness();
    const [a, b, c] = [h.open(), h.open(), h.open()];
    h.grant(a, 'L');
    h.acquire(b, 'L');
    h.acquire(c, 'L');
    const out = h.apply({ type: 'ExpireSession', now: h.tick(), sessionIds: [a, sid(0xdead), b, a] });
    expect(out.result).toEqual({ status: 'sessions_expired', ended: [a, b] });
    // The sessions end together: b (queued, ending too) is never granted L; c gets it, once, with this index.
    const token = h.m.describeLock('L')?.holder?.token;
    expect(out.events).toEqual([
      { type: 'wait_ended', lock: 'L', sessionId: b, cause: 'expired' },
      { type: 'released', lock: 'L', sessionId: a, token: 4, cause: 'expired' },
      { type: 'granted', lock: 'L', sessionId: c, token: h.index, cause: 'expired' },
      { type: 'session_ended', sessionId: a, cause: 'expired' },
      { type: 'session_ended', sessionId: b, cause: 'expired' },
    ]);
    expect(token).toBe(h.index);
    expect(h.m.describeLock('L')?.holder).toMatchObject({ sessionId: c, token: h.index });
    expect(h.m.sessionIds()).toEqual([c]);
  });

  // Regression (simulator seed 15, after AcquireAll): the holder's release forgot the idle lock, then the
  // hand-on after the waiter left tried to forget it again and stopped the node ("missing from the name index").
  it('a holder and its only waiter expiring in one entry leave the lock forgotten once', () => {
    const h = new Harness();
    const [a, b] = [h.open(), h.open()];
    h.grant(a, 'L');
    h.acquire(b, 'L');
    const out = h.apply({ type: 'ExpireSession', now: h.tick(), sessionIds: [a, b] });
    expect(out.result).toEqual({ status: 'sessions_expired', ended: [a, b] });
    expect(h.m.describeLock('L')).toBeUndefined();
    expect(h.m.checkInvariants()).toEqual([]);
  });

  it('lease checkpoints record the time left, at most the TTL, and skip unknown sessions', () => {
    const h = new Harness();
    const [a, b] = [h.open(10_000), h.open(4_000)];
    const out = h.apply({ type: 'CheckpointLeases', now: h.tick(), leases: [{ sessionId: a, remainingMs: 2_500 }, { sessionId: b, remainingMs: 9_000 }, { sessionId: sid(0xdead), remainingMs: 1 }] });
    expect(out.result).toEqual({ status: 'checkpointed', sessions: 2 });
    expect(out.events).toEqual([]);
    const byId = new Map(h.m.leases().map((l) => [l.id, l]));
    expect(byId.get(a)).toEqual({ id: a, ttlMs: 10_000, remainingMs: 2_500 });
    expect(byId.get(b)).toEqual({ id: b, ttlMs: 4_000, remainingMs: 4_000 });
    // A snapshot carries them.
    expect(LockStateMachine.readSnapshot(h.m.writeSnapshot()).leases()).toEqual(h.m.leases());
  });

  it('refuses lease commands beyond their bounds, changing nothing', () => {
    const h = new Harness();
    const a = h.open();
    const many = Array.from({ length: MAX_SESSIONS_PER_EXPIRY + 1 }, () => a);
    expect(h.apply({ type: 'ExpireSession', now: h.tick(), sessionIds: many }).result).toMatchObject({ status: 'invalid', message: expect.stringMatching(/sessionIds must list 1\.\.1000/) });
    expect(h.apply({ type: 'ExpireSession', now: h.tick(), sessionIds: [] }).result).toMatchObject({ status: 'invalid' });
    expect(h.apply({ type: 'CheckpointLeases', now: h.tick(), leases: [{ sessionId: a, remainingMs: -1 }] }).result).toMatchObject({ status: 'invalid', message: expect.stringMatching(/remainingMs/) });
    expect(h.m.leases()).toEqual([{ id: a, ttlMs: 10_000, remainingMs: 10_000 }]);
  });

  it('expiring an unknown or already ended session changes nothing (idempotent)', () => {
    const h = new Harness();
    const a = h.open();
    h.grant(a, 'L');
    h.expire(a);
    const before = referenceSnapshot(h.m);
    const out = h.expire(a);
    expect(out.result).toEqual({ status: 'sessions_expired', ended: [] });
    expect(out.events).toEqual([]);
    expect(h.close(a).result).toMatchObject({ reason: Reason.UNKNOWN_SESSION });
    expect({ ...referenceSnapshot(h.m), lastApplied: 0, dedup: [] }).toEqual({ ...before, lastApplied: 0, dedup: [] });
  });

  it('refuses to open a session id twice', () => {
    const h = new Harness();
    const a = h.open();
    const out = h.apply(h.req('OpenSession', { sessionId: a, ttlMs: 5_000, clientName: 'x' }));
    expect(out.result).toEqual({ status: 'refused', reason: Reason.SESSION_EXISTS, watermark: 0 });
    expect(h.m.getSession(a)?.ttlMs).toBe(10_000);
  });
});

// Atomic multi-lock (issue 33, docs/architecture.md#atomic-multi-lock): a set of locks granted in one entry,
// one token, or one waiter in every queue of the set, never a partial set.
import { describe, expect, it } from 'vitest';
import { decodeCommand, encodeCommand } from '../../src/codec/commandCodec';
import { LockStateMachine, MAX_LOCKS_PER_ACQUIRE_ALL, Reason, type Command, type CommandResult, type LockEvent } from '../../src/state';
import { Harness, referenceSnapshot, roundTrip } from './harness';
import { encodePlainSnapshot } from './snapshotOracle';

function acquireAll(h: Harness, sessionId: string, locks: string[], tryOnly = false): CommandResult {
  return h.apply(h.req('AcquireAll', { locks, sessionId, tryOnly, waitTimeoutMs: tryOnly ? 0 : 5_000 }));
}

/** The locks the session holds, each with its token. */
function holds(h: Harness, sessionId: string, locks: string[]): Array<[string, number]> {
  return locks.filter((name) => h.m.describeLock(name)?.holder?.sessionId === sessionId).map((name) => [name, h.m.describeLock(name)?.holder?.token ?? 0]);
}

const grants = (events: readonly LockEvent[]): Array<[string, string, number]> =>
  events.flatMap((e) => (e.type === 'granted' ? [[e.lock, e.sessionId, e.token] as [string, string, number]] : []));

/** The snapshot round-trips to the same bytes, and the plain oracle writes those bytes too. */
function expectSnapshotExact(h: Harness): LockStateMachine {
  const bytes = h.m.writeSnapshot();
  const back = roundTrip(h.m);
  expect(back.writeSnapshot()).toEqual(bytes);
  expect(encodePlainSnapshot(referenceSnapshot(h.m))).toEqual(bytes);
  return back;
}

describe('AcquireAll: the state machine', () => {
  it('grants every free lock in one entry, with that entry index as every token', () => {
    const h = new Harness();
    const a = h.open();
    const out = acquireAll(h, a, ['c', 'a', 'b']);
    const index = h.m.lastApplied;
    expect(out.result).toEqual({ status: 'granted', token: index, newGrant: true });
    // One granted event per lock, in name order, all with the entry's index.
    expect(grants(out.events)).toEqual([['a', a, index], ['b', a, index], ['c', a, index]]);
    expect(holds(h, a, ['a', 'b', 'c'])).toEqual([['a', index], ['b', index], ['c', index]]);
    // Each lock is released on its own, with its token.
    expect(h.release(a, 'b', index).result).toEqual({ status: 'released', token: index });
    expect(h.m.getSession(a)?.locks).toEqual(['a', 'c']);
  });

  it('refuses duplicate names, an empty list and more than MAX_LOCKS_PER_ACQUIRE_ALL names as invalid', () => {
    const h = new Harness();
    const a = h.open();
    expect(acquireAll(h, a, ['x', 'y', 'x']).result).toEqual({ status: 'invalid', message: 'locks must be distinct: "x" is named twice' });
    expect(acquireAll(h, a, []).result).toMatchObject({ status: 'invalid' });
    const many = Array.from({ length: MAX_LOCKS_PER_ACQUIRE_ALL + 1 }, (_, i) => `l${i}`);
    expect(acquireAll(h, a, many).result).toEqual({ status: 'invalid', message: `locks must list 1..${MAX_LOCKS_PER_ACQUIRE_ALL} items` });
    expect(acquireAll(h, a, many.slice(1)).result).toMatchObject({ status: 'granted', newGrant: true });
    expect(h.m.getSession(a)?.locks).toHaveLength(MAX_LOCKS_PER_ACQUIRE_ALL);
  });

  it('try-only: answers held and takes nothing when any lock of the set is busy', () => {
    const h = new Harness();
    const [a, b] = [h.open(), h.open()];
    const tb = h.grant(b, 'b');
    expect(acquireAll(h, a, ['a', 'b'], true).result).toEqual({ status: 'held', holderToken: tb });
    expect(h.m.describeLock('a')).toBeUndefined();
    expect(h.m.getSession(a)?.waiting).toEqual([]);
  });

  it('queues one waiter in every queue and grants the whole set in the one entry that frees the last lock', () => {
    const h = new Harness();
    const [a, b, c] = [h.open(), h.open(), h.open()];
    const ta = h.grant(a, 'x');
    const tb = h.grant(b, 'y');
    expect(acquireAll(h, c, ['x', 'y']).result).toEqual({ status: 'waiting', holderToken: ta, position: 1 });
    expect(h.m.getSession(c)?.waiting).toEqual(['x', 'y']);
    // x frees: the set heads x's queue but y is held: nothing is granted, x stays free with c queued.
    const first = h.release(a, 'x', ta);
    expect(grants(first.events)).toEqual([]);
    expect(h.m.describeLock('x')).toMatchObject({ holder: null, waiters: [c] });
    // A later single acquirer of x waits behind the set (FIFO: no starvation of the set).
    const d = h.open();
    expect(h.acquire(d, 'x').result).toMatchObject({ status: 'waiting', position: 2 });
    expect(h.acquire(d, 'x', true).result).toMatchObject({ status: 'waiting', position: 2 });
    const last = h.release(b, 'y', tb);
    const index = h.m.lastApplied;
    expect(last.result).toEqual({ status: 'released', token: tb, nextHolder: c, nextToken: index });
    expect(grants(last.events)).toEqual([['x', c, index], ['y', c, index]]);
    expect(h.m.describeLock('x')?.waiters).toEqual([d]);
    // Its release of x hands x on to the single waiter behind it.
    expect(h.release(c, 'x', index).result).toMatchObject({ nextHolder: d });
  });

  it('two sets naming the same locks in opposite orders: one holds all, the other waits for all, no deadlock', () => {
    const h = new Harness();
    const [p, q] = [h.open(), h.open()];
    const tp = h.grant(p, 'b'); // p holds b alone first, so both sets must wait
    const other = h.open();
    const to = h.grant(other, 'a');
    expect(acquireAll(h, p, ['a', 'b']).result).toMatchObject({ status: 'refused', reason: Reason.SET_OVERLAP, subject: 'b' });
    expect(h.release(p, 'b', tp).result).toMatchObject({ status: 'released' });
    expect(acquireAll(h, p, ['a', 'b']).result).toMatchObject({ status: 'waiting' });
    expect(acquireAll(h, q, ['b', 'a']).result).toMatchObject({ status: 'waiting' });
    // b is free, but p heads its queue and waits for a: nobody holds b, nobody holds part of a set.
    expect(h.m.describeLock('b')).toMatchObject({ holder: null, waiters: [p, q] });
    const index = h.m.lastApplied + 1;
    expect(grants(h.release(other, 'a', to).events)).toEqual([['a', p, index], ['b', p, index]]);
    // p's releases, one lock at a time: q gets the set once both are free, in the entry that frees the second.
    expect(grants(h.release(p, 'a', index).events)).toEqual([]);
    const next = h.m.lastApplied + 1;
    expect(grants(h.release(p, 'b', index).events)).toEqual([['a', q, next], ['b', q, next]]);
  });

  it('re-entry: the same waiting set answers its wait, the same held set its grant; any other overlap is SET_OVERLAP', () => {
    const h = new Harness();
    const [a, b] = [h.open(), h.open()];
    const tb = h.grant(b, 'y');
    expect(acquireAll(h, a, ['x', 'y']).result).toMatchObject({ status: 'waiting', position: 1 });
    expect(acquireAll(h, a, ['y', 'x']).result).toEqual({ status: 'waiting', holderToken: 0, position: 1 });
    expect(acquireAll(h, a, ['x']).result).toMatchObject({ status: 'refused', reason: Reason.SET_OVERLAP, subject: 'x' });
    expect(acquireAll(h, a, ['x', 'y', 'z']).result).toMatchObject({ status: 'refused', reason: Reason.SET_OVERLAP });
    h.release(b, 'y', tb);
    const token = h.m.lastApplied;
    expect(acquireAll(h, a, ['x', 'y']).result).toEqual({ status: 'granted', token, newGrant: false });
    // A subset of a set held under one token answers that token too; a held lock with a new one is refused.
    expect(acquireAll(h, a, ['y']).result).toEqual({ status: 'granted', token, newGrant: false });
    expect(acquireAll(h, a, ['y', 'w']).result).toMatchObject({ status: 'refused', reason: Reason.SET_OVERLAP, subject: 'y' });
    expect(h.m.describeLock('w')).toBeUndefined();
  });

  it('a cancel in any one queue of the set leaves every queue, and the locks go on to those behind', () => {
    const h = new Harness();
    const [a, b, c] = [h.open(), h.open(), h.open()];
    const ta = h.grant(a, 'x');
    expect(acquireAll(h, b, ['x', 'y']).result).toMatchObject({ status: 'waiting' });
    // y is free, so c's single Acquire of y waits behind b's set.
    expect(h.acquire(c, 'y').result).toMatchObject({ status: 'waiting', position: 2 });
    const out = h.cancel(b, 'x');
    expect(out.result).toEqual({ status: 'cancelled' });
    expect(out.events.filter((e) => e.type === 'wait_ended').map((e) => (e as { lock: string }).lock)).toEqual(['x', 'y']);
    expect(grants(out.events)).toEqual([['y', c, h.m.lastApplied]]);
    expect(h.m.getSession(b)?.waiting).toEqual([]);
    expect(h.m.describeLock('x')?.holder?.token).toBe(ta);
  });

  it('the end of a waiting session removes its set from every queue; the end of a holder hands its whole set on in one entry', () => {
    const h = new Harness();
    const [a, b, c] = [h.open(), h.open(), h.open()];
    const token = (acquireAll(h, a, ['x', 'y']).result as { token: number }).token;
    expect(acquireAll(h, b, ['x', 'y']).result).toMatchObject({ status: 'waiting' });
    expect(acquireAll(h, c, ['y', 'x']).result).toMatchObject({ status: 'waiting' });
    h.close(b);
    expect(h.m.describeLock('x')?.waiters).toEqual([c]);
    expect(h.m.describeLock('y')?.waiters).toEqual([c]);
    const out = h.expire(a);
    const index = h.m.lastApplied;
    expect(index).toBeGreaterThan(token);
    expect(grants(out.events)).toEqual([['x', c, index], ['y', c, index]]);
  });

  it('a lock in its lock-delay holds back the whole set until the delay ends; revoking one lock of a set releases only it', () => {
    const h = new Harness();
    const [a, b] = [h.open(), h.open()];
    h.apply(h.req('Acquire', { lock: 'x', sessionId: a, tryOnly: true, lockDelayMs: 1_000 }));
    h.expire(a);
    const since = h.m.lastApplied;
    expect(acquireAll(h, b, ['x', 'y'], true).result).toMatchObject({ status: 'refused', reason: Reason.LOCK_DELAYED });
    expect(acquireAll(h, b, ['x', 'y']).result).toMatchObject({ status: 'waiting' });
    expect(h.m.describeLock('y')).toMatchObject({ holder: null, waiters: [b] });
    const ended = h.apply({ type: 'EndLockDelays', now: h.tick(), delays: [{ lock: 'x', since }] });
    const index = h.m.lastApplied;
    expect(grants(ended.events)).toEqual([['x', b, index], ['y', b, index]]);
    const revoked = h.apply(h.req('RevokeLock', { lock: 'x', token: 0, reason: 'test' }));
    expect(revoked.result).toMatchObject({ status: 'released', token: index });
    expect(holds(h, b, ['x', 'y'])).toEqual([['y', index]]);
  });

  it('checks the lock permission on every name before anything happens, and counts every lock and wait in the quotas', () => {
    const h = new Harness();
    h.auth({ op: 'enable', user: 'admin' });
    h.as('admin', () => {
      h.auth({ op: 'role_add', role: 'apps' });
      h.auth({ op: 'role_grant', role: 'apps', perm: 'lock', prefix: 'app/' });
      h.auth({ op: 'role_quota', role: 'apps', quota: 'locks', value: 2 });
      h.auth({ op: 'user_add', user: 'alice' });
      h.auth({ op: 'user_grant', user: 'alice', role: 'apps' });
    });
    h.caller = 'alice';
    const a = h.open();
    expect(acquireAll(h, a, ['app/1', 'other']).result).toEqual({ status: 'refused', reason: Reason.PERMISSION_DENIED, watermark: 0, subject: 'lock other' });
    expect(h.m.describeLock('app/1')).toBeUndefined();
    expect(acquireAll(h, a, ['app/1', 'app/2', 'app/3']).result).toEqual({ status: 'refused', reason: Reason.QUOTA_EXCEEDED, watermark: 0, subject: 'locks' });
    expect(acquireAll(h, a, ['app/1', 'app/2']).result).toMatchObject({ status: 'granted', newGrant: true });
    expect(h.m.auth.usage('alice')).toMatchObject({ locks: 2 });
  });

  it('a waiting set survives a snapshot and restart, the same object in every queue, and is granted after it', () => {
    const h = new Harness();
    const [a, b, c] = [h.open(), h.open(), h.open()];
    const ta = h.grant(a, 'x');
    expect(acquireAll(h, b, ['z', 'x', 'y']).result).toMatchObject({ status: 'waiting' });
    expect(acquireAll(h, c, ['y', 'w']).result).toMatchObject({ status: 'waiting' });
    expect(h.acquire(c, 'v').result).toMatchObject({ status: 'granted' });
    const back = expectSnapshotExact(h);
    const h2 = new Harness(back);
    h2.now = h.now;
    h2.clientId = 'client-after-restart';
    const index = back.lastApplied + 1;
    expect(grants(h2.release(a, 'x', ta).events)).toEqual([['x', b, index], ['y', b, index], ['z', b, index]]);
    expect(h2.m.describeLock('w')).toMatchObject({ holder: null, waiters: [c] });
    expectSnapshotExact(h2);
  });

  it('refuses a snapshot whose set does not begin with the lock it names, or splits a set', () => {
    const h = new Harness();
    const [a, b] = [h.open(), h.open()];
    h.grant(a, 'x');
    expect(acquireAll(h, b, ['x', 'y']).result).toMatchObject({ status: 'waiting' });
    const good = referenceSnapshot(h.m);
    const withSets = (sets: Record<string, string>): typeof good => ({ ...good, locks: good.locks.map((l) => ({ ...l, waiterSets: l.waiters.map(() => sets[l.name] ?? '') })) });
    expect(() => LockStateMachine.readSnapshot(encodePlainSnapshot(withSets({ x: 'x', y: 'x' })))).not.toThrow();
    expect(() => LockStateMachine.readSnapshot(encodePlainSnapshot(withSets({ x: 'y', y: 'y' })))).toThrow(/does not begin with "y"/);
    // Split in two sets: y's would be a set of its own, free and grantable, yet not granted.
    expect(() => LockStateMachine.readSnapshot(encodePlainSnapshot(withSets({ x: 'x', y: 'y' })))).toThrow(/free lock "y" has waiters/);
  });

  it('encodes and decodes the command through the log codec', () => {
    const h = new Harness();
    const c = h.req('AcquireAll', { locks: ['b', 'a'], sessionId: h.open(), tryOnly: false, waitTimeoutMs: 1_000 });
    expect(decodeCommand(encodeCommand(c as Command))).toEqual(c);
  });
});

describe('AcquireAll: progress', () => {
  it('two sets in opposite orders and a stream of later single acquirers: never a partial set, both sets granted again and again', () => {
    const h = new Harness();
    const [p, q] = [h.open(), h.open()];
    const singles = [h.open(), h.open()];
    const sets: Array<[string, string[]]> = [[p, ['a', 'b']], [q, ['b', 'a']]];
    const granted = new Map<string, Set<number>>([[p, new Set()], [q, new Set()]]);
    for (let round = 0; round < 100; round++) {
      for (const [s, locks] of sets) {
        acquireAll(h, s, locks);
      }
      // A single acquirer arrives after the sets each round; it must not overtake them.
      const single = singles[round % 2];
      h.acquire(single, round % 2 === 0 ? 'a' : 'b');
      for (const [s] of sets) {
        const held = holds(h, s, ['a', 'b']);
        expect(held.length === 0 || (held.length === 2 && held[0][1] === held[1][1]), `round ${round}: ${JSON.stringify(held)}`).toBe(true);
        if (held.length === 2) granted.get(s)?.add(held[0][1]);
      }
      // Whoever held a lock at this point lets it go (a set lock by lock), and the grants move on.
      const held = ['a', 'b'].map((name) => [name, h.m.describeLock(name)?.holder] as const);
      for (const [name, holder] of held) if (holder !== null && holder !== undefined) h.release(holder.sessionId, name, holder.token);
    }
    expect(granted.get(p)?.size).toBeGreaterThan(20);
    expect(granted.get(q)?.size).toBeGreaterThan(20);
  });
});

// Read-write locks (issue 33): shared holders together or one exclusive holder, FIFO with no writer
// starvation, a token per grant, shared holders refused for fenced writes (docs/architecture.md#read-write-locks).
import { describe, expect, it } from 'vitest';
import { decodeCommand, encodeCommand } from '../../src/codec/commandCodec';
import { Reason, type Command, type CommandResult } from '../../src/state';
import { Harness, put, referenceSnapshot, roundTrip } from './harness';
import { encodePlainSnapshot } from './snapshotOracle';

function acquireShared(h: Harness, sessionId: string, lock: string, tryOnly = false): CommandResult {
  return h.apply(h.req('Acquire', { lock, sessionId, tryOnly, waitTimeoutMs: tryOnly ? 0 : 5_000, shared: true }));
}

function grantShared(h: Harness, sessionId: string, lock: string): number {
  const r = acquireShared(h, sessionId, lock).result;
  expect(r).toMatchObject({ status: 'granted', newGrant: true });
  return (r as { token: number }).token;
}

const revoke = (h: Harness, lock: string, token = 0): Command => h.req('RevokeLock', { lock, token, reason: 'test' });

/** The snapshot round-trips to the same bytes, and the plain oracle writes those bytes too. */
function expectSnapshotExact(h: Harness): void {
  const bytes = h.m.writeSnapshot();
  expect(roundTrip(h.m).writeSnapshot()).toEqual(bytes);
  expect(encodePlainSnapshot(referenceSnapshot(h.m))).toEqual(bytes);
}

describe('read-write locks: the state machine', () => {
  it('grants shared holders together, each with its own token, and lists them in Describe', () => {
    const h = new Harness();
    const [a, b] = [h.open(), h.open()];
    const ta = grantShared(h, a, 'db');
    const tb = grantShared(h, b, 'db');
    expect(tb).toBeGreaterThan(ta);
    const info = h.m.describeLock('db');
    expect(info?.holder).toBeNull();
    expect(info?.sharedHolders?.map((x) => [x.sessionId, x.token])).toEqual([[a, ta], [b, tb]]);
    expect(info?.latestToken).toBe(tb);
    expect(h.m.getSession(a)?.sharedLocks).toEqual(['db']);
    expect(h.m.sessionLockState('db', b)).toEqual({ state: 'holder', token: tb });
    expectSnapshotExact(h);
  });

  it('queues later readers behind a waiting writer (no writer starvation), and grants the writer a token above every shared one', () => {
    const h = new Harness();
    const [r1, r2, w, r3] = [h.open(), h.open(), h.open(), h.open()];
    const t1 = grantShared(h, r1, 'db');
    const t2 = grantShared(h, r2, 'db');
    expect(h.acquire(w, 'db').result).toMatchObject({ status: 'waiting', position: 1 });
    // r3 comes after the writer: it waits although only readers hold the lock.
    expect(acquireShared(h, r3, 'db').result).toMatchObject({ status: 'waiting', position: 2 });
    expect(acquireShared(h, r3, 'db', true).result).toMatchObject({ status: 'waiting', position: 2 });
    expect(h.release(r1, 'db', t1).result).toEqual({ status: 'released', token: t1 });
    expect(h.m.describeLock('db')?.waiters).toEqual([w, r3]);
    const last = h.release(r2, 'db', t2);
    const tw = h.m.lastApplied;
    expect(last.result).toEqual({ status: 'released', token: t2, nextHolder: w, nextToken: tw });
    expect(tw).toBeGreaterThan(t2);
    expect(h.m.describeLock('db')?.holder?.token).toBe(tw);
    // The writer's release hands the lock to the reader behind it.
    expect(h.release(w, 'db', tw).events).toContainEqual({ type: 'granted', lock: 'db', sessionId: r3, token: h.m.lastApplied, cause: 'released', shared: true });
  });

  it('a try-lock for a shared grant behind a waiting writer answers held, and an exclusive try-lock of a lock held shared too', () => {
    const h = new Harness();
    const [r1, w, r2, w2] = [h.open(), h.open(), h.open(), h.open()];
    grantShared(h, r1, 'db');
    expect(h.acquire(w2, 'db', true).result).toEqual({ status: 'held', holderToken: 0 });
    h.acquire(w, 'db');
    expect(acquireShared(h, r2, 'db', true).result).toEqual({ status: 'held', holderToken: 0 });
  });

  it('hands a released exclusive grant to the run of readers at the head of the queue, all with that entry\'s index, and stops at the next writer', () => {
    const h = new Harness();
    const [w1, r1, r2, w2, r3] = [h.open(), h.open(), h.open(), h.open(), h.open()];
    const t = h.grant(w1, 'db');
    acquireShared(h, r1, 'db');
    acquireShared(h, r2, 'db');
    h.acquire(w2, 'db');
    acquireShared(h, r3, 'db');
    const out = h.release(w1, 'db', t);
    const index = h.m.lastApplied;
    expect(out.result).toEqual({ status: 'released', token: t, nextHolder: r1, nextToken: index });
    expect(out.events.filter((e) => e.type === 'granted')).toEqual([
      { type: 'granted', lock: 'db', sessionId: r1, token: index, cause: 'released', shared: true },
      { type: 'granted', lock: 'db', sessionId: r2, token: index, cause: 'released', shared: true },
    ]);
    expect(h.m.describeLock('db')?.waiters).toEqual([w2, r3]);
    expect(h.m.describeLock('db')?.waiterSessions.map((x) => x.shared === true)).toEqual([false, true]);
    expectSnapshotExact(h);
  });

  it('refuses a shared holder\'s fenced write SHARED_GRANT, accepts the exclusive holder\'s; a reader can tell no writer came after it', () => {
    const h = new Harness();
    const [r, w] = [h.open(), h.open()];
    const tw0 = h.grant(w, 'db');
    expect(h.write(w, 'db', tw0, [put('db/k', 'v1')]).result).toMatchObject({ status: 'written' });
    h.release(w, 'db', tw0);
    const tr = grantShared(h, r, 'db');
    const refusal = h.write(r, 'db', tr, [put('db/k', 'bad')]).result;
    expect(refusal).toMatchObject({ status: 'refused', reason: Reason.SHARED_GRANT, watermark: tr });
    expect(h.value('db/k')).toBe('v1');
    // Downstream, the reader compares the key's watermark (the token of its last write) with its own token:
    // below it, no exclusive grant after the reader's has written.
    expect(h.m.get('db/k')?.watermark).toBeLessThan(tr);
    h.release(r, 'db', tr);
    const tw = h.grant(w, 'db');
    expect(tw).toBeGreaterThan(tr);
    h.write(w, 'db', tw, [put('db/k', 'v2')]);
    expect(h.m.get('db/k')?.watermark).toBeGreaterThan(tr);
  });

  it('re-entrant in the same mode (same token), MODE_CONFLICT in the other, held or queued', () => {
    const h = new Harness();
    const [a, b, c] = [h.open(), h.open(), h.open()];
    const ta = grantShared(h, a, 'db');
    expect(acquireShared(h, a, 'db').result).toEqual({ status: 'granted', token: ta, newGrant: false });
    expect(h.acquire(a, 'db').result).toMatchObject({ status: 'refused', reason: Reason.MODE_CONFLICT });
    const tb = h.grant(b, 'other');
    expect(acquireShared(h, b, 'other').result).toMatchObject({ status: 'refused', reason: Reason.MODE_CONFLICT });
    expect(h.acquire(b, 'other').result).toEqual({ status: 'granted', token: tb, newGrant: false });
    h.acquire(c, 'db');
    expect(acquireShared(h, c, 'db').result).toMatchObject({ status: 'refused', reason: Reason.MODE_CONFLICT });
    expect(h.m.describeLock('db')?.sharedHolders?.length).toBe(1);
  });

  it('a writer at the head that gives up (cancel or expiry) lets the readers behind it join the shared holders', () => {
    const h = new Harness();
    const [r1, w, r2, r3, w2, r4] = [h.open(), h.open(), h.open(), h.open(), h.open(), h.open()];
    grantShared(h, r1, 'db');
    h.acquire(w, 'db');
    acquireShared(h, r2, 'db');
    const cancelled = h.cancel(w, 'db');
    expect(cancelled.result).toEqual({ status: 'cancelled' });
    expect(cancelled.events).toContainEqual({ type: 'granted', lock: 'db', sessionId: r2, token: h.m.lastApplied, cause: 'acquired', shared: true });
    h.acquire(w2, 'db');
    acquireShared(h, r3, 'db');
    acquireShared(h, r4, 'db');
    const expired = h.expire(w2);
    expect(expired.events.filter((e) => e.type === 'granted').map((e) => e.sessionId)).toEqual([r3, r4]);
    expect(h.m.describeLock('db')?.sharedHolders?.length).toBe(4);
    expect(h.m.describeLock('db')?.waiters).toEqual([]);
  });

  it('ends a shared holder\'s grant when its session ends; the last one hands the lock to the waiting writer', () => {
    const h = new Harness();
    const [r1, r2, w] = [h.open(), h.open(), h.open()];
    grantShared(h, r1, 'db');
    grantShared(h, r2, 'db');
    h.acquire(w, 'db');
    expect(h.expire(r1).result).toMatchObject({ status: 'sessions_expired', ended: [r1] });
    expect(h.m.describeLock('db')?.holder).toBeNull();
    const closed = h.close(r2);
    expect(closed.result).toMatchObject({ status: 'session_ended', released: ['db'] });
    expect(h.m.describeLock('db')?.holder?.sessionId).toBe(w);
  });

  it('revokes every shared grant (token 0) or the one named by its token', () => {
    const h = new Harness();
    const [r1, r2, r3, w] = [h.open(), h.open(), h.open(), h.open()];
    grantShared(h, r1, 'db');
    const t2 = grantShared(h, r2, 'db');
    grantShared(h, r3, 'db');
    h.acquire(w, 'db');
    const one = h.apply(revoke(h, 'db', t2));
    expect(one.result).toEqual({ status: 'released', token: t2 });
    expect(h.m.describeLock('db')?.sharedHolders?.map((x) => x.sessionId)).toEqual([r1, r3]);
    expect(h.apply(revoke(h, 'db', t2)).result).toMatchObject({ status: 'refused', reason: Reason.WRONG_TOKEN });
    const all = h.apply(revoke(h, 'db', 0));
    expect(all.events.filter((e) => e.type === 'released').map((e) => e.sessionId)).toEqual([r1, r3]);
    expect(h.m.describeLock('db')?.holder?.sessionId).toBe(w);
    // Shared grants start no lock-delay: the writer was granted in the revoking entry.
    expect(h.m.lockDelayOf('db')).toBeUndefined();
  });

  it('refuses a shared Acquire with a lock-delay as invalid, and Release under another token WRONG_TOKEN', () => {
    const h = new Harness();
    const a = h.open();
    const bad = h.apply(h.req('Acquire', { lock: 'db', sessionId: a, tryOnly: true, waitTimeoutMs: 0, shared: true, lockDelayMs: 100 }));
    expect(bad.result).toMatchObject({ status: 'invalid' });
    const t = grantShared(h, a, 'db');
    expect(h.release(a, 'db', t + 1).result).toMatchObject({ status: 'refused', reason: Reason.WRONG_TOKEN });
  });

  it('counts shared grants towards the per-caller locks quota and listing, and keeps them across a snapshot with readers and writers queued', () => {
    const h = new Harness();
    const [r1, w, r2] = [h.open(), h.open(), h.open()];
    grantShared(h, r1, 'db');
    h.acquire(w, 'db');
    acquireShared(h, r2, 'db');
    expect(h.m.stats().heldLocks).toBe(1);
    const listed = h.m.listLocks('', { limit: 10, includeIdle: false, maxWaiters: 10, visible: () => true });
    expect(listed[0]?.sharedHolders?.map((x) => x.sessionId)).toEqual([r1]);
    expect(listed[0]?.waiters.map((x) => x.shared === true)).toEqual([false, true]);
    expectSnapshotExact(h);
    const restored = roundTrip(h.m);
    expect(restored.describeLock('db')).toEqual(h.m.describeLock('db'));
  });

  it('a shared Acquire survives the log codec; an exclusive one decodes without the field, as before modes', () => {
    const h = new Harness();
    const shared = h.req('Acquire', { lock: 'db', sessionId: 'S', tryOnly: false, waitTimeoutMs: 10, shared: true });
    expect(decodeCommand(encodeCommand(shared))).toEqual(shared);
    const exclusive = h.req('Acquire', { lock: 'db', sessionId: 'S', tryOnly: false, waitTimeoutMs: 10 });
    expect(decodeCommand(encodeCommand(exclusive))).toEqual(exclusive);
  });
});

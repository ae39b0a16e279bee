// The fencing matrix (docs/architecture.md#promises, promise 2): who may write, under which token, and why everyone else is refused.
import { describe, expect, it } from 'vitest';
import { Reason } from '../../src/state';
import * as L from '../../src/state/limits';
import { checkFence } from '../../src/state/fencing';
import { FencedKv } from '../../src/state/fencedKv';
import { newLockRecord, newSession } from '../../src/state/records';
import { Harness, del, put, referenceSnapshot, roundTrip, sid } from './harness';

// The entry index each write carries is checked in dedup.test.ts.
const written = (token: number, ops = 1) => ({ status: 'written', token, ops, index: expect.any(Number) as number });
const refusedWith = (reason: string, watermark: number, key?: string) =>
  key === undefined ? { status: 'refused', reason, watermark } : { status: 'refused', reason, watermark, key };
/** WRONG_LOCK for `key`, which belongs to lock `owner`. */
const keyOfAnotherLock = (watermark: number, key: string, owner: string) => ({ status: 'refused', reason: Reason.WRONG_LOCK, watermark, key, owner });

describe('fenced write: the holder', () => {
  it('writes under its current token; every touched key gets that watermark and belongs to the lock', () => {
    const h = new Harness();
    const a = h.open();
    const t = h.grant(a, 'L');
    expect(h.write(a, 'L', t, [put('k1', 'v1'), put('k2', 'v2')]).result).toEqual(written(t, 2));
    expect(h.m.get('k1')).toEqual({ key: 'k1', lock: 'L', watermark: t, value: new TextEncoder().encode('v1') });
    // token equal to the watermark: accepted again (the holder writes as often as it likes)
    expect(h.write(a, 'L', t, [put('k1', 'v1b')]).result).toEqual(written(t));
    expect(h.value('k1')).toBe('v1b');
    expect(h.m.list('k', 10).map((e) => e.key)).toEqual(['k1', 'k2']);
  });

  it('a write produces no lock events', () => {
    const h = new Harness();
    const a = h.open();
    const t = h.grant(a, 'L');
    expect(h.write(a, 'L', t, [put('k', 'v')]).events).toEqual([]);
  });

  it('a token above the latest grant was never issued for this lock: WRONG_LOCK', () => {
    const h = new Harness();
    const a = h.open();
    const t = h.grant(a, 'L');
    h.write(a, 'L', t, [put('k', 'v')]);
    expect(h.write(a, 'L', t + 100, [put('k', 'x')]).result).toEqual(refusedWith(Reason.WRONG_LOCK, t));
    expect(h.value('k')).toBe('v');
  });
});

// One test per row of the README's table ("The fencing rules"), in its order. Each sets up a write that also
// matches later rows where it can, to show that the earlier row wins.
describe('the fencing table, row by row in precedence order', () => {
  it('row 1 WRONG_LOCK: a touched key belongs to another lock', () => {
    const h = new Harness();
    const [a, b] = [h.open(), h.open()];
    const tl = h.grant(a, 'L');
    h.write(a, 'L', tl, [put('l-key', 'v')]);
    const t1 = h.grant(b, 'M');
    h.write(b, 'M', t1, [put('m-key', 'v')]);
    h.release(b, 'M', t1);
    const t2 = h.grant(a, 'M');
    // a stale token (row 3) from a session that is not open (row 4), and a key of L: row 1 wins
    h.close(b);
    expect(h.write(b, 'M', t1, [put('m-key', 'x'), put('l-key', 'x')]).result)
      .toEqual(keyOfAnotherLock(t2, 'l-key', 'L'));
    // and with a token above the lock's latest (row 2)
    expect(h.write(a, 'M', h.index + 10, [put('l-key', 'x')]).result).toEqual(keyOfAnotherLock(t2, 'l-key', 'L'));
    expect(h.value('l-key')).toBe('v');
  });

  it('row 2 WRONG_LOCK: a token above the lock\'s latest token, which cannot have been issued for it', () => {
    const h = new Harness();
    const a = h.open();
    const tl = h.grant(a, 'L');
    const tm = h.grant(a, 'M'); // issued for M, above L's latest
    expect(tm).toBeGreaterThan(tl);
    expect(h.write(a, 'L', tm, [put('k', 'x')]).result).toEqual(refusedWith(Reason.WRONG_LOCK, tl));
    // from a session that is not open (row 4): row 2 wins
    expect(h.write(sid(404), 'L', tm, [put('k', 'x')]).result).toEqual(refusedWith(Reason.WRONG_LOCK, tl));
    // a lock with no record: above every token it may have issued
    expect(h.write(a, 'never-used', h.index + 1, [put('k', 'x')]).result).toEqual(refusedWith(Reason.WRONG_LOCK, 0));
    expect(h.m.get('k')).toBeUndefined();
  });

  it('row 3 STALE_TOKEN: a token issued for another lock, below this lock\'s latest token', () => {
    const h = new Harness();
    const [a, b] = [h.open(), h.open()];
    const ty = h.grant(a, 'res/y');
    const tx = h.grant(b, 'res/x');
    expect(ty).toBeLessThan(tx);
    // the lock keeps only its latest token: it cannot tell res/y's token from an old grant of res/x
    expect(h.write(a, 'res/x', ty, [put('x/k', 'a')]).result).toEqual(refusedWith(Reason.STALE_TOKEN, tx));
    // from a session that is not open (row 4): row 3 wins
    expect(h.write(sid(404), 'res/x', ty, [put('x/k', 'a')]).result).toEqual(refusedWith(Reason.STALE_TOKEN, tx));
    // an older grant of this lock itself, the common case
    h.release(b, 'res/x', tx);
    const tx2 = h.grant(a, 'res/x');
    expect(h.write(b, 'res/x', tx, [put('x/k', 'b')]).result).toEqual(refusedWith(Reason.STALE_TOKEN, tx2));
    expect(h.m.get('x/k')).toBeUndefined();
  });

  it('row 4 UNKNOWN_SESSION: a session that is not open and was not the grant\'s holder, with the latest token', () => {
    const h = new Harness();
    const [a, b] = [h.open(), h.open()];
    const t = h.grant(a, 'L');
    h.close(b);
    expect(h.write(b, 'L', t, [put('k', 'x')]).result).toEqual(refusedWith(Reason.UNKNOWN_SESSION, t));
    expect(h.write(sid(404), 'L', t, [put('k', 'x')]).result).toEqual(refusedWith(Reason.UNKNOWN_SESSION, t));
    // after the grant ended, too (a key keeps the lock's record)
    h.write(a, 'L', t, [put('owned', '1')]);
    h.release(a, 'L', t);
    expect(h.write(sid(404), 'L', t, [put('k', 'x')]).result).toEqual(refusedWith(Reason.UNKNOWN_SESSION, t));
    expect(h.m.get('k')).toBeUndefined();
  });

  it('row 5 NOT_HOLDER: an open session that does not hold the lock, writing with the holder\'s current token', () => {
    const h = new Harness();
    const [a, b] = [h.open(), h.open()];
    const t = h.grant(a, 'L');
    h.write(a, 'L', t, [put('k', 'a')]);
    expect(h.write(b, 'L', t, [put('k', 'b')]).result).toEqual(refusedWith(Reason.NOT_HOLDER, t));
    // a waiter, too
    h.acquire(b, 'L');
    expect(h.write(b, 'L', t, [put('k', 'b')]).result).toEqual(refusedWith(Reason.NOT_HOLDER, t));
    h.cancel(b, 'L');
    // after the holder's grant ended: still not b's grant (not LOCK_NOT_HELD, which is for its holder)
    h.release(a, 'L', t);
    expect(h.write(b, 'L', t, [put('k', 'b')]).result).toEqual(refusedWith(Reason.NOT_HOLDER, t));
    expect(h.value('k')).toBe('a');
  });

  it('row 6 LOCK_NOT_HELD: the holder, after its grant ended, with no newer grant', () => {
    const h = new Harness();
    const a = h.open();
    const t = h.grant(a, 'L');
    h.write(a, 'L', t, [put('k', 'v')]);
    h.release(a, 'L', t);
    expect(h.write(a, 'L', t, [put('k', 'x')]).result).toEqual(refusedWith(Reason.LOCK_NOT_HELD, t));
    // its session closed as well: still its own grant that ended (not UNKNOWN_SESSION)
    h.close(a);
    expect(h.write(a, 'L', t, [put('k', 'x')]).result).toEqual(refusedWith(Reason.LOCK_NOT_HELD, t));
    // a forgotten lock (free, no keys): any token it may have issued
    const b = h.open();
    const tm = h.grant(b, 'M');
    h.release(b, 'M', tm);
    expect(h.m.describeLock('M')).toBeUndefined();
    expect(h.write(b, 'M', tm, [put('m', 'x')]).result).toEqual(refusedWith(Reason.LOCK_NOT_HELD, 0));
    expect(h.value('k')).toBe('v');
  });
});

describe('fenced write: stale holders (below the watermark)', () => {
  it('after release and a new grant: STALE_TOKEN for the old holder, before and after the new holder writes', () => {
    const h = new Harness();
    const [a, b] = [h.open(), h.open()];
    const t1 = h.grant(a, 'L');
    h.write(a, 'L', t1, [put('k', 'a1')]);
    h.release(a, 'L', t1);
    const t2 = h.grant(b, 'L');
    expect(h.write(a, 'L', t1, [put('k', 'a2')]).result).toEqual(refusedWith(Reason.STALE_TOKEN, t2));
    expect(h.write(b, 'L', t1, [put('k', 'b?')]).result).toEqual(refusedWith(Reason.STALE_TOKEN, t2));
    expect(h.write(b, 'L', t2, [put('k', 'b1')]).result).toEqual(written(t2));
    expect(h.write(a, 'L', t1, [put('k', 'a3')]).result).toEqual(refusedWith(Reason.STALE_TOKEN, t2));
    // an old token on a key the new holder has not written: still stale (the store knows the newest grant)
    expect(h.write(a, 'L', t1, [put('fresh', 'a')]).result).toEqual(refusedWith(Reason.STALE_TOKEN, t2));
    expect(h.m.get('fresh')).toBeUndefined();
    expect(h.value('k')).toBe('b1');
    expect(h.m.get('k')?.watermark).toBe(t2);
  });

  it('a paused holder whose session expired and whose lock was regranted is refused', () => {
    const h = new Harness();
    const [a, b] = [h.open(), h.open()];
    const t1 = h.grant(a, 'L');
    h.write(a, 'L', t1, [put('k', 'a1')]);
    h.acquire(b, 'L');
    h.expire(a); // hands L to b at this index
    const t2 = h.index;
    expect(h.write(a, 'L', t1, [put('k', 'late')]).result).toEqual(refusedWith(Reason.STALE_TOKEN, t2));
    expect(h.write(b, 'L', t2, [put('k', 'b1')]).result).toEqual(written(t2));
    expect(h.value('k')).toBe('b1');
  });

  it('a regranted holder itself cannot use its older token', () => {
    const h = new Harness();
    const a = h.open();
    const t1 = h.grant(a, 'L');
    h.write(a, 'L', t1, [put('k', '1')]);
    h.release(a, 'L', t1);
    const t2 = h.grant(a, 'L');
    expect(h.write(a, 'L', t1, [put('k', 'old')]).result).toEqual(refusedWith(Reason.STALE_TOKEN, t2));
    expect(h.write(a, 'L', t2, [put('k', 'new')]).result).toEqual(written(t2));
  });
});

describe('fenced write: grant ended, no newer grant', () => {
  it('released: LOCK_NOT_HELD with the watermark', () => {
    const h = new Harness();
    const a = h.open();
    const t = h.grant(a, 'L');
    h.write(a, 'L', t, [put('k', 'v')]);
    h.release(a, 'L', t);
    expect(h.write(a, 'L', t, [put('k', 'x')]).result).toEqual(refusedWith(Reason.LOCK_NOT_HELD, t));
    expect(h.value('k')).toBe('v');
  });

  for (const end of ['expired', 'closed'] as const) {
    it(`${end}: LOCK_NOT_HELD for the former holder, even though its session is gone`, () => {
      const h = new Harness();
      const a = h.open();
      const t = h.grant(a, 'L');
      h.write(a, 'L', t, [put('k', 'v')]);
      if (end === 'expired') h.expire(a);
      else h.close(a);
      expect(h.write(a, 'L', t, [put('k', 'x')]).result).toEqual(refusedWith(Reason.LOCK_NOT_HELD, t));
    });
  }

  it('lock forgotten (idle, no keys): LOCK_NOT_HELD for a token it may have issued, WRONG_LOCK above all forgotten tokens', () => {
    const h = new Harness();
    const a = h.open();
    const t = h.grant(a, 'L');
    h.expire(a);
    expect(h.m.describeLock('L')).toBeUndefined();
    expect(h.write(a, 'L', t, [put('k', 'x')]).result).toEqual(refusedWith(Reason.LOCK_NOT_HELD, 0));
    expect(h.write(a, 'L', h.index + 50, [put('k', 'x')]).result).toEqual(refusedWith(Reason.WRONG_LOCK, 0));
    expect(h.write(a, 'never-used', t + 1, [put('k', 'x')]).result).toEqual(refusedWith(Reason.WRONG_LOCK, 0));
    expect(h.m.get('k')).toBeUndefined();
  });
});

describe('fenced write: sessions', () => {
  it('another live session presenting the holder token: NOT_HOLDER', () => {
    const h = new Harness();
    const [a, b] = [h.open(), h.open()];
    const t = h.grant(a, 'L');
    expect(h.write(b, 'L', t, [put('k', 'x')]).result).toEqual(refusedWith(Reason.NOT_HOLDER, t));
  });

  it('an unknown session presenting the current token: UNKNOWN_SESSION', () => {
    const h = new Harness();
    const a = h.open();
    const t = h.grant(a, 'L');
    expect(h.write(sid(404), 'L', t, [put('k', 'x')]).result).toEqual(refusedWith(Reason.UNKNOWN_SESSION, t));
    expect(h.m.get('k')).toBeUndefined();
    // after the grant ended, a stranger still gets UNKNOWN_SESSION; the former holder gets LOCK_NOT_HELD
    h.write(a, 'L', t, [put('owned', '1')]); // a key keeps the lock record after release
    h.release(a, 'L', t);
    expect(h.write(sid(404), 'L', t, [put('k', 'x')]).result).toEqual(refusedWith(Reason.UNKNOWN_SESSION, t));
    expect(h.write(a, 'L', t, [put('k', 'x')]).result).toEqual(refusedWith(Reason.LOCK_NOT_HELD, t));
  });

  it('an unknown session presenting a stale token: STALE_TOKEN (a newer grant is the stronger fact)', () => {
    const h = new Harness();
    const [a, b] = [h.open(), h.open()];
    const t1 = h.grant(a, 'L');
    h.release(a, 'L', t1);
    const t2 = h.grant(b, 'L');
    expect(h.write(sid(404), 'L', t1, [put('k', 'x')]).result).toEqual(refusedWith(Reason.STALE_TOKEN, t2));
  });

  it('a waiter cannot write under the holder token', () => {
    const h = new Harness();
    const [a, b] = [h.open(), h.open()];
    const t = h.grant(a, 'L');
    h.acquire(b, 'L');
    expect(h.write(b, 'L', t, [put('k', 'x')]).result).toEqual(refusedWith(Reason.NOT_HOLDER, t));
  });
});

describe('fenced write: wrong lock', () => {
  it('a key bound to another lock: WRONG_LOCK naming the key, even with a valid grant', () => {
    const h = new Harness();
    const [a, b] = [h.open(), h.open()];
    const tl = h.grant(a, 'L');
    h.write(a, 'L', tl, [put('shared', 'L')]);
    const tm = h.grant(b, 'M');
    expect(h.write(b, 'M', tm, [put('shared', 'M')]).result).toEqual(keyOfAnotherLock(tm, 'shared', 'L'));
    // the holder of both cannot move a key either
    const tn = h.grant(a, 'N');
    expect(h.write(a, 'N', tn, [del('shared')]).result).toEqual(keyOfAnotherLock(tn, 'shared', 'L'));
    expect(h.value('shared')).toBe('L');
  });

  it('names the lock owning the key: a tombstone keeps it, a retry and a restored machine answer it again', () => {
    const h = new Harness();
    const [a, b] = [h.open(), h.open()];
    const to = h.grant(a, 'orders');
    h.write(a, 'orders', to, [put('k', 'v')]);
    h.write(a, 'orders', to, [del('k')]);
    const tb = h.grant(b, 'billing');
    const command = h.req('Write', { lock: 'billing', sessionId: b, token: tb, ops: [put('free', 'x'), put('k', 'x')] });
    const first = h.apply(command).result;
    expect(first).toEqual(keyOfAnotherLock(tb, 'k', 'orders'));
    expect(h.apply(command)).toEqual({ result: first, events: [], duplicate: true });
    expect(roundTrip(h.m).apply(h.index + 1, command)).toEqual({ result: first, events: [], duplicate: true });
  });

  it('the refusal watermark includes the watermarks of keys bound to other locks', () => {
    const h = new Harness();
    const [a, b] = [h.open(), h.open()];
    const tm = h.grant(b, 'M');
    const tl = h.grant(a, 'L');
    h.write(a, 'L', tl, [put('k', 'v')]);
    expect(tl).toBeGreaterThan(tm);
    expect(h.write(b, 'M', tm, [put('k', 'x')]).result).toEqual(keyOfAnotherLock(tl, 'k', 'L'));
  });

  it('a token issued for another lock: WRONG_LOCK when above this lock\'s latest, STALE_TOKEN when below', () => {
    const h = new Harness();
    const a = h.open();
    const tl = h.grant(a, 'L');
    const tm = h.grant(a, 'M');
    expect(tm).toBeGreaterThan(tl);
    expect(h.write(a, 'L', tm, [put('k', 'x')]).result).toEqual(refusedWith(Reason.WRONG_LOCK, tl));
    expect(h.write(a, 'M', tl, [put('k', 'x')]).result).toEqual(refusedWith(Reason.STALE_TOKEN, tm));
    expect(h.m.get('k')).toBeUndefined();
  });
});

describe('fenced write: atomicity and tombstones', () => {
  it('one bad key refuses the whole write: nothing applies, no key gets bound', () => {
    const h = new Harness();
    const [a, b] = [h.open(), h.open()];
    const tl = h.grant(a, 'L');
    h.write(a, 'L', tl, [put('mine', '1'), put('theirs-later', 'x')]);
    const tm = h.grant(b, 'M');
    h.write(b, 'M', tm, [put('m-key', 'm')]);
    const before = referenceSnapshot(h.m).keys;
    const out = h.write(a, 'L', tl, [put('mine', '2'), put('new-key', 'n'), put('m-key', 'stolen'), del('theirs-later')]);
    expect(out.result).toEqual(keyOfAnotherLock(tm, 'm-key', 'M'));
    expect(referenceSnapshot(h.m).keys).toEqual(before);
    expect(h.m.get('new-key')).toBeUndefined();
    expect(h.value('mine')).toBe('1');
  });

  it('ops apply in order; a key touched twice ends with the last op', () => {
    const h = new Harness();
    const a = h.open();
    const t = h.grant(a, 'L');
    expect(h.write(a, 'L', t, [put('k', '1'), put('k', '2'), put('j', 'x'), del('j')]).result).toEqual(written(t, 4));
    expect(h.value('k')).toBe('2');
    expect(h.m.get('j')).toEqual({ key: 'j', lock: 'L', watermark: t, value: null });
    expect(h.m.stats()).toMatchObject({ keys: 2, liveKeys: 1, storeBytes: 1 + 1 + 1 });
  });

  it('a deleted key keeps its watermark and its lock (tombstone): tokens never go back, keys never move', () => {
    const h = new Harness();
    const [a, b] = [h.open(), h.open()];
    const t1 = h.grant(a, 'L');
    h.write(a, 'L', t1, [put('k', 'v')]);
    h.release(a, 'L', t1);
    const t2 = h.grant(b, 'L');
    h.write(b, 'L', t2, [del('k')]);
    h.release(b, 'L', t2);
    expect(h.m.get('k')).toEqual({ key: 'k', lock: 'L', watermark: t2, value: null });
    expect(h.m.list('', 10)).toEqual([]);
    expect(h.m.describeLock('L')).toMatchObject({ holder: null, latestToken: t2 }); // kept: it owns a key
    expect(h.write(a, 'L', t1, [put('k', 'back')]).result).toEqual(refusedWith(Reason.STALE_TOKEN, t2));
    const tm = h.grant(a, 'M');
    expect(h.write(a, 'M', tm, [put('k', 'moved')]).result).toEqual(keyOfAnotherLock(tm, 'k', 'L'));
    const t3 = h.grant(a, 'L');
    expect(h.write(a, 'L', t3, [put('k', 'again')]).result).toEqual(written(t3));
    expect(h.m.get('k')?.watermark).toBe(t3);
  });

  it('values are copied in and out: mutating buffers changes nothing stored', () => {
    const h = new Harness();
    const a = h.open();
    const t = h.grant(a, 'L');
    const value = new TextEncoder().encode('abc');
    h.write(a, 'L', t, [{ type: 'put', key: 'k', value }]);
    value[0] = 0x7a;
    h.m.get('k')!.value![1] = 0x7a;
    expect(h.value('k')).toBe('abc');
  });
});

describe('checkFence, defensively', () => {
  it('refuses a held grant if a touched key carries a higher watermark (cannot happen through apply)', () => {
    const kv = new FencedKv();
    kv.apply({ type: 'put', key: 'k', value: new Uint8Array(1) }, 'L', 50, '');
    const s = sid(1);
    const record = newLockRecord('L', 0, 40, s);
    record.holder = newSession(s, '', 5_000, 0, 1);
    record.boundKeys = 1;
    const q = { lock: 'L', sessionId: s, token: 40, record, gcFloor: 0, sessionOpen: true, kv };
    expect(checkFence({ ...q, keys: ['k'] })).toEqual({ ok: false, reason: Reason.STALE_TOKEN, watermark: 50, key: 'k' });
    expect(checkFence({ ...q, keys: ['other'] })).toEqual({ ok: true });
  });
});

describe('list', () => {
  it('lists live keys by prefix in code point order, with limit and startAfter', () => {
    const h = new Harness();
    const a = h.open();
    const t = h.grant(a, 'L');
    const keys = ['a/2', 'a/10', 'a/1', 'b/1', 'a/\uffff', 'a/\u{1F600}', 'a/é', 'a'];
    h.write(a, 'L', t, keys.map((k) => put(k, k)));
    h.write(a, 'L', t, [del('a/2')]);
    expect(h.m.list('a/', 100).map((e) => e.key)).toEqual(['a/1', 'a/10', 'a/é', 'a/\uffff', 'a/\u{1F600}']);
    expect(h.m.list('a/', 2).map((e) => e.key)).toEqual(['a/1', 'a/10']);
    expect(h.m.list('a/', 2, { startAfter: 'a/10' }).map((e) => e.key)).toEqual(['a/é', 'a/\uffff']);
    expect(h.m.list('', 100).length).toBe(7);
    expect(h.m.list('c', 100)).toEqual([]);
    expect(h.m.list('a/', 0)).toEqual([]);
  });

  it('lists tombstones too when asked, with their lock and watermark, paging over them alike', () => {
    const h = new Harness();
    const [a, b] = [h.open(), h.open()];
    const tl = h.grant(a, 'L');
    h.write(a, 'L', tl, [put('d/1', 'one'), put('d/2', 'two'), put('d/3', 'three')]);
    const tm = h.grant(b, 'M');
    h.write(b, 'M', tm, [put('d/4', 'four')]);
    h.write(b, 'M', tm, [del('d/4')]);
    h.write(a, 'L', tl, [del('d/2')]);
    expect(h.m.list('d/', 10).map((e) => e.key)).toEqual(['d/1', 'd/3']);
    const all = h.m.list('d/', 10, { includeDeleted: true });
    expect(all.map((e) => [e.key, e.lock, e.watermark, e.value === null])).toEqual([
      ['d/1', 'L', tl, false],
      ['d/2', 'L', tl, true],
      ['d/3', 'L', tl, false],
      ['d/4', 'M', tm, true],
    ]);
    expect(h.m.list('d/', 2, { includeDeleted: true, startAfter: 'd/1' }).map((e) => e.key)).toEqual(['d/2', 'd/3']);
    expect(h.m.list('d/', 1, { includeDeleted: true, startAfter: 'd/3' }).map((e) => e.key)).toEqual(['d/4']);
  });

  it('returns one more than the largest page, so that a full page can tell that more keys follow', () => {
    const h = new Harness();
    const a = h.open();
    const t = h.grant(a, 'L');
    const total = L.MAX_LIST_LIMIT + 5;
    for (let i = 0; i < total; i += L.MAX_OPS_PER_WRITE) {
      const n = Math.min(L.MAX_OPS_PER_WRITE, total - i);
      h.write(a, 'L', t, Array.from({ length: n }, (_, j) => put(`p/${String(i + j).padStart(5, '0')}`, 'v')));
    }
    expect(h.m.list('p/', L.MAX_LIST_LIMIT + 1)).toHaveLength(L.MAX_LIST_LIMIT + 1);
    expect(h.m.list('p/', Number.POSITIVE_INFINITY)).toHaveLength(L.MAX_LIST_LIMIT + 1);
  });
});

describe('values given as Node Buffers (what protobufjs decodes)', () => {
  it('are copied, not aliased: Buffer.slice would share memory', () => {
    const h = new Harness();
    const a = h.open();
    const t = h.grant(a, 'L');
    const entry = Buffer.from('xxhello-worldxx');
    const value = entry.subarray(2, 13); // a view into a larger entry buffer
    h.write(a, 'L', t, [{ type: 'put', key: 'k', value }]);
    entry.fill(0x21);
    expect(h.value('k')).toBe('hello-world');
    const got = h.m.get('k')!.value!;
    expect(Object.getPrototypeOf(got)).toBe(Uint8Array.prototype);
    expect(got.buffer.byteLength).toBe(11);
  });
});

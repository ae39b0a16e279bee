// Moving keys to another lock (docs/auth.md "Moving keys"): bindings move, watermarks stay, the target's
// latest token rises to the highest moved watermark, so no stale token gets in and later grants are above.
import { describe, expect, it } from 'vitest';
import { LockStateMachine, MAX_MOVE_KEYS, validateCommand, type Command, type Result } from '../../src/state';
import { Harness, del, expectSameBytes, internals, put } from './harness';

/** Lock S held by a session with keys k/1 (tombstone), k/2, other; returns the harness, session and token. */
function setup() {
  const h = new Harness();
  const a = h.open();
  const t = h.grant(a, 'S');
  h.write(a, 'S', t, [put('k/1', 'one'), put('k/2', 'two'), put('other', 'x')]);
  const t2 = h.grant(h.open(), 'S2'); // a later index: a higher watermark elsewhere
  h.write(h.m.describeLock('S2')!.holder!.sessionId, 'S2', t2, [put('k/3', 'three')]);
  h.write(a, 'S', t, [del('k/1')]);
  return { h, a, t, t2 };
}

const move = (h: Harness, what: { key: string } | { prefix: string }, toLock: string): Result => h.apply(h.req('MoveKeys', { ...what, toLock })).result;

describe('moving keys', () => {
  it('rebinds a key, keeps its watermark and raises the target’s latest token to it', () => {
    const { h, a, t } = setup();
    expect(move(h, { key: 'k/2' }, 'T')).toEqual({ status: 'keys_moved', moved: 1 });
    expect(h.m.get('k/2')).toMatchObject({ lock: 'T', watermark: t });
    expect(h.m.describeLock('T')).toEqual({ name: 'T', holder: null, latestToken: t, waiters: [], waiterSessions: [] });
    // The source's holder may no longer write it: the key names its new lock.
    expect(h.write(a, 'S', t, [put('k/2', 'late')]).result).toMatchObject({ status: 'refused', reason: 'WRONG_LOCK', key: 'k/2', owner: 'T' });
    // Nor use its token on the target (not a grant of T).
    expect(h.write(a, 'T', t, [put('k/2', 'late')]).result).toMatchObject({ status: 'refused' });
    // A grant of the target is above every moved watermark, and may write the key.
    const b = h.open();
    const tt = h.grant(b, 'T');
    expect(tt).toBeGreaterThan(t);
    expect(h.write(b, 'T', tt, [put('k/2', 'new owner')]).result).toMatchObject({ status: 'written' });
    expect(h.value('k/2')).toBe('new owner');
  });

  it('moves every key under a prefix, tombstones included, from several locks; idle sources are forgotten', () => {
    const { h, a, t, t2 } = setup();
    expect(move(h, { prefix: 'k/' }, 'T')).toEqual({ status: 'keys_moved', moved: 3 });
    expect(h.m.list('k/', 10, { includeDeleted: true }).map((e) => [e.key, e.lock, e.watermark])).toEqual([
      ['k/1', 'T', t],
      ['k/2', 'T', t],
      ['k/3', 'T', t2],
    ]);
    expect(h.m.describeLock('T')!.latestToken).toBe(t2);
    expect(internals(h.m).locks.get('T')!.boundKeys).toBe(3);
    // S2 is still held (its holder keeps the lock, only the key left); S keeps `other`.
    expect(internals(h.m).locks.get('S')!.boundKeys).toBe(1);
    expect(internals(h.m).locks.get('S2')!.boundKeys).toBe(0);
    h.release(a, 'S', t);
    // Moving again: nothing left to move; keys already bound to the target do not count.
    expect(move(h, { prefix: 'k/' }, 'T')).toEqual({ status: 'keys_moved', moved: 0 });
    expect(move(h, { key: 'missing' }, 'U')).toEqual({ status: 'keys_moved', moved: 0 });
    expect(h.m.describeLock('U')).toBeUndefined();
    expect(move(h, { prefix: '' }, 'U')).toEqual({ status: 'keys_moved', moved: 4 });
    expect(h.m.describeLock('S')).toBeUndefined(); // idle without keys: forgotten
  });

  it('refuses a target that is held or awaited (LOCK_BUSY), moving nothing', () => {
    const { h, t2 } = setup();
    expect(move(h, { key: 'k/2' }, 'S2')).toEqual({ status: 'refused', reason: 'LOCK_BUSY', watermark: 0, subject: 'S2' });
    const w = h.open();
    h.acquire(w, 'S2'); // queued
    const holder = h.m.describeLock('S2')!.holder!.sessionId;
    h.release(holder, 'S2', t2); // handed to w
    expect(move(h, { key: 'k/2' }, 'S2')).toMatchObject({ reason: 'LOCK_BUSY' });
    expect(h.m.get('k/2')!.lock).toBe('S');
  });

  it(`refuses more than ${MAX_MOVE_KEYS} keys under a prefix (MOVE_TOO_LARGE), moving nothing`, () => {
    const h = new Harness();
    h.checkEachStep = false;
    const a = h.open();
    const t = h.grant(a, 'S');
    for (let i = 0; i <= MAX_MOVE_KEYS; i += 64) {
      const ops = Array.from({ length: Math.min(64, MAX_MOVE_KEYS + 1 - i) }, (_, j) => put(`p/${i + j}`, 'v'));
      expect(h.write(a, 'S', t, ops).result).toMatchObject({ status: 'written' });
    }
    expect(move(h, { prefix: 'p/' }, 'T')).toEqual({ status: 'refused', reason: 'MOVE_TOO_LARGE', watermark: 0, subject: 'p/' });
    expect(h.m.describeLock('T')).toBeUndefined();
    h.write(a, 'S', t, [del('p/0')]);
    expect(move(h, { prefix: 'p/' }, 'T')).toMatchObject({ reason: 'MOVE_TOO_LARGE' }); // a tombstone moves too
    expect(h.m.checkInvariants()).toEqual([]);
    // p/1, p/10..p/19, p/100..p/199, p/1000..p/1999, p/10000
    expect(move(h, { prefix: 'p/1' }, 'T')).toEqual({ status: 'keys_moved', moved: 1112 });
    expect(h.m.checkInvariants()).toEqual([]);
  });

  it('is for admins only once auth is on', () => {
    const { h } = setup();
    h.auth({ op: 'enable', user: 'ops' });
    h.as('ops', () => h.auth({ op: 'user_add', user: 'alice' }));
    expect(h.as('alice', () => move(h, { key: 'k/2' }, 'T'))).toEqual({ status: 'refused', reason: 'PERMISSION_DENIED', watermark: 0, subject: 'admin' });
    expect(h.as('ops', () => move(h, { key: 'k/2' }, 'T'))).toEqual({ status: 'keys_moved', moved: 1 });
  });

  it('survives a snapshot: bindings, the raised token and the stored answer', () => {
    const { h } = setup();
    const command = h.req('MoveKeys', { prefix: 'k/', toLock: 'T' });
    h.apply(command);
    const bytes = h.m.writeSnapshot();
    const restored = LockStateMachine.readSnapshot(bytes);
    expectSameBytes(restored.writeSnapshot(), bytes);
    expect(restored.describeLock('T')).toEqual(h.m.describeLock('T'));
    expect(restored.apply(h.index + 1, command)).toEqual({ result: { status: 'keys_moved', moved: 3 }, events: [], duplicate: true });
  });

  it('leaves a capture taken before it as it was', () => {
    const { h } = setup();
    const atCapture = h.m.writeSnapshot();
    const encoding = h.m.captureSnapshot(1);
    expect(encoding.step()).toBe(false);
    move(h, { prefix: 'k/' }, 'S2x');
    move(h, { prefix: '' }, 'T');
    while (!encoding.step());
    expectSameBytes(encoding.bytes(), atCapture);
  });

  it('validates: exactly one of key and prefix, a lock name', () => {
    const meta = { clientId: 'c', requestId: 1, now: 1 };
    for (const bad of [
      { type: 'MoveKeys', ...meta, toLock: 'T' },
      { type: 'MoveKeys', ...meta, key: 'k', prefix: 'k', toLock: 'T' },
      { type: 'MoveKeys', ...meta, key: '', toLock: 'T' },
      { type: 'MoveKeys', ...meta, prefix: 7, toLock: 'T' },
      { type: 'MoveKeys', ...meta, key: 'k', toLock: '' },
    ]) {
      expect(validateCommand(bad), JSON.stringify(bad)).not.toBeNull();
    }
    expect(validateCommand({ type: 'MoveKeys', ...meta, prefix: '', toLock: 'T' } satisfies Command)).toBeNull();
  });
});

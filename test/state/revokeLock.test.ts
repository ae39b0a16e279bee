// RevokeLock (issue 34, "force release"): an admin ends a lock's current grant without ending the holder's
// session. The next waiter is granted with the Revoke entry's index as token, the old holder is fenced out,
// its session stays open and may acquire again; only an admin may revoke, checked at apply.
import { describe, expect, it } from 'vitest';
import { encodeCommand, decodeCommand } from '../../src/codec/commandCodec';
import { Reason, type AuthChange, type Command } from '../../src/state';
import { Harness, put, roundTrip } from './harness';

/** Auth on (admin `root-admin`); alice and bob may lock and write under `app/`. */
function authOn(): Harness {
  const h = new Harness();
  h.auth({ op: 'enable', user: 'root-admin' });
  h.as('root-admin', () => {
    for (const change of [
      { op: 'role_add', role: 'app' },
      { op: 'role_grant', role: 'app', perm: 'lock', prefix: 'app/' },
      { op: 'role_grant', role: 'app', perm: 'write', prefix: 'app/' },
      { op: 'user_add', user: 'alice' },
      { op: 'user_grant', user: 'alice', role: 'app' },
      { op: 'user_add', user: 'bob' },
      { op: 'user_grant', user: 'bob', role: 'app' },
    ] as AuthChange[]) {
      expect(h.auth(change).result, change.op).toEqual({ status: 'auth_changed' });
    }
  });
  return h;
}

const revoke = (h: Harness, lock: string, token = 0, reason = 'stuck job'): Command => h.req('RevokeLock', { lock, token, reason });

describe('RevokeLock', () => {
  it('hands the lock to the next waiter with a higher token; the old holder is fenced out but keeps its session', () => {
    const h = authOn();
    const a = h.as('alice', () => h.open());
    const b = h.as('bob', () => h.open());
    const t1 = h.as('alice', () => h.grant(a, 'app/x'));
    h.as('alice', () => h.write(a, 'app/x', t1, [put('app/k', 'v1')]));
    h.as('bob', () => h.acquire(b, 'app/x'));
    const out = h.as('root-admin', () => h.apply(revoke(h, 'app/x', 0, 'holder hung')));
    const index = h.m.lastApplied;
    expect(out.result).toEqual({ status: 'released', token: t1, nextHolder: b, nextToken: index });
    expect(out.events).toEqual([
      { type: 'released', lock: 'app/x', sessionId: a, token: t1, cause: 'lock_revoked', revokedBy: 'root-admin', reason: 'holder hung' },
      { type: 'granted', lock: 'app/x', sessionId: b, token: index, cause: 'lock_revoked' },
    ]);
    expect(index).toBeGreaterThan(t1);
    // The old holder's late write is refused: a newer grant exists.
    const late = h.as('alice', () => h.write(a, 'app/x', t1, [put('app/k', 'late')]));
    expect(late.result).toMatchObject({ status: 'refused', reason: Reason.STALE_TOKEN });
    expect(h.value('app/k')).toBe('v1');
    // The new holder writes; alice's session is still open and may queue for the lock again.
    expect(h.as('bob', () => h.write(b, 'app/x', index, [put('app/k', 'v2')])).result).toMatchObject({ status: 'written' });
    expect(h.m.getSession(a)?.locks).toEqual([]);
    expect(h.as('alice', () => h.acquire(a, 'app/x')).result).toMatchObject({ status: 'waiting', position: 1 });
    expect(h.m.checkInvariants()).toEqual([]);
    expect(roundTrip(h.m).writeSnapshot()).toEqual(h.m.writeSnapshot());
  });

  it('frees a lock nobody waits for: the old token is refused as LOCK_NOT_HELD, and a new acquire by the same session gets a higher token', () => {
    const h = new Harness();
    const a = h.open();
    const t1 = h.grant(a, 'x');
    h.write(a, 'x', t1, [put('k', 'v1')]);
    const out = h.apply(revoke(h, 'x'));
    expect(out.result).toEqual({ status: 'released', token: t1 });
    expect(h.m.describeLock('x')?.holder).toBeNull();
    expect(h.write(a, 'x', t1, [put('k', 'late')]).result).toMatchObject({ status: 'refused', reason: Reason.LOCK_NOT_HELD });
    const t2 = h.grant(a, 'x');
    expect(t2).toBeGreaterThan(t1);
    expect(h.write(a, 'x', t2, [put('k', 'v2')]).result).toMatchObject({ status: 'written' });
  });

  it('is refused for a lock that is not held (LOCK_NOT_HELD) and, with a token, for another grant (WRONG_TOKEN)', () => {
    const h = new Harness();
    const a = h.open();
    expect(h.apply(revoke(h, 'never')).result).toEqual({ status: 'refused', reason: Reason.LOCK_NOT_HELD, watermark: 0 });
    const t1 = h.grant(a, 'x');
    h.write(a, 'x', t1, [put('k', 'v')]); // keeps the record once free
    h.release(a, 'x', t1);
    expect(h.apply(revoke(h, 'x')).result).toEqual({ status: 'refused', reason: Reason.LOCK_NOT_HELD, watermark: t1 });
    const t2 = h.grant(a, 'x');
    expect(h.apply(revoke(h, 'x', t1)).result).toEqual({ status: 'refused', reason: Reason.WRONG_TOKEN, watermark: t2 });
    expect(h.m.describeLock('x')?.holder?.token).toBe(t2);
    expect(h.apply(revoke(h, 'x', t2)).result).toEqual({ status: 'released', token: t2 });
  });

  it('is admin only, checked at apply: a non-admin, even the holder itself, is refused and nothing changes', () => {
    const h = authOn();
    const a = h.as('alice', () => h.open());
    const t1 = h.as('alice', () => h.grant(a, 'app/x'));
    for (const who of ['alice', 'bob']) {
      const out = h.as(who, () => h.apply(revoke(h, 'app/x')));
      expect(out.result, who).toEqual({ status: 'refused', reason: Reason.PERMISSION_DENIED, watermark: 0, subject: 'admin' });
      expect(out.events).toEqual([]);
    }
    expect(h.m.describeLock('app/x')?.holder).toMatchObject({ sessionId: a, token: t1 });
  });

  it('a retried revoke gets the stored answer and ends nothing more, also after a snapshot', () => {
    const h = authOn();
    const a = h.as('alice', () => h.open());
    const b = h.as('bob', () => h.open());
    h.as('alice', () => h.grant(a, 'app/x'));
    h.as('bob', () => h.acquire(b, 'app/x'));
    const command = h.as('root-admin', () => revoke(h, 'app/x'));
    const first = h.apply(command);
    const handedTo = h.m.describeLock('app/x')?.holder;
    expect(handedTo).toMatchObject({ sessionId: b });
    const again = h.apply(command);
    expect(again).toEqual({ result: first.result, events: [], duplicate: true });
    expect(h.m.describeLock('app/x')?.holder).toEqual(handedTo);
    const restored = roundTrip(h.m);
    expect(restored.storedResult(command as never)).toEqual(first.result);
  });

  it('is validated (reason length, token) and survives the log codec', () => {
    const h = new Harness();
    const a = h.open();
    h.grant(a, 'x');
    expect(h.apply(h.req('RevokeLock', { lock: 'x', token: 0, reason: 'r'.repeat(257) })).result).toEqual({ status: 'invalid', message: 'reason exceeds 256 bytes' });
    expect(h.apply(h.req('RevokeLock', { lock: 'x', token: -1, reason: '' })).result).toMatchObject({ status: 'invalid' });
    const command = h.as('ops', () => h.req('RevokeLock', { lock: 'x', token: 7, reason: 'why ✓' }));
    expect(decodeCommand(encodeCommand(command))).toEqual(command);
  });
});

// Ending sessions (docs/auth.md "Ending sessions"): deleting a user ends its sessions in that very entry, as
// expiry would (waits dropped, locks handed to the next live waiter with the entry's index as token, fenced
// writes under the old grant refused), and an admin ends one session with RevokeSession; both say `revoked`.
import { describe, expect, it } from 'vitest';
import { Reason, type AuthChange } from '../../src/state';
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

describe('ending sessions', () => {
  it('deleting a user ends its sessions in the same entry: its locks go to the next waiter with a higher token, its old token is refused', () => {
    const h = authOn();
    const [a1, a2] = h.as('alice', () => [h.open(), h.open()]);
    const b = h.as('bob', () => h.open());
    const t1 = h.as('alice', () => h.grant(a1, 'app/one'));
    h.as('alice', () => h.grant(a2, 'app/two'));
    h.as('alice', () => h.write(a1, 'app/one', t1, [put('app/k', 'v1')]));
    h.as('bob', () => h.acquire(b, 'app/one'));
    h.as('alice', () => h.acquire(a2, 'app/three-free-for-bob')); // a grant too
    h.as('bob', () => h.acquire(b, 'app/two'));
    const out = h.as('root-admin', () => h.auth({ op: 'user_delete', user: 'alice' }));
    expect(out.result).toEqual({ status: 'auth_changed' });
    const index = h.m.lastApplied;
    // Both sessions ended, revoked; bob got both locks with this entry's index as token.
    expect(h.m.getSession(a1)).toBeUndefined();
    expect(h.m.getSession(a2)).toBeUndefined();
    const ended = out.events.filter((e) => e.type === 'session_ended').map((e) => e.type === 'session_ended' && [e.sessionId, e.cause]);
    expect(ended).toEqual([[a1, 'revoked'], [a2, 'revoked']].sort((x, y) => String(x[0]).localeCompare(String(y[0]))));
    expect(out.events.filter((e) => e.type === 'granted')).toEqual([
      { type: 'granted', lock: 'app/one', sessionId: b, token: index, cause: 'revoked' },
      { type: 'granted', lock: 'app/two', sessionId: b, token: index, cause: 'revoked' },
    ]);
    expect(index).toBeGreaterThan(t1);
    expect(h.m.describeLock('app/one')?.holder?.sessionId).toBe(b);
    expect(h.m.auth.usage('alice').sessions).toBe(0);
    // The old holder's fenced write is refused (the identity is gone, and the grant with it).
    const stale = h.as('alice', () => h.write(a1, 'app/one', t1, [put('app/k', 'v2')]));
    expect(stale.result).toMatchObject({ status: 'refused' });
    expect(h.m.get('app/k')?.watermark).toBe(t1);
    // Even as the node itself (no identity check), the fence refuses the old token.
    expect(h.write(a1, 'app/one', t1, [put('app/k', 'v3')]).result).toMatchObject({ status: 'refused', reason: Reason.STALE_TOKEN });
    expect(h.m.checkInvariants()).toEqual([]);
    expect(roundTrip(h.m).writeSnapshot()).toEqual(h.m.writeSnapshot());
  });

  it('a refused user_delete (LAST_ADMIN) ends nothing', () => {
    const h = authOn();
    const s = h.as('root-admin', () => h.open());
    const out = h.as('root-admin', () => h.auth({ op: 'user_delete', user: 'root-admin' }));
    expect(out.result).toMatchObject({ status: 'refused', reason: Reason.LAST_ADMIN });
    expect(h.m.getSession(s)).toBeDefined();
  });

  it('RevokeSession: an admin ends another identity\'s session, cause revoked; nobody else may; a retry gets the same answer', () => {
    const h = authOn();
    const a = h.as('alice', () => h.open());
    const b = h.as('bob', () => h.open());
    const t = h.as('alice', () => h.grant(a, 'app/x'));
    h.as('bob', () => h.acquire(b, 'app/x'));
    expect(h.as('bob', () => h.apply(h.req('RevokeSession', { sessionId: a }))).result).toEqual({ status: 'refused', reason: Reason.PERMISSION_DENIED, watermark: 0, subject: 'admin' });
    const revoke = h.as('root-admin', () => h.req('RevokeSession', { sessionId: a }));
    const out = h.apply(revoke);
    expect(out.result).toEqual({ status: 'session_ended', sessionId: a, cause: 'revoked', released: ['app/x'] });
    expect(out.events).toContainEqual({ type: 'granted', lock: 'app/x', sessionId: b, token: h.m.lastApplied, cause: 'revoked' });
    expect(h.m.lastApplied).toBeGreaterThan(t);
    expect(h.apply(revoke)).toMatchObject({ result: out.result, duplicate: true });
    // The stored answer survives a snapshot, cause included.
    const restored = roundTrip(h.m);
    expect(restored.storedResult(revoke as never)).toEqual(out.result);
    expect(h.as('root-admin', () => h.apply(h.req('RevokeSession', { sessionId: a }))).result).toMatchObject({ reason: Reason.UNKNOWN_SESSION });
    expect(h.m.checkInvariants()).toEqual([]);
  });
});

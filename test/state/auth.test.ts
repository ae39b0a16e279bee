// Auth in the state machine (docs/auth.md): the auth table and its changes, and the checks a request gets
// when its entry is applied (against the table as of that entry, whatever the node checked before).
import { describe, expect, it } from 'vitest';
import {
  LockStateMachine,
  SnapshotError,
  MAX_ROLES_PER_USER,
  MAX_RULES_PER_ROLE,
  MAX_TOKENS_PER_USER,
  MAX_USERS,
  validateCommand,
  type AuthChange,
  type Result,
} from '../../src/state';
import { Harness, expectCanonicalSnapshot, expectSameBytes, put, sid } from './harness';

const TOKEN_A = '0123456789abcdef';
const TOKEN_B = 'fedcba9876543210';
const HASH = 'a'.repeat(64);

/** Auth on with admin `root-admin`; users alice (role `orders`: lock and write on `orders/`, read on ``) and bob (no role). */
function authOn(): Harness {
  const h = new Harness();
  expect(h.auth({ op: 'enable', user: 'root-admin' }).result).toEqual({ status: 'auth_changed' });
  h.as('root-admin', () => {
    for (const change of [
      { op: 'user_add', user: 'alice' },
      { op: 'user_add', user: 'bob' },
      { op: 'role_add', role: 'orders' },
      { op: 'role_grant', role: 'orders', perm: 'lock', prefix: 'orders/' },
      { op: 'role_grant', role: 'orders', perm: 'write', prefix: 'orders/' },
      { op: 'role_grant', role: 'orders', perm: 'read', prefix: '' },
      { op: 'user_grant', user: 'alice', role: 'orders' },
    ] as AuthChange[]) {
      expect(h.auth(change).result, change.op).toEqual({ status: 'auth_changed' });
    }
  });
  return h;
}

const refusal = (reason: string, subject?: string): Result =>
  subject === undefined ? { status: 'refused', reason: reason as never, watermark: 0 } : { status: 'refused', reason: reason as never, watermark: 0, subject };

/** Opens a session as `caller`. */
function openAs(h: Harness, caller: string): string {
  return h.as(caller, () => h.open());
}

describe('enable', () => {
  it('creates role root with every permission on every name, the admin user, and turns auth on, once', () => {
    const h = new Harness();
    expect(h.m.auth.authEnabled()).toBe(false);
    h.auth({ op: 'enable', user: 'ops' });
    expect(h.m.auth.authList()).toEqual({
      enabled: true,
      users: [{ name: 'ops', roles: ['root'] }],
      roles: [
        {
          name: 'root',
          rules: [
            { perm: 'lock', prefix: '' },
            { perm: 'write', prefix: '' },
            { perm: 'read', prefix: '' },
            { perm: 'admin', prefix: '' },
          ],
          quotas: {},
        },
      ],
      tokens: [],
    });
    // A later enable (another leader, another admin name) changes nothing.
    expect(h.auth({ op: 'enable', user: 'someone-else' }).result).toEqual({ status: 'auth_changed' });
    expect(h.m.auth.userInfo('someone-else')).toBeUndefined();
  });

  it('keeps users and roles prepared while auth was off (anyone could), and completes a prepared root role', () => {
    const h = new Harness();
    h.as('address:10.0.0.7', () => {
      h.auth({ op: 'role_add', role: 'root' });
      h.auth({ op: 'role_grant', role: 'root', perm: 'read', prefix: '' });
      h.auth({ op: 'user_add', user: 'ops' });
      h.auth({ op: 'role_add', role: 'readers' });
      h.auth({ op: 'user_grant', user: 'ops', role: 'readers' });
    });
    h.auth({ op: 'enable', user: 'ops' });
    expect(h.m.auth.userInfo('ops')).toEqual({ name: 'ops', roles: ['readers', 'root'] });
    expect(h.m.auth.rulesOf('ops').map((r) => r.perm)).toEqual(['lock', 'write', 'read', 'admin']);
  });
});

describe('auth changes', () => {
  it('are for admins only once auth is on', () => {
    const h = authOn();
    expect(h.as('alice', () => h.auth({ op: 'user_add', user: 'eve' })).result).toEqual(refusal('PERMISSION_DENIED', 'admin'));
    expect(h.as('mallory', () => h.auth({ op: 'user_add', user: 'eve' })).result).toEqual(refusal('PERMISSION_DENIED', 'user mallory'));
    expect(h.m.auth.userInfo('eve')).toBeUndefined();
    expect(h.as('root-admin', () => h.auth({ op: 'user_add', user: 'eve' })).result).toEqual({ status: 'auth_changed' });
  });

  it('refuse with the reason and the subject they are about', () => {
    const h = authOn();
    h.caller = 'root-admin';
    const cases: Array<[AuthChange, Result]> = [
      [{ op: 'user_add', user: 'alice' }, refusal('USER_EXISTS', 'alice')],
      [{ op: 'role_add', role: 'orders' }, refusal('ROLE_EXISTS', 'orders')],
      [{ op: 'user_delete', user: 'nobody' }, refusal('UNKNOWN_USER', 'nobody')],
      [{ op: 'user_grant', user: 'nobody', role: 'orders' }, refusal('UNKNOWN_USER', 'nobody')],
      [{ op: 'user_grant', user: 'bob', role: 'nothing' }, refusal('UNKNOWN_ROLE', 'nothing')],
      [{ op: 'user_revoke', user: 'bob', role: 'nothing' }, refusal('UNKNOWN_ROLE', 'nothing')],
      [{ op: 'role_delete', role: 'nothing' }, refusal('UNKNOWN_ROLE', 'nothing')],
      [{ op: 'role_grant', role: 'nothing', perm: 'read', prefix: '' }, refusal('UNKNOWN_ROLE', 'nothing')],
      [{ op: 'role_quota', role: 'nothing', quota: 'keys', value: 1 }, refusal('UNKNOWN_ROLE', 'nothing')],
      [{ op: 'token_issue', user: 'nobody', tokenId: TOKEN_A, tokenHash: HASH }, refusal('UNKNOWN_USER', 'nobody')],
      [{ op: 'token_revoke', tokenId: TOKEN_A }, refusal('UNKNOWN_TOKEN', TOKEN_A)],
    ];
    for (const [change, result] of cases) expect(h.auth(change).result, JSON.stringify(change)).toEqual(result);
    expect(h.auth({ op: 'token_issue', user: 'bob', tokenId: TOKEN_A, tokenHash: HASH }).result).toEqual({ status: 'auth_changed', tokenId: TOKEN_A });
    expect(h.auth({ op: 'token_issue', user: 'alice', tokenId: TOKEN_A, tokenHash: 'b'.repeat(64) }).result).toEqual(refusal('TOKEN_EXISTS', TOKEN_A));
    expect(h.m.auth.tokenRecord(TOKEN_A)).toEqual({ user: 'bob', hash: HASH });
  });

  it('refuse AUTH_FULL at each bound of the table', () => {
    const h = authOn();
    h.caller = 'root-admin';
    for (let i = 0; i < MAX_RULES_PER_ROLE - 3; i++) expect(h.auth({ op: 'role_grant', role: 'orders', perm: 'read', prefix: `p${i}/` }).result.status).toBe('auth_changed');
    expect(h.auth({ op: 'role_grant', role: 'orders', perm: 'read', prefix: 'one-more/' }).result).toEqual(refusal('AUTH_FULL', 'rules'));
    // A rule the role has already is no change, so no refusal.
    expect(h.auth({ op: 'role_grant', role: 'orders', perm: 'read', prefix: 'p0/' }).result).toEqual({ status: 'auth_changed' });
    for (let i = 0; i < MAX_ROLES_PER_USER; i++) {
      h.auth({ op: 'role_add', role: `r${i}` });
      h.auth({ op: 'user_grant', user: 'bob', role: `r${i}` });
    }
    expect(h.auth({ op: 'user_grant', user: 'bob', role: 'orders' }).result).toEqual(refusal('AUTH_FULL', 'roles_per_user'));
    const tokenId = (i: number): string => i.toString(16).padStart(16, '0');
    for (let i = 0; i < MAX_TOKENS_PER_USER; i++) h.auth({ op: 'token_issue', user: 'bob', tokenId: tokenId(i), tokenHash: HASH });
    expect(h.auth({ op: 'token_issue', user: 'bob', tokenId: tokenId(1_000), tokenHash: HASH }).result).toEqual(refusal('AUTH_FULL', 'tokens_per_user'));
    h.checkEachStep = false;
    for (let i = h.m.auth.authList().users.length; i < MAX_USERS; i++) h.auth({ op: 'user_add', user: `u${i}` });
    expect(h.auth({ op: 'user_add', user: 'one-too-many' }).result).toEqual(refusal('AUTH_FULL', 'users'));
    expect(h.m.checkInvariants()).toEqual([]);
  });

  it('never leave auth on without an admin (LAST_ADMIN), in any of the ways to lose one', () => {
    const h = authOn();
    h.caller = 'root-admin';
    const lastAdmin: Array<[AuthChange, string]> = [
      [{ op: 'user_delete', user: 'root-admin' }, 'root-admin'],
      [{ op: 'user_revoke', user: 'root-admin', role: 'root' }, 'root-admin'],
      [{ op: 'role_delete', role: 'root' }, 'root'],
      [{ op: 'role_revoke', role: 'root', perm: 'admin', prefix: '' }, 'root'],
    ];
    for (const [change, subject] of lastAdmin) expect(h.auth(change).result, change.op).toEqual(refusal('LAST_ADMIN', subject));
    expect(h.m.auth.isAdmin('root-admin')).toBe(true);
    // Other rules of root may go; another admin makes the first one deletable.
    expect(h.auth({ op: 'role_revoke', role: 'root', perm: 'write', prefix: '' }).result).toEqual({ status: 'auth_changed' });
    h.auth({ op: 'role_add', role: 'admins' });
    h.auth({ op: 'role_grant', role: 'admins', perm: 'admin', prefix: '' });
    h.auth({ op: 'user_grant', user: 'bob', role: 'admins' });
    expect(h.auth({ op: 'user_delete', user: 'root-admin' }).result).toEqual({ status: 'auth_changed' });
    h.caller = 'bob';
    expect(h.auth({ op: 'role_revoke', role: 'admins', perm: 'admin', prefix: '' }).result).toEqual(refusal('LAST_ADMIN', 'admins'));
    expect(h.auth({ op: 'role_delete', role: 'root' }).result).toEqual({ status: 'auth_changed' });
  });

  it('delete a user with its tokens, and a role from every user holding it', () => {
    const h = authOn();
    h.caller = 'root-admin';
    h.auth({ op: 'token_issue', user: 'alice', tokenId: TOKEN_A, tokenHash: HASH });
    h.auth({ op: 'token_issue', user: 'bob', tokenId: TOKEN_B, tokenHash: HASH });
    h.auth({ op: 'user_grant', user: 'bob', role: 'orders' });
    h.auth({ op: 'user_delete', user: 'alice' });
    expect(h.m.auth.tokenRecord(TOKEN_A)).toBeUndefined();
    expect(h.m.auth.tokenRecord(TOKEN_B)).toEqual({ user: 'bob', hash: HASH });
    h.auth({ op: 'role_delete', role: 'orders' });
    expect(h.m.auth.userInfo('bob')).toEqual({ name: 'bob', roles: [] });
    // A user added again under the name is a new user: no roles, no tokens.
    h.auth({ op: 'user_add', user: 'alice' });
    expect(h.m.auth.authList().tokens).toEqual([{ id: TOKEN_B, user: 'bob' }]);
  });

  it('set and unset role quotas; the largest value among a user’s roles counts, else the default', () => {
    const h = authOn();
    h.caller = 'root-admin';
    expect(h.m.auth.quotaOf('alice', 'sessions')).toBe(10_000);
    h.auth({ op: 'role_quota', role: 'orders', quota: 'sessions', value: 5 });
    expect(h.m.auth.quotaOf('alice', 'sessions')).toBe(5); // a role may lower a quota
    h.auth({ op: 'role_add', role: 'big' });
    h.auth({ op: 'role_quota', role: 'big', quota: 'sessions', value: 50 });
    h.auth({ op: 'user_grant', user: 'alice', role: 'big' });
    expect(h.m.auth.quotaOf('alice', 'sessions')).toBe(50);
    h.auth({ op: 'role_quota', role: 'big', quota: 'sessions' });
    expect(h.m.auth.quotaOf('alice', 'sessions')).toBe(5);
    expect(h.m.auth.authList().roles.find((r) => r.name === 'orders')?.quotas).toEqual({ sessions: 5 });
  });
});

describe('checks at apply, with auth on', () => {
  it('refuse a caller that is no user, an Acquire without `lock` and a Write without `write` on every key', () => {
    const h = authOn();
    expect(h.as('mallory', () => h.apply(h.req('OpenSession', { sessionId: sid(99), ttlMs: 10_000, clientName: '' }))).result).toEqual(
      refusal('PERMISSION_DENIED', 'user mallory'),
    );
    const s = openAs(h, 'alice');
    h.caller = 'alice';
    expect(h.acquire(s, 'billing/1').result).toEqual(refusal('PERMISSION_DENIED', 'lock billing/1'));
    const token = h.grant(s, 'orders/1');
    const r = h.write(s, 'orders/1', token, [put('orders/a', '1'), put('billing/x', '2'), put('other', '3')]).result;
    expect(r).toEqual(refusal('PERMISSION_DENIED', 'write billing/x'));
    expect(h.m.get('orders/a')).toBeUndefined(); // all ops or none
    expect(h.write(s, 'orders/1', token, [put('orders/a', '1')]).result).toMatchObject({ status: 'written' });
  });

  it('refuse a write whose permission was revoked after the node checked it, before the write applied', () => {
    const h = authOn();
    const s = openAs(h, 'alice');
    const token = h.as('alice', () => h.grant(s, 'orders/1'));
    // The node checks, then proposes; the revoke commits first.
    expect(h.m.auth.authorize('alice', 'write', 'orders/k')).toBe(true);
    const write = h.as('alice', () => h.req('Write', { lock: 'orders/1', sessionId: s, token, ops: [put('orders/k', 'v')] }));
    h.as('root-admin', () => h.auth({ op: 'role_revoke', role: 'orders', perm: 'write', prefix: 'orders/' }));
    expect(h.apply(write).result).toEqual(refusal('PERMISSION_DENIED', 'write orders/k'));
    expect(h.m.get('orders/k')).toBeUndefined();
    // The refusal is stored: a retry gets it, even once the permission is back.
    h.as('root-admin', () => h.auth({ op: 'role_grant', role: 'orders', perm: 'write', prefix: 'orders/' }));
    expect(h.apply(write)).toMatchObject({ duplicate: true, result: refusal('PERMISSION_DENIED', 'write orders/k') });
  });

  it('refuse a request whose token was revoked between the node’s check and the apply, or is another user’s', () => {
    const h = authOn();
    h.as('root-admin', () => {
      h.auth({ op: 'token_issue', user: 'alice', tokenId: TOKEN_A, tokenHash: HASH });
      h.auth({ op: 'token_issue', user: 'bob', tokenId: TOKEN_B, tokenHash: HASH });
    });
    const s = h.as('alice', () => h.open(), TOKEN_A);
    expect(h.m.auth.tokenRecord(TOKEN_A)?.user).toBe('alice'); // the node's check
    const acquire = h.as('alice', () => h.req('Acquire', { lock: 'orders/1', sessionId: s, tryOnly: false }), TOKEN_A);
    h.as('root-admin', () => h.auth({ op: 'token_revoke', tokenId: TOKEN_A }));
    expect(h.apply(acquire).result).toEqual(refusal('PERMISSION_DENIED', `token ${TOKEN_A}`));
    expect(h.m.describeLock('orders/1')).toBeUndefined();
    expect(h.as('alice', () => h.acquire(s, 'orders/1'), TOKEN_B).result).toEqual(refusal('PERMISSION_DENIED', `token ${TOKEN_B}`));
    expect(h.as('alice', () => h.acquire(s, 'orders/1')).result).toMatchObject({ status: 'granted' }); // by certificate
  });

  it('keep a session to the identity that opened it (NOT_SESSION_OWNER), whatever the command', () => {
    const h = authOn();
    h.as('root-admin', () => h.auth({ op: 'user_grant', user: 'bob', role: 'orders' }));
    const a = openAs(h, 'alice');
    const token = h.as('alice', () => h.grant(a, 'orders/1'));
    const b = openAs(h, 'bob');
    h.as('bob', () => h.grant(b, 'orders/2'));
    h.as('alice', () => h.acquire(a, 'orders/2'));
    h.caller = 'bob';
    const notOwner = refusal('NOT_SESSION_OWNER');
    expect(h.acquire(a, 'orders/3').result).toEqual(notOwner);
    expect(h.write(a, 'orders/1', token, [put('orders/k', 'v')]).result).toEqual(notOwner);
    expect(h.release(a, 'orders/1', token).result).toEqual(notOwner);
    expect(h.cancel(a, 'orders/2').result).toEqual(notOwner);
    expect(h.close(a).result).toEqual(notOwner);
    expect(h.m.getSession(a)?.locks).toEqual(['orders/1']);
    expect(h.m.auth.sessionOwner(a)).toBe('alice');
    // The owner may let go without any permission: a revoke never keeps a holder from releasing.
    h.caller = 'root-admin';
    h.auth({ op: 'user_revoke', user: 'alice', role: 'orders' });
    h.caller = 'alice';
    expect(h.acquire(a, 'orders/4').result).toEqual(refusal('PERMISSION_DENIED', 'lock orders/4'));
    expect(h.cancel(a, 'orders/2').result).toEqual({ status: 'cancelled' });
    expect(h.release(a, 'orders/1', token).result).toMatchObject({ status: 'released' });
    expect(h.close(a).result).toMatchObject({ status: 'session_ended' });
  });

  it('leave the node’s own requests (caller \'\') unchecked', () => {
    const h = authOn();
    const a = openAs(h, 'alice');
    h.as('alice', () => h.acquire(a, 'orders/1'));
    const b = openAs(h, 'alice');
    expect(h.as('alice', () => h.acquire(b, 'orders/1')).result).toMatchObject({ status: 'waiting' });
    // A wait timed out: the node proposes the CancelWait itself.
    expect(h.apply({ type: 'CancelWait', clientId: '', requestId: 0, now: h.tick(), lock: 'orders/1', sessionId: b }).result).toEqual({ status: 'cancelled' });
  });
});

describe('with auth off', () => {
  it('checks nothing, but records session owners', () => {
    const h = new Harness();
    const a = h.as('address:10.0.0.1', () => h.open());
    h.caller = 'address:10.0.0.2';
    const token = h.grant(a, 'L');
    expect(h.write(a, 'L', token, [put('k', 'v')]).result).toMatchObject({ status: 'written' });
    expect(h.m.auth.sessionOwner(a)).toBe('address:10.0.0.1');
    expect(h.m.auth.sessionOwner(sid(12345))).toBeUndefined();
    expect(h.m.auth.authorize('anyone', 'write', 'k')).toBe(true);
    expect(h.m.auth.isAdmin('anyone')).toBe(true);
  });
});

describe('queries', () => {
  it('authorize by prefix, list prefixes only under a read rule, and tell admins', () => {
    const h = authOn();
    const q = h.m.auth;
    expect(q.authorize('alice', 'lock', 'orders/1')).toBe(true);
    expect(q.authorize('alice', 'lock', 'orders')).toBe(false);
    expect(q.authorize('alice', 'admin', '')).toBe(false);
    expect(q.authorize('bob', 'read', 'x')).toBe(false);
    expect(q.authorize('nobody', 'read', 'x')).toBe(false);
    expect(q.authorize('', 'read', 'x')).toBe(false); // unlike apply, a query never trusts ''
    expect(q.authorizeListPrefix('alice', '')).toBe(true);
    h.as('root-admin', () => {
      h.auth({ op: 'role_revoke', role: 'orders', perm: 'read', prefix: '' });
      h.auth({ op: 'role_grant', role: 'orders', perm: 'read', prefix: 'orders/' });
    });
    expect(q.authorizeListPrefix('alice', 'orders/2024/')).toBe(true);
    expect(q.authorizeListPrefix('alice', 'orders')).toBe(false);
    expect(q.authorizeListPrefix('alice', '')).toBe(false);
    expect(q.isAdmin('root-admin')).toBe(true);
    expect(q.isAdmin('alice')).toBe(false);
    expect(q.rulesOf('alice')).toEqual([
      { perm: 'lock', prefix: 'orders/' },
      { perm: 'write', prefix: 'orders/' },
      { perm: 'read', prefix: 'orders/' },
    ]);
    expect(q.rulesOf('nobody')).toEqual([]);
  });
});

describe('validation', () => {
  it('refuses malformed changes and callers as `invalid`, never throwing', () => {
    const meta = { clientId: 'c', requestId: 1, now: 1 };
    const bad: unknown[] = [
      { type: 'AuthChange', ...meta },
      { type: 'AuthChange', ...meta, change: null },
      { type: 'AuthChange', ...meta, change: { op: 'bogus' } },
      { type: 'AuthChange', ...meta, change: { op: 'toString' } },
      { type: 'AuthChange', ...meta, change: { op: 'user_add', user: '' } },
      { type: 'AuthChange', ...meta, change: { op: 'user_add', user: '-starts-with-dash' } },
      { type: 'AuthChange', ...meta, change: { op: 'user_add', user: 'has space' } },
      { type: 'AuthChange', ...meta, change: { op: 'user_add', user: 'x'.repeat(129) } },
      { type: 'AuthChange', ...meta, change: { op: 'user_grant', user: 'a' } },
      { type: 'AuthChange', ...meta, change: { op: 'role_grant', role: 'r', perm: 'delete', prefix: '' } },
      { type: 'AuthChange', ...meta, change: { op: 'role_grant', role: 'r', perm: 'admin', prefix: 'a/' } },
      { type: 'AuthChange', ...meta, change: { op: 'role_grant', role: 'r', perm: 'read', prefix: '\ud800' } },
      { type: 'AuthChange', ...meta, change: { op: 'role_grant', role: 'r', perm: 'read', prefix: 'x'.repeat(513) } },
      { type: 'AuthChange', ...meta, change: { op: 'role_quota', role: 'r', quota: 'bogus', value: 1 } },
      { type: 'AuthChange', ...meta, change: { op: 'role_quota', role: 'r', quota: 'keys', value: -1 } },
      { type: 'AuthChange', ...meta, change: { op: 'role_quota', role: 'r', quota: 'keys', value: 1.5 } },
      { type: 'AuthChange', ...meta, change: { op: 'token_issue', user: 'a', tokenId: 'ABCDEF0123456789', tokenHash: HASH } },
      { type: 'AuthChange', ...meta, change: { op: 'token_issue', user: 'a', tokenId: TOKEN_A, tokenHash: 'a'.repeat(63) } },
      { type: 'AuthChange', ...meta, change: { op: 'token_revoke', tokenId: 7 } },
      { type: 'CloseSession', ...meta, sessionId: sid(1), caller: 'has space' },
      { type: 'CloseSession', ...meta, sessionId: sid(1), caller: 'x'.repeat(129) },
      { type: 'CloseSession', ...meta, sessionId: sid(1), caller: 7 },
      { type: 'CloseSession', ...meta, sessionId: sid(1), caller: 'alice', callerToken: 'nothex' },
    ];
    for (const c of bad) {
      expect(validateCommand(c), JSON.stringify(c)).not.toBeNull();
      const m = new LockStateMachine();
      expect(m.apply(1, c as never).result.status, JSON.stringify(c)).toBe('invalid');
      expect(m.auth.authList()).toEqual({ enabled: false, users: [], roles: [], tokens: [] });
    }
    expect(validateCommand({ type: 'AuthChange', ...meta, caller: 'address:[::1]', change: { op: 'role_quota', role: 'r', quota: 'keys' } })).toBeNull();
  });
});

describe('snapshots', () => {
  it('carry the auth table, session owners and refusals naming their subject; the restored machine checks the same', () => {
    const h = authOn();
    h.as('root-admin', () => {
      h.auth({ op: 'token_issue', user: 'alice', tokenId: TOKEN_A, tokenHash: HASH });
      h.auth({ op: 'role_quota', role: 'orders', quota: 'keys', value: 7 });
    });
    const a = openAs(h, 'alice');
    const denied = h.as('alice', () => h.req('Acquire', { lock: 'billing/1', sessionId: a, tryOnly: false }));
    expect(h.apply(denied).result).toEqual(refusal('PERMISSION_DENIED', 'lock billing/1'));
    const bytes = expectCanonicalSnapshot(h.m);
    const restored = LockStateMachine.readSnapshot(bytes);
    expectSameBytes(restored.writeSnapshot(), bytes);
    expect(restored.auth.authList()).toEqual(h.m.auth.authList());
    expect(restored.auth.sessionOwner(a)).toBe('alice');
    expect(restored.auth.tokenRecord(TOKEN_A)).toEqual({ user: 'alice', hash: HASH });
    expect(restored.apply(h.index + 1, denied)).toEqual({ result: refusal('PERMISSION_DENIED', 'lock billing/1'), events: [], duplicate: true });
    // Bob may not use alice's session on the restored machine either.
    const bobAcquire = { type: 'Acquire', clientId: 'bob-1', requestId: 1, now: 1, caller: 'bob', lock: 'orders/1', sessionId: a, tryOnly: false } as const;
    expect(restored.apply(h.index + 2, bobAcquire).result).toEqual(refusal('PERMISSION_DENIED', 'lock orders/1'));
  });

  it('refuse every byte flip of the auth section and owners, or restore a machine that writes the same bytes', () => {
    const h = authOn();
    h.as('root-admin', () => {
      h.auth({ op: 'token_issue', user: 'alice', tokenId: TOKEN_A, tokenHash: HASH });
      h.auth({ op: 'role_quota', role: 'orders', quota: 'store_bytes', value: 300 });
    });
    const a = openAs(h, 'alice');
    const t = h.as('alice', () => h.grant(a, 'orders/1'));
    h.as('alice', () => h.write(a, 'orders/1', t, [put('orders/k', 'v')]));
    const bytes = h.m.writeSnapshot();
    let refusedFlips = 0;
    for (let i = 0; i < bytes.length; i++) {
      const bad = bytes.slice();
      bad[i] = bad[i]! ^ 0x41;
      let m: LockStateMachine;
      try {
        m = LockStateMachine.readSnapshot(bad);
      } catch (e) {
        expect(e, `byte ${i}`).toBeInstanceOf(SnapshotError);
        refusedFlips++;
        continue;
      }
      expectSameBytes(m.writeSnapshot(), bad, `byte ${i}`);
    }
    expect(refusedFlips).toBeGreaterThan(bytes.length / 2);
  });
});

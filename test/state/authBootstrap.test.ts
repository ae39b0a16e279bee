// No anonymous window (docs/auth.md "Bootstrap"): under the rules of AuthChange version 1 the auth tables
// accept no change while auth is off, and `enable` builds them afresh, so that nothing made before it holds
// a right after it, and nothing can keep it from succeeding. Entries without a version (an older log) are
// applied as they were when written, so every replica replays an old log to the same state.
import { describe, expect, it } from 'vitest';
import { decodeCommand, encodeCommand } from '../../src/codec/commandCodec';
import { AUTH_RULES_CLOSED_WHEN_OFF, MAX_ROLES_PER_USER, validateCommand, type AuthChange, type Command } from '../../src/state';
import { Harness, expectSameBytes } from './harness';

const V = AUTH_RULES_CLOSED_WHEN_OFF;
const HASH = 'a'.repeat(64);
const ANONYMOUS = 'address:10.0.0.7';

/** Every right an anonymous caller had before enable, aimed at the future admin `ops` and at itself. */
function plantings(): AuthChange[] {
  const out: AuthChange[] = [
    { op: 'role_add', role: 'evil' },
    { op: 'role_grant', role: 'evil', perm: 'admin', prefix: '' },
    { op: 'role_quota', role: 'evil', quota: 'sessions', value: 1_000_000 },
    { op: 'user_add', user: 'mallory' },
    { op: 'user_grant', user: 'mallory', role: 'evil' },
    { op: 'token_issue', user: 'mallory', tokenId: '0123456789abcdef', tokenHash: HASH },
    { op: 'user_add', user: 'ops' },
    { op: 'token_issue', user: 'ops', tokenId: 'fedcba9876543210', tokenHash: HASH },
    { op: 'role_add', role: 'root' },
    { op: 'role_revoke', role: 'root', perm: 'read', prefix: '' },
  ];
  // Fills the future admin's roles to the per-user bound: the old enable was refused AUTH_FULL for good.
  for (let i = 0; i < MAX_ROLES_PER_USER; i++) out.push({ op: 'role_add', role: `r${i}` }, { op: 'user_grant', user: 'ops', role: `r${i}` });
  out.push({ op: 'user_delete', user: 'nobody' }, { op: 'role_delete', role: 'nothing' }, { op: 'user_revoke', user: 'ops', role: 'nothing' }, { op: 'token_revoke', tokenId: '0123456789abcdef' });
  return out;
}

const versioned = (c: AuthChange): AuthChange => ({ ...c, version: V });

/** What enable of admin `ops` makes, and nothing else. */
const FRESH = {
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
};

describe('auth tables while auth is off (version 1)', () => {
  it('refuse every change but enable with AUTH_OFF naming the op, and stay empty', () => {
    const h = new Harness();
    const empty = h.m.auth.authList();
    for (const change of plantings()) {
      const result = h.as(ANONYMOUS, () => h.auth(versioned(change))).result;
      expect(result, change.op).toEqual({ status: 'refused', reason: 'AUTH_OFF', watermark: 0, subject: change.op });
    }
    // A caller with a certificate name is refused the same: only enable makes the tables.
    expect(h.as('ops', () => h.auth(versioned({ op: 'user_add', user: 'x' }))).result).toMatchObject({ reason: 'AUTH_OFF' });
    expect(h.m.auth.authList()).toEqual(empty);
    expect(h.m.auth.authEnabled()).toBe(false);
  });

  it('enable builds them afresh: nothing an older log planted while auth was off survives, and nothing blocks it', () => {
    const h = new Harness();
    // An older log: entries without a version, applied as then (anyone could prepare users, roles, tokens).
    h.as(ANONYMOUS, () => {
      for (const change of plantings()) h.auth(change);
    });
    expect(h.m.auth.userInfo('ops')?.roles.length).toBe(MAX_ROLES_PER_USER);
    // The old enable was refused for good at this point.
    expect(h.auth({ op: 'enable', user: 'ops' }).result).toMatchObject({ reason: 'AUTH_FULL', subject: 'roles_per_user' });
    expect(h.m.auth.tokenRecord('fedcba9876543210')).toBeDefined();
    expect(h.auth(versioned({ op: 'enable', user: 'ops' })).result).toEqual({ status: 'auth_changed' });
    expect(h.m.auth.authList()).toEqual(FRESH);
    expect(h.m.auth.tokenRecord('fedcba9876543210')).toBeUndefined();
    expect(h.m.auth.isAdmin('mallory')).toBe(false);
    expect(h.m.checkInvariants()).toEqual([]);
    // Once on, enable is a no-op and the admin makes the tables.
    expect(h.auth(versioned({ op: 'enable', user: 'someone-else' })).result).toEqual({ status: 'auth_changed' });
    expect(h.m.auth.authList()).toEqual(FRESH);
    expect(h.as('ops', () => h.auth(versioned({ op: 'user_add', user: 'alice' }))).result).toEqual({ status: 'auth_changed' });
    expect(h.as(ANONYMOUS, () => h.auth(versioned({ op: 'user_add', user: 'eve' }))).result).toMatchObject({ reason: 'PERMISSION_DENIED' });
  });

  it('an entry without a version keeps the old rules: the old log replays to the same state on every replica', () => {
    const log: AuthChange[] = [...plantings().slice(0, 8), { op: 'enable', user: 'ops' }];
    const replay = (): Harness => {
      const h = new Harness();
      h.as(ANONYMOUS, () => {
        for (const change of log) h.auth(change);
      });
      return h;
    };
    const a = replay();
    // The old enable adopted the prepared user with its token, as it did when the log was written.
    expect(a.m.auth.userInfo('ops')?.roles).toEqual(['root']);
    expect(a.m.auth.tokenRecord('fedcba9876543210')).toEqual({ user: 'ops', hash: HASH });
    expectSameBytes(replay().m.writeSnapshot(), a.m.writeSnapshot(), 'two replicas of the same old log');
  });

  it('the version travels in the entry and is validated', () => {
    const meta = { clientId: 'c', requestId: 3, now: 7 };
    const cmd: Command = { type: 'AuthChange', ...meta, change: versioned({ op: 'user_add', user: 'alice' }) };
    expect(decodeCommand(encodeCommand(cmd))).toEqual(cmd);
    const old: Command = { type: 'AuthChange', ...meta, change: { op: 'user_add', user: 'alice' } };
    expect(decodeCommand(encodeCommand(old))).toEqual(old);
    expect(validateCommand({ ...cmd, change: { op: 'user_add', user: 'alice', version: 7 } })).toMatch(/version must be 0 or 1/);
  });
});

// Applying an AuthChange to the auth table: refusals (nothing changes) or `auth_changed`. Who may send one
// is checked before (access.ts): with auth on, an admin.
//
// While auth is off the tables accept no change but `enable`, which builds them afresh (docs/auth.md
// "Bootstrap"): nothing an unauthenticated caller did can hold a right afterwards, nor keep enable from
// succeeding. Entries written before that rule (no `version`) are applied as they were then (anyone could
// prepare users and roles while auth was off; enable adopted them), so an old log replays to the same state.
//
// A change that already holds (granting a role a user has, revoking a rule a role lacks...) succeeds and
// changes nothing: a retried or repeated admin command gives the same table.
import * as L from '../limits';
import { Reason, refusedAbout, type AuthChangedResult, type RefusedResult } from '../results';

/** What a change yields: applied (or nothing to do), or refused. */
export type AuthChangeResult = AuthChangedResult | RefusedResult;
import type { AuthTable, RoleRecord, Rule, UserRecord } from './authTable';
import { AUTH_RULES_CLOSED_WHEN_OFF, type AuthChange } from './changes';
import { PERMISSIONS } from './names';
import { roleIsAdmin } from './permissions';

/** The role `enable` creates: every permission on every name. */
export const ROOT_ROLE = 'root';

const CHANGED: AuthChangedResult = { status: 'auth_changed' };

export function applyAuthChange(t: AuthTable, c: AuthChange): AuthChangeResult {
  if ((c.version ?? 0) >= AUTH_RULES_CLOSED_WHEN_OFF) {
    if (c.op === 'enable') return enableAfresh(t, c.user);
    if (!t.enabled) return refusedAbout(Reason.AUTH_OFF, c.op);
  }
  return applyLegacy(t, c);
}

/**
 * Turns auth on with tables that hold only role `root` (every permission on every name) and `user` holding
 * it: whatever an older log left in them while auth was off (users, roles, tokens, quotas) is dropped, so
 * no name made then is adopted with its roles or tokens, and no bound can be full. Once on, a no-op.
 */
function enableAfresh(t: AuthTable, user: string): AuthChangeResult {
  if (t.enabled) return CHANGED;
  t.clear();
  const root = t.addRole(ROOT_ROLE);
  for (const perm of PERMISSIONS) t.addRule(root, { perm, prefix: '' });
  t.grantRole(t.addUser(user), ROOT_ROLE);
  t.enabled = true;
  return CHANGED;
}

/** The rules of entries written before AUTH_RULES_CLOSED_WHEN_OFF. */
function applyLegacy(t: AuthTable, c: AuthChange): AuthChangeResult {
  switch (c.op) {
    case 'enable':
      return enable(t, c.user);
    case 'user_add':
      if (t.users.has(c.user)) return refusedAbout(Reason.USER_EXISTS, c.user);
      if (t.users.size >= L.MAX_USERS) return refusedAbout(Reason.AUTH_FULL, 'users');
      t.addUser(c.user);
      return CHANGED;
    case 'user_delete':
      return withUser(t, c.user, (u) => guardAdmin(t, c.user, (x) => (x === u ? [] : x.roles), () => t.deleteUser(u)));
    case 'user_grant':
      return withUserAndRole(t, c.user, c.role, (u) => {
        if (!u.roles.includes(c.role) && u.roles.length >= L.MAX_ROLES_PER_USER) return refusedAbout(Reason.AUTH_FULL, 'roles_per_user');
        t.grantRole(u, c.role);
        return CHANGED;
      });
    case 'user_revoke':
      return withUserAndRole(t, c.user, c.role, (u) =>
        guardAdmin(t, c.user, (x) => (x === u ? x.roles.filter((r) => r !== c.role) : x.roles), () => t.revokeRole(u, c.role)),
      );
    case 'role_add':
      if (t.roles.has(c.role)) return refusedAbout(Reason.ROLE_EXISTS, c.role);
      if (t.roles.size >= L.MAX_ROLES) return refusedAbout(Reason.AUTH_FULL, 'roles');
      t.addRole(c.role);
      return CHANGED;
    case 'role_delete':
      return withRole(t, c.role, (r) => guardAdmin(t, c.role, (x) => x.roles.filter((name) => name !== r.name), () => t.deleteRole(r)));
    case 'role_grant':
      return withRole(t, c.role, (r) => grantRule(t, r, { perm: c.perm, prefix: c.prefix }));
    case 'role_revoke':
      return withRole(t, c.role, (r) => revokeRule(t, r, { perm: c.perm, prefix: c.prefix }));
    case 'role_quota':
      return withRole(t, c.role, (r) => {
        if (c.value === undefined) r.quotas.delete(c.quota);
        else r.quotas.set(c.quota, c.value);
        return CHANGED;
      });
    case 'token_issue':
      return withUser(t, c.user, (u) => issueToken(t, u, c.tokenId, c.tokenHash));
    case 'token_revoke': {
      const token = t.tokens.get(c.tokenId);
      if (token === undefined) return refusedAbout(Reason.UNKNOWN_TOKEN, c.tokenId);
      t.deleteToken(token);
      return CHANGED;
    }
  }
}

/**
 * Legacy enable: role `root` (made or completed) with every permission on every name, held by `user` (made
 * if needed, else adopted). Once on, a no-op: the first leader that sees auth off proposes it, a later one may again.
 */
function enable(t: AuthTable, user: string): AuthChangeResult {
  if (t.enabled) return CHANGED;
  const root = t.roles.get(ROOT_ROLE);
  const u = t.users.get(user);
  if (root === undefined && t.roles.size >= L.MAX_ROLES) return refusedAbout(Reason.AUTH_FULL, 'roles');
  if (u === undefined && t.users.size >= L.MAX_USERS) return refusedAbout(Reason.AUTH_FULL, 'users');
  if (u !== undefined && !u.roles.includes(ROOT_ROLE) && u.roles.length >= L.MAX_ROLES_PER_USER) return refusedAbout(Reason.AUTH_FULL, 'roles_per_user');
  const missing = PERMISSIONS.filter((perm) => !(root?.rules ?? []).some((rule) => rule.perm === perm && rule.prefix === ''));
  if ((root?.rules.length ?? 0) + missing.length > L.MAX_RULES_PER_ROLE) return refusedAbout(Reason.AUTH_FULL, 'rules');
  const role = root ?? t.addRole(ROOT_ROLE);
  for (const perm of missing) t.addRule(role, { perm, prefix: '' });
  t.grantRole(u ?? t.addUser(user), ROOT_ROLE);
  t.enabled = true;
  return CHANGED;
}

function withUser(t: AuthTable, user: string, then: (u: UserRecord) => AuthChangeResult): AuthChangeResult {
  const u = t.users.get(user);
  return u === undefined ? refusedAbout(Reason.UNKNOWN_USER, user) : then(u);
}

function withRole(t: AuthTable, role: string, then: (r: RoleRecord) => AuthChangeResult): AuthChangeResult {
  const r = t.roles.get(role);
  return r === undefined ? refusedAbout(Reason.UNKNOWN_ROLE, role) : then(r);
}

function withUserAndRole(t: AuthTable, user: string, role: string, then: (u: UserRecord) => AuthChangeResult): AuthChangeResult {
  return withUser(t, user, (u) => withRole(t, role, () => then(u)));
}

function grantRule(t: AuthTable, r: RoleRecord, rule: Rule): AuthChangeResult {
  const has = r.rules.some((x) => x.perm === rule.perm && x.prefix === rule.prefix);
  if (!has && r.rules.length >= L.MAX_RULES_PER_ROLE) return refusedAbout(Reason.AUTH_FULL, 'rules');
  t.addRule(r, rule);
  return CHANGED;
}

/** Only an admin rule can take the last admin away; a role's admin rule is its only one (prefix ''). */
function revokeRule(t: AuthTable, r: RoleRecord, rule: Rule): AuthChangeResult {
  if (rule.perm !== 'admin') {
    t.deleteRule(r, rule);
    return CHANGED;
  }
  return guardAdmin(t, r.name, (u) => u.roles.filter((name) => name !== r.name), () => t.deleteRule(r, rule));
}

function issueToken(t: AuthTable, u: UserRecord, id: string, hash: string): AuthChangeResult {
  if (t.tokens.has(id)) return refusedAbout(Reason.TOKEN_EXISTS, id);
  if (t.tokens.size >= L.MAX_TOKENS) return refusedAbout(Reason.AUTH_FULL, 'tokens');
  if (u.tokens.size >= L.MAX_TOKENS_PER_USER) return refusedAbout(Reason.AUTH_FULL, 'tokens_per_user');
  t.addToken(u, id, hash);
  return { status: 'auth_changed', tokenId: id };
}

/**
 * Applies `change` unless auth is on and no user would hold admin afterwards (LAST_ADMIN about `subject`).
 * `rolesAfter` says which roles each user would hold; a role counts as an admin role as it is now, except
 * for an admin rule being revoked, which the caller expresses by leaving that role out.
 */
function guardAdmin(t: AuthTable, subject: string, rolesAfter: (u: UserRecord) => readonly string[], change: () => unknown): AuthChangeResult {
  if (t.enabled && !someAdminAfter(t, rolesAfter)) return refusedAbout(Reason.LAST_ADMIN, subject);
  change();
  return CHANGED;
}

function someAdminAfter(t: AuthTable, rolesAfter: (u: UserRecord) => readonly string[]): boolean {
  for (const u of t.users.values()) {
    for (const name of rolesAfter(u)) {
      const r = t.roles.get(name);
      if (r !== undefined && roleIsAdmin(r)) return true;
    }
  }
  return false;
}

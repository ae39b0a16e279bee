// Permission checks against the auth table (docs/auth.md "Roles and permissions"): a rule allows its
// permission on every name starting with its prefix; a user may do what one of its roles' rules allows.
// Default deny: a caller that is no user, or a user without a matching rule, may do nothing.
//
// Cost: at most MAX_ROLES_PER_USER roles of MAX_RULES_PER_ROLE rules each, no allocation: cheap enough for
// every read a node answers.
import * as L from '../limits';
import { compareRules, type AuthTable, type RoleRecord, type Rule } from './authTable';
import type { Permission, QuotaName } from './names';

/** Calls `visit` for each role of `user` (none when it is no user) until it returns true; true if one did. */
function someRole(t: AuthTable, user: string, visit: (r: RoleRecord) => boolean): boolean {
  const u = t.users.get(user);
  if (u === undefined) return false;
  for (const name of u.roles) {
    const r = t.roles.get(name);
    if (r !== undefined && visit(r)) return true;
  }
  return false;
}

/** May `user` use `perm` on `name` (a lock name for `lock`, a key for `write` and `read`)? */
export function allows(t: AuthTable, user: string, perm: Permission, name: string): boolean {
  return someRole(t, user, (r) => r.rules.some((rule) => rule.perm === perm && name.startsWith(rule.prefix)));
}

/** May `user` use `perm` on every name under `prefix` (a List): some rule's prefix is a prefix of it. */
export function allowsPrefix(t: AuthTable, user: string, perm: Permission, prefix: string): boolean {
  return allows(t, user, perm, prefix);
}

export function isAdmin(t: AuthTable, user: string): boolean {
  return someRole(t, user, roleIsAdmin);
}

export function roleIsAdmin(r: RoleRecord): boolean {
  return r.rules.some((rule) => rule.perm === 'admin');
}

/** The rules of all of `user`'s roles, sorted, without duplicates ([] for no user). */
export function rulesOf(t: AuthTable, user: string): Rule[] {
  const all: Rule[] = [];
  someRole(t, user, (r) => {
    all.push(...r.rules);
    return false;
  });
  all.sort(compareRules);
  return all.filter((rule, i) => i === 0 || compareRules(all[i - 1] as Rule, rule) !== 0);
}

/** The quota of `user`: the largest value its roles set, the default when none does (or it is no user). */
export function quotaOf(t: AuthTable, user: string, quota: QuotaName): number {
  let value = -1;
  someRole(t, user, (r) => {
    const v = r.quotas.get(quota);
    if (v !== undefined && v > value) value = v;
    return false;
  });
  return value >= 0 ? value : L.DEFAULT_QUOTAS[quota];
}

// The auth table (docs/auth.md): users and the roles they hold, roles and their rules and quotas, bearer
// tokens, and whether auth is on. Part of the replicated state: changed only by AuthChange entries
// (authChange.ts), read by every permission check (permissions.ts).
//
// Small and bounded (MAX_USERS, MAX_ROLES, MAX_TOKENS...): a snapshot copies it whole at its capture
// (image()), already in the canonical order the snapshot writes.
import * as L from '../limits';
import { compareStrings } from '../text';
import { PERMISSIONS, type Permission, type QuotaName } from './names';

export interface Rule {
  readonly perm: Permission;
  readonly prefix: string;
}

export interface RoleRecord {
  readonly name: string;
  /** Sorted by compareRules, no duplicates. */
  rules: Rule[];
  /** Quotas this role sets for its users (absent: the default). */
  readonly quotas: Map<QuotaName, number>;
}

export interface UserRecord {
  readonly name: string;
  /** Role names, sorted, no duplicates; every one a role of the table. */
  roles: string[];
  /** Ids of the tokens issued to this user (kept so that deleting the user deletes them). */
  readonly tokens: Set<string>;
}

export interface TokenRecord {
  readonly id: string;
  readonly user: string;
  /** SHA-256 of the token's secret, 64 lowercase hex characters. */
  readonly hash: string;
}

/** The table as plain sorted data: what a snapshot holds, and what authList() reports. */
export interface AuthImage {
  readonly enabled: boolean;
  /** Sorted by name; roles sorted. */
  readonly users: ReadonlyArray<{ readonly name: string; readonly roles: readonly string[] }>;
  /** Sorted by name; rules by compareRules, quotas by name. */
  readonly roles: ReadonlyArray<{ readonly name: string; readonly rules: readonly Rule[]; readonly quotas: ReadonlyArray<readonly [QuotaName, number]> }>;
  /** Sorted by id. */
  readonly tokens: readonly TokenRecord[];
}

/** Rules order by permission (PERMISSIONS order), then prefix. */
export function compareRules(a: Rule, b: Rule): number {
  return PERMISSIONS.indexOf(a.perm) - PERMISSIONS.indexOf(b.perm) || compareStrings(a.prefix, b.prefix);
}

const byName = <T extends { name: string }>(a: T, b: T): number => compareStrings(a.name, b.name);

export class AuthTable {
  enabled = false;
  readonly users = new Map<string, UserRecord>();
  readonly roles = new Map<string, RoleRecord>();
  readonly tokens = new Map<string, TokenRecord>();

  /** A sorted copy of the whole table (O(table); the table is bounded). */
  image(): AuthImage {
    const users = Array.from(this.users.values(), (u) => ({ name: u.name, roles: u.roles.slice() })).sort(byName);
    const roles = Array.from(this.roles.values(), (r) => ({
      name: r.name,
      rules: r.rules.slice(),
      quotas: Array.from(r.quotas).sort((a, b) => compareStrings(a[0], b[0])),
    })).sort(byName);
    const tokens = Array.from(this.tokens.values()).sort((a, b) => compareStrings(a.id, b.id));
    return { enabled: this.enabled, users, roles, tokens };
  }

  /** Empties the tables (users, roles, tokens); `enabled` stays as it is. */
  clear(): void {
    this.users.clear();
    this.roles.clear();
    this.tokens.clear();
  }

  addUser(name: string): UserRecord {
    const u: UserRecord = { name, roles: [], tokens: new Set() };
    this.users.set(name, u);
    return u;
  }

  /** Deletes the user and its tokens. */
  deleteUser(u: UserRecord): void {
    for (const id of u.tokens) this.tokens.delete(id);
    this.users.delete(u.name);
  }

  addRole(name: string): RoleRecord {
    const r: RoleRecord = { name, rules: [], quotas: new Map() };
    this.roles.set(name, r);
    return r;
  }

  /** Deletes the role and takes it from every user holding it. */
  deleteRole(r: RoleRecord): void {
    for (const u of this.users.values()) u.roles = u.roles.filter((name) => name !== r.name);
    this.roles.delete(r.name);
  }

  /** Gives `u` the role (kept sorted); false when it had it. */
  grantRole(u: UserRecord, role: string): boolean {
    if (u.roles.includes(role)) return false;
    u.roles = [...u.roles, role].sort(compareStrings);
    return true;
  }

  /** False when `u` did not have the role. */
  revokeRole(u: UserRecord, role: string): boolean {
    if (!u.roles.includes(role)) return false;
    u.roles = u.roles.filter((name) => name !== role);
    return true;
  }

  /** Adds the rule to the role (kept sorted); false when it had it. */
  addRule(r: RoleRecord, rule: Rule): boolean {
    if (r.rules.some((x) => compareRules(x, rule) === 0)) return false;
    r.rules = [...r.rules, { perm: rule.perm, prefix: rule.prefix }].sort(compareRules);
    return true;
  }

  /** False when the role did not have the rule. */
  deleteRule(r: RoleRecord, rule: Rule): boolean {
    const rules = r.rules.filter((x) => compareRules(x, rule) !== 0);
    if (rules.length === r.rules.length) return false;
    r.rules = rules;
    return true;
  }

  addToken(u: UserRecord, id: string, hash: string): void {
    this.tokens.set(id, { id, user: u.name, hash });
    u.tokens.add(id);
  }

  deleteToken(t: TokenRecord): void {
    this.tokens.delete(t.id);
    this.users.get(t.user)?.tokens.delete(t.id);
  }

  /** Self-check: references resolve, lists are sorted and without duplicates. */
  check(): string[] {
    const p: string[] = [];
    const q = JSON.stringify;
    for (const u of this.users.values()) {
      if (!isStrictlySorted(u.roles, compareStrings)) p.push(`user ${q(u.name)} roles are not sorted`);
      for (const role of u.roles) if (!this.roles.has(role)) p.push(`user ${q(u.name)} holds unknown role ${q(role)}`);
      for (const id of u.tokens) if (this.tokens.get(id)?.user !== u.name) p.push(`user ${q(u.name)} lists token ${id} that is not its`);
    }
    for (const r of this.roles.values()) {
      if (!isStrictlySorted(r.rules, compareRules)) p.push(`role ${q(r.name)} rules are not sorted`);
    }
    for (const t of this.tokens.values()) {
      if (this.users.get(t.user)?.tokens.has(t.id) !== true) p.push(`token ${t.id} of ${q(t.user)} is not its user's`);
    }
    p.push(...this.checkBounds());
    // enable makes an admin and LAST_ADMIN keeps one.
    if (this.enabled && !Array.from(this.users.values()).some((u) => u.roles.some((name) => this.roles.get(name)?.rules.some((x) => x.perm === 'admin')))) {
      p.push('auth is on and no user holds admin');
    }
    return p;
  }

  private checkBounds(): string[] {
    const p: string[] = [];
    if (this.users.size > L.MAX_USERS || this.roles.size > L.MAX_ROLES || this.tokens.size > L.MAX_TOKENS) p.push('auth table over its bounds');
    for (const u of this.users.values()) {
      if (u.roles.length > L.MAX_ROLES_PER_USER || u.tokens.size > L.MAX_TOKENS_PER_USER) p.push(`user ${JSON.stringify(u.name)} over its bounds`);
    }
    for (const r of this.roles.values()) if (r.rules.length > L.MAX_RULES_PER_ROLE) p.push(`role ${JSON.stringify(r.name)} over its bounds`);
    return p;
  }
}

function isStrictlySorted<T>(xs: readonly T[], compare: (a: T, b: T) => number): boolean {
  for (let i = 1; i < xs.length; i++) if (compare(xs[i - 1] as T, xs[i] as T) >= 0) return false;
  return true;
}

// What the node asks of the auth table (read-only): whether a call may proceed before it proposes it or
// answers a read, and the lists the Auth service shows. `authorize`, `authorizeListPrefix` and `isAdmin`
// answer as apply would with auth on, and true with auth off (nothing is checked then). Unlike apply, they
// never trust the caller '': the node asks them about a client's call, which always has an identity.
import type { AuthImage, AuthTable, Rule } from './authTable';
import type { Permission, QuotaName } from './names';
import { allows, allowsPrefix, isAdmin, quotaOf, rulesOf } from './permissions';

export interface AuthList {
  enabled: boolean;
  /** Sorted by name; roles sorted. */
  users: Array<{ name: string; roles: string[] }>;
  /** Sorted by name; rules sorted by permission (lock, write, read, admin) then prefix. */
  roles: Array<{ name: string; rules: Rule[]; quotas: Partial<Record<QuotaName, number>> }>;
  /** Sorted by id; the hash is left out (tokenRecord has it). */
  tokens: Array<{ id: string; user: string }>;
}

/** What an identity uses, against its quotas (QUOTA_NAMES: sessions, locks, waiters, keys, store_bytes, dedup_clients, semaphores). */
export interface IdentityUsage {
  sessions: number;
  locks: number;
  waiters: number;
  keys: number;
  storeBytes: number;
  dedupClients: number;
  /** Its retry records (results), against its share DEDUP_MAX_RESULTS_PER_IDENTITY. */
  dedupResults: number;
  /** Semaphores its sessions hold a permit of or wait for. */
  semaphores: number;
}

export class AuthView {
  constructor(
    private readonly t: AuthTable,
    private readonly owners: (sessionId: string) => string | undefined,
    private readonly used: (caller: string) => IdentityUsage,
  ) {}

  /** What `caller` uses now (counted for any caller but '', auth on or off). */
  usage(caller: string): IdentityUsage {
    return this.used(caller);
  }

  authEnabled(): boolean {
    return this.t.enabled;
  }

  /** May `caller` use `perm` on `name` (a lock name for `lock`, a key for `read`/`write`)? */
  authorize(caller: string, perm: Permission, name: string): boolean {
    return !this.t.enabled || allows(this.t, caller, perm, name);
  }

  /** May `caller` list the keys under `prefix`: some `read` rule's prefix is a prefix of it. */
  authorizeListPrefix(caller: string, prefix: string): boolean {
    return !this.t.enabled || allowsPrefix(this.t, caller, 'read', prefix);
  }

  /** May `caller` change the auth table, list it and move keys? */
  isAdmin(caller: string): boolean {
    return !this.t.enabled || isAdmin(this.t, caller);
  }

  /** The user and its roles, whether or not auth is on; undefined for no user. */
  userInfo(name: string): { name: string; roles: string[] } | undefined {
    const u = this.t.users.get(name);
    return u === undefined ? undefined : { name: u.name, roles: u.roles.slice() };
  }

  /** The rules of the user's roles, sorted, without duplicates ([] for no user). */
  rulesOf(user: string): Rule[] {
    return rulesOf(this.t, user);
  }

  /** The token's user and the SHA-256 of its secret (hex), to check a bearer token; undefined if unknown. */
  tokenRecord(id: string): { user: string; hash: string } | undefined {
    const token = this.t.tokens.get(id);
    return token === undefined ? undefined : { user: token.user, hash: token.hash };
  }

  /** The quota that applies to `caller` (the largest its roles set, else the default). */
  quotaOf(caller: string, quota: QuotaName): number {
    return quotaOf(this.t, caller, quota);
  }

  /** The whole table, sorted (O(table)). */
  authList(): AuthList {
    const image: AuthImage = this.t.image();
    return {
      enabled: image.enabled,
      users: image.users.map((u) => ({ name: u.name, roles: u.roles.slice() })),
      roles: image.roles.map((r) => ({ name: r.name, rules: r.rules.map((x) => ({ ...x })), quotas: Object.fromEntries(r.quotas) })),
      tokens: image.tokens.map((x) => ({ id: x.id, user: x.user })),
    };
  }

  /** The identity that opened the session ('' for none), undefined when the session is not open. */
  sessionOwner(sessionId: string): string | undefined {
    return this.owners(sessionId);
  }
}

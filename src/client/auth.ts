import * as grpc from '@grpc/grpc-js';
import { FenceLockError } from './errors';
import type { AuthChangeResponse__Output } from '../protocol/generated/fencelock/v1/AuthChangeResponse';
import type { Permission__Output } from '../protocol/generated/fencelock/v1/Permission';
import type { PermissionRule, PermissionRule__Output } from '../protocol/generated/fencelock/v1/PermissionRule';
import type { RequestHeader } from '../protocol/generated/fencelock/v1/RequestHeader';
import { bigIntToWire, uintToWire, wireToBigInt, wireToNumber } from '../protocol/wireInt';
import type { MethodDesc, Methods } from './proto';
import type { AuthChangeResult, AuthListing, AuthPermission, AuthRule, IssuedToken, SessionSummary, WhoAmI } from './types';
import { UINT64_MAX } from './uint64';

/** Request metadata key of a bearer token: `authorization: Bearer flt_<id>_<secret>` (docs/auth.md). */
export const META_AUTHORIZATION = 'authorization';

/** The prefix of every fencelock bearer token. */
export const AUTH_TOKEN_PREFIX = 'flt_';

/** The quotas a role may set (docs/auth.md, "Quotas"); the server is the judge, this list is for help texts. */
export const AUTH_QUOTA_NAMES = ['sessions', 'locks', 'waiters', 'keys', 'store_bytes', 'dedup_clients', 'semaphores', 'watch_streams', 'pipeline_streams', 'keepalive_streams', 'calls_in_flight'] as const;

/** The permissions a rule may grant, as the client API spells them. */
export const AUTH_PERMISSIONS: readonly AuthPermission[] = ['lock', 'write', 'read', 'admin'];

const TOKEN_ID = /^[0-9a-fA-F]{16}$/;
/** RFC 6750 b64token: what may follow `Bearer ` in an authorization header. */
const SECRET = /^[A-Za-z0-9._~+/-]+=*$/;
const MIN_SECRET_CHARS = 16;
const MAX_TOKEN_CHARS = 1024;

/**
 * What is wrong with a bearer token's shape, `flt_<16 hex digits>_<secret>`, or undefined when nothing is.
 * The answer never repeats the token (it may be a real one with a stray newline): it says what is wrong.
 */
export function authTokenProblem(token: unknown): string | undefined {
  if (typeof token !== 'string') return `must be a string, got ${typeof token}`;
  if (token === '') return 'is empty';
  if (/^bearer(\s|$)/i.test(token)) return 'starts with "Bearer": give the token alone (flt_...), the client adds the header';
  if (/\s/.test(token)) return 'contains whitespace or a line break: give the token alone, on one line, without spaces';
  if (token.length > MAX_TOKEN_CHARS) return `is longer than ${MAX_TOKEN_CHARS} characters`;
  if (!token.startsWith(AUTH_TOKEN_PREFIX)) return 'is not a fencelock token: it does not start with flt_ (expected flt_<16 hex digits>_<secret>)';
  const rest = token.slice(AUTH_TOKEN_PREFIX.length);
  const id = rest.slice(0, 16);
  if (!TOKEN_ID.test(id) || rest[16] !== '_') return 'is malformed: flt_ must be followed by the token id (16 hex digits) and _';
  const secret = rest.slice(17);
  if (secret.length < MIN_SECRET_CHARS) return `is malformed: the secret after flt_<id>_ has ${secret.length} characters, fewer than ${MIN_SECRET_CHARS} (cut short?)`;
  if (!SECRET.test(secret)) return 'is malformed: the secret after flt_<id>_ has characters a bearer token cannot carry (letters, digits and - . _ ~ + / only)';
  return undefined;
}

/**
 * Checks a bearer token's shape and returns its id (the 16 hex digits, which are no secret: `auth list` shows
 * them). Throws INVALID_ARGUMENT naming `source` and the problem, never the token.
 */
export function checkAuthToken(token: unknown, source = 'token'): string {
  const problem = authTokenProblem(token);
  if (problem !== undefined) throw new FenceLockError('INVALID_ARGUMENT', `${source} ${problem}`);
  return (token as string).slice(AUTH_TOKEN_PREFIX.length, AUTH_TOKEN_PREFIX.length + 16);
}

/** True for a token id as `auth list` shows it and `tokenRevoke` takes it: 16 hex digits. */
export function isAuthTokenId(id: unknown): id is string {
  return typeof id === 'string' && TOKEN_ID.test(id);
}

/**
 * An interceptor that puts `authorization: Bearer <token>` on every call it sees: unary calls, and the
 * Pipeline, KeepAlive and Watch streams (their metadata is sent once, when the stream opens). The token lives
 * only in this closure: nothing the client logs or serializes holds it.
 */
export function bearerInterceptor(token: string): grpc.Interceptor {
  checkAuthToken(token);
  const value = `Bearer ${token}`;
  return (options, nextCall) =>
    new grpc.InterceptingCall(nextCall(options), {
      start(metadata, listener, next) {
        metadata.set(META_AUTHORIZATION, value);
        next(metadata, listener);
      },
    });
}

const TO_WIRE: Record<AuthPermission, Permission__Output> = { lock: 'LOCK', write: 'WRITE', read: 'READ', admin: 'ADMIN' };

function toWirePermission(permission: unknown): Permission__Output {
  if (typeof permission === 'string' && Object.hasOwn(TO_WIRE, permission)) return TO_WIRE[permission as AuthPermission];
  throw new FenceLockError('INVALID_ARGUMENT', `permission must be one of ${AUTH_PERMISSIONS.join(', ')}, got ${JSON.stringify(permission)}`);
}

/** A wire rule as the API shows it; a permission this client does not know is 'unspecified'. */
export function toAuthRule(r: PermissionRule__Output): AuthRule {
  const p = typeof r.permission === 'string' ? r.permission.toLowerCase() : '';
  const permission = (AUTH_PERMISSIONS as readonly string[]).includes(p) ? (p as AuthPermission) : 'unspecified';
  return { permission, prefix: r.prefix ?? '' };
}

function nonEmpty(value: unknown, what: string): string {
  if (typeof value !== 'string' || value === '') throw new FenceLockError('INVALID_ARGUMENT', `${what} must be a non-empty string, got ${JSON.stringify(value)}`);
  return value;
}

function quotaValue(value: unknown): string {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value) || value < 0) throw new FenceLockError('INVALID_ARGUMENT', `quota value must be a non-negative integer, got ${value}`);
    return uintToWire('value', value);
  }
  if (typeof value === 'bigint' && value >= 0n && value <= UINT64_MAX) return bigIntToWire(value);
  throw new FenceLockError('INVALID_ARGUMENT', `quota value must be a non-negative integer (number or bigint up to 2^64-1), got ${String(value)}`);
}

/** What the Auth methods need from the client: plain reads, and mutations with a request header. */
export interface AuthHost {
  read<Req, Res>(m: MethodDesc<Req, Res>, req: Req, what: string): Promise<Res>;
  /** A fresh request id, kept by every retry (same id, leader hints followed), like every other mutation. */
  mutate<Req, Res>(m: MethodDesc<Req, Res>, build: (header: RequestHeader) => Req, what: string): Promise<Res>;
  methods(): Methods;
}

/**
 * `client.auth`: users, roles, permissions, quotas and tokens (docs/auth.md). Every change is one log entry
 * and needs the `admin` permission; each resolves to the index of the entry that applied it. Errors are
 * FenceLockErrors: PERMISSION_DENIED without `admin`, LAST_ADMIN (reason) for a change that would leave no
 * admin, NOT_FOUND / ALREADY_EXISTS / INVALID_ARGUMENT as the server says.
 */
export class AuthClient {
  constructor(private readonly host: AuthHost) {}

  /** Who the cluster takes this client for (needs no identity: `identity` is '' without one). */
  async whoAmI(): Promise<WhoAmI> {
    const r = await this.host.read(this.host.methods().Auth.WhoAmI, {}, 'auth whoami');
    return { identity: r.identity, via: r.via, authEnabled: r.authEnabled, roles: r.roles ?? [], rules: (r.rules ?? []).map(toAuthRule) };
  }

  /** Users with their roles, roles with their rules and quotas, and token ids (never secrets). */
  async list(): Promise<AuthListing> {
    const r = await this.host.read(this.host.methods().Auth.List, {}, 'auth list');
    return {
      authEnabled: r.authEnabled,
      users: (r.users ?? []).map((u) => ({ name: u.name, roles: u.roles ?? [] })),
      roles: (r.roles ?? []).map((role) => ({
        name: role.name,
        rules: (role.rules ?? []).map(toAuthRule),
        quotas: (role.quotas ?? []).map((q) => ({ name: q.name, value: wireToBigInt(q.value) })),
      })),
      tokens: (r.tokens ?? []).map((t) => ({ id: t.id, user: t.user })),
    };
  }

  async userAdd(name: string): Promise<AuthChangeResult> {
    const user = nonEmpty(name, 'user');
    return this.change(this.host.methods().Auth.UserAdd, (header) => ({ header, user }), `auth: add user ${JSON.stringify(user)}`);
  }

  async userDelete(name: string): Promise<AuthChangeResult> {
    const user = nonEmpty(name, 'user');
    return this.change(this.host.methods().Auth.UserDelete, (header) => ({ header, user }), `auth: delete user ${JSON.stringify(user)}`);
  }

  async userGrantRole(user: string, role: string): Promise<AuthChangeResult> {
    const u = nonEmpty(user, 'user');
    const r = nonEmpty(role, 'role');
    return this.change(this.host.methods().Auth.UserGrantRole, (header) => ({ header, user: u, role: r }), `auth: grant role ${JSON.stringify(r)} to user ${JSON.stringify(u)}`);
  }

  async userRevokeRole(user: string, role: string): Promise<AuthChangeResult> {
    const u = nonEmpty(user, 'user');
    const r = nonEmpty(role, 'role');
    return this.change(this.host.methods().Auth.UserRevokeRole, (header) => ({ header, user: u, role: r }), `auth: revoke role ${JSON.stringify(r)} from user ${JSON.stringify(u)}`);
  }

  async roleAdd(name: string): Promise<AuthChangeResult> {
    const role = nonEmpty(name, 'role');
    return this.change(this.host.methods().Auth.RoleAdd, (header) => ({ header, role }), `auth: add role ${JSON.stringify(role)}`);
  }

  async roleDelete(name: string): Promise<AuthChangeResult> {
    const role = nonEmpty(name, 'role');
    return this.change(this.host.methods().Auth.RoleDelete, (header) => ({ header, role }), `auth: delete role ${JSON.stringify(role)}`);
  }

  /** Lets a role's users use `permission` on every name starting with `prefix` ('' = every name; `admin` takes ''). */
  async roleGrantPermission(role: string, permission: AuthPermission, prefix: string): Promise<AuthChangeResult> {
    const r = nonEmpty(role, 'role');
    const rule = this.rule(permission, prefix);
    return this.change(
      this.host.methods().Auth.RoleGrantPermission,
      (header) => ({ header, role: r, rule }),
      `auth: grant ${permission} on ${JSON.stringify(prefix)} to role ${JSON.stringify(r)}`,
    );
  }

  /** Takes back exactly the rule (permission, prefix) from a role. */
  async roleRevokePermission(role: string, permission: AuthPermission, prefix: string): Promise<AuthChangeResult> {
    const r = nonEmpty(role, 'role');
    const rule = this.rule(permission, prefix);
    return this.change(
      this.host.methods().Auth.RoleRevokePermission,
      (header) => ({ header, role: r, rule }),
      `auth: revoke ${permission} on ${JSON.stringify(prefix)} from role ${JSON.stringify(r)}`,
    );
  }

  /** Sets a role's value of a quota (see AUTH_QUOTA_NAMES), or with `undefined` stops the role overriding it. */
  async roleSetQuota(role: string, name: string, value: number | bigint | undefined): Promise<AuthChangeResult> {
    const r = nonEmpty(role, 'role');
    const quota = nonEmpty(name, 'quota name');
    const unset = value === undefined;
    const wireValue = unset ? '0' : quotaValue(value);
    const what = unset ? `auth: unset quota ${JSON.stringify(quota)} of role ${JSON.stringify(r)}` : `auth: set quota ${JSON.stringify(quota)} of role ${JSON.stringify(r)} to ${wireValue}`;
    return this.change(this.host.methods().Auth.RoleSetQuota, (header) => ({ header, role: r, name: quota, value: wireValue, unset }), what);
  }

  /**
   * Issues a bearer token for a user. The secret (`token`) is shown this once: the cluster keeps only its
   * SHA-256. `tokenId` names it in `list()` and `tokenRevoke()`.
   */
  async tokenIssue(user: string): Promise<IssuedToken> {
    const u = nonEmpty(user, 'user');
    const r = await this.host.mutate(this.host.methods().Auth.TokenIssue, (header) => ({ header, user: u }), `auth: issue a token for user ${JSON.stringify(u)}`);
    return { tokenId: r.tokenId, token: r.token };
  }

  /** Revokes a token by its id (16 hex digits, as `list()` shows it); calls carrying it fail from then on. */
  async tokenRevoke(tokenId: string): Promise<AuthChangeResult> {
    if (!isAuthTokenId(tokenId)) throw new FenceLockError('INVALID_ARGUMENT', `tokenId must be a token id (16 hex digits, as auth list shows it), got ${JSON.stringify(String(tokenId).slice(0, 40))}`);
    return this.change(this.host.methods().Auth.TokenRevoke, (header) => ({ header, tokenId }), `auth: revoke token ${tokenId}`);
  }

  /**
   * Open sessions as an admin sees them (docs/auth.md "Ending sessions"): public handle, identity, client
   * name, locks held and waited for, age. Every page, in handle order.
   */
  async sessionList(): Promise<SessionSummary[]> {
    const out: SessionSummary[] = [];
    for (let startAfter = ''; ; ) {
      const r = await this.host.read(this.host.methods().Session.List, { startAfter, limit: 1_000 }, 'session list');
      const page = r.sessions ?? [];
      for (const s of page) {
        out.push({ handle: s.handle, identity: s.identity, clientName: s.clientName, labels: { ...(s.labels ?? {}) }, locks: s.locks ?? [], waiting: s.waiting ?? [], ageMs: wireToNumber(s.ageMs), ttlMs: wireToNumber(s.ttlMs) });
      }
      const last = page[page.length - 1];
      if (!r.more || last === undefined) return out;
      startAfter = last.handle;
    }
  }

  /**
   * Ends the session with public handle `handle` (admin only): its locks go to their next waiters, as on
   * expiry, and its holder's client loses it with reason REVOKED. Resolves to the locks it held.
   */
  async sessionRevoke(handle: string): Promise<{ released: string[] }> {
    if (typeof handle !== 'string' || !/^[0-9a-f]{16}$/.test(handle)) {
      throw new FenceLockError('INVALID_ARGUMENT', `handle must be a session handle (16 lowercase hex characters, as session list shows it), got ${JSON.stringify(String(handle).slice(0, 40))}`);
    }
    const r = await this.host.mutate(this.host.methods().Session.Revoke, (header) => ({ header, handle }), `session revoke ${handle}`);
    return { released: r.released ?? [] };
  }

  private rule(permission: AuthPermission, prefix: string): PermissionRule {
    const p = toWirePermission(permission);
    if (typeof prefix !== 'string') throw new FenceLockError('INVALID_ARGUMENT', `prefix must be a string ('' for every name), got ${typeof prefix}`);
    return { permission: p, prefix };
  }

  private async change<Req>(m: MethodDesc<Req, AuthChangeResponse__Output>, build: (header: RequestHeader) => Req, what: string): Promise<AuthChangeResult> {
    const r = await this.host.mutate(m, build, what);
    return { index: wireToBigInt(r.index) };
  }
}

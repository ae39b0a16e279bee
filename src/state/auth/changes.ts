// The changes of the auth table a log entry can carry (AuthChange commands), and their validation. Applying
// them is authChange.ts; who may send one is access.ts.
import * as L from '../limits';
import { isWellFormed, utf8ByteLength } from '../text';
import { isPermission, isQuotaName, isRoleName, isTokenHash, isTokenId, isUserName, type Permission, type QuotaName } from './names';

/**
 * One change of the auth table, tagged by `op`:
 * - `enable`: turns auth on (once; afterwards a no-op): role `root` with every permission on every name,
 *   user `user` holding it;
 * - users and roles come and go; a rule allows `perm` on names starting with `prefix` (`admin` only with
 *   prefix ''); `role_quota` sets a role's quota (`value` absent: unset it);
 * - a token is issued with the id and SHA-256 of its secret the leader drew (the secret is never logged).
 */
export type AuthChange = AuthChangeBody & {
  /**
   * The rules the entry is applied under (AUTH_RULES_*). Absent or 0: entries written before
   * AUTH_RULES_CLOSED_WHEN_OFF, applied as then, so that replaying an old log gives the same state.
   */
  version?: number;
};

/**
 * Rules since which the auth tables accept no change while auth is off, and `enable` builds them afresh
 * (docs/auth.md "Bootstrap"). Every node stamps it on the AuthChange entries it proposes.
 */
export const AUTH_RULES_CLOSED_WHEN_OFF = 1;

type AuthChangeBody =
  | { op: 'enable'; user: string }
  | { op: 'user_add'; user: string }
  | { op: 'user_delete'; user: string }
  | { op: 'user_grant'; user: string; role: string }
  | { op: 'user_revoke'; user: string; role: string }
  | { op: 'role_add'; role: string }
  | { op: 'role_delete'; role: string }
  | { op: 'role_grant'; role: string; perm: Permission; prefix: string }
  | { op: 'role_revoke'; role: string; perm: Permission; prefix: string }
  | { op: 'role_quota'; role: string; quota: QuotaName; value?: number }
  | { op: 'token_issue'; user: string; tokenId: string; tokenHash: string }
  | { op: 'token_revoke'; tokenId: string };

export type AuthChangeOp = AuthChangeBody['op'];

export const AUTH_CHANGE_OPS: readonly AuthChangeOp[] = Object.freeze([
  'enable',
  'user_add',
  'user_delete',
  'user_grant',
  'user_revoke',
  'role_add',
  'role_delete',
  'role_grant',
  'role_revoke',
  'role_quota',
  'token_issue',
  'token_revoke',
] as const);

type Fields = Record<string, unknown>;

function isRecord(v: unknown): v is Fields {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function checkUser(v: unknown): string | null {
  return isUserName(v) ? null : `user must be a name of 1..${L.MAX_AUTH_NAME_BYTES} letters, digits, '.', '_', '@' or '-' starting with a letter or digit`;
}

function checkRole(v: unknown): string | null {
  return isRoleName(v) ? null : `role must be a name of 1..${L.MAX_AUTH_NAME_BYTES} letters, digits, '.', '_', '@' or '-' starting with a letter or digit`;
}

function checkTokenId(v: unknown): string | null {
  return isTokenId(v) ? null : `tokenId must be ${L.TOKEN_ID_HEX_CHARS} lowercase hex characters`;
}

/** A rule: a known permission and a well-formed prefix; `admin` is a permission on everything (prefix ''). */
function checkRule(perm: unknown, prefix: unknown): string | null {
  if (!isPermission(perm)) return "perm must be 'lock', 'write', 'read' or 'admin'";
  if (typeof prefix !== 'string' || !isWellFormed(prefix)) return 'prefix must be a well-formed string';
  if (utf8ByteLength(prefix) > L.MAX_RULE_PREFIX_BYTES) return `prefix exceeds ${L.MAX_RULE_PREFIX_BYTES} bytes`;
  if (perm === 'admin' && prefix !== '') return "an admin rule has the prefix ''";
  return null;
}

function checkQuota(quota: unknown, value: unknown): string | null {
  if (!isQuotaName(quota)) return `quota must be one of ${Object.keys(L.DEFAULT_QUOTAS).join(', ')}`;
  if (value === undefined) return null;
  const ok = typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 && value <= L.MAX_QUOTA_VALUE;
  return ok ? null : `a quota value must be an integer in [0, ${L.MAX_QUOTA_VALUE}]`;
}

/** Full validation of the `change` of an AuthChange command: a message, or null when valid. Never throws. */
export function checkAuthChange(v: unknown): string | null {
  if (!isRecord(v)) return 'change must be an object';
  if (v.version !== undefined && v.version !== 0 && v.version !== AUTH_RULES_CLOSED_WHEN_OFF) return `version must be 0 or ${AUTH_RULES_CLOSED_WHEN_OFF}`;
  switch (v.op) {
    case 'enable':
    case 'user_add':
    case 'user_delete':
      return checkUser(v.user);
    case 'user_grant':
    case 'user_revoke':
      return checkUser(v.user) ?? checkRole(v.role);
    case 'role_add':
    case 'role_delete':
      return checkRole(v.role);
    case 'role_grant':
    case 'role_revoke':
      return checkRole(v.role) ?? checkRule(v.perm, v.prefix);
    case 'role_quota':
      return checkRole(v.role) ?? checkQuota(v.quota, v.value);
    case 'token_issue':
      if (!isTokenHash(v.tokenHash)) return `tokenHash must be ${L.TOKEN_HASH_HEX_CHARS} lowercase hex characters`;
      return checkUser(v.user) ?? checkTokenId(v.tokenId);
    case 'token_revoke':
      return checkTokenId(v.tokenId);
    default:
      return `unknown auth change op; one of ${AUTH_CHANGE_OPS.join(', ')}`;
  }
}

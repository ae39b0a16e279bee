// AuthChange: a change of the auth table (auth/changes.ts). With auth on, only an admin may (except
// `enable`, a no-op then). Deleting a user ends its sessions in the same entry.
import { adminOnly } from '../auth/access';
import { applyAuthChange } from '../auth/authChange';
import { checkAuthChange, type AuthChange } from '../auth/changes';
import type { BodyReader, CommandEntry, RequestMeta, WireBody } from './entry';

export interface AuthChangeCommand extends RequestMeta {
  type: 'AuthChange';
  change: AuthChange;
}

/** The flat wire form (state.proto AuthChange): every field of the change under its name, the rest empty. */
function encodeAuthChange(c: AuthChange): WireBody {
  const f = c as Partial<Record<'user' | 'role' | 'perm' | 'prefix' | 'tokenId' | 'tokenHash' | 'quota', string>> & { value?: number };
  const w: WireBody = { op: c.op, user: f.user, role: f.role, perm: f.perm, prefix: f.prefix, tokenId: f.tokenId, tokenHash: f.tokenHash, quota: f.quota };
  if (f.value !== undefined) {
    w.value = f.value;
    w.hasValue = true;
  }
  if (c.version !== undefined && c.version !== 0) w.version = c.version;
  return w;
}

/** The fields each op uses. */
const FIELDS: Readonly<Record<string, readonly string[]>> = {
  enable: ['user'],
  user_add: ['user'],
  user_delete: ['user'],
  user_grant: ['user', 'role'],
  user_revoke: ['user', 'role'],
  role_add: ['role'],
  role_delete: ['role'],
  role_grant: ['role', 'perm', 'prefix'],
  role_revoke: ['role', 'perm', 'prefix'],
  role_quota: ['role', 'quota'],
  token_issue: ['user', 'tokenId', 'tokenHash'],
  token_revoke: ['tokenId'],
};

/**
 * The change as the state machine takes it: the fields its op uses ('' for one left empty: validation says
 * what is wrong), `value` only with has_value. An unknown op keeps only `op` (validation refuses it).
 */
function decodeAuthChange(b: BodyReader): AuthChange {
  const op = b.str('op');
  const change: Record<string, unknown> = { op };
  for (const k of Object.hasOwn(FIELDS, op) ? (FIELDS[op] ?? []) : []) change[k] = b.str(k);
  if (op === 'role_quota' && b.bool('hasValue')) change.value = b.num('value');
  const version = b.num('version');
  if (version !== 0) change.version = version;
  return change as unknown as AuthChange;
}

export const authChange: CommandEntry<AuthChangeCommand, 'auth_changed'> = {
  type: 'AuthChange',
  kind: 'request',
  statuses: ['auth_changed'],
  member: 'authChange',
  encode: (c) => encodeAuthChange(c.change),
  decode: (b, meta) => ({ type: 'AuthChange', ...meta, change: decodeAuthChange(b) }),
  validate: (c) => checkAuthChange(c.change),
  permit: (p, c) => (c.change.op === 'enable' ? null : adminOnly(p)),
  execute(m, index, c, events) {
    const result = applyAuthChange(m.authTable, c.change);
    if (c.change.op === 'user_delete' && result.status === 'auth_changed') m.endSessionsOf(index, c.now, c.change.user, events);
    return result;
  },
};

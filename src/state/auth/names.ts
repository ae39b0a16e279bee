// The names of the auth table (docs/auth.md "Identities"): users, roles, token ids and hashes, permissions and
// quotas, and the caller a node stamps on a request. Names are ASCII, so a name's length is its byte count.
import * as L from '../limits';

/** USER_NAME: letters, digits and `.`, `_`, `@`, `-`, starting with a letter or digit. Role names alike. */
const USER_NAME = /^[A-Za-z0-9][A-Za-z0-9._@-]*$/;
const TOKEN_ID = new RegExp(`^[0-9a-f]{${L.TOKEN_ID_HEX_CHARS}}$`);
const TOKEN_HASH = new RegExp(`^[0-9a-f]{${L.TOKEN_HASH_HEX_CHARS}}$`);
/** A caller: printable ASCII without space (a user name, or `address:IP` when auth is off). */
const CALLER = /^[\x21-\x7e]*$/;

export function isUserName(v: unknown): v is string {
  return typeof v === 'string' && v.length >= 1 && v.length <= L.MAX_AUTH_NAME_BYTES && USER_NAME.test(v);
}

/** Role names follow the user names' rule. */
export const isRoleName = isUserName;

export function isTokenId(v: unknown): v is string {
  return typeof v === 'string' && TOKEN_ID.test(v);
}

export function isTokenHash(v: unknown): v is string {
  return typeof v === 'string' && TOKEN_HASH.test(v);
}

/** '' (node-internal or legacy: no checks, no quotas) or 1..MAX_CALLER_BYTES printable ASCII. */
export function isCaller(v: unknown): v is string {
  return typeof v === 'string' && v.length <= L.MAX_CALLER_BYTES && CALLER.test(v);
}

/** The permissions of a rule, in their canonical order (rules of a role sort by it, then by prefix). */
export const PERMISSIONS = Object.freeze(['lock', 'write', 'read', 'admin'] as const);
export type Permission = (typeof PERMISSIONS)[number];

export function isPermission(v: unknown): v is Permission {
  return typeof v === 'string' && (PERMISSIONS as readonly string[]).includes(v);
}

/** The quotas a role may set, in their canonical order (the keys of DEFAULT_QUOTAS). */
export const QUOTA_NAMES = Object.freeze(Object.keys(L.DEFAULT_QUOTAS) as Array<keyof typeof L.DEFAULT_QUOTAS>);
export type QuotaName = keyof typeof L.DEFAULT_QUOTAS;

/** The quotas the node's listener counts (streams and calls over the identity's connections). */
export type StreamQuotaName = Extract<QuotaName, 'watch_streams' | 'pipeline_streams' | 'keepalive_streams' | 'calls_in_flight'>;

export function isQuotaName(v: unknown): v is QuotaName {
  return typeof v === 'string' && (QUOTA_NAMES as readonly string[]).includes(v);
}

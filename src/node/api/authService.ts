// The Auth service (docs/auth.md): every change is an AuthChange log entry, checked again when applied.
import * as grpc from '@grpc/grpc-js';
import { AUTH_RULES_CLOSED_WHEN_OFF, Reason, type AuthChange, type Permission } from '../../state';
import { isQuotaName, isTokenId, isUserName, QUOTA_NAMES, type QuotaName } from '../../state/auth/names';
import * as L from '../../state/limits';
import type { AuthChangeResponse__Output } from '../../protocol/generated/fencelock/v1/AuthChangeResponse';
import type { AuthListRequest__Output } from '../../protocol/generated/fencelock/v1/AuthListRequest';
import type { AuthListResponse__Output } from '../../protocol/generated/fencelock/v1/AuthListResponse';
import type { Permission__Output } from '../../protocol/generated/fencelock/v1/Permission';
import type { PermissionRequest__Output } from '../../protocol/generated/fencelock/v1/PermissionRequest';
import type { PermissionRule__Output } from '../../protocol/generated/fencelock/v1/PermissionRule';
import type { QuotaRequest__Output } from '../../protocol/generated/fencelock/v1/QuotaRequest';
import type { RequestHeader__Output } from '../../protocol/generated/fencelock/v1/RequestHeader';
import type { RoleRequest__Output } from '../../protocol/generated/fencelock/v1/RoleRequest';
import type { TokenIssueRequest__Output } from '../../protocol/generated/fencelock/v1/TokenIssueRequest';
import type { TokenIssueResponse__Output } from '../../protocol/generated/fencelock/v1/TokenIssueResponse';
import type { TokenRevokeRequest__Output } from '../../protocol/generated/fencelock/v1/TokenRevokeRequest';
import type { UserRequest__Output } from '../../protocol/generated/fencelock/v1/UserRequest';
import type { UserRoleRequest__Output } from '../../protocol/generated/fencelock/v1/UserRoleRequest';
import type { WhoAmIRequest__Output } from '../../protocol/generated/fencelock/v1/WhoAmIRequest';
import type { WhoAmIResponse__Output } from '../../protocol/generated/fencelock/v1/WhoAmIResponse';
import { intToWire } from '../../protocol/wireInt';
import { newToken } from '../auth/tokens';
import { unary, type CallScope, type NodeContext } from './context';
import { ApiError, invalidArgument } from './errors';
import { expectOk, refusalError } from './refusals';
import * as v from './validate';

const PERMISSIONS: Record<string, Permission> = { LOCK: 'lock', WRITE: 'write', READ: 'read', ADMIN: 'admin' };
const WIRE_PERMISSION: Record<Permission, Permission__Output> = { lock: 'LOCK', write: 'WRITE', read: 'READ', admin: 'ADMIN' };

// Every field is checked here as the state machine checks it again at apply, so that a refusal names the
// request's own field (token_id, rule.prefix), not the log entry's (tokenId, prefix).

/** A user or role name (docs/auth.md "Identities"). */
function name(field: string, value: unknown): string {
  const s = v.text(field, value, L.MAX_AUTH_NAME_BYTES);
  if (!isUserName(s)) throw invalidArgument(field, "must be letters, digits, '.', '_', '@' or '-', starting with a letter or digit");
  return s;
}

function tokenId(value: unknown): string {
  const s = v.text('token_id', value, 128);
  if (!isTokenId(s)) throw invalidArgument('token_id', `must be ${L.TOKEN_ID_HEX_CHARS} lowercase hex digits, as Auth.List shows it`);
  return s;
}

function rule(wire: PermissionRule__Output | null): { perm: Permission; prefix: string } {
  const perm = PERMISSIONS[wire?.permission ?? ''];
  if (perm === undefined) throw invalidArgument('rule.permission', 'must be LOCK, WRITE, READ or ADMIN');
  const prefix = v.text('rule.prefix', wire?.prefix ?? '', L.MAX_RULE_PREFIX_BYTES, { allowEmpty: true });
  if (perm === 'admin' && prefix !== '') throw invalidArgument('rule.prefix', "must be empty for ADMIN (admin is a permission on everything)");
  return { perm, prefix };
}

function quotaName(value: unknown): QuotaName {
  if (!isQuotaName(value)) throw invalidArgument('name', `must be one of the quotas: ${QUOTA_NAMES.join(', ')}`);
  return value;
}

const wireRule = (r: { perm: Permission; prefix: string }): PermissionRule__Output => ({ permission: WIRE_PERMISSION[r.perm], prefix: r.prefix });

export function authService(ctx: NodeContext): grpc.UntypedServiceImplementation {
  const { access } = ctx;
  /** Proposes one change as the caller (who must be an admin once auth is on); answers with its entry. */
  const change = async (header: RequestHeader__Output | null, call: CallScope, what: AuthChange): Promise<{ index: number; tokenId?: string }> => {
    const id = v.header(header);
    access.permitAdmin(call.caller);
    // The state machine refuses it too (the entry carries the rule's version); refusing here keeps it out of the log.
    if (!ctx.machine.auth.authEnabled()) throw refusalError(Reason.AUTH_OFF, 0, undefined, undefined, what.op);
    const change = { ...what, version: AUTH_RULES_CLOSED_WHEN_OFF };
    const { index, result } = await ctx.proposeOrRecall({ type: 'AuthChange', ...id, ...access.stamp(call.caller), now: ctx.now(), change });
    const ok = expectOk(result);
    return { index: index ?? 0, tokenId: ok.status === 'auth_changed' ? ok.tokenId : undefined };
  };
  /** An RPC whose request maps to one change (validated first, as the fields of every Auth change are). */
  const changeOf = <Req extends { header: RequestHeader__Output | null }>(fn: (req: Req) => AuthChange) =>
    unary(ctx, 'Auth', async (req: Req, call): Promise<AuthChangeResponse__Output> => {
      const { index } = await change(req.header, call, fn(req));
      return { index: intToWire('index', index) };
    });

  return {
    WhoAmI: unary(
      ctx,
      'Auth.WhoAmI',
      async (_req: WhoAmIRequest__Output, call): Promise<WhoAmIResponse__Output> => {
        const named = call.caller?.via === 'certificate' || call.caller?.via === 'token' ? call.caller : undefined;
        const identity = named?.identity ?? '';
        const user = identity === '' ? undefined : ctx.machine.auth.userInfo(identity);
        return {
          identity,
          via: named?.via ?? '',
          authEnabled: ctx.machine.auth.authEnabled(),
          roles: user?.roles ?? [],
          rules: identity === '' ? [] : ctx.machine.auth.rulesOf(identity).map(wireRule),
        };
      },
      true,
    ),
    List: unary(ctx, 'Auth.List', async (_req: AuthListRequest__Output, call): Promise<AuthListResponse__Output> => {
      access.permitAdmin(call.caller);
      await ctx.linearizableRead();
      const list = ctx.machine.auth.authList();
      return {
        authEnabled: list.enabled,
        users: list.users,
        roles: list.roles.map((r) => ({ name: r.name, rules: r.rules.map(wireRule), quotas: Object.entries(r.quotas).map(([n, value]) => ({ name: n, value: intToWire('value', value) })) })),
        tokens: list.tokens,
      };
    }),
    UserAdd: changeOf((r: UserRequest__Output) => ({ op: 'user_add', user: name('user', r.user) })),
    UserDelete: changeOf((r: UserRequest__Output) => ({ op: 'user_delete', user: name('user', r.user) })),
    UserGrantRole: changeOf((r: UserRoleRequest__Output) => ({ op: 'user_grant', user: name('user', r.user), role: name('role', r.role) })),
    UserRevokeRole: changeOf((r: UserRoleRequest__Output) => ({ op: 'user_revoke', user: name('user', r.user), role: name('role', r.role) })),
    RoleAdd: changeOf((r: RoleRequest__Output) => ({ op: 'role_add', role: name('role', r.role) })),
    RoleDelete: changeOf((r: RoleRequest__Output) => ({ op: 'role_delete', role: name('role', r.role) })),
    RoleGrantPermission: changeOf((r: PermissionRequest__Output) => ({ op: 'role_grant', role: name('role', r.role), ...rule(r.rule) })),
    RoleRevokePermission: changeOf((r: PermissionRequest__Output) => ({ op: 'role_revoke', role: name('role', r.role), ...rule(r.rule) })),
    RoleSetQuota: changeOf((r: QuotaRequest__Output) => ({
      op: 'role_quota',
      role: name('role', r.role),
      quota: quotaName(r.name),
      ...(r.unset === true ? {} : { value: v.safeInteger('value', r.value, { max: L.MAX_QUOTA_VALUE }) }),
    })),
    TokenRevoke: changeOf((r: TokenRevokeRequest__Output) => ({ op: 'token_revoke', tokenId: tokenId(r.tokenId) })),
    TokenIssue: unary(ctx, 'Auth.TokenIssue', async (req: TokenIssueRequest__Output, call): Promise<TokenIssueResponse__Output> => {
      const user = name('user', req.user);
      // Drawn here, on the leader: the entry carries the id and the secret's digest, never the secret.
      const token = newToken(ctx.ports.random.bytes(40));
      const done = await change(req.header, call, { op: 'token_issue', user, tokenId: token.id, tokenHash: token.hash });
      if (done.tokenId !== token.id) {
        // A retry of an issue that was applied: its secret went out with the lost answer and exists nowhere else.
        throw new ApiError(grpc.status.ABORTED, `token ${done.tokenId ?? '?'} was issued by an earlier attempt of this request, whose answer was lost; revoke it (fencelock auth token revoke ${done.tokenId ?? 'ID'}) and issue a new one`);
      }
      return { tokenId: token.id, token: token.token };
    }),
  };
}

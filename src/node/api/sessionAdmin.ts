// Session.List and Session.Revoke (docs/auth.md "Ending sessions"): an admin sees every open session by its
// public handle, never its secret id, and ends one; the RevokeSession entry ends it as expiry would, with
// cause `revoked`, which the holder's client learns from its next renewal (RevokedSessions).
import * as grpc from '@grpc/grpc-js';
import type { ListSessionsRequest__Output } from '../../protocol/generated/fencelock/v1/ListSessionsRequest';
import type { ListSessionsResponse__Output } from '../../protocol/generated/fencelock/v1/ListSessionsResponse';
import type { RevokeSessionRequest__Output } from '../../protocol/generated/fencelock/v1/RevokeSessionRequest';
import type { RevokeSessionResponse__Output } from '../../protocol/generated/fencelock/v1/RevokeSessionResponse';
import type { SessionSummary__Output } from '../../protocol/generated/fencelock/v1/SessionSummary';
import { labelsToRecord } from '../../protocol/labels';
import { intToWire } from '../../protocol/wireInt';
import { ApiError } from './errors';
import type { CallScope, NodeContext } from './context';
import { proposing } from './proposal';
import { publicSessionId } from './publicSessionId';
import type { Rpc } from './rpc';
import * as v from './validate';

const HANDLE = /^[0-9a-f]{16}$/;
const MAX_PAGE = 1_000;

function handleOf(value: unknown, field: string, allowEmpty: boolean): string {
  const handle = typeof value === 'string' ? value : '';
  if ((allowEmpty && handle === '') || HANDLE.test(handle)) return handle;
  throw new ApiError(grpc.status.INVALID_ARGUMENT, `${field} must be a session handle: 16 lowercase hex characters, as \`fencelock session list\` shows them`);
}

/** Every open session's handle with its secret id, sorted by handle (O(sessions): an admin's rare call). */
function byHandle(ctx: NodeContext): Array<[handle: string, sessionId: string]> {
  return ctx.machine
    .sessionIds()
    .map((id): [string, string] => [publicSessionId(id), id])
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}

export function sessionAdmin(ctx: NodeContext): {
  list: Rpc<ListSessionsRequest__Output, ListSessionsResponse__Output>;
  revoke: Rpc<RevokeSessionRequest__Output, RevokeSessionResponse__Output>;
} {
  const { access } = ctx;
  const list = async (req: ListSessionsRequest__Output, call: CallScope): Promise<ListSessionsResponse__Output> => {
    access.permitAdmin(call.caller);
    const startAfter = handleOf(req.startAfter, 'start_after', true);
    const limit = req.limit ? v.safeInteger('limit', req.limit, { min: 1, max: MAX_PAGE }) : 100;
    await ctx.linearizableRead();
    access.permitAdmin(call.caller);
    const now = ctx.now();
    const page = byHandle(ctx).filter(([handle]) => handle > startAfter);
    const sessions = page.slice(0, limit).flatMap(([handle, id]): SessionSummary__Output[] => {
      const s = ctx.machine.getSession(id);
      if (s === undefined) return [];
      const identity = ctx.machine.auth.sessionOwner(id) ?? '';
      return [{ handle, identity, clientName: s.clientName, locks: s.locks, waiting: s.waiting, ageMs: intToWire('age_ms', Math.max(0, now - s.openedAt)), ttlMs: intToWire('ttl_ms', s.ttlMs), labels: labelsToRecord(s.labels) }];
    });
    return { sessions, more: page.length > limit };
  };
  const revoke = proposing(ctx, {
    name: 'Session.Revoke',
    command: 'RevokeSession',
    fields: (req: RevokeSessionRequest__Output, caller) => {
      const handle = handleOf(req.handle, 'handle', false);
      access.permitAdmin(caller);
      ctx.requireLeader();
      const sessionId = byHandle(ctx).find(([h]) => h === handle)?.[1];
      // A retry after the session ended finds no handle either: the session is gone, whoever ended it.
      if (sessionId === undefined) throw new ApiError(grpc.status.NOT_FOUND, `no open session has handle ${handle} (it may have ended already); \`fencelock session list\` shows the open ones`);
      return { sessionId };
    },
    answers: 'session_ended',
    response: (ok): RevokeSessionResponse__Output => ({ released: ok.released }),
  });
  return { list: { name: 'Session.List', handle: list }, revoke };
}

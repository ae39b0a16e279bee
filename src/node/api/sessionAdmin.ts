// Session.List and Session.Revoke (docs/auth.md "Ending sessions"): an admin sees every open session by its
// public handle, never its secret id, and ends one; the RevokeSession entry ends it as expiry would, with
// cause `revoked`, which the holder's client learns from its next renewal (RevokedSessions).
import * as grpc from '@grpc/grpc-js';
import { ApiError } from './errors';
import type { CallScope, NodeContext } from './context';
import { publicSessionId } from './publicSessionId';
import { expectOk } from './refusals';
import * as v from './validate';

interface ListReq {
  startAfter?: string;
  limit?: number;
}
interface RevokeReq {
  header?: v.WireHeader;
  handle?: string;
}

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
  list: (req: ListReq, call: CallScope) => Promise<object>;
  revoke: (req: RevokeReq, call: CallScope) => Promise<object>;
} {
  const { access } = ctx;
  const list = async (req: ListReq, call: CallScope): Promise<object> => {
    access.permitAdmin(call.caller);
    const startAfter = handleOf(req.startAfter, 'start_after', true);
    const limit = req.limit ? v.safeInteger('limit', req.limit, { min: 1, max: MAX_PAGE }) : 100;
    await ctx.linearizableRead();
    access.permitAdmin(call.caller);
    const now = ctx.now();
    const page = byHandle(ctx).filter(([handle]) => handle > startAfter);
    const sessions = page.slice(0, limit).flatMap(([handle, id]) => {
      const s = ctx.machine.getSession(id);
      if (s === undefined) return [];
      const identity = ctx.machine.auth.sessionOwner(id) ?? '';
      return [{ handle, identity, clientName: s.clientName, locks: s.locks, waiting: s.waiting, ageMs: String(Math.max(0, now - s.openedAt)), ttlMs: String(s.ttlMs) }];
    });
    return { sessions, more: page.length > limit };
  };
  const revoke = async (req: RevokeReq, call: CallScope): Promise<object> => {
    const id = v.header(req.header);
    const handle = handleOf(req.handle, 'handle', false);
    access.permitAdmin(call.caller);
    ctx.requireLeader();
    const sessionId = byHandle(ctx).find(([h]) => h === handle)?.[1];
    // A retry after the session ended finds no handle either: the session is gone, whoever ended it.
    if (sessionId === undefined) throw new ApiError(grpc.status.NOT_FOUND, `no open session has handle ${handle} (it may have ended already); \`fencelock session list\` shows the open ones`);
    const { result } = await ctx.proposeOrRecall({ type: 'RevokeSession', ...id, ...access.stamp(call.caller), now: ctx.now(), sessionId });
    const ok = expectOk(result);
    if (ok.status !== 'session_ended') throw new ApiError(grpc.status.INTERNAL, `unexpected result ${ok.status}`);
    return { released: ok.released };
  };
  return { list, revoke };
}

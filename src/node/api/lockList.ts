// Lock.List (issue 35): the locks under a prefix, a page at a time, read as Describe reads (linearizable, on
// the leader) and filtered by the caller's permissions the way Describe checks them: a lock the caller may
// not `lock` is left out as if it did not exist, so a listing never tells a name, nor how many are hidden.
import type { ListLocksRequest__Output } from '../../protocol/generated/fencelock/v1/ListLocksRequest';
import type { ListLocksResponse__Output } from '../../protocol/generated/fencelock/v1/ListLocksResponse';
import type { LockSummary__Output } from '../../protocol/generated/fencelock/v1/LockSummary';
import type { SessionInfo__Output } from '../../protocol/generated/fencelock/v1/SessionInfo';
import { intToWire } from '../../protocol/wireInt';
import type { LockListing } from '../../state';
import * as L from '../../state/limits';
import type { CallScope, NodeContext } from './context';
import { delayFields } from './lockDelayFields';
import { publicSessionId } from './publicSessionId';
import type { Rpc } from './rpc';
import { sessionInfo } from './sessionInfo';
import * as v from './validate';

const DEFAULT_LIMIT = 100;

export function lockList(ctx: NodeContext): Rpc<ListLocksRequest__Output, ListLocksResponse__Output> {
  const { access } = ctx;
  const list = async (req: ListLocksRequest__Output, call: CallScope): Promise<ListLocksResponse__Output> => {
    const prefix = v.text('prefix', req.prefix, L.MAX_LOCK_NAME_BYTES, { allowEmpty: true });
    const startAfter = v.text('start_after', req.startAfter, L.MAX_LOCK_NAME_BYTES, { allowEmpty: true });
    const limit = req.limit ? v.safeInteger('limit', req.limit, { min: 1, max: L.MAX_LIST_LIMIT }) : DEFAULT_LIMIT;
    // Any user may list (what it sees is filtered); an identity that is no user is refused as by Describe.
    access.permitUser(call.caller);
    await ctx.linearizableRead();
    // Judged as of the state read, so that a right revoked while the read waited holds for it.
    access.permitUser(call.caller);
    const visible = (name: string): boolean => access.may(call.caller, 'lock', name);
    const found = ctx.machine.listLocks(prefix, {
      startAfter: startAfter === '' ? undefined : startAfter,
      limit: limit + 1, // one more than asked tells whether there are more
      includeIdle: req.includeIdle,
      maxWaiters: L.MAX_LIST_WAITERS,
      visible,
    });
    const now = ctx.now();
    // Every listed lock passed `visible`, the right Describe asks for, so its holder's labels may be shown.
    const holderInfo = (sessionId: string): SessionInfo__Output | null => {
      const facts = ctx.machine.sessionFacts(sessionId);
      return facts === undefined ? null : sessionInfo({ sessionId, ...facts });
    };
    return { locks: found.slice(0, limit).map((lock) => summary(lock, now, holderInfo)), more: found.length > limit };
  };
  return { name: 'Lock.List', handle: list };
}

/** Times are by the serving node's (the leader's) wall clock, as the grant and queueing times were stamped. */
function summary(lock: LockListing, now: number, holderInfo: (sessionId: string) => SessionInfo__Output | null): LockSummary__Output {
  const holder = lock.holder;
  return {
    name: lock.name,
    held: holder !== null,
    holderSession: publicSessionId(holder?.sessionId ?? ''),
    token: intToWire('token', holder?.token ?? 0),
    grantedAtMs: intToWire('granted_at_ms', holder?.grantedAt ?? 0),
    heldForMs: intToWire('held_for_ms', holder === null ? 0 : elapsed(holder.grantedAt, now)),
    latestToken: intToWire('latest_token', lock.latestToken),
    waiters: lock.waiters.map((w) => ({ session: publicSessionId(w.sessionId), waitingMs: intToWire('waiting_ms', w.since === 0 ? 0 : elapsed(w.since, now)) })),
    waiterCount: lock.waiterCount,
    holder: holder === null ? null : holderInfo(holder.sessionId),
    ...delayFields(lock.delay, now),
  };
}

/** A wall clock stepped back since the stamp must not make a negative duration. */
function elapsed(since: number, now: number): number {
  return Math.max(0, now - since);
}

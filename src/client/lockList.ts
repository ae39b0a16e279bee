// Lock.List for the client: one page as the library's types, and every page in turn.
import type { ListLocksRequest } from '../protocol/generated/fencelock/v1/ListLocksRequest';
import type { LockSummary__Output } from '../protocol/generated/fencelock/v1/LockSummary';
import { wireToBigInt, wireToNumber } from '../protocol/wireInt';
import { FenceLockError } from './errors';
import { toSessionDetails } from './sessionLabels';
import type { ListLocksOptions, ListLocksResult, LockSummary } from './types';

/** The request for one page; the server judges the limit's upper bound (1000) and the names' lengths. */
export function listLocksRequest(opts: ListLocksOptions): ListLocksRequest {
  const limit = opts.limit ?? 0;
  if (!Number.isInteger(limit) || limit < 0 || limit > 0xffffffff) throw new FenceLockError('INVALID_ARGUMENT', `limit must be a non-negative integer, got ${limit}`);
  for (const field of ['prefix', 'startAfter'] as const) {
    const value = opts[field];
    if (value !== undefined && typeof value !== 'string') throw new FenceLockError('INVALID_ARGUMENT', `${field} must be a string, got ${typeof value}`);
  }
  return { prefix: opts.prefix ?? '', startAfter: opts.startAfter ?? '', limit, includeIdle: opts.includeIdle === true };
}

export function lockSummary(l: LockSummary__Output): LockSummary {
  return {
    lock: l.name,
    held: l.held,
    holderSession: l.holderSession,
    token: wireToBigInt(l.token),
    grantedAtMs: wireToNumber(l.grantedAtMs),
    heldForMs: wireToNumber(l.heldForMs),
    latestToken: wireToBigInt(l.latestToken),
    waiters: (l.waiters ?? []).map((w) => ({ session: w.session, waitingMs: wireToNumber(w.waitingMs) })),
    waiterCount: l.waiterCount,
    holder: l.held ? toSessionDetails(l.holder) : null,
    delayedUntilMs: wireToNumber(l.delayedUntilMs),
    delayRemainingMs: wireToNumber(l.delayRemainingMs),
  };
}

/** Every lock from `opts.startAfter` on, page after page (each page one read; a lock may change between pages). */
export async function* allLocks(page: (opts: ListLocksOptions) => Promise<ListLocksResult>, opts: ListLocksOptions): AsyncGenerator<LockSummary> {
  let startAfter = opts.startAfter ?? '';
  for (;;) {
    const r = await page({ ...opts, startAfter });
    yield* r.locks;
    const last = r.locks[r.locks.length - 1];
    if (!r.more || last === undefined) return;
    startAfter = last.lock;
  }
}

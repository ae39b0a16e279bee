// SemaphoreAcquire (issue 33): a permit of a semaphore for a session. The first Acquire of an idle semaphore
// sets its number of permits; while a permit is held or anyone waits, an Acquire naming another number is
// refused PERMITS_MISMATCH with the number in force. A free permit -> granted in the lowest free slot with
// token = this entry's index; the session already holds one -> the same slot and token (re-entrant, one
// permit per session and semaphore); none free -> `permits_full` when tryOnly, otherwise the session joins
// the FIFO queue.
import { checkOwner } from '../auth/access';
import { allows } from '../auth/permissions';
import * as L from '../limits';
import { waitingCount } from '../records';
import { Reason, refused, refusedAbout, uint, type StatusTable } from '../results';
import { checkLockName, checkSessionId, isNonNegativeInt } from './checks';
import type { CommandEntry, RequestMeta } from './entry';

export interface SemaphoreAcquireCommand extends RequestMeta {
  type: 'SemaphoreAcquire';
  semaphore: string;
  sessionId: string;
  /** 1..MAX_PERMITS: the semaphore's number of permits, as the caller expects it. */
  permits: number;
  tryOnly: boolean;
  /** Informational (the node runs the timer): 0..MAX_WAIT_TIMEOUT_MS. */
  waitTimeoutMs: number;
}

/** Its own status: a tryOnly Acquire found all `permits` taken (permit_granted is shared: results.ts). */
const RESULTS = {
  permits_full: { no: 19, fields: [uint(1, 'permits')] },
} as const satisfies StatusTable;

export const semaphoreAcquire: CommandEntry<SemaphoreAcquireCommand, 'permit_granted' | 'permits_full' | 'waiting', typeof RESULTS> = {
  type: 'SemaphoreAcquire',
  kind: 'request',
  statuses: ['permit_granted', 'permits_full', 'waiting'],
  results: RESULTS,
  member: 'semaphoreAcquire',
  encode: (c) => ({ semaphore: c.semaphore, sessionId: c.sessionId, permits: c.permits, tryOnly: c.tryOnly, waitTimeoutMs: c.waitTimeoutMs }),
  decode: (b, meta) => ({
    type: 'SemaphoreAcquire',
    ...meta,
    semaphore: b.str('semaphore'),
    sessionId: b.str('sessionId'),
    permits: b.num('permits'),
    tryOnly: b.bool('tryOnly'),
    waitTimeoutMs: b.num('waitTimeoutMs'),
  }),
  validate(c) {
    const problem = checkSessionId(c.sessionId) ?? checkPermits(c.permits);
    if (problem !== null) return problem;
    if (typeof c.tryOnly !== 'boolean') return 'tryOnly must be a boolean';
    if (!isNonNegativeInt(c.waitTimeoutMs) || c.waitTimeoutMs > L.MAX_WAIT_TIMEOUT_MS) return `waitTimeoutMs must be an integer in [0, ${L.MAX_WAIT_TIMEOUT_MS}]`;
    return checkSemaphoreName(c.semaphore);
  },
  // Semaphores take the `lock` permission on their name, as locks do (docs/auth.md).
  permit(p, c) {
    if (!allows(p.table, p.caller, 'lock', c.semaphore)) return refusedAbout(Reason.PERMISSION_DENIED, `lock ${c.semaphore}`);
    return checkOwner(p.caller, p.sessionOwner(c.sessionId));
  },
  execute(m, index, c, events) {
    const t = m.semaphores;
    let rec = t.get(c.semaphore);
    const s = m.sessions.get(c.sessionId);
    if (s === undefined) return refused(Reason.UNKNOWN_SESSION, 0);
    if (rec !== undefined && rec.permits !== c.permits) return refusedAbout(Reason.PERMITS_MISMATCH, `permits ${rec.permits}`);
    if (rec !== undefined) {
      const slot = t.slotOf(rec, s);
      if (slot >= 0) return { status: 'permit_granted', token: t.tokenOf(rec, slot), slot, permits: rec.permits, newGrant: false };
      if (rec.waiters?.has(s) === true) return { status: 'waiting', holderToken: 0, position: positionOf(rec.waiters, s) };
    }
    // Locks and permits count together towards a session's bound and its owner's quotas.
    const perSessionFull = s.heldCount + waitingCount(s) + t.countOf(s) >= L.MAX_LOCKS_PER_SESSION;
    const ownerUsed = (what: 'locks' | 'waiters'): number => (s.usage?.[what] ?? 0) + (s.owner === '' ? 0 : t.usedBy(s.owner, what));
    // Entering one more semaphore (a new one, or one none of the owner's sessions is in) counts towards the
    // owner's `semaphores` quota: the table of semaphores is shared (MAX_SEMAPHORES).
    const entering = rec === undefined || !t.isIn(rec, s.owner) ? 1 : 0;
    const overSemaphores = (): boolean => m.overQuota(s.owner, 'semaphores', t.usedBy(s.owner, 'semaphores'), entering);
    if (rec !== undefined && rec.held >= rec.permits) {
      if (c.tryOnly) return { status: 'permits_full', permits: rec.permits };
      if (m.overQuota(s.owner, 'waiters', ownerUsed('waiters'), 1)) return refusedAbout(Reason.QUOTA_EXCEEDED, 'waiters');
      if (overSemaphores()) return refusedAbout(Reason.QUOTA_EXCEEDED, 'semaphores');
      if ((rec.waiters?.size ?? 0) >= L.MAX_WAITERS_PER_LOCK) return refused(Reason.TOO_MANY_WAITERS, 0);
      if (perSessionFull) return refused(Reason.TOO_MANY_LOCKS, 0);
      t.enqueue(rec, s, c.now);
      const position = rec.waiters?.size ?? 0;
      events.push({ type: 'permit_queued', semaphore: c.semaphore, sessionId: c.sessionId, position });
      return { status: 'waiting', holderToken: 0, position };
    }
    if (m.overQuota(s.owner, 'locks', ownerUsed('locks'), 1)) return refusedAbout(Reason.QUOTA_EXCEEDED, 'locks');
    if (overSemaphores()) return refusedAbout(Reason.QUOTA_EXCEEDED, 'semaphores');
    if (perSessionFull) return refused(Reason.TOO_MANY_LOCKS, 0);
    if (rec === undefined) {
      if (t.size >= L.MAX_SEMAPHORES) return refused(Reason.TOO_MANY_LOCKS, 0);
      rec = t.create(c.semaphore, c.permits);
    }
    const slot = t.grant(rec, s, index, c.now);
    events.push({ type: 'permit_granted', semaphore: c.semaphore, sessionId: c.sessionId, slot, token: index, cause: 'acquired' });
    return { status: 'permit_granted', token: index, slot, permits: rec.permits, newGrant: true };
  },
};

export function checkSemaphoreName(v: unknown): string | null {
  return checkLockName(v)?.replace('lock name', 'semaphore name') ?? null;
}

export function checkPermits(v: unknown): string | null {
  return isNonNegativeInt(v) && v >= 1 && v <= L.MAX_PERMITS ? null : `permits must be an integer in [1, ${L.MAX_PERMITS}]`;
}

/** 1-based position of `s` in the queue. */
function positionOf(waiters: ReadonlyMap<unknown, number>, s: unknown): number {
  let i = 0;
  for (const w of waiters.keys()) {
    i++;
    if (w === s) return i;
  }
  return 0;
}

// Acquire: a lock for a session. Free -> granted with token = this entry's index; held by the same session ->
// the same token again (re-entrant, with no hold count: one Release ends the grant, since a token names one
// grant); held by another -> `held` when tryOnly, otherwise the session joins the FIFO queue. A free lock in
// its lock-delay is as a held one, except that a tryOnly Acquire is refused LOCK_DELAYED.
import { checkOwner } from '../auth/access';
import { allows } from '../auth/permissions';
import { invariant } from '../invariant';
import * as L from '../limits';
import { queuePosition } from '../locks';
import { addHeld, addWaiting, hasWaiter, isDelayed, tokenOf, waiterCount, waitingCount } from '../records';
import { Reason, refused, refusedAbout } from '../results';
import { checkLockName, checkSessionId, isNonNegativeInt } from './checks';
import type { CommandEntry, RequestMeta } from './entry';

export interface AcquireCommand extends RequestMeta {
  type: 'Acquire';
  lock: string;
  sessionId: string;
  tryOnly: boolean;
  /** Informational (the node runs the timer): 0..MAX_WAIT_TIMEOUT_MS, 0 = try-lock. */
  waitTimeoutMs?: number;
  /**
   * The lock-delay of the grant this Acquire makes (now or once it reaches the head of the queue):
   * 0..MAX_LOCK_DELAY_MS, absent = 0. Ignored when the session holds the lock already or is queued.
   */
  lockDelayMs?: number;
}

export const acquire: CommandEntry<AcquireCommand, 'granted' | 'waiting' | 'held'> = {
  type: 'Acquire',
  kind: 'request',
  statuses: ['granted', 'waiting', 'held'],
  member: 'acquire',
  encode: (c) => ({ lock: c.lock, sessionId: c.sessionId, tryOnly: c.tryOnly, waitTimeoutMs: c.waitTimeoutMs ?? 0, ...(c.lockDelayMs ? { lockDelayMs: c.lockDelayMs } : {}) }),
  // Without a lock-delay, as before lock-delays: an entry decodes to the command it was written from.
  decode: (b, meta) => withLockDelay(
    { type: 'Acquire', ...meta, lock: b.str('lock'), sessionId: b.str('sessionId'), tryOnly: b.bool('tryOnly'), waitTimeoutMs: b.num('waitTimeoutMs') },
    b.num('lockDelayMs'),
  ),
  validate(c) {
    const sessionProblem = checkSessionId(c.sessionId);
    if (sessionProblem !== null) return sessionProblem;
    if (typeof c.tryOnly !== 'boolean') return 'tryOnly must be a boolean';
    if (c.waitTimeoutMs !== undefined && (!isNonNegativeInt(c.waitTimeoutMs) || c.waitTimeoutMs > L.MAX_WAIT_TIMEOUT_MS)) {
      return `waitTimeoutMs must be an integer in [0, ${L.MAX_WAIT_TIMEOUT_MS}]`;
    }
    if (c.lockDelayMs !== undefined && (!isNonNegativeInt(c.lockDelayMs) || c.lockDelayMs > L.MAX_LOCK_DELAY_MS)) {
      return `lockDelayMs must be an integer in [0, ${L.MAX_LOCK_DELAY_MS}]`;
    }
    return checkLockName(c.lock);
  },
  permit(p, c) {
    if (!allows(p.table, p.caller, 'lock', c.lock)) return refusedAbout(Reason.PERMISSION_DENIED, `lock ${c.lock}`);
    return checkOwner(p.caller, p.sessionOwner(c.sessionId));
  },
  execute(m, index, c, events) {
    let rec = m.locks.get(c.lock);
    const watermark = rec?.latestToken ?? 0;
    const s = m.sessions.get(c.sessionId);
    if (s === undefined) return refused(Reason.UNKNOWN_SESSION, watermark);
    if (rec !== undefined && rec.holder === s) return { status: 'granted', token: tokenOf(rec), newGrant: false };
    // Semaphore permits and waits count with locks (docs/architecture.md#semaphores).
    const perSessionFull = s.heldCount + waitingCount(s) + m.semaphores.countOf(s) >= L.MAX_LOCKS_PER_SESSION;
    const permitsOf = (what: 'locks' | 'waiters'): number => (s.owner === '' ? 0 : m.semaphores.usedBy(s.owner, what));
    const delayMs = c.lockDelayMs ?? 0;
    if (rec !== undefined && (rec.holder !== null || isDelayed(rec))) {
      if (hasWaiter(rec, s)) {
        return { status: 'waiting', holderToken: tokenOf(rec), position: queuePosition(rec, c.sessionId) };
      }
      if (c.tryOnly) return rec.holder === null ? refused(Reason.LOCK_DELAYED, watermark) : { status: 'held', holderToken: tokenOf(rec) };
      if (m.overQuota(s.owner, 'waiters', (s.usage?.waiters ?? 0) + permitsOf('waiters'), 1)) return refusedAbout(Reason.QUOTA_EXCEEDED, 'waiters');
      if (waiterCount(rec) >= L.MAX_WAITERS_PER_LOCK) return refused(Reason.TOO_MANY_WAITERS, watermark);
      if (perSessionFull) return refused(Reason.TOO_MANY_LOCKS, watermark);
      m.locks.enqueue(rec, s, c.now, delayMs);
      addWaiting(s, rec);
      events.push({ type: 'queued', lock: c.lock, sessionId: c.sessionId, position: waiterCount(rec) });
      return { status: 'waiting', holderToken: tokenOf(rec), position: waiterCount(rec) };
    }
    if (m.overQuota(s.owner, 'locks', (s.usage?.locks ?? 0) + permitsOf('locks'), 1)) return refusedAbout(Reason.QUOTA_EXCEEDED, 'locks');
    if (perSessionFull) return refused(Reason.TOO_MANY_LOCKS, watermark);
    if (rec === undefined) {
      if (m.locks.size >= L.MAX_LOCKS) return refused(Reason.TOO_MANY_LOCKS, watermark);
      rec = m.locks.create(c.lock);
    }
    invariant(rec.waiters === null, () => `free lock ${JSON.stringify(c.lock)} has waiters`);
    m.locks.grant(rec, s, index, c.now, delayMs);
    addHeld(s, rec);
    events.push({ type: 'granted', lock: c.lock, sessionId: c.sessionId, token: index, cause: 'acquired' });
    return { status: 'granted', token: index, newGrant: true };
  },
};

function withLockDelay(c: AcquireCommand, lockDelayMs: number): AcquireCommand {
  return lockDelayMs === 0 ? c : { ...c, lockDelayMs };
}

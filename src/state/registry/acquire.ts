// Acquire: a lock for a session. Free -> granted with token = this entry's index; held by the same session ->
// the same token again (re-entrant, with no hold count: one Release ends the grant, since a token names one
// grant); held by another -> `held` when tryOnly, otherwise the session joins the FIFO queue. A free lock in
// its lock-delay is as a held one, except that a tryOnly Acquire is refused LOCK_DELAYED.
//
// Shared mode (docs/architecture.md#read-write-locks): a shared Acquire is granted at once, with its own
// token, when nobody holds the lock exclusively, it is in no delay and nobody waits (a queued writer stops
// later readers from jumping it); otherwise it queues. An exclusive Acquire treats shared holders as holders.
// A session holding or waiting in one mode is refused MODE_CONFLICT in the other (no upgrade, no downgrade).
import { checkOwner } from '../auth/access';
import { allows } from '../auth/permissions';
import { invariant } from '../invariant';
import * as L from '../limits';
import { queuePosition } from '../locks';
import { addHeld, addSharing, addWaiting, hasWaiter, isDelayed, isHeld, lockCountOf, sharedGrantOf, tokenOf, waiterCount, waitsShared, type LockRecord, type Session } from '../records';
import { Reason, refused, refusedAbout, type RefusedResult } from '../results';
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
  /** A shared (read) grant; absent or false: exclusive. A shared grant takes no lock-delay. */
  shared?: boolean;
}

export const acquire: CommandEntry<AcquireCommand, 'granted' | 'waiting' | 'held'> = {
  type: 'Acquire',
  kind: 'request',
  statuses: ['granted', 'waiting', 'held'],
  member: 'acquire',
  encode: (c) => ({
    lock: c.lock,
    sessionId: c.sessionId,
    tryOnly: c.tryOnly,
    waitTimeoutMs: c.waitTimeoutMs ?? 0,
    ...(c.lockDelayMs ? { lockDelayMs: c.lockDelayMs } : {}),
    ...(c.shared === true ? { shared: true } : {}),
  }),
  // Without a lock-delay or a mode, as before them: an entry decodes to the command it was written from.
  decode: (b, meta) => withMode(
    withLockDelay(
      { type: 'Acquire', ...meta, lock: b.str('lock'), sessionId: b.str('sessionId'), tryOnly: b.bool('tryOnly'), waitTimeoutMs: b.num('waitTimeoutMs') },
      b.num('lockDelayMs'),
    ),
    b.bool('shared'),
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
    if (c.shared !== undefined && typeof c.shared !== 'boolean') return 'shared must be a boolean';
    // A lock-delay keeps an expired holder's late writes from meeting the next holder's; a shared holder writes nothing.
    if (c.shared === true && (c.lockDelayMs ?? 0) > 0) return 'a shared Acquire takes no lockDelayMs (a shared grant never writes)';
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
    const shared = c.shared === true;
    if (rec !== undefined) {
      const again = reentrant(rec, s, shared);
      if (again !== null) return again;
    }
    // Semaphore permits and waits count with locks (docs/architecture.md#semaphores).
    const perSessionFull = lockCountOf(s) + m.semaphores.countOf(s) >= L.MAX_LOCKS_PER_SESSION;
    const permitsOf = (what: 'locks' | 'waiters'): number => (s.owner === '' ? 0 : m.semaphores.usedBy(s.owner, what));
    const delayMs = c.lockDelayMs ?? 0;
    if (rec !== undefined && mustWait(rec, shared)) {
      if (hasWaiter(rec, s)) {
        return { status: 'waiting', holderToken: tokenOf(rec), position: queuePosition(rec, c.sessionId) };
      }
      if (c.tryOnly) return !isHeld(rec) && isDelayed(rec) ? refused(Reason.LOCK_DELAYED, watermark) : { status: 'held', holderToken: tokenOf(rec) };
      if (m.overQuota(s.owner, 'waiters', (s.usage?.waiters ?? 0) + permitsOf('waiters'), 1)) return refusedAbout(Reason.QUOTA_EXCEEDED, 'waiters');
      if (waiterCount(rec) >= L.MAX_WAITERS_PER_LOCK) return refused(Reason.TOO_MANY_WAITERS, watermark);
      if (perSessionFull) return refused(Reason.TOO_MANY_LOCKS, watermark);
      m.locks.enqueue(rec, s, c.now, delayMs, shared);
      addWaiting(s, rec);
      events.push({ type: 'queued', lock: c.lock, sessionId: c.sessionId, position: waiterCount(rec), ...(shared ? { shared } : {}) });
      return { status: 'waiting', holderToken: tokenOf(rec), position: waiterCount(rec) };
    }
    if (m.overQuota(s.owner, 'locks', (s.usage?.locks ?? 0) + permitsOf('locks'), 1)) return refusedAbout(Reason.QUOTA_EXCEEDED, 'locks');
    if (perSessionFull) return refused(Reason.TOO_MANY_LOCKS, watermark);
    if (rec === undefined) {
      if (m.locks.size >= L.MAX_LOCKS) return refused(Reason.TOO_MANY_LOCKS, watermark);
      rec = m.locks.create(c.lock);
    }
    invariant(rec.waiters === null, () => `free lock ${JSON.stringify(c.lock)} has waiters`);
    if (shared) {
      m.locks.grantShared(rec, s, index, c.now);
      addSharing(s, rec);
    } else {
      m.locks.grant(rec, s, index, c.now, delayMs);
      addHeld(s, rec);
    }
    events.push({ type: 'granted', lock: c.lock, sessionId: c.sessionId, token: index, cause: 'acquired', ...(shared ? { shared } : {}) });
    return { status: 'granted', token: index, newGrant: true };
  },
};

/**
 * The answer to an Acquire by a session that holds or waits for the lock already: its grant again (same
 * mode), MODE_CONFLICT (other mode), its place in the queue; null when it neither holds nor waits.
 * Changing mode in place is refused rather than done: two shared holders upgrading would each wait for the
 * other for ever, and a downgrade would hand readers a grant whose token a writer's earlier writes share.
 */
function reentrant(rec: LockRecord, s: Session, shared: boolean): { status: 'granted'; token: number; newGrant: false } | RefusedResult | null {
  const conflict = (): RefusedResult => refused(Reason.MODE_CONFLICT, rec.latestToken);
  if (rec.holder === s) return shared ? conflict() : { status: 'granted', token: tokenOf(rec), newGrant: false };
  const sharedGrant = sharedGrantOf(rec, s);
  if (sharedGrant !== undefined) return shared ? { status: 'granted', token: sharedGrant.token, newGrant: false } : conflict();
  if (hasWaiter(rec, s) && waitsShared(rec, s) !== shared) return conflict();
  return null;
}

/**
 * The Acquire cannot be granted now: held exclusively or delayed; for an exclusive one, also held shared;
 * for a shared one, also anybody queued (FIFO: a waiting writer is not overtaken by later readers); for
 * either, anybody queued on a free lock (an AcquireAll heading the queue, docs/architecture.md#atomic-multi-lock).
 */
function mustWait(rec: LockRecord, shared: boolean): boolean {
  // A free lock with waiters: an AcquireAll heads its queue, waiting for the rest of its set (FIFO).
  if (rec.holder !== null || isDelayed(rec) || rec.waiters !== null) return true;
  return shared ? rec.waiters !== null : rec.sharers !== null;
}

function withLockDelay(c: AcquireCommand, lockDelayMs: number): AcquireCommand {
  return lockDelayMs === 0 ? c : { ...c, lockDelayMs };
}

function withMode(c: AcquireCommand, shared: boolean): AcquireCommand {
  return shared ? { ...c, shared } : c;
}

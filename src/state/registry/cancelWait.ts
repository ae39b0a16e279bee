// CancelWait: leaves the queue of a lock (the wait timed out, or the client gave up). The waiter of an
// AcquireAll leaves the queues of its whole set.
import { checkOwner } from '../auth/access';
import { leaveSet } from '../multiLocks';
import { deleteWaiting, holderIdOf, multiWaitOf, sharedGrantById, tokenOf } from '../records';
import { Reason, refused } from '../results';
import { checkLockName, checkSessionId } from './checks';
import type { CommandEntry, RequestMeta } from './entry';

export interface CancelWaitCommand extends RequestMeta {
  type: 'CancelWait';
  lock: string;
  sessionId: string;
}

export const cancelWait: CommandEntry<CancelWaitCommand, 'cancelled' | 'not_waiting' | 'granted'> = {
  type: 'CancelWait',
  kind: 'request',
  statuses: ['cancelled', 'not_waiting', 'granted'],
  member: 'cancelWait',
  encode: (c) => ({ lock: c.lock, sessionId: c.sessionId }),
  decode: (b, meta) => ({ type: 'CancelWait', ...meta, lock: b.str('lock'), sessionId: b.str('sessionId') }),
  validate: (c) => checkSessionId(c.sessionId) ?? checkLockName(c.lock),
  // Letting go needs no permission: a revoke never keeps a waiter from leaving.
  permit: (p, c) => checkOwner(p.caller, p.sessionOwner(c.sessionId)),
  /**
   * If the wait already ended in a grant, answers `granted` (newGrant false) with the token: the caller owns
   * the lock and must not report DEADLINE_EXCEEDED as if it did not.
   */
  execute(m, index, c, events) {
    const rec = m.locks.get(c.lock);
    if (rec !== undefined && holderIdOf(rec) === c.sessionId) return { status: 'granted', token: tokenOf(rec), newGrant: false };
    const sharedGrant = rec === undefined ? undefined : sharedGrantById(rec, c.sessionId);
    if (sharedGrant !== undefined) return { status: 'granted', token: sharedGrant.token, newGrant: false };
    const s = m.sessions.get(c.sessionId);
    if (s === undefined) return refused(Reason.UNKNOWN_SESSION, rec?.latestToken ?? 0);
    const set = rec === undefined ? undefined : multiWaitOf(rec, s);
    if (set !== undefined) {
      // One waiter of an AcquireAll: cancelling it in one queue cancels it in all (docs/architecture.md#atomic-multi-lock).
      m.admitReaders(leaveSet(m.locks, set, 'cancelled', events), index, c.now, events);
      return { status: 'cancelled' };
    }
    if (rec !== undefined && m.locks.dequeue(rec, s)) {
      deleteWaiting(s, rec);
      events.push({ type: 'wait_ended', lock: c.lock, sessionId: c.sessionId, cause: 'cancelled' });
      m.admitReaders([rec], index, c.now, events);
      return { status: 'cancelled' };
    }
    return { status: 'not_waiting' };
  },
};

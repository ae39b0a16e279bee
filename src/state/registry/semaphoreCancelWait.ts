// SemaphoreCancelWait (issue 33): leaves a semaphore's queue (the wait timed out, or the client gave up).
import { checkOwner } from '../auth/access';
import { Reason, refused } from '../results';
import { checkSessionId } from './checks';
import type { CommandEntry, RequestMeta } from './entry';
import { checkSemaphoreName } from './semaphoreAcquire';

export interface SemaphoreCancelWaitCommand extends RequestMeta {
  type: 'SemaphoreCancelWait';
  semaphore: string;
  sessionId: string;
}

export const semaphoreCancelWait: CommandEntry<SemaphoreCancelWaitCommand, 'cancelled' | 'not_waiting' | 'permit_granted'> = {
  type: 'SemaphoreCancelWait',
  kind: 'request',
  statuses: ['cancelled', 'not_waiting', 'permit_granted'],
  member: 'semaphoreCancelWait',
  encode: (c) => ({ semaphore: c.semaphore, sessionId: c.sessionId }),
  decode: (b, meta) => ({ type: 'SemaphoreCancelWait', ...meta, semaphore: b.str('semaphore'), sessionId: b.str('sessionId') }),
  validate: (c) => checkSessionId(c.sessionId) ?? checkSemaphoreName(c.semaphore),
  permit: (p, c) => checkOwner(p.caller, p.sessionOwner(c.sessionId)),
  /** A wait that already ended in a grant answers `permit_granted` (newGrant false): the caller holds the permit. */
  execute(m, _index, c, events) {
    const t = m.semaphores;
    const rec = t.get(c.semaphore);
    const s = m.sessions.get(c.sessionId);
    if (s === undefined) return refused(Reason.UNKNOWN_SESSION, 0);
    if (rec === undefined) return { status: 'not_waiting' };
    const slot = t.slotOf(rec, s);
    if (slot >= 0) return { status: 'permit_granted', token: t.tokenOf(rec, slot), slot, permits: rec.permits, newGrant: false };
    if (!t.dequeue(rec, s)) return { status: 'not_waiting' };
    events.push({ type: 'permit_wait_ended', semaphore: c.semaphore, sessionId: c.sessionId, cause: 'cancelled' });
    return { status: 'cancelled' };
  },
};

// SemaphoreRelease (issue 33): the permit the session holds under exactly `token`; the first live waiter
// gets its slot, with this entry's index as token.
import { checkOwner } from '../auth/access';
import { Reason, opt, refused, str, uint, type StatusTable } from '../results';
import { handOverPermit } from '../semaphoreSteps';
import { checkSessionId, checkToken } from './checks';
import type { CommandEntry, RequestMeta } from './entry';
import { checkSemaphoreName } from './semaphoreAcquire';

export interface SemaphoreReleaseCommand extends RequestMeta {
  type: 'SemaphoreRelease';
  semaphore: string;
  sessionId: string;
  token: number;
}

/**
 * Its own status: the permit of `slot` under `token` was released; `nextHolder` / `nextToken`: the session
 * the slot went to and its token, both absent when nobody waited.
 */
const RESULTS = {
  permit_released: {
    no: 18,
    fields: [uint(1, 'token'), uint(2, 'slot'), opt(str(3, 'nextHolder')), opt(uint(4, 'nextToken'))],
    check: (r) => ((r.nextHolder === undefined) !== (r.nextToken === undefined) ? 'a handover names its holder and token together' : undefined),
  },
} as const satisfies StatusTable;

export const semaphoreRelease: CommandEntry<SemaphoreReleaseCommand, 'permit_released', typeof RESULTS> = {
  type: 'SemaphoreRelease',
  kind: 'request',
  statuses: ['permit_released'],
  results: RESULTS,
  member: 'semaphoreRelease',
  encode: (c) => ({ semaphore: c.semaphore, sessionId: c.sessionId, token: c.token }),
  decode: (b, meta) => ({ type: 'SemaphoreRelease', ...meta, semaphore: b.str('semaphore'), sessionId: b.str('sessionId'), token: b.num('token') }),
  validate: (c) => checkSessionId(c.sessionId) ?? checkSemaphoreName(c.semaphore) ?? checkToken(c.token),
  // Letting go needs no permission.
  permit: (p, c) => checkOwner(p.caller, p.sessionOwner(c.sessionId)),
  execute(m, index, c, events) {
    const t = m.semaphores;
    const rec = t.get(c.semaphore);
    const s = m.sessions.get(c.sessionId);
    if (s === undefined) return refused(Reason.UNKNOWN_SESSION, 0);
    const slot = rec === undefined ? -1 : t.slotOf(rec, s);
    if (rec === undefined || slot < 0) return refused(Reason.NOT_HOLDER, 0);
    const watermark = t.tokenOf(rec, slot);
    if (watermark !== c.token) return refused(Reason.WRONG_TOKEN, watermark);
    const token = t.clearSlot(rec, slot);
    events.push({ type: 'permit_released', semaphore: c.semaphore, sessionId: c.sessionId, slot, token, cause: 'released' });
    const next = handOverPermit(t, m.sessions, rec, index, c.now, 'released', events);
    t.collectIfIdle(rec);
    return next === undefined ? { status: 'permit_released', token, slot } : { status: 'permit_released', token, slot, nextHolder: next.sessionId, nextToken: next.token };
  },
};

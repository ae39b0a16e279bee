// Release: a lock held by the session under exactly `token`; the next live waiter gets it. A shared grant
// is released alone (its token names it); the lock is handed on when the last shared grant ends.
import { checkOwner } from '../auth/access';
import { deleteHeld, deleteSharing, sharedGrantById, tokenOf } from '../records';
import { Reason, refused } from '../results';
import { checkLockName, checkSessionId, checkToken } from './checks';
import type { CommandEntry, RequestMeta } from './entry';

export interface ReleaseCommand extends RequestMeta {
  type: 'Release';
  lock: string;
  sessionId: string;
  token: number;
}

export const release: CommandEntry<ReleaseCommand, 'released'> = {
  type: 'Release',
  kind: 'request',
  statuses: ['released'],
  member: 'release',
  encode: (c) => ({ lock: c.lock, sessionId: c.sessionId, token: c.token }),
  decode: (b, meta) => ({ type: 'Release', ...meta, lock: b.str('lock'), sessionId: b.str('sessionId'), token: b.num('token') }),
  validate: (c) => checkSessionId(c.sessionId) ?? checkLockName(c.lock) ?? checkToken(c.token),
  // Letting go needs no permission: a revoke never keeps a holder from releasing.
  permit: (p, c) => checkOwner(p.caller, p.sessionOwner(c.sessionId)),
  execute(m, index, c, events) {
    const rec = m.locks.get(c.lock);
    const watermark = rec?.latestToken ?? 0;
    if (rec !== undefined && rec.holder !== null && rec.holder.id === c.sessionId) {
      if (tokenOf(rec) !== c.token) return refused(Reason.WRONG_TOKEN, watermark);
      deleteHeld(rec.holder, rec);
      const token = m.locks.clearHolder(rec);
      events.push({ type: 'released', lock: c.lock, sessionId: c.sessionId, token, cause: 'released' });
      const next = m.handOver(rec, index, c.now, 'released', events);
      m.locks.collectIfIdle(rec);
      return next === undefined ? { status: 'released', token } : { status: 'released', token, nextHolder: next, nextToken: index };
    }
    const sharedGrant = rec === undefined ? undefined : sharedGrantById(rec, c.sessionId);
    const s = m.sessions.get(c.sessionId);
    if (rec !== undefined && sharedGrant !== undefined && s !== undefined) {
      if (sharedGrant.token !== c.token) return refused(Reason.WRONG_TOKEN, watermark);
      deleteSharing(s, rec);
      const token = m.locks.clearSharer(rec, s);
      events.push({ type: 'released', lock: c.lock, sessionId: c.sessionId, token, cause: 'released', shared: true });
      const next = m.handOver(rec, index, c.now, 'released', events);
      m.locks.collectIfIdle(rec);
      return next === undefined ? { status: 'released', token } : { status: 'released', token, nextHolder: next, nextToken: index };
    }
    if (s === undefined) return refused(Reason.UNKNOWN_SESSION, watermark);
    return refused(Reason.NOT_HOLDER, watermark);
  },
};

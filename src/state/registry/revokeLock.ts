// RevokeLock: an admin ends a lock's current grant without ending its holder's session (issue 34, "force
// release"; docs/auth.md "Ending sessions"). The lock goes to the next live waiter with this entry's index as
// its token, as on a release, so the old holder is fenced out; its session stays open and may acquire again.
// A lock held shared: token 0 ends every shared grant, a token ends that shared grant alone; the lock is
// handed on once no shared grant is left. Shared grants have no lock-delay.
import { adminOnly } from '../auth/access';
import * as L from '../limits';
import { deleteHeld, deleteSharing, tokenOf, type LockRecord, type Session } from '../records';
import { Reason, refused } from '../results';
import { checkLockName, checkText, isNonNegativeInt } from './checks';
import type { CommandEntry, RequestMeta } from './entry';

export interface RevokeLockCommand extends RequestMeta {
  type: 'RevokeLock';
  lock: string;
  /** Revoke only while this is the current grant's token; 0: whatever grant is current. */
  token: number;
  /** Why, for the audit trail (the watch event and the node's log): 0..MAX_REVOKE_REASON_BYTES bytes. */
  reason: string;
}

export const revokeLock: CommandEntry<RevokeLockCommand, 'released'> = {
  type: 'RevokeLock',
  kind: 'request',
  statuses: ['released'],
  member: 'revokeLock',
  encode: (c) => ({ lock: c.lock, token: c.token, reason: c.reason }),
  decode: (b, meta) => ({ type: 'RevokeLock', ...meta, lock: b.str('lock'), token: b.num('token'), reason: b.str('reason') }),
  validate(c) {
    if (!isNonNegativeInt(c.token)) return 'token must be an integer >= 0 (0: the current grant, whatever its token)';
    return checkLockName(c.lock) ?? checkText(c.reason, 'reason', 0, L.MAX_REVOKE_REASON_BYTES);
  },
  permit: (p) => adminOnly(p),
  execute(m, index, c, events) {
    const rec = m.locks.get(c.lock);
    const watermark = rec?.latestToken ?? 0;
    if (rec !== undefined && rec.sharers !== null) {
      const ending = sharersToRevoke(rec, c.token);
      if (ending.length === 0) return refused(Reason.WRONG_TOKEN, watermark);
      let token = 0;
      for (const s of ending) {
        deleteSharing(s, rec);
        token = m.locks.clearSharer(rec, s);
        events.push({ type: 'released', lock: c.lock, sessionId: s.id, token, cause: 'lock_revoked', revokedBy: c.caller ?? '', reason: c.reason, shared: true });
      }
      const next = m.handOver(rec, index, c.now, 'lock_revoked', events);
      m.locks.collectIfIdle(rec);
      return next === undefined ? { status: 'released', token } : { status: 'released', token, nextHolder: next, nextToken: index };
    }
    if (rec === undefined || rec.holder === null) return refused(Reason.LOCK_NOT_HELD, watermark);
    // A revoke aimed at one grant must not end the next one (the admin saw token N, N was released since).
    if (c.token !== 0 && tokenOf(rec) !== c.token) return refused(Reason.WRONG_TOKEN, watermark);
    const holder = rec.holder;
    deleteHeld(holder, rec);
    const token = m.locks.clearHolder(rec);
    events.push({ type: 'released', lock: c.lock, sessionId: holder.id, token, cause: 'lock_revoked', revokedBy: c.caller ?? '', reason: c.reason });
    const next = m.handOver(rec, index, c.now, 'lock_revoked', events);
    m.locks.collectIfIdle(rec);
    return next === undefined ? { status: 'released', token } : { status: 'released', token, nextHolder: next, nextToken: index };
  },
};

/** The shared holders a revoke ends: all of them for token 0, else the one whose grant has that token. */
function sharersToRevoke(rec: LockRecord, token: number): Session[] {
  const out: Session[] = [];
  for (const [s, grant] of rec.sharers ?? []) if (token === 0 || grant.token === token) out.push(s);
  return out;
}

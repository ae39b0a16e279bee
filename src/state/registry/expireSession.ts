// ExpireSession: ends sessions whose deadline passed, as decided by the leader (keepalives are not log
// entries), in order, up to MAX_SESSIONS_PER_EXPIRY per entry. Not de-duplicated: it is idempotent (an
// unknown session is skipped).
import * as L from '../limits';
import type { LockRecord, Session } from '../records';
import { checkList, checkSessionId } from './checks';
import { strs, type StatusTable } from '../results';
import type { CommandEntry } from './entry';

export interface ExpireSessionCommand {
  type: 'ExpireSession';
  now: number;
  sessionIds: string[];
}

/** Its own status: the sessions that ended, in the entry's order (unknown ones were skipped). */
const RESULTS = { sessions_expired: { no: 3, fields: [strs(1, 'ended')] } } as const satisfies StatusTable;

export const expireSession: CommandEntry<ExpireSessionCommand, 'sessions_expired', typeof RESULTS> = {
  type: 'ExpireSession',
  kind: 'lease',
  statuses: ['sessions_expired'],
  results: RESULTS,
  member: 'expireSessions',
  encode: (c) => ({ sessionIds: c.sessionIds }),
  decode: (b, meta) => ({ type: 'ExpireSession', now: meta.now, sessionIds: b.strings('sessionIds') }),
  // Nodes wrote one session per entry before lease checkpoints.
  legacy: { expireSession: (b, meta) => ({ type: 'ExpireSession', now: meta.now, sessionIds: [b.str('sessionId')] }) },
  validate: (c) => checkList(c.sessionIds, 'sessionIds', L.MAX_SESSIONS_PER_EXPIRY, checkSessionId),
  execute(m, index, c, events) {
    // The sessions end together: none of them is granted a lock another one releases. A token is the entry's
    // index, so this entry can grant each lock once: a lock handed to a session that ended in the same entry
    // could not be handed on.
    const ending: Session[] = [];
    const left: LockRecord[] = [];
    for (const sessionId of new Set(c.sessionIds)) {
      const s = m.sessions.get(sessionId);
      if (s === undefined) continue;
      left.push(...m.leaveSession(s, 'expired', events));
      ending.push(s);
    }
    for (const s of ending) m.releaseSession(index, c.now, s, 'expired', events);
    m.admitReaders(left, index, c.now, events);
    return { status: 'sessions_expired', ended: ending.map((s) => s.id) };
  },
};

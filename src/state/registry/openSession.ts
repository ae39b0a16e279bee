// OpenSession: a client's session. The leader picks the 128-bit id; the TTL is enforced by the leader, not here.
import { labelsProblem, type SessionLabel, type SessionLabels } from '../../protocol/labels';
import * as L from '../limits';
import { NO_LABELS } from '../records';
import { Reason, refused, refusedAbout, str, uint, type StatusTable } from '../results';
import { checkSessionId, checkText, isNonNegativeInt } from './checks';
import type { CommandEntry, RequestMeta } from './entry';

export interface OpenSessionCommand extends RequestMeta {
  type: 'OpenSession';
  sessionId: string;
  ttlMs: number;
  clientName: string;
  /** Absent in entries written before labels, and when none were given (the entry's bytes stay the same). */
  labels?: SessionLabels;
}

/** Its own status: the session is open (StoredResult member 1). */
const RESULTS = { session_opened: { no: 1, fields: [str(1, 'sessionId'), uint(2, 'ttlMs')] } } as const satisfies StatusTable;

export const openSession: CommandEntry<OpenSessionCommand, 'session_opened', typeof RESULTS> = {
  type: 'OpenSession',
  kind: 'request',
  statuses: ['session_opened'],
  results: RESULTS,
  member: 'openSession',
  encode: (c) => ({ sessionId: c.sessionId, ttlMs: c.ttlMs, clientName: c.clientName, labels: (c.labels ?? []).map((l) => ({ key: l.key, value: l.value })) }),
  decode(b, meta) {
    const c: OpenSessionCommand = { type: 'OpenSession', ...meta, sessionId: b.str('sessionId'), ttlMs: b.num('ttlMs'), clientName: b.str('clientName') };
    const labels = b.list('labels').map((l): SessionLabel => ({ key: l.str('key'), value: l.str('value') }));
    return labels.length === 0 ? c : { ...c, labels };
  },
  validate(c) {
    const sessionProblem = checkSessionId(c.sessionId);
    if (sessionProblem !== null) return sessionProblem;
    if (!isNonNegativeInt(c.ttlMs) || c.ttlMs < L.MIN_SESSION_TTL_MS || c.ttlMs > L.MAX_SESSION_TTL_MS) {
      return `ttlMs must be an integer in [${L.MIN_SESSION_TTL_MS}, ${L.MAX_SESSION_TTL_MS}]`;
    }
    return checkText(c.clientName, 'clientName', 0, L.MAX_CLIENT_NAME_BYTES) ?? checkLabels(c.labels);
  },
  // Any user may open a session; it is theirs (the session owner every later check compares with).
  permit: () => null,
  execute(m, index, c) {
    const owner = c.caller ?? '';
    if (m.sessions.has(c.sessionId)) return refused(Reason.SESSION_EXISTS, 0);
    if (m.overQuota(owner, 'sessions', m.usage.counts(owner).sessions, 1)) return refusedAbout(Reason.QUOTA_EXCEEDED, 'sessions');
    if (m.sessions.size >= L.MAX_SESSIONS) return refused(Reason.TOO_MANY_SESSIONS, 0);
    const s = m.sessions.add({ id: c.sessionId, clientName: c.clientName, ttlMs: c.ttlMs, openedAt: c.now, openIndex: index, owner, labels: c.labels ?? NO_LABELS });
    s.usage = m.usage.of(owner);
    if (s.usage !== null) s.usage.sessions++;
    return { status: 'session_opened', sessionId: c.sessionId, ttlMs: c.ttlMs };
  },
};

function checkLabels(v: unknown): string | null {
  if (v === undefined) return null;
  if (!Array.isArray(v) || !v.every((l) => typeof l === 'object' && l !== null)) return 'labels must be a list of { key, value }';
  return labelsProblem(v as SessionLabel[]);
}

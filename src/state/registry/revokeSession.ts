// RevokeSession: an admin ends another identity's session (docs/auth.md "Ending sessions"): as CloseSession,
// with cause `revoked`, so its holder's client learns why.
import { adminOnly } from '../auth/access';
import { checkSessionId } from './checks';
import type { CommandEntry, RequestMeta } from './entry';

export interface RevokeSessionCommand extends RequestMeta {
  type: 'RevokeSession';
  sessionId: string;
}

export const revokeSession: CommandEntry<RevokeSessionCommand, 'session_ended'> = {
  type: 'RevokeSession',
  kind: 'request',
  statuses: ['session_ended'],
  member: 'revokeSession',
  encode: (c) => ({ sessionId: c.sessionId }),
  decode: (b, meta) => ({ type: 'RevokeSession', ...meta, sessionId: b.str('sessionId') }),
  validate: (c) => checkSessionId(c.sessionId),
  permit: (p) => adminOnly(p),
  execute: (m, index, c, events) => m.endSession(index, c.now, c.sessionId, 'revoked', events),
};

// CloseSession: a client ends its own session: its locks are released and its waits dropped.
import { checkOwner } from '../auth/access';
import { checkSessionId } from './checks';
import type { CommandEntry, RequestMeta } from './entry';

export interface CloseSessionCommand extends RequestMeta {
  type: 'CloseSession';
  sessionId: string;
}

export const closeSession: CommandEntry<CloseSessionCommand, 'session_ended'> = {
  type: 'CloseSession',
  kind: 'request',
  statuses: ['session_ended'],
  member: 'closeSession',
  encode: (c) => ({ sessionId: c.sessionId }),
  decode: (b, meta) => ({ type: 'CloseSession', ...meta, sessionId: b.str('sessionId') }),
  validate: (c) => checkSessionId(c.sessionId),
  // Letting go needs no permission: a revoke never keeps a holder from releasing.
  permit: (p, c) => checkOwner(p.caller, p.sessionOwner(c.sessionId)),
  execute: (m, index, c, events) => m.endSession(index, c.now, c.sessionId, 'closed', events),
};

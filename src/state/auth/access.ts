// Who may apply a request, checked when its entry is applied (docs/auth.md "Auth on"): against the auth table
// as of that entry, so a revoke committed before a write refuses the write whatever the node checked when it
// proposed it. With auth off nothing is checked.
//
// A request with caller '' comes from the node itself (a timed-out wait's CancelWait, the leader's `enable`)
// or from a log written before callers were stamped: it is not checked. The node is trusted with callers
// anyway (it could stamp any name); it must stamp every client's request.
import type { RequestCommand } from '../commands';
import { Reason, refusedAbout, type RefusedResult } from '../results';
import type { AuthTable } from './authTable';
import { allows, isAdmin } from './permissions';

/** The refusal applying `c` gets before it runs, or null when it may run. */
export function checkAccess(t: AuthTable, c: RequestCommand, sessionOwner: (sessionId: string) => string | undefined): RefusedResult | null {
  const caller = c.caller ?? '';
  if (!t.enabled || caller === '') return null;
  const user = t.users.get(caller);
  if (user === undefined) return refusedAbout(Reason.PERMISSION_DENIED, `user ${caller}`);
  if (c.callerToken !== undefined && t.tokens.get(c.callerToken)?.user !== caller) {
    return refusedAbout(Reason.PERMISSION_DENIED, `token ${c.callerToken}`);
  }
  switch (c.type) {
    case 'OpenSession':
      return null;
    case 'Acquire':
      if (!allows(t, caller, 'lock', c.lock)) return refusedAbout(Reason.PERMISSION_DENIED, `lock ${c.lock}`);
      return checkOwner(caller, sessionOwner(c.sessionId));
    case 'Write': {
      const refused = c.ops.find((op) => !allows(t, caller, 'write', op.key));
      if (refused !== undefined) return refusedAbout(Reason.PERMISSION_DENIED, `write ${refused.key}`);
      return checkOwner(caller, sessionOwner(c.sessionId));
    }
    case 'CloseSession':
    case 'CancelWait':
    case 'Release':
      // Letting go needs no permission: a revoke never keeps a holder from releasing.
      return checkOwner(caller, sessionOwner(c.sessionId));
    case 'AuthChange':
      return c.change.op === 'enable' || isAdmin(t, caller) ? null : refusedAbout(Reason.PERMISSION_DENIED, 'admin');
    case 'MoveKeys':
    case 'RevokeSession':
      return isAdmin(t, caller) ? null : refusedAbout(Reason.PERMISSION_DENIED, 'admin');
  }
}

/** A session belongs to the identity that opened it; an unknown session is left to the command (UNKNOWN_SESSION). */
function checkOwner(caller: string, owner: string | undefined): RefusedResult | null {
  return owner === undefined || owner === caller ? null : { status: 'refused', reason: Reason.NOT_SESSION_OWNER, watermark: 0 };
}

// Who may apply a request, checked when its entry is applied (docs/auth.md "Auth on"): against the auth table
// as of that entry, so a revoke committed before a write refuses the write whatever the node checked when it
// proposed it. With auth off nothing is checked. Each command's own rule lives in its registry entry
// (src/state/registry/*.ts, `permit`); here are the checks every request gets and the rules entries share.
//
// A request with caller '' comes from the node itself (a timed-out wait's CancelWait, the leader's `enable`)
// or from a log written before callers were stamped: it is not checked. The node is trusted with callers
// anyway (it could stamp any name); it must stamp every client's request.
import type { RequestMeta } from '../registry/entry';
import { Reason, refusedAbout, type RefusedResult } from '../results';
import type { AuthTable } from './authTable';
import { isAdmin } from './permissions';

/**
 * The checks before a request's own rule: null when nothing is to be checked (auth off, or the node's own
 * request), 'checked' when the caller is a live user with a live token (its command's rule comes next),
 * or the refusal.
 */
export function checkCaller(t: AuthTable, c: RequestMeta): RefusedResult | 'checked' | null {
  const caller = c.caller ?? '';
  if (!t.enabled || caller === '') return null;
  if (t.users.get(caller) === undefined) return refusedAbout(Reason.PERMISSION_DENIED, `user ${caller}`);
  if (c.callerToken !== undefined && t.tokens.get(c.callerToken)?.user !== caller) {
    return refusedAbout(Reason.PERMISSION_DENIED, `token ${c.callerToken}`);
  }
  return 'checked';
}

/** A session belongs to the identity that opened it; an unknown session is left to the command (UNKNOWN_SESSION). */
export function checkOwner(caller: string, owner: string | undefined): RefusedResult | null {
  return owner === undefined || owner === caller ? null : { status: 'refused', reason: Reason.NOT_SESSION_OWNER, watermark: 0 };
}

/** The rule of a command only admins may send. */
export function adminOnly(p: { table: AuthTable; caller: string }): RefusedResult | null {
  return isAdmin(p.table, p.caller) ? null : refusedAbout(Reason.PERMISSION_DENIED, 'admin');
}

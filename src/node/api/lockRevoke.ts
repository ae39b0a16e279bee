// Lock.Revoke (issue 34, "force release"): an admin ends a lock's current grant without ending the holder's
// session (docs/auth.md "Ending sessions"). The RevokeLock entry hands the lock on as a release would; the
// holder's client learns REVOKED from its next renewal (sessionService: KeepAliveResponse.revoked).
import * as L from '../../state/limits';
import type { RevokeLockRequest__Output } from '../../protocol/generated/fencelock/v1/RevokeLockRequest';
import type { RevokeLockResponse__Output } from '../../protocol/generated/fencelock/v1/RevokeLockResponse';
import { intToWire } from '../../protocol/wireInt';
import { Reason, type Command, type CommandResult } from '../../state';
import { ApiError } from './errors';
import { refusalError } from './refusals';
import type { NodeContext } from './context';
import { proposing } from './proposal';
import { publicSessionId } from './publicSessionId';
import type { Rpc } from './rpc';
import * as v from './validate';

export function lockRevoke(ctx: NodeContext): Rpc<RevokeLockRequest__Output, RevokeLockResponse__Output> {
  const { access } = ctx;
  return proposing(ctx, {
    name: 'Lock.Revoke',
    command: 'RevokeLock',
    fields: (req: RevokeLockRequest__Output, caller) => {
      const lock = v.lockName(req.lock);
      const reason = v.text('reason', req.reason, L.MAX_REVOKE_REASON_BYTES, { allowEmpty: true });
      const token = v.safeInteger('token', req.token); // 0: whatever grant is current
      access.permitAdmin(caller);
      return { lock, token, reason };
    },
    // The handover is stored with the result: a retry learns the same ended grant and next holder.
    answers: 'released',
    response: (ok): RevokeLockResponse__Output => ({
      endedToken: intToWire('ended_token', ok.token),
      nextHolderSession: ok.nextHolder === undefined ? '' : publicSessionId(ok.nextHolder),
      nextToken: intToWire('next_token', ok.nextToken ?? 0),
    }),
    // The shared texts speak of a holder's own token; an admin's revoke gets its own, same status and metadata.
    withhold: (refused, { lock, token }) => {
      const general = refusalError(refused.reason, refused.watermark);
      const q = JSON.stringify(lock);
      if (refused.reason === Reason.LOCK_NOT_HELD) return new ApiError(general.code, `LOCK_NOT_HELD: lock ${q} is not held: nothing to revoke`, general.metadata);
      if (refused.reason === Reason.WRONG_TOKEN) {
        return new ApiError(general.code, `WRONG_TOKEN: lock ${q} is no longer held under token ${token} (that grant ended): nothing revoked; describe shows the current grant`, general.metadata);
      }
      return undefined;
    },
  });
}

/**
 * Every node writes each revoke it applies to its log, as an audit record: who, when (the leader's clock in
 * the entry), which grant ended (lock, token, holder's public handle), why, and who got the lock next.
 */
export function auditRevokes(ctx: Pick<NodeContext, 'app' | 'logger'>): void {
  ctx.app.on('applied', (index: number, command: Command, outcome: CommandResult) => {
    if (command.type !== 'RevokeLock') return;
    for (const e of outcome.events) {
      if (e.type !== 'released' || e.cause !== 'lock_revoked') continue;
      const next = outcome.events.find((g) => g.type === 'granted' && g.lock === e.lock);
      ctx.logger.info(
        {
          audit: 'lock_revoked',
          index,
          at: new Date(command.now).toISOString(),
          lock: e.lock,
          token: String(e.token),
          holder: publicSessionId(e.sessionId),
          by: e.revokedBy ?? '',
          reason: e.reason ?? '',
          nextHolder: next?.type === 'granted' ? publicSessionId(next.sessionId) : '',
        },
        'fencelock: audit: lock grant revoked',
      );
    }
  });
}

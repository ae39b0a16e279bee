// The Semaphore service (issue 33; docs/architecture.md#semaphores): Acquire and Release, also on the
// Pipeline stream, and Describe. Modelled on lockService.ts: a blocked Acquire waits here for its grant, its
// retries find the same wait, and a wait whose deadline passes is withdrawn by an entry.
import * as grpc from '@grpc/grpc-js';
import type { Command, CommandResult } from '../../state';
import * as L from '../../state/limits';
import type { SemaphoreAcquireRequest__Output } from '../../protocol/generated/fencelock/v1/SemaphoreAcquireRequest';
import type { SemaphoreAcquireResponse__Output } from '../../protocol/generated/fencelock/v1/SemaphoreAcquireResponse';
import type { SemaphoreDescribeRequest__Output } from '../../protocol/generated/fencelock/v1/SemaphoreDescribeRequest';
import type { SemaphoreDescribeResponse__Output } from '../../protocol/generated/fencelock/v1/SemaphoreDescribeResponse';
import type { SemaphoreReleaseRequest__Output } from '../../protocol/generated/fencelock/v1/SemaphoreReleaseRequest';
import type { SemaphoreReleaseResponse__Output } from '../../protocol/generated/fencelock/v1/SemaphoreReleaseResponse';
import { ATTR } from '../../protocol/traceContext';
import { intToWire } from '../../protocol/wireInt';
import { AcquireWaits } from '../runtime/acquireWaits';
import type { CallScope, NodeContext } from './context';
import { ApiError } from './errors';
import { proposing } from './proposal';
import { publicSessionId } from './publicSessionId';
import { expectOk, refusalError, withheldRefusalError } from './refusals';
import { unaryMethods, type PipelineCalls } from './rpc';
import { sessionInfo } from './sessionInfo';
import * as v from './validate';

/** How long a blocked Acquire whose call went away keeps its place, waiting for the client's retry (as for locks). */
const WITHDRAW_GRACE_MS = 5_000;

const grantedPermit = (token: number, slot: number, permits: number): SemaphoreAcquireResponse__Output => ({
  acquired: true,
  token: intToWire('token', token),
  slot,
  permits,
});

export function semaphoreService(ctx: NodeContext): {
  service: grpc.UntypedServiceImplementation;
  calls: Pick<PipelineCalls, 'semaphoreAcquire' | 'semaphoreRelease'>;
} {
  const { access } = ctx;

  const waits = new AcquireWaits(async (semaphore, sessionId) => {
    // On the session's behalf: the state machine lets only its owner touch it.
    const caller = ctx.machine.auth.sessionOwner(sessionId) ?? '';
    const { result } = await ctx.propose({ type: 'SemaphoreCancelWait', clientId: '', requestId: 0, caller, now: ctx.now(), semaphore, sessionId });
    return result.status === 'permit_granted' ? result.token : undefined; // granted just before the cancel applied: the grant is real
  }, WITHDRAW_GRACE_MS, ctx.ports.clock, ctx.ports.timers);
  ctx.app.on('applied', (_index: number, _command: Command, outcome: CommandResult) => {
    for (const e of outcome.events) {
      if (e.type === 'permit_granted') waits.settle(e.semaphore, e.sessionId, { kind: 'granted', token: e.token });
      // Only this node's own SemaphoreCancelWait ends a wait as 'cancelled': that is the wait timing out.
      else if (e.type === 'permit_wait_ended') waits.settle(e.semaphore, e.sessionId, e.cause === 'cancelled' ? { kind: 'timeout' } : { kind: 'ended', cause: e.cause });
    }
  });
  ctx.onStop(() => waits.clear());

  /**
   * The answer to a wait that ended in the grant under `token`: its slot, read off the semaphore. One entry may
   * hand several slots on under one token (an expiry of several holders), so the slot is the session's own.
   */
  function grantOf(semaphore: string, sessionId: string, token: number): SemaphoreAcquireResponse__Output {
    const info = ctx.machine.describeSemaphore(semaphore);
    const slot = info?.slots.find((x) => x.latestToken === token && x.holder?.sessionId === sessionId);
    // Handed over and ended again before this answer (the semaphore may even be forgotten): the permit is gone.
    if (info === undefined || slot === undefined) throw refusalError('NOT_HOLDER', 0);
    return grantedPermit(token, slot.slot, info.permits);
  }

  async function awaitPermit(call: CallScope, semaphore: string, sessionId: string, waitMs: number): Promise<SemaphoreAcquireResponse__Output> {
    // The grant may have been applied in the same batch as our queueing: look at the state first.
    const state = ctx.machine.sessionPermitState(semaphore, sessionId);
    if (state.state === 'holder') return grantedPermit(state.token, state.slot, state.permits);
    if (state.state === 'none') throw refusalError('UNKNOWN_SESSION', 0);
    return new Promise((resolve, reject) => {
      const detach = waits.attach(semaphore, sessionId, waitMs, (o) => {
        call.off('cancelled', onCancelled);
        try {
          if (o.kind === 'granted') resolve(grantOf(semaphore, sessionId, o.token));
          else if (o.kind === 'timeout') reject(new ApiError(grpc.status.DEADLINE_EXCEEDED, `no permit of semaphore "${semaphore}" within ${waitMs} ms; the wait was withdrawn`));
          else if (o.kind === 'withdraw-failed') {
            const hint = o.error instanceof ApiError ? o.error.metadata : {};
            reject(new ApiError(grpc.status.UNAVAILABLE, `the wait for semaphore "${semaphore}" timed out but could not be withdrawn (${o.error.message}); retry the same request`, hint));
          } else reject(refusalError('UNKNOWN_SESSION', 0));
        } catch (err) {
          reject(err as Error);
        }
      });
      const onCancelled = (): void => {
        detach();
        reject(new ApiError(grpc.status.CANCELLED, 'cancelled by the client'));
      };
      call.on('cancelled', onCancelled);
    });
  }

  // Irregular, as Lock.Acquire: a blocked Acquire waits for its grant here, never answered from the dedup table.
  const acquire = async (req: SemaphoreAcquireRequest__Output, call: CallScope): Promise<SemaphoreAcquireResponse__Output> => {
    const id = v.header(req.header);
    const semaphore = v.lockName(req.name, 'name');
    const sessionId = v.sessionId(req.sessionId);
    const permits = v.safeInteger('permits', req.permits, { min: 1, max: L.MAX_PERMITS });
    const waitMs = v.safeInteger('wait_timeout_ms', req.waitTimeoutMs, { max: L.MAX_WAIT_TIMEOUT_MS });
    access.permit(call.caller, 'lock', semaphore);
    access.permitSession(call.caller, sessionId);
    const { result } = await ctx.propose({
      type: 'SemaphoreAcquire',
      ...id,
      ...access.stamp(call.caller),
      now: ctx.now(),
      semaphore,
      sessionId,
      permits,
      tryOnly: waitMs === 0,
      waitTimeoutMs: waitMs,
    });
    const ok = expectOk(result);
    call.span?.setAttributes({ [ATTR.lock]: semaphore, [ATTR.result]: ok.status });
    switch (ok.status) {
      case 'permit_granted':
        return grantedPermit(ok.token, ok.slot, ok.permits);
      case 'permits_full':
        return { acquired: false, token: intToWire('token', 0), slot: 0, permits: ok.permits };
      case 'waiting':
        call.span?.addEvent('queued', { [ATTR.lock]: semaphore });
        return awaitPermit(call, semaphore, sessionId, waitMs);
      default:
        throw new ApiError(grpc.status.INTERNAL, `unexpected result ${ok.status}`);
    }
  };

  const release = proposing(ctx, {
    name: 'Semaphore.Release',
    command: 'SemaphoreRelease',
    fields: (req: SemaphoreReleaseRequest__Output, caller) => {
      const semaphore = v.lockName(req.name, 'name');
      const sessionId = v.sessionId(req.sessionId);
      const token = v.token(req.token);
      access.permitSession(caller, sessionId);
      return { semaphore, sessionId, token };
    },
    answers: 'permit_released',
    response: (ok): SemaphoreReleaseResponse__Output => ({
      slot: ok.slot,
      nextHolderSession: ok.nextHolder === undefined ? '' : publicSessionId(ok.nextHolder),
      nextToken: intToWire('next_token', ok.nextToken ?? 0),
    }),
    // Releasing needs no permission, so a refusal shows the slot's watermark only to a caller that may lock the name.
    withhold: (refused, { semaphore }, caller) =>
      refused.watermark !== 0 && !access.may(caller, 'lock', semaphore) ? withheldRefusalError(refused.reason, semaphore) : undefined,
  });

  const describe = async (req: SemaphoreDescribeRequest__Output, call: CallScope): Promise<SemaphoreDescribeResponse__Output> => {
    const semaphore = v.lockName(req.name, 'name');
    access.permit(call.caller, 'lock', semaphore);
    await ctx.linearizableRead();
    const info = ctx.machine.describeSemaphore(semaphore);
    return {
      permits: info?.permits ?? 0,
      // Labels are shown behind the permission to describe the name, as for locks.
      holders: (info?.slots ?? []).flatMap((x) =>
        x.holder === null
          ? []
          : [{ slot: x.slot, token: intToWire('token', x.holder.token), session: sessionInfo(x.holder), grantedAtMs: intToWire('granted_at_ms', x.holder.grantedAt) }],
      ),
      waiters: (info?.waiterSessions ?? []).map((w) => sessionInfo(w)),
      slotTokens: (info?.slots ?? []).map((x) => intToWire('slot_tokens', x.latestToken)),
    };
  };

  const calls = {
    semaphoreAcquire: { name: 'Semaphore.Acquire', handle: acquire },
    semaphoreRelease: release,
  };
  const service = unaryMethods(ctx, [calls.semaphoreAcquire, release, { name: 'Semaphore.Describe', handle: describe }]);
  return { service, calls };
}

import * as grpc from '@grpc/grpc-js';
import type { Command, CommandResult, LockInfo } from '../../state';
import * as L from '../../state/limits';
import type { AcquireRequest__Output } from '../../protocol/generated/fencelock/v1/AcquireRequest';
import type { AcquireResponse__Output } from '../../protocol/generated/fencelock/v1/AcquireResponse';
import type { DescribeRequest__Output } from '../../protocol/generated/fencelock/v1/DescribeRequest';
import type { DescribeResponse__Output } from '../../protocol/generated/fencelock/v1/DescribeResponse';
import type { ReleaseRequest__Output } from '../../protocol/generated/fencelock/v1/ReleaseRequest';
import type { ReleaseResponse__Output } from '../../protocol/generated/fencelock/v1/ReleaseResponse';
import { ATTR } from '../../protocol/traceContext';
import { intToWire } from '../../protocol/wireInt';
import { ApiError } from './errors';
import type { CallScope, NodeContext } from './context';
import { proposing } from './proposal';
import { expectOk, refusalError, withheldRefusalError } from './refusals';
import { delayedError, delayFields } from './lockDelayFields';
import { lockList } from './lockList';
import { auditRevokes, lockRevoke } from './lockRevoke';
import { lockWatch } from './lockWatch';
import { publicSessionId } from './publicSessionId';
import { sessionInfo } from './sessionInfo';
import { unaryMethods, type PipelineCalls, type Rpc } from './rpc';
import * as v from './validate';
import { AcquireWaits } from '../runtime/acquireWaits';
import { acquireAllCall, type AcquireAllRpc } from './lockSetAcquire';
import { GrantTraces } from './grantTraces';

/** How long a blocked Acquire whose call went away keeps its place, waiting for the client's retry. */
const WITHDRAW_GRACE_MS = 5_000;

const granted = (token: number): AcquireResponse__Output => ({ acquired: true, token: intToWire('token', token), holderSession: '', busy: 'BUSY_UNSPECIFIED', firstWaiterSession: '' });

/** The Lock service, and its hot calls for the Pipeline stream (sharing one wait registry). */
/** A decoded request always has lock_delay_ms (0 by default); a caller in the same process may leave it out. */
type AcquireRequestIn = Omit<AcquireRequest__Output, 'lockDelayMs' | 'mode'> & Partial<Pick<AcquireRequest__Output, 'lockDelayMs' | 'mode'>>;

export function lockService(ctx: NodeContext): {
  service: grpc.UntypedServiceImplementation;
  calls: { acquire: Rpc<AcquireRequestIn, AcquireResponse__Output>; release: PipelineCalls['release']; acquireAll: AcquireAllRpc };
} {
  const { access } = ctx;

  // Retries of a blocked Acquire must find their wait, so a dropped call only withdraws it after a grace period.
  const waits = new AcquireWaits(async (lock, sessionId) => {
    // On the session's behalf: the state machine lets only its owner touch it.
    const caller = ctx.machine.auth.sessionOwner(sessionId) ?? '';
    const { result } = await ctx.propose({ type: 'CancelWait', clientId: '', requestId: 0, caller, now: ctx.now(), lock, sessionId });
    return result.status === 'granted' ? result.token : undefined; // granted just before the cancel applied: the grant is real
  }, WITHDRAW_GRACE_MS, ctx.ports.clock, ctx.ports.timers);
  ctx.app.on('applied', (_index: number, _command: Command, outcome: CommandResult) => {
    for (const e of outcome.events) {
      if (e.type === 'granted') waits.settle(e.lock, e.sessionId, { kind: 'granted', token: e.token });
      // Only this node's own CancelWait ends a wait as 'cancelled': that is the wait timing out.
      else if (e.type === 'wait_ended') waits.settle(e.lock, e.sessionId, e.cause === 'cancelled' ? { kind: 'timeout' } : { kind: 'ended', cause: e.cause });
    }
  });
  ctx.onStop(() => waits.clear());
  const grantTraces = new GrantTraces(ctx.app, ctx.driver);

  /** Waits for the session's grant of the lock, the end of its wait, or the wait timeout. */
  async function awaitGrant(call: CallScope, lock: string, sessionId: string, waitMs: number, shared: boolean): Promise<AcquireResponse__Output> {
    let state = ctx.machine.sessionLockState(lock, sessionId);
    if (state.state === 'none' && ctx.machine.getSession(sessionId)) {
      // A retry answered "waiting" from the dedup table, but the wait was withdrawn since: queue again.
      const { result } = await ctx.propose({ type: 'Acquire', clientId: '', requestId: 0, ...access.stamp(call.caller), now: ctx.now(), lock, sessionId, tryOnly: false, waitTimeoutMs: waitMs, ...(shared ? { shared } : {}) });
      const ok = expectOk(result);
      if (ok.status === 'granted') return granted(ok.token);
      state = ctx.machine.sessionLockState(lock, sessionId);
    }
    // The grant may have been applied in the same batch as our queueing: look at the state first.
    if (state.state === 'holder') return granted(state.token);
    if (state.state === 'none') throw refusalError('UNKNOWN_SESSION', 0);
    return new Promise((resolve, reject) => {
      const detach = waits.attach(lock, sessionId, waitMs, (o) => {
        call.off('cancelled', onCancelled);
        if (o.kind === 'granted') resolve(granted(o.token));
        else if (o.kind === 'timeout') reject(new ApiError(grpc.status.DEADLINE_EXCEEDED, `lock "${lock}" not granted within ${waitMs} ms; the wait was withdrawn`));
        else if (o.kind === 'withdraw-failed') {
          // Saying DEADLINE_EXCEEDED here would be a lie: the waiter may still be granted. The client retries
          // the same request id at the new leader and finds its wait (or its grant).
          const hint = o.error instanceof ApiError ? o.error.metadata : {};
          reject(new ApiError(grpc.status.UNAVAILABLE, `the wait for lock "${lock}" timed out but could not be withdrawn (${o.error.message}); retry the same request`, hint));
        } else reject(refusalError('UNKNOWN_SESSION', 0));
      });
      const onCancelled = (): void => {
        detach();
        reject(new ApiError(grpc.status.CANCELLED, 'cancelled by the client'));
      };
      call.on('cancelled', onCancelled);
    });
  }

  // Traced: queued (an event when it waits), then granted with the token and the term that granted it.
  const acquire = async (req: AcquireRequestIn, call: CallScope): Promise<AcquireResponse__Output> => {
    const res = await acquireOnce(req, call);
    call.span?.setAttributes({
      [ATTR.lock]: req.lock,
      [ATTR.result]: res.acquired ? 'granted' : 'held',
      [ATTR.token]: res.token,
      [ATTR.term]: ctx.driver.currentTerm(),
    });
    if (res.acquired) grantTraces.granted(req.lock, Number(res.token), call.span?.spanContext());
    return res;
  };

  // Irregular: a blocked Acquire waits for its grant here, and is never answered from the dedup table.
  const acquireOnce = async (req: AcquireRequestIn, call: CallScope): Promise<AcquireResponse__Output> => {
    const id = v.header(req.header);
    const lock = v.lockName(req.lock);
    const sessionId = v.sessionId(req.sessionId);
    const waitMs = v.safeInteger('wait_timeout_ms', req.waitTimeoutMs, { max: L.MAX_WAIT_TIMEOUT_MS });
    const lockDelayMs = v.safeInteger('lock_delay_ms', req.lockDelayMs ?? '0', { max: L.MAX_LOCK_DELAY_MS });
    const shared = sharedMode(req.mode);
    access.permit(call.caller, 'lock', lock);
    access.permitSession(call.caller, sessionId);
    const { result } = await ctx.propose({
      type: 'Acquire',
      ...id,
      ...access.stamp(call.caller),
      now: ctx.now(),
      lock,
      sessionId,
      tryOnly: waitMs === 0,
      waitTimeoutMs: waitMs,
      ...(lockDelayMs === 0 ? {} : { lockDelayMs }),
      ...(shared ? { shared } : {}),
    });
    if (result.status === 'refused' && result.reason === 'LOCK_DELAYED') throw delayedError(lock, ctx.machine.lockDelayOf(lock)?.until ?? 0, ctx.now());
    const ok = expectOk(result);
    switch (ok.status) {
      case 'granted':
        return granted(ok.token);
      case 'held':
        return busyAnswer(ctx.machine.describeLock(lock), shared);
      case 'waiting':
        call.span?.addEvent('queued', { [ATTR.lock]: lock });
        return awaitGrant(call, lock, sessionId, waitMs, shared);
      default:
        throw new ApiError(grpc.status.INTERNAL, `unexpected result ${ok.status}`);
    }
  };

  const release = proposing(ctx, {
    name: 'Lock.Release',
    command: 'Release',
    fields: (req: ReleaseRequest__Output, caller) => {
      const lock = v.lockName(req.lock);
      const sessionId = v.sessionId(req.sessionId);
      const token = v.token(req.token);
      access.permitSession(caller, sessionId);
      return { lock, sessionId, token };
    },
    // The handover is stored with the result, so a retry (recalled, or a duplicate entry) learns it too.
    answers: 'released',
    response: (ok): ReleaseResponse__Output =>
      ok.nextHolder !== undefined && ok.nextToken !== undefined
        ? { nextHolderSession: publicSessionId(ok.nextHolder), nextToken: intToWire('next_token', ok.nextToken) }
        : { nextHolderSession: '', nextToken: intToWire('next_token', 0) },
    // Releasing needs no permission, so a refusal shows the lock's watermark only to a caller that may lock it.
    withhold: (refused, { lock }, caller) =>
      refused.watermark !== 0 && !access.may(caller, 'lock', lock) ? withheldRefusalError(refused.reason, lock) : undefined,
  });

  const describe = async (req: DescribeRequest__Output, call: CallScope): Promise<DescribeResponse__Output> => {
    const lock = v.lockName(req.lock);
    access.permit(call.caller, 'lock', lock);
    await ctx.linearizableRead();
    const info = ctx.machine.describeLock(lock);
    return {
      held: !!info?.holder,
      holderSession: publicSessionId(info?.holder?.sessionId ?? ''),
      token: intToWire('token', info?.holder?.token ?? 0),
      grantedAtMs: intToWire('granted_at_ms', info?.holder?.grantedAt ?? 0),
      waiters: (info?.waiters ?? []).map(publicSessionId),
      latestToken: intToWire('latest_token', info?.latestToken ?? 0),
      // Labels are shown only here and in Watch, both behind the permission to describe the lock.
      holder: info?.holder ? sessionInfo(info.holder) : null,
      waiterSessions: (info?.waiterSessions ?? []).map((w) => sessionInfo(w)),
      lockDelayMs: intToWire('lock_delay_ms', info?.holder?.lockDelayMs ?? 0),
      ...delayFields(info?.delay, ctx.now()),
      sharedHolders: (info?.sharedHolders ?? []).map((x) => ({
        session: sessionInfo(x),
        token: intToWire('token', x.token),
        grantedAtMs: intToWire('granted_at_ms', x.grantedAt),
      })),
      waiterShared: (info?.waiterSessions ?? []).map((w) => w.shared === true),
    };
  };

  auditRevokes(ctx);
  const calls = { acquire: { name: 'Lock.Acquire', handle: acquire }, release, acquireAll: acquireAllCall(ctx, waits) };
  const service: grpc.UntypedServiceImplementation = {
    ...unaryMethods(ctx, [calls.acquire, release, calls.acquireAll, { name: 'Lock.Describe', handle: describe }, lockRevoke(ctx), lockList(ctx)]),
    Watch: lockWatch(ctx),
  };
  return { service, calls };
}

/** The request's mode: SHARED or EXCLUSIVE (the default, also when absent); anything else is refused. */
/**
 * A try-acquire's answer when the lock is not to be had: who holds it, or, when nobody holds it against this
 * mode, who waits first (a free lock that an AcquireAll set at the head of its queue keeps for itself).
 */
function busyAnswer(info: LockInfo | undefined, shared: boolean): AcquireResponse__Output {
  const answer = (busy: AcquireResponse__Output['busy'], holder = '', first = ''): AcquireResponse__Output => ({
    acquired: false,
    token: intToWire('token', 0),
    holderSession: publicSessionId(holder),
    busy,
    firstWaiterSession: publicSessionId(first),
  });
  if (info?.holder) return answer('BUSY_HELD', info.holder.sessionId);
  if (!shared && (info?.sharedHolders?.length ?? 0) > 0) return answer('BUSY_SHARED');
  const head = info?.waiterSessions[0];
  if (head === undefined) return answer('BUSY_UNSPECIFIED'); // cannot happen: the entry answered held
  return answer(head.set === true ? 'BUSY_SET_WAITING' : 'BUSY_QUEUED', '', head.sessionId);
}

function sharedMode(mode: AcquireRequest__Output['mode'] | undefined): boolean {
  if (mode === undefined || mode === 'LOCK_MODE_EXCLUSIVE' || (mode as unknown) === 0) return false;
  if (mode === 'LOCK_MODE_SHARED' || (mode as unknown) === 1) return true;
  throw new ApiError(grpc.status.INVALID_ARGUMENT, `mode must be LOCK_MODE_EXCLUSIVE or LOCK_MODE_SHARED, not ${String(mode)}`);
}

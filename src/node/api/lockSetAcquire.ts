// Lock.AcquireAll (issue 33, docs/architecture.md#atomic-multi-lock): every named lock in one entry, or one
// waiter in every queue of the set. The set is granted by one entry, so its wait is the wait for the grant of
// its first lock by name, in the registry blocked Acquires share (a retry finds it); the timeout withdraws it
// with a CancelWait of that lock, which the state machine applies to the whole set.
import * as grpc from '@grpc/grpc-js';
import * as L from '../../state/limits';
import type { AcquireAllRequest__Output } from '../../protocol/generated/fencelock/v1/AcquireAllRequest';
import type { AcquireAllResponse__Output } from '../../protocol/generated/fencelock/v1/AcquireAllResponse';
import { ATTR } from '../../protocol/traceContext';
import { intToWire } from '../../protocol/wireInt';
import { compareStrings } from '../../state/text';
import type { AcquireWaits } from '../runtime/acquireWaits';
import type { CallScope, NodeContext } from './context';
import { ApiError } from './errors';
import { delayedError } from './lockDelayFields';
import { expectOk, refusalError } from './refusals';
import type { Rpc } from './rpc';
import * as v from './validate';

export type AcquireAllRpc = Rpc<AcquireAllRequest__Output, AcquireAllResponse__Output>;

/** The declaration of Lock.AcquireAll, waiting in `waits` (shared with Lock.Acquire). */
export function acquireAllCall(ctx: NodeContext, waits: AcquireWaits): AcquireAllRpc {
  const { access } = ctx;

  const answer = (locks: readonly string[], token: number): AcquireAllResponse__Output => ({
    acquired: true,
    token: intToWire('token', token),
    grants: locks.map((lock) => ({ lock, token: intToWire('token', token) })),
    busyLock: '',
  });

  /** Waits for the one entry that grants the set (seen as the grant of its first lock), its end, or the timeout. */
  function awaitSet(call: CallScope, locks: readonly string[], sessionId: string, waitMs: number): Promise<AcquireAllResponse__Output> {
    const first = [...locks].sort(compareStrings)[0] ?? '';
    const state = ctx.machine.sessionLockState(first, sessionId);
    if (state.state === 'holder') return Promise.resolve(answer(locks, state.token));
    if (state.state === 'none') return Promise.reject(refusalError('UNKNOWN_SESSION', 0));
    return new Promise((resolve, reject) => {
      const detach = waits.attach(first, sessionId, waitMs, (o) => {
        call.off('cancelled', onCancelled);
        if (o.kind === 'granted') resolve(answer(locks, o.token));
        else if (o.kind === 'timeout') reject(new ApiError(grpc.status.DEADLINE_EXCEEDED, `locks ${JSON.stringify(locks)} not granted within ${waitMs} ms; the wait was withdrawn from every queue`));
        else if (o.kind === 'withdraw-failed') {
          const hint = o.error instanceof ApiError ? o.error.metadata : {};
          reject(new ApiError(grpc.status.UNAVAILABLE, `the wait for locks ${JSON.stringify(locks)} timed out but could not be withdrawn (${o.error.message}); retry the same request`, hint));
        } else reject(refusalError('UNKNOWN_SESSION', 0));
      });
      const onCancelled = (): void => {
        detach();
        reject(new ApiError(grpc.status.CANCELLED, 'cancelled by the client'));
      };
      call.on('cancelled', onCancelled);
    });
  }

  const handle = async (req: AcquireAllRequest__Output, call: CallScope): Promise<AcquireAllResponse__Output> => {
    const id = v.header(req.header);
    const locks = lockNames(req.locks);
    const sessionId = v.sessionId(req.sessionId);
    const waitMs = v.safeInteger('wait_timeout_ms', req.waitTimeoutMs, { max: L.MAX_WAIT_TIMEOUT_MS });
    // Every name before anything is proposed: a set is refused whole.
    for (const lock of locks) access.permit(call.caller, 'lock', lock);
    access.permitSession(call.caller, sessionId);
    const { result } = await ctx.propose({ type: 'AcquireAll', ...id, ...access.stamp(call.caller), now: ctx.now(), locks, sessionId, tryOnly: waitMs === 0, waitTimeoutMs: waitMs });
    if (result.status === 'refused' && result.reason === 'LOCK_DELAYED') {
      const delayed = locks.find((lock) => ctx.machine.lockDelayOf(lock) !== undefined) ?? locks[0] ?? '';
      throw delayedError(delayed, ctx.machine.lockDelayOf(delayed)?.until ?? 0, ctx.now());
    }
    const ok = expectOk(result);
    call.span?.setAttributes({ [ATTR.lock]: locks.join(','), [ATTR.result]: ok.status, [ATTR.term]: ctx.driver.currentTerm() });
    switch (ok.status) {
      case 'granted':
        return answer(locks, ok.token);
      case 'held':
        return { acquired: false, token: intToWire('token', 0), grants: [], busyLock: locks.find((lock) => isBusy(ctx, lock)) ?? '' };
      case 'waiting':
        call.span?.addEvent('queued', { [ATTR.lock]: locks.join(',') });
        return awaitSet(call, locks, sessionId, waitMs);
      default:
        throw new ApiError(grpc.status.INTERNAL, `unexpected result ${ok.status}`);
    }
  };

  return { name: 'Lock.AcquireAll', handle };
}

/** 1..MAX_LOCKS_PER_ACQUIRE_ALL valid, distinct names, else INVALID_ARGUMENT naming the problem. */
function lockNames(names: readonly string[]): string[] {
  if (names.length < 1 || names.length > L.MAX_LOCKS_PER_ACQUIRE_ALL) {
    throw new ApiError(grpc.status.INVALID_ARGUMENT, `locks must name 1..${L.MAX_LOCKS_PER_ACQUIRE_ALL} locks, not ${names.length}`);
  }
  const seen = new Set<string>();
  for (const name of names) {
    v.lockName(name);
    if (seen.has(name)) throw new ApiError(grpc.status.INVALID_ARGUMENT, `locks must be distinct: ${JSON.stringify(name)} is named twice`);
    seen.add(name);
  }
  return [...names];
}

/** The lock is held, in its lock-delay or awaited (what keeps a set from being granted at once). */
function isBusy(ctx: NodeContext, lock: string): boolean {
  const info = ctx.machine.describeLock(lock);
  return info !== undefined && (info.holder !== null || info.delay !== undefined || info.waiters.length > 0 || (info.sharedHolders?.length ?? 0) > 0);
}

// A lock-delay as the API shows it (docs/architecture.md#lock-delay): in Describe and Lock.List, and in the
// refusal of a try-acquire during it.
import * as grpc from '@grpc/grpc-js';
import type { LockDelayInfo } from '../../state';
import { Reason } from '../../state';
import { intToWire } from '../../protocol/wireInt';
import { ApiError, DELAYED_UNTIL_METADATA_KEY, REASON_METADATA_KEY } from './errors';

/** delayed_until_ms and delay_remaining_ms; both 0 when not delayed. `now`: the serving node's clock. */
export function delayFields(delay: LockDelayInfo | null | undefined, now: number): { delayedUntilMs: string; delayRemainingMs: string } {
  const until = delay?.until ?? 0;
  return {
    delayedUntilMs: intToWire('delayed_until_ms', until),
    delayRemainingMs: intToWire('delay_remaining_ms', delay ? remainingMs(until, now) : 0),
  };
}

/** Whole ms left: the Clock port promises milliseconds, not whole ones (the simulator's clocks are fractional). */
function remainingMs(until: number, now: number): number {
  return Math.max(0, Math.ceil(until - now));
}

/** The refusal of a try-acquire during the lock's delay, with when it ends (`until`, by the leader's clock). */
export function delayedError(lock: string, until: number, now: number): ApiError {
  const left = remainingMs(until, now);
  const text = `${Reason.LOCK_DELAYED}: lock ${JSON.stringify(lock)} is in its lock-delay (its last grant ended by expiry or revocation) until ${new Date(until).toISOString()}, ${left} ms from now by this node's clock (a leader change may prolong it); wait for it (--wait) or try later`;
  return new ApiError(grpc.status.FAILED_PRECONDITION, text, { [REASON_METADATA_KEY]: Reason.LOCK_DELAYED, [DELAYED_UNTIL_METADATA_KEY]: String(until) });
}

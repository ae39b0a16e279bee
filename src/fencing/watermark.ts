// The one rule every fenced resource applies (SQL rows, HTTP resources, the proxy), kept pure so that each
// of them decides the same way.
import type { CheckedClaim } from './token';

/** A resource's fencing state: the lock it is bound to (null: not yet), its watermark and last step. */
export interface Watermark {
  lock: string | null;
  fence: bigint;
  step: bigint;
}

/** Why a claim is refused. Every refusal carries the resource's current state. */
export type Refusal =
  /** A newer holder has written: token < watermark. */
  | { status: 'STALE'; watermark: bigint; lock: string | null }
  /** Same token, but not a later step than the last one applied under it. */
  | { status: 'STALE_STEP'; watermark: bigint; lastStep: bigint; lock: string | null }
  /** The resource is fenced by another lock, whose tokens are not comparable with this one's. */
  | { status: 'WRONG_LOCK'; watermark: bigint; lock: string };

export const UNFENCED: Watermark = { lock: null, fence: 0n, step: 0n };

/**
 * token > watermark advances; token == watermark only for a later step of the same grant (tokens are unique per
 * grant, so an equal token is the same holder); token < watermark is stale. Never `fence <= token`: that would
 * run a step twice.
 */
export function judge(mark: Watermark, claim: CheckedClaim): Refusal | undefined {
  if (mark.lock !== null && mark.lock !== claim.lock) return { status: 'WRONG_LOCK', watermark: mark.fence, lock: mark.lock };
  if (claim.token < mark.fence) return { status: 'STALE', watermark: mark.fence, lock: mark.lock };
  if (claim.token === mark.fence && claim.step <= mark.step) return { status: 'STALE_STEP', watermark: mark.fence, lastStep: mark.step, lock: mark.lock };
  return undefined;
}

/** The state after an accepted claim. */
export function advanced(claim: CheckedClaim): Watermark {
  return { lock: claim.lock, fence: claim.token, step: claim.step };
}

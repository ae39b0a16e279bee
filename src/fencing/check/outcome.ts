// How a fenced write's refusal reads in check-resource's table: the same for every adapter whose helpers
// answer with the shared Refusal shapes (src/fencing/watermark.ts) or NOT_FOUND.
import type { Refusal } from '../watermark';
import type { WriteOutcome } from './target';

/** `thing`: what the dedicated resource is (a row, a key), for the NOT_FOUND detail. */
export function refusedOutcome(o: Refusal | { status: 'NOT_FOUND'; watermark: bigint }, thing: 'row' | 'key'): WriteOutcome {
  switch (o.status) {
    case 'STALE':
      return { status: 'STALE', detail: `watermark ${o.watermark}` };
    case 'STALE_STEP':
      return { status: 'STALE_STEP', detail: `watermark ${o.watermark}, last step ${o.lastStep}` };
    case 'WRONG_LOCK':
      return { status: 'WRONG_LOCK', detail: `bound to ${o.lock}` };
    case 'NOT_FOUND':
      return { status: 'OTHER', detail: `NOT_FOUND: the ${thing} is gone (watermark ${o.watermark})` };
  }
}

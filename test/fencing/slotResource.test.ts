// The spelling of a semaphore slot's downstream resource, and the parse the checking proxy relies on: only
// the spelling slotResource produces names a slot, so `pool#02` is no other spelling of `pool#2`.
import { describe, expect, it } from 'vitest';
import { parseSlotResource, slotResource } from '../../src/protocol/fencingHeaders';

describe('slot resources', () => {
  it('round-trips every slot, also for semaphore names that hold "#" themselves', () => {
    for (const [name, slot] of [['pool', 0], ['pool/gpu', 2], ['a#b', 3], ['x#1', 1023], ['#', 9]] as const) {
      expect(parseSlotResource(slotResource(name, slot))).toEqual({ semaphore: name, slot });
    }
  });

  it('names no slot for other spellings: leading zeros, a sign, no name, no digits, beyond the permit limit', () => {
    for (const resource of ['pool#02', 'pool#+2', 'pool# 2', '#2', 'pool#', 'pool', 'pool#2 ', 'pool#10000', 'pool#١']) {
      expect(parseSlotResource(resource), resource).toBeUndefined();
    }
  });
});

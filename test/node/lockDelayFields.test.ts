// The lock-delay fields of Describe and Lock.List on a node whose wall clock is not a whole number of ms (the
// Clock port promises milliseconds, not whole ones): found by the whole-node simulator (seed 4), where
// Describe answered INTERNAL "delay_remaining_ms: not an exact integer for the wire".
import { describe, expect, it } from 'vitest';
import { delayedError, delayFields } from '../../src/node/api/lockDelayFields';

describe('lock-delay fields on a fractional wall clock', () => {
  const delay = { since: 12, delayMs: 2_000, until: 1_700_000_002_000 };

  it('regression: delay_remaining_ms is a whole number of ms, rounded up, never an internal error', () => {
    expect(delayFields(delay, 1_700_000_000_000.25)).toEqual({ delayedUntilMs: '1700000002000', delayRemainingMs: '2000' });
    expect(delayFields(delay, 1_700_000_001_999.5).delayRemainingMs).toBe('1');
    expect(delayFields(delay, 1_700_000_002_000.5).delayRemainingMs).toBe('0');
  });

  it('the LOCK_DELAYED refusal names whole ms too', () => {
    expect(delayedError('L', delay.until, 1_700_000_000_000.25).message).toMatch(/ 2000 ms from now /);
  });
});

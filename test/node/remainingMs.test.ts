// KeepAlive's remaining_ms is an int64: the leader's monotonic clock is fractional, so the time left is made a
// whole number where it is computed, and the one conversion to the wire refuses anything else (issue 31:
// String(2991.026) reached the wire as 29966480000003).
import { describe, expect, it } from 'vitest';
import { SessionLeases } from '../../src/node/runtime/sessionLeases';
import { intToWire } from '../../src/protocol/wireInt';

const TTL = 3_000;

describe('the time left on a lease', () => {
  it('is a whole number of milliseconds within (0, ttl] on a fractional clock', () => {
    let now = 1_000.123;
    const leases = new SessionLeases(() => now);
    leases.promote([], 0);
    leases.opened('s', TTL);
    now += 1_700.456; // more than half the TTL unrenewed, as before a checkpoint reset
    expect(leases.renew('s')?.remainingMs).toBe(TTL);
    for (const step of [0, 0.001, 8.974, 1_000.5, 1_990.024]) { // ends 0.501 ms before the deadline
      now += step;
      const left = leases.remaining('s')!;
      expect(Number.isInteger(left)).toBe(true);
      expect(left).toBeGreaterThan(0);
      expect(left).toBeLessThanOrEqual(TTL);
    }
  });

  it('rounds up, so that a live lease never reads 0 and reads 0 only at its deadline', () => {
    let now = 0.25;
    const leases = new SessionLeases(() => now);
    leases.promote([], 0);
    leases.opened('s', TTL);
    now += TTL - 0.5;
    expect(leases.remaining('s')).toBe(1);
    now += 0.5;
    expect(leases.remaining('s')).toBe(0);
  });
});

describe('intToWire', () => {
  it('writes exact integers as decimal strings', () => {
    expect(intToWire('remaining_ms', 2_991)).toBe('2991');
    expect(intToWire('remaining_ms', 0)).toBe('0');
    expect(intToWire('remaining_ms', Number.MAX_SAFE_INTEGER)).toBe('9007199254740991');
  });

  it('refuses a fractional, unsafe or non-finite value, naming the field', () => {
    for (const bad of [2_991.026, 0.5, 2 ** 53, Number.NaN, Infinity]) {
      expect(() => intToWire('remaining_ms', bad)).toThrow(/remaining_ms: not an exact integer/);
    }
  });
});

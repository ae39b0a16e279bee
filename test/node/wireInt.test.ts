// The wire's integers (src/protocol/wireInt.ts): 64-bit values as bigints within the 64-bit range, and the
// strict reading behind every integer field of a request (validate.safeInteger).
import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/node/api/errors';
import * as v from '../../src/node/api/validate';
import { intFromWire, intToWire } from '../../src/protocol/wireInt';

describe('intToWire with bigints', () => {
  it('writes the whole int64 and uint64 range exactly', () => {
    expect(intToWire('token', 2n ** 64n - 1n)).toBe('18446744073709551615');
    expect(intToWire('ttl_ms', -(2n ** 63n))).toBe('-9223372036854775808');
    expect(intToWire('token', 2n ** 53n + 1n)).toBe('9007199254740993');
  });

  it('refuses a bigint beyond the 64-bit range, naming the field', () => {
    expect(() => intToWire('token', 2n ** 64n)).toThrow(/token: out of the 64-bit range: 18446744073709551616/);
    expect(() => intToWire('ttl_ms', -(2n ** 63n) - 1n)).toThrow(/ttl_ms: out of the 64-bit range/);
  });
});

describe('intFromWire', () => {
  it('reads decimal strings and numbers exactly; absent is 0', () => {
    expect(intFromWire('9007199254740991')).toBe(Number.MAX_SAFE_INTEGER);
    expect(intFromWire('-5')).toBe(-5);
    expect(intFromWire(17)).toBe(17);
    expect(intFromWire(undefined)).toBe(0);
    expect(intFromWire(null)).toBe(0);
  });

  it('refuses what a number would only round or guess at', () => {
    for (const bad of ['9007199254740993', '18446744073709551615', '1.5', '1e3', '0x10', ' 1', '', 1.5, Number.NaN, true, {}]) {
      expect(intFromWire(bad)).toBeUndefined();
    }
  });

  it('is what validate reads request integers with: INVALID_ARGUMENT naming the field', () => {
    expect(v.safeInteger('ttl_ms', '30000')).toBe(30_000);
    let err: unknown;
    try {
      v.safeInteger('wait_timeout_ms', '9007199254740993');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ApiError);
    expect([(err as ApiError).code, (err as ApiError).message]).toEqual([grpc.status.INVALID_ARGUMENT, 'wait_timeout_ms: must be an integer below 2^53, got 9007199254740993']);
  });
});

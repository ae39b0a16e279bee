// The wire's integer conversions the client uses (src/protocol/wireInt.ts): exact both ways, never a rounding.
import { describe, expect, it } from 'vitest';
import { bigIntToWire, uintToWire, wireToBigInt, wireToNumber } from '../../src/protocol/wireInt';

describe('wire integers on the client side', () => {
  it('writes a non-negative exact integer as its decimal string, and refuses the rest', () => {
    expect(uintToWire('renewal_id', 0)).toBe('0');
    expect(uintToWire('renewal_id', 2 ** 53 - 1)).toBe('9007199254740991');
    for (const bad of [-1, 0.5, 2 ** 53, 1e21, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => uintToWire('renewal_id', bad), String(bad)).toThrow(/renewal_id: not a non-negative exact integer/);
    }
  });

  it('writes a bigint within 0..2^64-1, and refuses one outside', () => {
    expect(bigIntToWire(0n)).toBe('0');
    expect(bigIntToWire((1n << 64n) - 1n)).toBe('18446744073709551615');
    expect(() => bigIntToWire(-1n)).toThrow(RangeError);
    expect(() => bigIntToWire(1n << 64n)).toThrow(RangeError);
    expect(() => bigIntToWire(5 as unknown as bigint)).toThrow(TypeError);
  });

  it('reads a uint64 exactly, past 2^53, and refuses what is not one', () => {
    expect(wireToBigInt('18446744073709551615')).toBe((1n << 64n) - 1n);
    expect(wireToBigInt('9007199254740993')).toBe(9007199254740993n);
    expect(wireToBigInt('')).toBe(0n);
    expect(wireToBigInt(undefined)).toBe(0n);
    expect(wireToBigInt(7)).toBe(7n);
    for (const bad of ['18446744073709551616', '-1', '1.5', '1e3', '01', ' 1', '0x10']) {
      expect(() => wireToBigInt(bad), bad).toThrow(RangeError);
    }
    expect(() => wireToBigInt(1.5)).toThrow(RangeError);
    expect(() => wireToBigInt(-1)).toThrow(RangeError);
  });

  it('reads an int64 of milliseconds as a number', () => {
    expect(wireToNumber('3000')).toBe(3000);
    expect(wireToNumber('-5')).toBe(-5);
    expect(wireToNumber('')).toBe(0);
    expect(wireToNumber(null)).toBe(0);
    expect(wireToNumber(12)).toBe(12);
  });
});

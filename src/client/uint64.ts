/** Helpers for uint64 values: decimal strings on the wire (proto-loader `longs: String`), bigint in the API. */

export const UINT64_MAX = (1n << 64n) - 1n;

const DECIMAL = /^(0|[1-9][0-9]*)$/;

/** Parses a wire uint64 (decimal string, or a number from a hand-written peer) into a bigint. */
export function wireToBigInt(value: string | number | bigint | null | undefined): bigint {
  if (value === null || value === undefined || value === '') return 0n;
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`not a uint64: ${value}`);
    return BigInt(value);
  }
  if (!DECIMAL.test(value)) throw new RangeError(`not a decimal uint64: ${JSON.stringify(value)}`);
  const n = BigInt(value);
  if (n > UINT64_MAX) throw new RangeError(`uint64 out of range: ${value}`);
  return n;
}

/** Parses a wire int64 holding milliseconds into a number. */
export function wireToNumber(value: string | number | null | undefined): number {
  if (value === null || value === undefined || value === '') return 0;
  return typeof value === 'number' ? value : Number(value);
}

/** A bigint as a wire uint64 (decimal string); throws RangeError when outside 0..2^64-1. */
export function bigIntToWire(value: bigint): string {
  if (typeof value !== 'bigint') throw new TypeError(`expected a bigint, got ${typeof value}`);
  if (value < 0n || value > UINT64_MAX) throw new RangeError(`uint64 out of range: ${value}`);
  return value.toString(10);
}

/**
 * Strict parse of a decimal uint64 as typed by a person or passed in the environment: digits only, no sign,
 * no leading zeros, no spaces, no exponent, at most 2^64-1. Returns undefined when malformed.
 */
export function parseDecimalUint64(text: string): bigint | undefined {
  if (!DECIMAL.test(text)) return undefined;
  const n = BigInt(text);
  return n > UINT64_MAX ? undefined : n;
}

// The wire's integer conversions, shared by server and client (issue 31: one exact conversion, never a rounding).

// The widest range a wire integer can have: int64's low end to uint64's high end (2^64-1 is also in
// src/client/uint64.ts, which the fencing package ships alone: it must import nothing).
const WIRE_MIN = -(2n ** 63n);
const WIRE_MAX = 2n ** 64n - 1n;

/** The one 64-bit range check: `value` as its decimal string when within [min, 2^64-1], else a RangeError. */
function bigIntWithin(field: string, value: bigint, min: bigint, range: string): string {
  if (value < min || value > WIRE_MAX) throw new RangeError(`${field}: out of the ${range} range: ${value.toString()}`);
  return value.toString();
}

/**
 * The one conversion of a number into a wire int64/uint64 (proto-loader `longs: String`, so a decimal
 * string). protobufjs parses whatever string it is handed: String(2991.026) became 29966480000003 on the
 * wire. A value that is not an exact integer (a number within 2^53, a bigint within the 64-bit range) is a
 * bug in the caller, so this throws rather than rounding: the caller decides how to round, and tests catch
 * the rest.
 */
export function intToWire(field: string, value: number | bigint): string {
  if (typeof value === 'bigint') return bigIntWithin(field, value, WIRE_MIN, '64-bit');
  if (!Number.isSafeInteger(value)) throw new RangeError(`${field}: not an exact integer for the wire: ${String(value)}`);
  return String(value);
}

/**
 * The strict reading of a wire integer: a decimal string as proto-loader decodes int64/uint64 (or a
 * number, for 32-bit fields), as an exact number; absent is 0. Undefined when it is no integer below 2^53
 * in magnitude, which a number would only round.
 */
export function intFromWire(value: unknown): number | undefined {
  if (value === undefined || value === null) return 0;
  if (typeof value === 'string' && !/^-?[0-9]+$/.test(value)) return undefined;
  if (typeof value !== 'string' && typeof value !== 'number') return undefined;
  const n = Number(value);
  return Number.isSafeInteger(n) ? n : undefined;
}

// ----- the client's side: its numbers and bigints onto the wire, and the wire's integers back -----

const DECIMAL_UINT = /^(0|[1-9][0-9]*)$/;

/** A non-negative number as a wire uint64: exact integers only, as intToWire, and never below 0. */
export function uintToWire(field: string, value: number): string {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${field}: not a non-negative exact integer for the wire: ${String(value)}`);
  return String(value);
}

/** A bigint as a wire uint64 (decimal string); throws RangeError when outside 0..2^64-1. */
export function bigIntToWire(value: bigint, field = 'uint64'): string {
  if (typeof value !== 'bigint') throw new TypeError(`expected a bigint, got ${typeof value}`);
  return bigIntWithin(field, value, 0n, 'uint64');
}

/** A wire uint64 as a bigint: a decimal string (`longs: String`), or a number from a hand-written peer. */
export function wireToBigInt(value: string | number | bigint | null | undefined): bigint {
  if (value === null || value === undefined || value === '') return 0n;
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`not a uint64: ${value}`);
    return BigInt(value);
  }
  if (!DECIMAL_UINT.test(value)) throw new RangeError(`not a decimal uint64: ${JSON.stringify(value)}`);
  const n = BigInt(value);
  if (n > WIRE_MAX) throw new RangeError(`uint64 out of range: ${value}`);
  return n;
}

/** A wire int64 holding milliseconds (or a count) as a number; '' and absent read as 0. */
export function wireToNumber(value: string | number | null | undefined): number {
  if (value === null || value === undefined || value === '') return 0;
  return typeof value === 'number' ? value : Number(value);
}

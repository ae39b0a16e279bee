// The wire's integer conversions, shared by server and client (issue 31: one exact conversion, never a rounding).
/**
 * The one conversion of a server-side number into a wire int64/uint64 (proto-loader `longs: String`, so a
 * decimal string). protobufjs parses whatever string it is handed: String(2991.026) became 29966480000003
 * on the wire. A value that is not an exact integer within 2^53 is a bug in the caller, so this throws
 * rather than rounding: the caller decides how to round, and tests catch the rest.
 */
export function intToWire(field: string, value: number): string {
  if (!Number.isSafeInteger(value)) throw new RangeError(`${field}: not an exact integer for the wire: ${String(value)}`);
  return String(value);
}

// ----- the client's side: its numbers and bigints onto the wire, and the wire's integers back -----

/** 2^64-1. Also in src/client/uint64.ts, which the fencing package ships alone (it must import nothing). */
const UINT64_LIMIT = (1n << 64n) - 1n;

const DECIMAL_UINT = /^(0|[1-9][0-9]*)$/;

/** A non-negative number as a wire uint64: exact integers only, as intToWire, and never below 0. */
export function uintToWire(field: string, value: number): string {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${field}: not a non-negative exact integer for the wire: ${String(value)}`);
  return String(value);
}

/** A bigint as a wire uint64 (decimal string); throws RangeError when outside 0..2^64-1. */
export function bigIntToWire(value: bigint): string {
  if (typeof value !== 'bigint') throw new TypeError(`expected a bigint, got ${typeof value}`);
  if (value < 0n || value > UINT64_LIMIT) throw new RangeError(`uint64 out of range: ${value}`);
  return value.toString(10);
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
  if (n > UINT64_LIMIT) throw new RangeError(`uint64 out of range: ${value}`);
  return n;
}

/** A wire int64 holding milliseconds (or a count) as a number; '' and absent read as 0. */
export function wireToNumber(value: string | number | null | undefined): number {
  if (value === null || value === undefined || value === '') return 0;
  return typeof value === 'number' ? value : Number(value);
}

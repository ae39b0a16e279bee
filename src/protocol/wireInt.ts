// The wire's integer conversions, shared by server and client (issue 31: one exact conversion, never a rounding).

/** The widest range a wire integer can have: int64's low end to uint64's high end. */
const WIRE_MIN = -(2n ** 63n);
const WIRE_MAX = 2n ** 64n - 1n;

/**
 * The one conversion of a number into a wire int64/uint64 (proto-loader `longs: String`, so a decimal
 * string). protobufjs parses whatever string it is handed: String(2991.026) became 29966480000003 on the
 * wire. A value that is not an exact integer (a number within 2^53, a bigint within the 64-bit range) is a
 * bug in the caller, so this throws rather than rounding: the caller decides how to round, and tests catch
 * the rest.
 */
export function intToWire(field: string, value: number | bigint): string {
  if (typeof value === 'bigint') {
    if (value < WIRE_MIN || value > WIRE_MAX) throw new RangeError(`${field}: out of the 64-bit range: ${value.toString()}`);
    return value.toString();
  }
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

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

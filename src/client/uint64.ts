/**
 * uint64 values typed by a person or passed in the environment. The wire's conversions are in
 * src/protocol/wireInt.ts; this file imports nothing, because the fencing package ships it alone.
 */

export const UINT64_MAX = (1n << 64n) - 1n;

const DECIMAL = /^(0|[1-9][0-9]*)$/;

/**
 * Strict parse of a decimal uint64 as typed by a person or passed in the environment: digits only, no sign,
 * no leading zeros, no spaces, no exponent, at most 2^64-1. Returns undefined when malformed.
 */
export function parseDecimalUint64(text: string): bigint | undefined {
  if (!DECIMAL.test(text)) return undefined;
  const n = BigInt(text);
  return n > UINT64_MAX ? undefined : n;
}

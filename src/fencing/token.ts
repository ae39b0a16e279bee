// Fencing tokens outside the cluster: bigint in TypeScript, decimal text on the wire and in SQL parameters.
import { parseDecimalUint64 } from '../client/uint64';

/**
 * The largest token a downstream accepts: PostgreSQL's BIGINT is signed, so 2^63-1. fencelock's tokens are
 * Raft log indexes, capped at 2^48 (RAFT_NUMBER_LIMIT in src/raft/types.ts), far below it. A token above the
 * bound is refused, never wrapped or truncated: a wrapped token would compare as old.
 */
export const MAX_FENCING_TOKEN = (1n << 63n) - 1n;

/** Bounds of the names and ids a claim carries (they are stored in every fenced row and operation). */
export const MAX_LOCK_NAME_BYTES = 512;
export const MAX_OPERATION_ID_BYTES = 200;

/** What a writer presents to a resource: the lock it holds, its token, and which step of its work this is. */
export interface FencingClaim {
  /** The lock whose token this is; a resource bound to another lock refuses it (WRONG_LOCK). */
  lock: string;
  /** The fencing token of the grant, 1..2^63-1. */
  token: bigint;
  /**
   * The step of the holder's work under this token, 1.. (default 1). With the resource's watermark equal to the
   * token, only a higher step than the last one applied is accepted: one grant may write a resource several
   * times, in order, and never run a step twice.
   */
  step?: bigint;
  /**
   * Names the operation for retries (default `step-<step>`): a retry with the same token and operation id gets
   * the stored result of the first attempt and applies nothing.
   */
  operationId?: string;
}

/** A claim checked and completed with its defaults. */
export interface CheckedClaim {
  lock: string;
  token: bigint;
  step: bigint;
  operationId: string;
}

/** Thrown for a malformed claim (a programming or input error, not an outcome of the fence check). */
export class FencingClaimError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FencingClaimError';
  }
}

function checkPositive(what: string, n: unknown): bigint {
  if (typeof n !== 'bigint') throw new FencingClaimError(`${what} must be a bigint, got ${typeof n}`);
  if (n < 1n || n > MAX_FENCING_TOKEN) throw new FencingClaimError(`${what} must be in 1..${MAX_FENCING_TOKEN}, got ${n}`);
  return n;
}

function checkName(what: string, s: unknown, max: number): string {
  if (typeof s !== 'string' || s === '') throw new FencingClaimError(`${what} must be a non-empty string`);
  if (Buffer.byteLength(s, 'utf8') > max) throw new FencingClaimError(`${what} is longer than ${max} bytes`);
  return s;
}

export function checkClaim(c: FencingClaim): CheckedClaim {
  const token = checkPositive('token', c.token);
  const step = checkPositive('step', c.step ?? 1n);
  return {
    lock: checkName('lock', c.lock, MAX_LOCK_NAME_BYTES),
    token,
    step,
    operationId: checkName('operationId', c.operationId ?? `step-${step}`, MAX_OPERATION_ID_BYTES),
  };
}

/** Parses a token or step as sent in a header or file: decimal digits, 1..2^63-1; undefined when malformed. */
export function parseFencingNumber(text: string): bigint | undefined {
  const n = parseDecimalUint64(text.trim());
  return n === undefined || n < 1n || n > MAX_FENCING_TOKEN ? undefined : n;
}

// Request validation at the API edge: every field is checked before anything is proposed, so bad input gets
// INVALID_ARGUMENT naming the field and why, and never reaches the log.
import * as L from '../../state/limits';
import { isWellFormed, utf8ByteLength } from '../../state/text';
import type { RequestHeader__Output } from '../../protocol/generated/fencelock/v1/RequestHeader';
import { intFromWire } from '../../protocol/wireInt';
import * as grpc from '@grpc/grpc-js';
import { labelsFromRecord, labelsProblem, type SessionLabel } from '../../protocol/labels';
import { ApiError, invalidArgument } from './errors';

export interface RequestIdentity {
  clientId: string;
  requestId: number;
  ackedBelow?: number;
}

/** uint64/int64 fields arrive as decimal strings (proto-loader longs: String); anything unsafe is refused. */
export function safeInteger(field: string, v: unknown, { min = 0, max = Number.MAX_SAFE_INTEGER } = {}): number {
  const n = intFromWire(v);
  if (n === undefined) throw invalidArgument(field, `must be an integer below 2^53, got ${String(v)}`);
  if (n < min) throw invalidArgument(field, n < 0 ? `must not be negative (got ${n})` : `must be at least ${min} (got ${n})`);
  if (n > max) throw invalidArgument(field, `must be at most ${max} (got ${n})`);
  return n;
}

export function text(field: string, v: unknown, maxBytes: number, { allowEmpty = false } = {}): string {
  if (typeof v !== 'string') throw invalidArgument(field, 'is required');
  if (!allowEmpty && v.length === 0) throw invalidArgument(field, 'must not be empty');
  if (!isWellFormed(v)) throw invalidArgument(field, 'must be valid UTF-8 text');
  const bytes = utf8ByteLength(v);
  if (bytes > maxBytes) throw invalidArgument(field, `is ${bytes} bytes; the limit is ${maxBytes}`);
  return v;
}

export const lockName = (v: unknown, field = 'lock'): string => text(field, v, L.MAX_LOCK_NAME_BYTES);
export const key = (v: unknown, field = 'key'): string => text(field, v, L.MAX_KEY_BYTES);

export function sessionId(v: unknown, field = 'session_id'): string {
  if (typeof v !== 'string' || v.length === 0) throw invalidArgument(field, 'is required');
  if (!/^[0-9a-f]{32}$/.test(v)) throw invalidArgument(field, 'must be 32 lowercase hex characters, as returned by Session.Open');
  return v;
}

/** Tokens are log indexes: >= 1, and below 2^53 (no index that large can exist). */
export function token(v: unknown, field = 'token'): number {
  const n = safeInteger(field, v);
  if (n < 1) throw invalidArgument(field, 'is required (tokens start at 1)');
  return n;
}

export function header(h: RequestHeader__Output | null | undefined): RequestIdentity {
  if (!h) throw invalidArgument('header', 'is required (client_id and request_id make retries safe)');
  const clientId = text('header.client_id', h.clientId, L.MAX_CLIENT_ID_BYTES);
  const requestId = safeInteger('header.request_id', h.requestId, { min: 1 });
  const ackedBelow = safeInteger('header.acked_below', h.ackedBelow, { max: requestId });
  return ackedBelow > 0 ? { clientId, requestId, ackedBelow } : { clientId, requestId };
}

/** A session's labels (a proto map) in their sorted form; beyond a limit, INVALID_ARGUMENT naming it. */
export function labels(v: unknown, field = 'labels'): SessionLabel[] {
  if (v === undefined || v === null) return [];
  if (typeof v !== 'object' || Array.isArray(v)) throw invalidArgument(field, 'must be a map of strings to strings');
  const sorted = labelsFromRecord(v as Record<string, string>);
  const problem = labelsProblem(sorted);
  if (problem !== null) throw new ApiError(grpc.status.INVALID_ARGUMENT, problem);
  return sorted;
}

// The validation steps commands share: text, names, ids, tokens, lists. Each returns a message, or null.
import { isCaller, isTokenId } from '../auth/names';
import * as L from '../limits';
import { isSessionId, isWellFormed, utf8ByteLength } from '../text';

export type Fields = Record<string, unknown>;

export function isRecord(v: unknown): v is Fields {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function isNonNegativeInt(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
}

/** Checks a string field: well-formed, within [minBytes, maxBytes] UTF-8 bytes. */
export function checkText(v: unknown, what: string, minBytes: number, maxBytes: number): string | null {
  if (typeof v !== 'string') return `${what} must be a string`;
  if (!isWellFormed(v)) return `${what} must be well-formed Unicode`;
  const n = utf8ByteLength(v);
  if (n < minBytes) return `${what} must not be empty`;
  if (n > maxBytes) return `${what} exceeds ${maxBytes} bytes`;
  return null;
}

export function checkLockName(v: unknown): string | null {
  return checkText(v, 'lock name', 1, L.MAX_LOCK_NAME_BYTES);
}

export function checkKey(v: unknown): string | null {
  return checkText(v, 'key', 1, L.MAX_KEY_BYTES);
}

export function checkSessionId(v: unknown): string | null {
  return isSessionId(v) ? null : `sessionId must be ${L.SESSION_ID_HEX_CHARS} lowercase hex characters`;
}

export function checkToken(v: unknown): string | null {
  return isNonNegativeInt(v) && v >= 1 ? null : 'token must be an integer >= 1';
}

/** A list of 1..max items, each valid by `check`. */
export function checkList(v: unknown, name: string, max: number, check: (item: unknown) => string | null): string | null {
  if (!Array.isArray(v) || v.length < 1 || v.length > max) return `${name} must list 1..${max} items`;
  for (const item of v) {
    const problem = check(item);
    if (problem !== null) return problem;
  }
  return null;
}

/**
 * Validates clientId/requestId/ackedBelow of a request command. Returns a message, or null when valid.
 * Separate from the body's validation so that a command whose ids are valid but whose body is not still has
 * its `invalid` result stored for retries.
 */
export function validateRequestMeta(c: Fields): string | null {
  const idProblem = checkText(c.clientId, 'clientId', 0, L.MAX_CLIENT_ID_BYTES);
  if (idProblem !== null) return idProblem;
  if (c.caller !== undefined && !isCaller(c.caller)) return `caller must be 0..${L.MAX_CALLER_BYTES} printable ASCII characters`;
  if (c.callerToken !== undefined && !isTokenId(c.callerToken)) return `callerToken must be ${L.TOKEN_ID_HEX_CHARS} lowercase hex characters`;
  if (c.clientId === '') return null;
  if (!isNonNegativeInt(c.requestId) || c.requestId < 1) return 'requestId must be an integer >= 1';
  if (c.ackedBelow !== undefined) {
    if (!isNonNegativeInt(c.ackedBelow)) return 'ackedBelow must be an integer >= 0';
    if (c.ackedBelow > c.requestId) return 'ackedBelow must not exceed requestId';
  }
  return null;
}

// Stored results as snapshot formats 2 to 4 wrote them (read only: format 5 writes protobuf, resultCodec.ts).
// One case per kind of Result, fields in the order results.ts builds them. The binary form carries the
// fields whose names are in DICT; a Release that handed the lock over, a Write with its index, a refusal
// naming the lock that owns its key or its subject, an issued token and a key move have fields added after
// format 2 and were written as their JSON. The grammar:
//
//   result = byte 1 | varint n | (dstr field | value) * n     when every field name is in DICT
//          | byte 0 | str json                              the results with fields added later
//   value  = byte 0 | dstr  (string)  | byte 1 | varint (integer)  | byte 2 (false)  | byte 3 (true)
//          | byte 4 | list(dstr)  (array of strings)
//
// The reader accepts exactly what the format-4 writer wrote (so nothing else slips into a restored table).
import { Reason, freezeResult } from './results';
import type { Result } from './resultStatuses';
import { DICT_INDEX, type Reader, SnapshotError } from './snapshotWire';
import { isWellFormed } from './text';

function bad(message: string): never {
  throw new SnapshotError(message);
}

const q = (s: string): string => JSON.stringify(s);

/** Result forms. */
const R_JSON = 0;
const R_BINARY = 1;

/** Value types in the binary form. */
const V_STRING = 0;
const V_INT = 1;
const V_FALSE = 2;
const V_TRUE = 3;
const V_STRINGS = 4;

/**
 * A stored result of formats 2 to 4, frozen: the fields of its kind, in its order, with their types.
 */
export function readLegacyResult(r: Reader): Result {
  const form = r.byte();
  if (form === R_JSON) return freezeResult(readJsonResult(r.str()));
  if (form !== R_BINARY) bad('bad stored result form');
  const n = r.count(2);
  const status = getString(r, 'status');
  const fields = (count: number): void => expectFields(status, n, count);
  switch (status) {
    case 'session_opened':
      fields(3);
      return freezeResult({ status, sessionId: getString(r, 'sessionId'), ttlMs: getInt(r, 'ttlMs') });
    case 'session_ended': {
      fields(4);
      const sessionId = getString(r, 'sessionId');
      const cause = getString(r, 'cause');
      if (cause !== 'closed' && cause !== 'expired' && cause !== 'revoked') bad('bad session end cause');
      return freezeResult({ status, sessionId, cause, released: getStrings(r, 'released') });
    }
    case 'granted':
      fields(3);
      return freezeResult({ status, token: getInt(r, 'token'), newGrant: getBool(r, 'newGrant') });
    case 'waiting':
      fields(3);
      return freezeResult({ status, holderToken: getInt(r, 'holderToken'), position: getInt(r, 'position') });
    case 'held':
      fields(2);
      return freezeResult({ status, holderToken: getInt(r, 'holderToken') });
    case 'cancelled':
    case 'not_waiting':
    case 'auth_changed':
      fields(1);
      return freezeResult({ status });
    case 'released':
      fields(2);
      return freezeResult({ status, token: getInt(r, 'token') });
    case 'written':
      fields(3);
      return freezeResult({ status, token: getInt(r, 'token'), ops: getInt(r, 'ops') });
    case 'refused':
      return freezeResult(readRefused(r, n));
    case 'invalid':
      fields(2);
      return freezeResult({ status, message: getString(r, 'message') });
  }
  return bad(`a stored result with status ${q(status)}`);
}

function expectFields(status: string, n: number, count: number): void {
  if (n !== count) bad(`a stored ${status} result with ${n} fields`);
}

function readRefused(r: Reader, n: number): Result {
  if (n !== 3 && n !== 4) bad(`a stored refused result with ${n} fields`);
  const reason = getString(r, 'reason');
  if (!REASONS.has(reason)) bad(`unknown refusal reason ${q(reason)}`);
  const watermark = getInt(r, 'watermark');
  const base = { status: 'refused', reason: reason as Reason, watermark } as const;
  return n === 3 ? base : { ...base, key: getString(r, 'key') };
}

const REASONS: ReadonlySet<string> = new Set(Object.values(Reason));

/** Reads the field name, which must be `name` (a DICT number), and the type of its value. */
function getType(r: Reader, name: string): number {
  const index = DICT_INDEX.get(name);
  if (index === undefined || r.varint() !== index + 1) bad(`a stored result without its ${name}`);
  return r.byte();
}

function getField(r: Reader, name: string, type: number): void {
  if (getType(r, name) !== type) bad(`a stored result ${name} of another type`);
}

function getString(r: Reader, name: string): string {
  getField(r, name, V_STRING);
  return r.dstr();
}

function getInt(r: Reader, name: string): number {
  getField(r, name, V_INT);
  return r.varint();
}

function getBool(r: Reader, name: string): boolean {
  const t = getType(r, name);
  if (t !== V_FALSE && t !== V_TRUE) bad(`a stored result ${name} of another type`);
  return t === V_TRUE;
}

function getStrings(r: Reader, name: string): string[] {
  getField(r, name, V_STRINGS);
  return Array.from({ length: r.count(1) }, () => r.dstr());
}

/** The results written as JSON, rebuilt field by field; the text must be exactly their JSON. */
function readJsonResult(json: string): Result {
  let v: unknown;
  try {
    v = JSON.parse(json);
  } catch {
    bad('a stored result is not JSON');
  }
  const o = (typeof v === 'object' && v !== null ? v : {}) as Record<string, unknown>;
  const int = (x: unknown): number => (Number.isSafeInteger(x) && (x as number) >= 0 ? (x as number) : bad('a stored result field is not an integer'));
  let result: Result;
  if (o.status === 'released' && typeof o.nextHolder === 'string') {
    result = { status: 'released', token: int(o.token), nextHolder: o.nextHolder, nextToken: int(o.nextToken) };
  } else if (o.status === 'written' && o.index !== undefined) {
    result = { status: 'written', token: int(o.token), ops: int(o.ops), index: int(o.index) };
  } else if (o.status === 'refused' && o.owner !== undefined) {
    result = { status: 'refused', reason: ownedKeyReason(o.reason), watermark: int(o.watermark), key: wellFormed(o.key), owner: wellFormed(o.owner) };
  } else if (o.status === 'refused' && o.subject !== undefined) {
    result = { status: 'refused', reason: knownReason(o.reason), watermark: int(o.watermark), subject: wellFormed(o.subject) };
  } else if (o.status === 'auth_changed' && o.tokenId !== undefined) {
    result = { status: 'auth_changed', tokenId: wellFormed(o.tokenId) };
  } else if (o.status === 'keys_moved') {
    result = { status: 'keys_moved', moved: int(o.moved) };
  } else {
    return bad('a stored result in JSON that is not a handover, an indexed write, a refusal naming an owner or a subject, an issued token or a move');
  }
  if (JSON.stringify(result) !== json) bad('a stored result in JSON that is not canonical');
  return result;
}

/** Only a key bound to another lock names an owner (fencing.ts row 1). */
function ownedKeyReason(x: unknown): Reason {
  return x === Reason.WRONG_LOCK ? x : bad('a stored refusal names an owner but is not WRONG_LOCK');
}

function knownReason(x: unknown): Reason {
  return typeof x === 'string' && REASONS.has(x) ? (x as Reason) : bad(`unknown refusal reason ${q(String(x))}`);
}

/** A string of a stored result: well-formed, as the machine stores only those (JSON can spell lone surrogates). */
function wellFormed(x: unknown): string {
  return typeof x === 'string' && isWellFormed(x) ? x : bad('a stored result field is not a well-formed string');
}

// Results <-> StoredResult (proto/fencelock/v1/state.proto), the form snapshots store the retry table's
// answers in from format 5 on. Hand-written protobuf (src/state may not import protobufjs), driven by the
// table of statuses in resultStatuses.ts (RESULT_CODECS: each status's oneof member and its fields, in the order
// the machine builds them), so a decoded result equals the built one field for field (and as JSON).
//
// Canonical and exact: the encoder writes fields in number order, leaves proto3 defaults out (0, '', false)
// and writes an `optional` field whenever it is present; the decoder accepts only that (so a restored
// machine writes the same bytes again) and refuses a uint64 above 2^53 - 1 instead of rounding it.
import { Reason, SESSION_END_CAUSES, freezeResult, type FieldCodec, type FieldKind, type StatusCodec } from './results';
import { RESULT_CODECS, type Result, type ResultStatus } from './resultStatuses';
import { Reader, SnapshotError, Writer } from './snapshotWire';
import { isWellFormed, utf8ByteLength } from './text';

/** The statuses by their oneof field number. */
const STATUS_BY_NO: ReadonlyMap<number, ResultStatus> = new Map(Object.entries(RESULT_CODECS).map(([s, c]) => [c.no, s as ResultStatus]));

const CAUSES = SESSION_END_CAUSES;
const REASONS: ReadonlySet<string> = new Set(Object.values(Reason));

const WIRE_VARINT = 0;
const WIRE_LEN = 2;

function wireTypeOf(kind: FieldKind): number {
  return kind === 'uint' || kind === 'bool' || kind === 'cause' ? WIRE_VARINT : WIRE_LEN;
}

function bad(message: string): never {
  throw new SnapshotError(`a stored result: ${message}`);
}

// ---- encoding -------------------------------------------------------------------------------------------

function varintSize(n: number): number {
  let size = 1;
  while (n >= 0x80) {
    n = Math.floor(n / 0x80);
    size++;
  }
  return size;
}

function tagOf(no: number, wireType: number): number {
  return no * 8 + wireType;
}

/** A cause or a reason is never a default: every result of its status has one. */
function isRequired(f: FieldCodec): boolean {
  return f.kind === 'cause' || f.kind === 'reason';
}

/** A property's value as the field holds it: undefined when the field is not written. */
function present(f: FieldCodec, v: unknown): unknown {
  if (v === undefined || f.optional || isRequired(f)) return v;
  return v === 0 || v === '' || v === false ? undefined : v;
}

function checkedString(v: unknown, f: FieldCodec): string {
  if (typeof v !== 'string' || !isWellFormed(v)) bad(`${f.name} is not a well-formed string`);
  return v;
}

function checkedUint(v: unknown, f: FieldCodec): number {
  if (!Number.isSafeInteger(v) || (v as number) < 0) bad(`${f.name} is not an integer in [0, 2^53)`);
  return v as number;
}

function stringSize(no: number, s: string): number {
  const n = utf8ByteLength(s);
  return varintSize(tagOf(no, WIRE_LEN)) + varintSize(n) + n;
}

/** The encoded size of one field (0 when it is not written); checks the value. */
function fieldSize(f: FieldCodec, value: unknown): number {
  const v = present(f, value);
  if (v === undefined && isRequired(f)) bad(`${f.name} is missing`);
  if (v === undefined) return 0;
  const tag = varintSize(tagOf(f.no, wireTypeOf(f.kind)));
  switch (f.kind) {
    case 'uint':
      return tag + varintSize(checkedUint(v, f));
    case 'bool':
      if (v !== true) bad(`${f.name} is not a boolean`);
      return tag + 1;
    case 'cause':
      if (!(CAUSES as readonly unknown[]).includes(v)) bad(`${f.name} is not a session end cause`);
      return tag + 1;
    case 'reason':
      if (typeof v !== 'string' || !REASONS.has(v)) bad(`unknown refusal reason ${JSON.stringify(v)}`);
      return stringSize(f.no, v);
    case 'string':
      return stringSize(f.no, checkedString(v, f));
    case 'strings':
      if (!Array.isArray(v)) bad(`${f.name} is not a list of strings`);
      return (v as unknown[]).reduce<number>((sum, s) => sum + stringSize(f.no, checkedString(s, f)), 0);
  }
}

function codecOf(r: Result): StatusCodec {
  const c = (RESULT_CODECS as Readonly<Record<string, StatusCodec | undefined>>)[r.status];
  if (c === undefined) bad(`unknown status ${JSON.stringify(r.status)}`);
  return c;
}

/** The size of the status's message (the oneof member's body); checks every field. */
function bodySize(r: Result, c: StatusCodec): number {
  const o = r as unknown as Readonly<Record<string, unknown>>;
  const why = c.check?.(o);
  if (why !== undefined) bad(why);
  let size = 0;
  for (const f of c.fields) size += fieldSize(f, o[f.name]);
  return size;
}

function writeField(w: Writer, f: FieldCodec, value: unknown): void {
  const v = present(f, value);
  if (v === undefined) return;
  if (f.kind === 'strings') {
    for (const s of v as string[]) {
      w.varint(tagOf(f.no, WIRE_LEN));
      w.str(s);
    }
    return;
  }
  w.varint(tagOf(f.no, wireTypeOf(f.kind)));
  if (f.kind === 'uint') w.varint(v as number);
  else if (f.kind === 'bool') w.varint(1);
  else if (f.kind === 'cause') w.varint(CAUSES.indexOf(v as (typeof CAUSES)[number]) + 1);
  else w.str(v as string);
}

/**
 * Writes `r` as a length-delimited StoredResult (varint length, then the message): how a snapshot holds
 * it. Throws SnapshotError for a result the machine never builds (an unknown status or reason, a number
 * that is not an integer in [0, 2^53), a string with a lone surrogate, fields that do not go together).
 */
export function writeStoredResult(w: Writer, r: Result): void {
  writeMessage(w, r, true);
}

/** `r` as StoredResult bytes (the message alone, no length prefix). */
export function encodeResult(r: Result): Uint8Array {
  const w = new Writer(64);
  writeMessage(w, r, false);
  return w.finish();
}

function writeMessage(w: Writer, r: Result, framed: boolean): void {
  const c = codecOf(r);
  const body = bodySize(r, c);
  const tag = tagOf(c.no, WIRE_LEN);
  if (framed) w.varint(varintSize(tag) + varintSize(body) + body);
  w.varint(tag);
  w.varint(body);
  const o = r as unknown as Readonly<Record<string, unknown>>;
  for (const f of c.fields) writeField(w, f, o[f.name]);
}

// ---- decoding -------------------------------------------------------------------------------------------

/** Reads one field's value (its tag read already); checks that it is canonical. */
function readValue(r: Reader, f: FieldCodec): unknown {
  switch (f.kind) {
    case 'uint': {
      const n = r.varint();
      if (n === 0 && !f.optional) bad(`${f.name} 0 is written (a default is left out)`);
      return n;
    }
    case 'bool':
      if (r.varint() !== 1) bad(`${f.name} is not written as true`);
      return true;
    case 'cause': {
      const cause = CAUSES[r.varint() - 1];
      if (cause === undefined) bad(`unknown session end cause`);
      return cause;
    }
    case 'reason': {
      const reason = r.str();
      if (!REASONS.has(reason)) bad(`unknown refusal reason ${JSON.stringify(reason)}`);
      return reason;
    }
    case 'string':
    case 'strings': {
      const s = r.str();
      if (s === '' && f.kind === 'string' && !f.optional) bad(`${f.name} '' is written (a default is left out)`);
      return s;
    }
  }
}

function defaultOf(f: FieldCodec): unknown {
  if (f.optional) return undefined;
  if (isRequired(f)) bad(`${f.name} is missing`);
  switch (f.kind) {
    case 'uint':
      return 0;
    case 'bool':
      return false;
    case 'strings':
      return [];
    default:
      return '';
  }
}

/**
 * Reads the fields of a status's message, which ends at `end`, into `o` in the codec's order (a default for
 * each absent field that is not `optional`). Fields come in number order, a repeated one's elements together.
 */
function readFields(r: Reader, end: number, c: StatusCodec, o: Record<string, unknown>): void {
  const next = (): number => {
    if (r.position > end) bad('a field runs past its message');
    return r.position === end ? -1 : r.varint();
  };
  let tag = next();
  for (const f of c.fields) {
    const no = tag < 0 ? Infinity : Math.floor(tag / 8);
    if (no < f.no) bad(`field ${no} unknown, out of order or repeated`);
    if (no > f.no) {
      const d = defaultOf(f);
      if (d !== undefined) o[f.name] = d;
      continue;
    }
    if (tag % 8 !== wireTypeOf(f.kind)) bad(`${f.name} has wire type ${tag % 8}`);
    if (f.kind === 'strings') {
      const list: unknown[] = [];
      const own = tag;
      do {
        list.push(readValue(r, f));
        tag = next();
      } while (tag === own);
      o[f.name] = list;
    } else {
      o[f.name] = readValue(r, f);
      tag = next();
    }
  }
  if (tag >= 0) bad(`field ${Math.floor(tag / 8)} unknown, out of order or repeated`);
}

/** Reads a StoredResult that ends at `end` (frozen). */
function readMessage(r: Reader, end: number): Result {
  const tag = r.varint();
  const status = STATUS_BY_NO.get(Math.floor(tag / 8));
  if (status === undefined || tag % 8 !== WIRE_LEN) bad(`unknown oneof member ${Math.floor(tag / 8)}`);
  const c = RESULT_CODECS[status];
  const bodyEnd = r.lengthEnd();
  if (bodyEnd > end) bad('a member runs past the message');
  const o: Record<string, unknown> = { status };
  readFields(r, bodyEnd, c, o);
  if (r.position !== end) bad('more than one member');
  const why = c.check?.(o);
  if (why !== undefined) bad(why);
  return freezeResult(o as unknown as Result);
}

/** Reads a StoredResult message (the whole of `bytes`), frozen. Throws SnapshotError on anything else. */
export function decodeResult(bytes: Uint8Array): Result {
  return readMessage(new Reader(bytes), bytes.length);
}

/** Reads a length-delimited StoredResult from a snapshot (writeStoredResult's form). */
export function readStoredResult(r: Reader): Result {
  return readMessage(r, r.lengthEnd());
}

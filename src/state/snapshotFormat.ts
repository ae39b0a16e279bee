// The building blocks of the snapshot byte format (the grammar is in snapshotCodec.ts): a writer that
// encodes straight into one growing list of large chunks, a reader, the fixed string dictionary, and the
// binary form of a stored Result.
//
// Strings are short and many (a snapshot holds one per key, lock and session): the writer encodes them in
// plain JS straight into its buffer, with no TextEncoder call and no temporary array per string.
import { copyBytes } from './bytes';
import { SnapshotError } from './snapshot';
import { isSessionId, isWellFormed, utf8ByteLength } from './text';

export const MAGIC = [0x46, 0x4c, 0x53, 0x4d]; // "FLSM"

/**
 * Strings the snapshot writes as one small number (`dstr`): result field names and the values that recur
 * in stored results, and the command types. Part of the byte format: never reorder or change an entry;
 * adding one changes the bytes of states that use it, so it needs a new format version.
 */
export const DICT: readonly string[] = Object.freeze([
  // Result field names
  'status', 'token', 'newGrant', 'holderToken', 'position', 'reason', 'watermark', 'key', 'sessionId', 'ttlMs',
  'cause', 'released', 'ops', 'message',
  // Result statuses ('released' is above)
  'session_opened', 'session_ended', 'granted', 'waiting', 'held', 'cancelled', 'not_waiting', 'written', 'noop',
  'refused', 'invalid',
  // Causes
  'closed', 'expired',
  // Refusal reasons
  'STALE_TOKEN', 'LOCK_NOT_HELD', 'WRONG_LOCK', 'UNKNOWN_SESSION', 'NOT_HOLDER', 'WRONG_TOKEN', 'SESSION_EXISTS',
  'TOO_MANY_SESSIONS', 'TOO_MANY_WAITERS', 'TOO_MANY_LOCKS', 'STORE_FULL', 'REQUEST_TOO_OLD', 'REQUEST_ID_REUSED',
  // Command types
  'OpenSession', 'CloseSession', 'ExpireSession', 'Acquire', 'CancelWait', 'Release', 'Write', 'Noop',
]);

const DICT_INDEX: ReadonlyMap<string, number> = new Map(DICT.map((s, i) => [s, i]));

/** Result value types in the binary form. */
const V_STRING = 0;
const V_INT = 1;
const V_FALSE = 2;
const V_TRUE = 3;
const V_STRINGS = 4;

/** Result forms. */
const R_JSON = 0;
const R_BINARY = 1;

/** Largest size of the writer's chunks; a larger item gets a chunk of its own size. */
const WRITER_CHUNK = 1 << 20;

export class Writer {
  private readonly done: Uint8Array[] = [];
  private doneBytes = 0;
  private buf: Uint8Array;
  private pos = 0;

  constructor(firstChunk = 4096) {
    this.buf = new Uint8Array(firstChunk);
  }

  /**
   * Makes room for `n` more bytes in the current chunk (starting a new chunk if needed). The put* methods
   * write without checking: call ensure() first with a bound of what they will write.
   */
  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    if (this.pos > 0) {
      this.done.push(this.buf.subarray(0, this.pos));
      this.doneBytes += this.pos;
    }
    // Chunks double up to WRITER_CHUNK: a small state is not written into a 1 MiB buffer.
    this.buf = new Uint8Array(Math.max(n, Math.min(WRITER_CHUNK, 2 * (this.doneBytes + this.buf.length))));
    this.pos = 0;
  }

  byte(b: number): void {
    this.ensure(1);
    this.buf[this.pos++] = b;
  }

  varint(n: number): void {
    this.ensure(MAX_VARINT_BYTES);
    this.putVarint(n);
  }

  bytes(b: Uint8Array): void {
    this.varint(b.length);
    this.ensure(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  /** UTF-8 with a length prefix. Expects a well-formed string (a lone surrogate would be written as U+FFFD). */
  str(s: string): void {
    this.ensure(strBound(s));
    this.putStr(s);
  }

  /** A string from the dictionary as its number, any other as a literal. */
  dstr(s: string): void {
    const i = DICT_INDEX.get(s);
    if (i !== undefined) {
      this.varint(i + 1);
    } else {
      this.byte(0);
      this.str(s);
    }
  }

  putByte(b: number): void {
    this.buf[this.pos++] = b;
  }

  /** Needs MAX_VARINT_BYTES of room. */
  putVarint(n: number): void {
    const buf = this.buf;
    let pos = this.pos;
    if (n >= 0 && n <= 0x7fffffff && (n | 0) === n) {
      while (n >= 0x80) {
        buf[pos++] = (n & 0x7f) | 0x80;
        n >>>= 7;
      }
      buf[pos++] = n;
    } else {
      // Above 2^31 (timestamps): the low 28 bits as four groups, then the rest, in integer arithmetic.
      if (!Number.isSafeInteger(n) || n < 0) throw new SnapshotError(`cannot encode ${n} as a varint`);
      const low = n % 0x10000000;
      let high = (n - low) / 0x10000000;
      buf[pos++] = (low & 0x7f) | 0x80;
      buf[pos++] = ((low >>> 7) & 0x7f) | 0x80;
      buf[pos++] = ((low >>> 14) & 0x7f) | 0x80;
      buf[pos++] = ((low >>> 21) & 0x7f) | 0x80;
      while (high >= 0x80) {
        buf[pos++] = (high & 0x7f) | 0x80;
        high >>>= 7;
      }
      buf[pos++] = high;
    }
    this.pos = pos;
  }

  /** Needs strBound(s) of room. */
  putStr(s: string): void {
    const len = s.length;
    if (len < 43) {
      // At most 3 bytes per UTF-16 unit, so the byte length fits one varint byte: write, then patch it.
      const start = this.pos;
      this.pos = this.utf8(s, start + 1);
      this.buf[start] = this.pos - start - 1;
      return;
    }
    this.putVarint(utf8ByteLength(s));
    this.pos = this.utf8(s, this.pos);
  }

  /** Writes `s` as UTF-8 at `pos` (room reserved by the caller); returns the end. */
  private utf8(s: string, pos: number): number {
    const buf = this.buf;
    for (let i = 0; i < s.length; i++) {
      let c = s.charCodeAt(i);
      if (c < 0x80) {
        buf[pos++] = c;
      } else if (c < 0x800) {
        buf[pos++] = 0xc0 | (c >> 6);
        buf[pos++] = 0x80 | (c & 0x3f);
      } else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
        c = 0x10000 + ((c - 0xd800) << 10) + (s.charCodeAt(++i) - 0xdc00);
        buf[pos++] = 0xf0 | (c >> 18);
        buf[pos++] = 0x80 | ((c >> 12) & 0x3f);
        buf[pos++] = 0x80 | ((c >> 6) & 0x3f);
        buf[pos++] = 0x80 | (c & 0x3f);
      } else {
        if (c >= 0xd800 && c <= 0xdfff) c = 0xfffd;
        buf[pos++] = 0xe0 | (c >> 12);
        buf[pos++] = 0x80 | ((c >> 6) & 0x3f);
        buf[pos++] = 0x80 | (c & 0x3f);
      }
    }
    return pos;
  }

  /** The bytes written, in one fresh array of exactly their length. */
  finish(): Uint8Array {
    if (this.done.length === 0) return copyBytes(this.buf.subarray(0, this.pos));
    const out = new Uint8Array(this.doneBytes + this.pos);
    let at = 0;
    for (const chunk of this.done) {
      out.set(chunk, at);
      at += chunk.length;
    }
    out.set(this.buf.subarray(0, this.pos), at);
    return out;
  }
}

/** A varint of a safe integer takes at most 8 bytes. */
export const MAX_VARINT_BYTES = 8;

/** Room putStr(s) needs at most: its length prefix and 3 bytes per UTF-16 unit. */
export function strBound(s: string): number {
  return MAX_VARINT_BYTES + 3 * s.length;
}

const utf8Strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const fromCharCode = String.fromCharCode;
/** Longest string Reader.str decodes on its ASCII path (its characters go on the stack as arguments). */
const ASCII_FAST_MAX = 64;
/** Scratch for Reader.str. */
const asciiCodes: number[] = [];

export class Reader {
  private pos = 0;

  constructor(private readonly buf: Uint8Array) {}

  private need(n: number): void {
    if (this.pos + n > this.buf.length) throw new SnapshotError('truncated');
  }

  byte(): number {
    if (this.pos >= this.buf.length) throw new SnapshotError('truncated');
    return this.buf[this.pos++]!;
  }

  varint(): number {
    const first = this.byte();
    if (first < 0x80) return first;
    let n = first & 0x7f;
    let scale = 0x80;
    for (let i = 1; ; i++) {
      if (i === 8) throw new SnapshotError('varint too long');
      const b = this.byte();
      n += (b & 0x7f) * scale;
      if (b < 0x80) {
        if (b === 0) throw new SnapshotError('varint not minimal');
        break;
      }
      scale *= 0x80;
    }
    if (!Number.isSafeInteger(n)) throw new SnapshotError('varint beyond 2^53');
    return n;
  }

  /** A list count; every element takes at least `minBytes`, so a corrupt count cannot allocate much. */
  count(minBytes: number): number {
    const n = this.varint();
    if (n * minBytes > this.buf.length - this.pos) throw new SnapshotError('list longer than the input');
    return n;
  }

  /** A byte string, copied (the input may be a caller's buffer, or a view into a larger one). */
  bytes(): Uint8Array {
    const n = this.varint();
    this.need(n);
    const out = copyBytes(this.buf.subarray(this.pos, this.pos + n));
    this.pos += n;
    return out;
  }

  /** A strictly valid UTF-8 string (so always well-formed). */
  str(): string {
    const n = this.varint();
    this.need(n);
    const buf = this.buf;
    const start = this.pos;
    this.pos += n;
    if (n === 0) return '';
    if (n <= ASCII_FAST_MAX) {
      // Short ASCII (lock names, client names, most keys): String.fromCharCode over a reused array is about
      // twice as fast as a TextDecoder call and leaves no garbage (no subarray per string).
      const codes = asciiCodes;
      codes.length = n;
      let i = 0;
      for (; i < n; i++) {
        const b = buf[start + i]!;
        if (b >= 0x80) break;
        codes[i] = b;
      }
      if (i === n) return fromCharCode(...codes);
    }
    try {
      return utf8Strict.decode(buf.subarray(start, start + n));
    } catch {
      throw new SnapshotError('a string is not valid UTF-8');
    }
  }

  /**
   * A string that should be a session id (32 lowercase hex characters): the id, or undefined when it is
   * another (valid) string. Faster than str() for the common case, with no TextDecoder call.
   */
  sessionId(): string | undefined {
    const buf = this.buf;
    const p = this.pos;
    if (buf[p] !== 32 || p + 33 > buf.length) {
      const s = this.str();
      return isSessionId(s) ? s : undefined;
    }
    for (let i = p + 1; i < p + 33; i++) {
      const b = buf[i]!;
      if (!((b >= 0x30 && b <= 0x39) || (b >= 0x61 && b <= 0x66))) {
        this.str(); // consume it, validating it as a string
        return undefined;
      }
    }
    this.pos = p + 33;
    const q = p + 1;
    return fromCharCode(
      buf[q]!, buf[q + 1]!, buf[q + 2]!, buf[q + 3]!, buf[q + 4]!, buf[q + 5]!, buf[q + 6]!, buf[q + 7]!,
      buf[q + 8]!, buf[q + 9]!, buf[q + 10]!, buf[q + 11]!, buf[q + 12]!, buf[q + 13]!, buf[q + 14]!, buf[q + 15]!,
      buf[q + 16]!, buf[q + 17]!, buf[q + 18]!, buf[q + 19]!, buf[q + 20]!, buf[q + 21]!, buf[q + 22]!, buf[q + 23]!,
      buf[q + 24]!, buf[q + 25]!, buf[q + 26]!, buf[q + 27]!, buf[q + 28]!, buf[q + 29]!, buf[q + 30]!, buf[q + 31]!,
    );
  }

  /** A dictionary string: its number, or a literal that is not in the dictionary. */
  dstr(): string {
    const d = this.varint();
    if (d === 0) {
      const s = this.str();
      if (DICT_INDEX.has(s)) throw new SnapshotError('a dictionary string written as a literal');
      return s;
    }
    const s = DICT[d - 1];
    if (s === undefined) throw new SnapshotError('unknown dictionary string');
    return s;
  }

  end(): void {
    if (this.pos !== this.buf.length) throw new SnapshotError('trailing bytes');
  }
}

export function writeMagic(w: Writer): void {
  for (const b of MAGIC) w.byte(b);
}

export function readMagic(r: Reader): void {
  for (const b of MAGIC) if (r.byte() !== b) throw new SnapshotError('not a fencelock state snapshot');
}

// ---- stored results ---------------------------------------------------------------------------------------
//
// A stored Result is written in a binary form when it can be: a plain object whose fields (undefined ones
// skipped, as JSON does) all have dictionary names and hold a well-formed string, an integer in 0..2^53, a
// boolean or an array of well-formed strings. Otherwise (e.g. a field whose name is not in the dictionary,
// such as a Write's `index` or a Release's `nextHolder`/`nextToken`, which came after format 2) it is
// written as its JSON. Either way the bytes depend only on the result's JSON: the plain snapshot carries
// results as JSON, and both encoders agree.

type Fields = Record<string, unknown>;

/** Field values JSON.stringify leaves out. */
function skippedByJson(v: unknown): boolean {
  return v === undefined || typeof v === 'function' || typeof v === 'symbol';
}

/**
 * The plan of the binary form of `r` (scratch, valid until the next call): its field names, each field's
 * dictionary number (-1: left out, as JSON leaves it out) and, for a string value, the value's dictionary
 * number (-1: written as a literal).
 */
let planKeys: string[] = [];
const planNames: number[] = [];
const planValues: number[] = [];
/** The number of fields the planned binary form writes. */
let planFields = 0;

/** Plans the binary form of `r` (see planKeys): returns a bound of its size in bytes, or -1 when it cannot carry `r`. */
function planBinary(r: Fields): number {
  const keys = Object.keys(r);
  planKeys = keys;
  let n = 0;
  let bound = 1 + MAX_VARINT_BYTES;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    const v = r[k];
    if (skippedByJson(v)) {
      planNames[i] = -1;
      continue;
    }
    const name = DICT_INDEX.get(k);
    if (name === undefined) return -1;
    planNames[i] = name;
    bound += 1 + 2 * MAX_VARINT_BYTES;
    if (typeof v === 'string') {
      const code = DICT_INDEX.get(v);
      planValues[i] = code ?? -1;
      if (code === undefined) {
        if (!isWellFormed(v)) return -1;
        bound += strBound(v);
      }
    } else if (typeof v === 'number') {
      if (!Number.isSafeInteger(v) || v < 0) return -1;
    } else if (Array.isArray(v)) {
      for (const x of v as unknown[]) {
        if (typeof x !== 'string' || !isWellFormed(x)) return -1;
        bound += 1 + strBound(x);
      }
    } else if (typeof v !== 'boolean') {
      return -1;
    }
    n++;
  }
  planFields = n;
  return bound;
}

function isPlainObject(v: unknown): v is Fields {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype;
}

/** Writes the binary form of `r` as planned by planBinary (which returned `bound`). */
function writePlanned(w: Writer, r: Fields, bound: number): void {
  w.ensure(bound);
  w.putByte(R_BINARY);
  w.putVarint(planFields);
  const keys = planKeys;
  for (let i = 0; i < keys.length; i++) {
    const name = planNames[i]!;
    if (name < 0) continue;
    w.putVarint(name + 1);
    const v = r[keys[i]!];
    if (typeof v === 'string') {
      w.putByte(V_STRING);
      const code = planValues[i]!;
      if (code >= 0) {
        w.putVarint(code + 1);
      } else {
        w.putByte(0);
        w.putStr(v);
      }
    } else if (typeof v === 'number') {
      w.putByte(V_INT);
      w.putVarint(v);
    } else if (typeof v === 'boolean') {
      w.putByte(v ? V_TRUE : V_FALSE);
    } else {
      const xs = v as string[];
      w.putByte(V_STRINGS);
      w.putVarint(xs.length);
      for (const x of xs) {
        const code = DICT_INDEX.get(x);
        if (code !== undefined) {
          w.putVarint(code + 1);
        } else {
          w.putByte(0);
          w.putStr(x);
        }
      }
    }
  }
}

/** A stored result object (as the machine holds it). */
export function writeResult(w: Writer, r: object): void {
  const fields = r as Fields;
  const bound = isPlainObject(fields) ? planBinary(fields) : -1;
  if (bound >= 0) {
    writePlanned(w, fields, bound);
  } else {
    w.byte(R_JSON);
    w.str(JSON.stringify(r));
  }
}

/** The parsed JSON when the binary form carries it exactly, else undefined. */
function binaryFormOf(json: string): Fields | undefined {
  let v: unknown;
  try {
    v = JSON.parse(json);
  } catch {
    return undefined;
  }
  if (!isPlainObject(v) || planBinary(v) < 0 || JSON.stringify(v) !== json) return undefined;
  return v;
}

/** A stored result given as JSON (as the plain snapshot holds it). */
export function writeResultJson(w: Writer, json: string): void {
  const v = binaryFormOf(json);
  if (v !== undefined) {
    writePlanned(w, v, planBinary(v));
  } else {
    w.byte(R_JSON);
    w.str(json);
  }
}

/** Field values of the binary form being read (scratch; a result has few fields). */
const fieldNames: number[] = [];
const fieldValues: unknown[] = [];

/** A signature of up to 4 field names (dictionary numbers), distinct for every sequence. */
function shapeOf(names: readonly number[], n: number): number {
  let sig = 0;
  for (let i = 0; i < n; i++) sig = sig * 64 + names[i]! + 1;
  return sig;
}

const shape = (...names: string[]): number => shapeOf(names.map((x) => DICT_INDEX.get(x)!), names.length);
const S_STATUS = shape('status');
const S_TOKEN = shape('status', 'token');
const S_GRANTED = shape('status', 'token', 'newGrant');
const S_WRITTEN = shape('status', 'token', 'ops');
const S_WAITING = shape('status', 'holderToken', 'position');
const S_HELD = shape('status', 'holderToken');
const S_REFUSED = shape('status', 'reason', 'watermark');
const S_REFUSED_KEY = shape('status', 'reason', 'watermark', 'key');
const S_OPENED = shape('status', 'sessionId', 'ttlMs');
const S_ENDED = shape('status', 'sessionId', 'cause', 'released');
const S_INVALID = shape('status', 'message');

/**
 * The object of the fields just read. The shapes the machine makes are built as literals, in the order
 * results.ts builds them (so restored results share their hidden classes); any other field by field.
 */
function resultObject(n: number): Fields {
  const v = fieldValues;
  if (n <= 4 && DICT.length < 64) {
    switch (shapeOf(fieldNames, n)) {
      case S_STATUS:
        return { status: v[0] };
      case S_TOKEN:
        return { status: v[0], token: v[1] };
      case S_GRANTED:
        return { status: v[0], token: v[1], newGrant: v[2] };
      case S_WRITTEN:
        return { status: v[0], token: v[1], ops: v[2] };
      case S_WAITING:
        return { status: v[0], holderToken: v[1], position: v[2] };
      case S_HELD:
        return { status: v[0], holderToken: v[1] };
      case S_REFUSED:
        return { status: v[0], reason: v[1], watermark: v[2] };
      case S_REFUSED_KEY:
        return { status: v[0], reason: v[1], watermark: v[2], key: v[3] };
      case S_OPENED:
        return { status: v[0], sessionId: v[1], ttlMs: v[2] };
      case S_ENDED:
        return { status: v[0], sessionId: v[1], cause: v[2], released: v[3] };
      case S_INVALID:
        return { status: v[0], message: v[1] };
    }
  }
  // Names come from the dictionary only, so none is special ("__proto__") or an array index, and the object
  // keeps the written order.
  const o: Fields = {};
  for (let i = 0; i < n; i++) o[DICT[fieldNames[i]!]!] = v[i];
  return o;
}

/**
 * Reads a stored result: the binary form as a fresh object (its arrays frozen, the object not), the JSON
 * form as its JSON text (a string; parsing it is left to the caller). Throws SnapshotError on a malformed or
 * non-canonical encoding.
 */
export function readResult(r: Reader): Fields | string {
  const form = r.byte();
  if (form === R_JSON) {
    const json = r.str();
    if (binaryFormOf(json) !== undefined) throw new SnapshotError('a stored result in JSON that has a binary form');
    return json;
  }
  if (form !== R_BINARY) throw new SnapshotError('bad stored result form');
  const n = r.count(2);
  for (let i = 0; i < n; i++) {
    const name = r.varint() - 1; // names are dictionary strings, never literals
    if (name < 0 || name >= DICT.length) throw new SnapshotError('bad stored result field');
    for (let j = 0; j < i; j++) if (fieldNames[j] === name) throw new SnapshotError('a stored result field twice');
    fieldNames[i] = name;
    const t = r.byte();
    if (t === V_STRING) fieldValues[i] = r.dstr();
    else if (t === V_INT) fieldValues[i] = r.varint();
    else if (t === V_FALSE) fieldValues[i] = false;
    else if (t === V_TRUE) fieldValues[i] = true;
    else if (t === V_STRINGS) fieldValues[i] = Object.freeze(Array.from({ length: r.count(1) }, () => r.dstr()));
    else throw new SnapshotError('bad stored result value');
  }
  const o = resultObject(n);
  fieldValues.fill(undefined);
  return o;
}

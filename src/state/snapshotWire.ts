// The wire primitives of the snapshot format (the grammar is in snapshot.ts): a writer that encodes
// straight into a list of growing chunks, a reader that refuses anything malformed or non-canonical, the
// magic, and the fixed string dictionary.
//
// Strings are short and many (a snapshot holds one per key, lock and session): the writer encodes them in
// plain JS straight into its buffer, with no TextEncoder call and no temporary array per string.
import { copyBytes } from './bytes';
import { isSessionId, utf8ByteLength } from './text';

export class SnapshotError extends Error {
  constructor(message: string) {
    super(`invalid state snapshot: ${message}`);
    this.name = 'SnapshotError';
  }
}

const MAGIC = [0x46, 0x4c, 0x53, 0x4d]; // "FLSM"

/**
 * Strings the snapshot writes as one small number (`dstr`): result field names and the values that recur
 * in stored results (formats 2 to 4; format 5 stores results as protobuf, resultCodec.ts), and the command
 * types. Part of the byte format: never reorder or change an entry;
 * adding one changes the bytes of states that use it, so it needs a new format version. ('noop' and 'Noop'
 * belong to a command that no longer exists: they keep their places.)
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

/** The dictionary number of a string, undefined when it is not in DICT. */
export const DICT_INDEX: ReadonlyMap<string, number> = new Map(DICT.map((s, i) => [s, i]));

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
/* eslint-disable @typescript-eslint/no-non-null-assertion -- every index the Reader reads was checked against
   buf.length just before (need(), byte(), the explicit length check); these are the snapshot decoder's inner loops. */
export class Reader {
  private pos = 0;
  /** Character codes of the string Reader.str is decoding on its ASCII path (reused: no array per string). */
  private readonly asciiCodes: number[] = [];

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

  /** Where the reader is in its input. */
  get position(): number {
    return this.pos;
  }

  /**
   * Reads a length prefix and returns where the bytes it announces end (they all follow): for decoding a
   * nested message in place, its fields read until position reaches the end.
   */
  lengthEnd(): number {
    const n = this.varint();
    this.need(n);
    return this.pos + n;
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
      const codes = this.asciiCodes;
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

  atEnd(): boolean {
    return this.pos === this.buf.length;
  }

  end(): void {
    if (this.pos !== this.buf.length) throw new SnapshotError('trailing bytes');
  }
}
/* eslint-enable @typescript-eslint/no-non-null-assertion */

export function writeMagic(w: Writer): void {
  for (const b of MAGIC) w.byte(b);
}

export function readMagic(r: Reader): void {
  for (const b of MAGIC) if (r.byte() !== b) throw new SnapshotError('not a fencelock state snapshot');
}

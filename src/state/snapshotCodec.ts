// A small hand-written binary encoding of StateSnapshot: deterministic (the same snapshot always gives the
// same bytes: fields in a fixed order, lists in snapshot order, minimal varints) and exact (decode(encode(s))
// equals s, and encode(decode(b)) equals b for every b that decodes).
//
//   file      = magic "FLSM" | varint format | varint lastApplied | varint gcFloor
//               | list(session) | list(lock) | list(key) | list(dedupClient)
//   list(x)   = varint count | x * count
//   session   = str id | str clientName | varint ttlMs | varint openedAt | varint openIndex
//   lock      = str name | str holder | varint token | varint grantedAt | varint latestToken
//               | str latestHolder | list(str waiter)
//   key       = str key | str lock | varint watermark | byte deleted (0/1) | bytes value
//   dedupClient = str clientId | varint floor | list(varint requestId | str commandType | str resultJson)
//   str       = bytes of its UTF-8 encoding;  bytes = varint length | raw bytes
//   varint    = unsigned LEB128 of a safe integer (< 2^53), minimal length
//
// Integrity (checksums) is the storage layer's job; decoding still rejects anything malformed.
import { copyBytes } from './bytes';
import { SNAPSHOT_FORMAT, SnapshotError, type StateSnapshot } from './snapshot';
import { utf8ByteLength } from './text';

const MAGIC = [0x46, 0x4c, 0x53, 0x4d]; // "FLSM"

// Strings are short and many (a snapshot holds one per key, lock and session): encoding them in plain JS
// straight into the buffer is several times faster than TextEncoder/TextDecoder calls per string.
const utf8Strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
/** Longest ASCII string decoded with String.fromCharCode (its arguments go on the stack). */
const ASCII_FAST_PATH_MAX = 1024;

class Writer {
  private buf = new Uint8Array(4096);
  private pos = 0;

  private reserve(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
  }

  byte(b: number): void {
    this.reserve(1);
    this.buf[this.pos++] = b;
  }

  varint(n: number): void {
    if (!Number.isSafeInteger(n) || n < 0) throw new SnapshotError(`cannot encode ${n} as a varint`);
    this.reserve(8);
    while (n >= 0x80) {
      this.buf[this.pos++] = (n % 0x80) + 0x80;
      n = Math.floor(n / 0x80);
    }
    this.buf[this.pos++] = n;
  }

  bytes(b: Uint8Array): void {
    this.varint(b.length);
    this.reserve(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  /** UTF-8 of a well-formed string (a lone surrogate would be written as U+FFFD, like TextEncoder). */
  str(s: string): void {
    const n = utf8ByteLength(s);
    this.varint(n);
    this.reserve(n);
    const buf = this.buf;
    let pos = this.pos;
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
    this.pos = pos;
  }

  finish(): Uint8Array {
    return copyBytes(this.buf.subarray(0, this.pos));
  }
}

class Reader {
  private pos = 0;

  constructor(private readonly buf: Uint8Array) {}

  private need(n: number): void {
    if (this.pos + n > this.buf.length) throw new SnapshotError('truncated');
  }

  byte(): number {
    this.need(1);
    return this.buf[this.pos++]!;
  }

  varint(): number {
    let n = 0;
    let scale = 1;
    for (let i = 0; ; i++) {
      if (i === 8) throw new SnapshotError('varint too long');
      const b = this.byte();
      n += (b & 0x7f) * scale;
      if (b < 0x80) {
        if (b === 0 && i > 0) throw new SnapshotError('varint not minimal');
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

  bytes(): Uint8Array {
    const n = this.varint();
    this.need(n);
    const out = copyBytes(this.buf.subarray(this.pos, this.pos + n));
    this.pos += n;
    return out;
  }

  /** A strictly valid UTF-8 string; ASCII (the common case) without a TextDecoder call. */
  str(): string {
    const n = this.varint();
    this.need(n);
    const start = this.pos;
    const end = start + n;
    this.pos = end;
    const view = this.buf.subarray(start, end);
    if (n <= ASCII_FAST_PATH_MAX) {
      let ascii = true;
      for (let i = 0; i < n; i++) {
        if (view[i]! >= 0x80) {
          ascii = false;
          break;
        }
      }
      if (ascii) return String.fromCharCode.apply(null, view as unknown as number[]);
    }
    try {
      return utf8Strict.decode(view);
    } catch {
      throw new SnapshotError('a string is not valid UTF-8');
    }
  }

  end(): void {
    if (this.pos !== this.buf.length) throw new SnapshotError('trailing bytes');
  }
}

export function encodeSnapshot(s: StateSnapshot): Uint8Array {
  const w = new Writer();
  for (const b of MAGIC) w.byte(b);
  w.varint(s.format);
  w.varint(s.lastApplied);
  w.varint(s.gcFloor);
  w.varint(s.sessions.length);
  for (const x of s.sessions) {
    w.str(x.id);
    w.str(x.clientName);
    w.varint(x.ttlMs);
    w.varint(x.openedAt);
    w.varint(x.openIndex);
  }
  w.varint(s.locks.length);
  for (const x of s.locks) {
    w.str(x.name);
    w.str(x.holder);
    w.varint(x.token);
    w.varint(x.grantedAt);
    w.varint(x.latestToken);
    w.str(x.latestHolder);
    w.varint(x.waiters.length);
    for (const waiter of x.waiters) w.str(waiter);
  }
  w.varint(s.keys.length);
  for (const x of s.keys) {
    w.str(x.key);
    w.str(x.lock);
    w.varint(x.watermark);
    w.byte(x.deleted ? 1 : 0);
    w.bytes(x.value);
  }
  w.varint(s.dedup.length);
  for (const x of s.dedup) {
    w.str(x.clientId);
    w.varint(x.floor);
    w.varint(x.entries.length);
    for (const e of x.entries) {
      w.varint(e.requestId);
      w.str(e.commandType);
      w.str(e.result);
    }
  }
  return w.finish();
}

/**
 * Decodes a snapshot; throws SnapshotError on anything malformed in the encoding. The content (ids, order,
 * cross-references, invariants) is checked by LockStateMachine.fromSnapshot, once.
 */
export function decodeSnapshot(bytes: Uint8Array): StateSnapshot {
  const r = new Reader(bytes);
  for (const b of MAGIC) if (r.byte() !== b) throw new SnapshotError('not a fencelock state snapshot');
  const format = r.varint();
  if (format !== SNAPSHOT_FORMAT) throw new SnapshotError(`unsupported format ${format}`);
  const snapshot = {
    format,
    lastApplied: r.varint(),
    gcFloor: r.varint(),
    sessions: Array.from({ length: r.count(5) }, () => ({
      id: r.str(),
      clientName: r.str(),
      ttlMs: r.varint(),
      openedAt: r.varint(),
      openIndex: r.varint(),
    })),
    locks: Array.from({ length: r.count(7) }, () => ({
      name: r.str(),
      holder: r.str(),
      token: r.varint(),
      grantedAt: r.varint(),
      latestToken: r.varint(),
      latestHolder: r.str(),
      waiters: Array.from({ length: r.count(1) }, () => r.str()),
    })),
    keys: Array.from({ length: r.count(5) }, () => {
      const key = r.str();
      const lock = r.str();
      const watermark = r.varint();
      const flag = r.byte();
      if (flag > 1) throw new SnapshotError('bad deleted flag');
      return { key, lock, watermark, deleted: flag === 1, value: r.bytes() };
    }),
    dedup: Array.from({ length: r.count(3) }, () => ({
      clientId: r.str(),
      floor: r.varint(),
      entries: Array.from({ length: r.count(3) }, () => ({
        requestId: r.varint(),
        commandType: r.str(),
        result: r.str(),
      })),
    })),
  };
  r.end();
  return snapshot as StateSnapshot;
}

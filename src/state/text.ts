// String helpers shared by the state machine: UTF-8 sizes, well-formedness and one total order.
//
// Strings that enter the replicated state must be well-formed UTF-16 (no lone surrogates): UTF-8 cannot
// carry a lone surrogate, so such a string would not survive a snapshot round trip unchanged and replicas
// restored from a snapshot would diverge from replicas that replayed the log.

/** Number of bytes of `s` encoded as UTF-8 (a lone surrogate counts 3, as U+FFFD would). */
export function utf8ByteLength(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) {
      n += 1;
    } else if (c < 0x800) {
      n += 2;
    } else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4;
      i++;
    } else {
      n += 3;
    }
  }
  return n;
}

/** True when `s` has no lone surrogate (String.prototype.isWellFormed, which ES2022 lacks). */
export function isWellFormed(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      if (i + 1 >= s.length || (s.charCodeAt(i + 1) & 0xfc00) !== 0xdc00) return false;
      i++;
    } else if (c >= 0xdc00 && c <= 0xdfff) {
      return false;
    }
  }
  return true;
}

/**
 * Total order of well-formed strings by Unicode code point, which is also the order of their UTF-8 bytes
 * (the order etcd and LevelDB use). Plain `<` orders by UTF-16 code unit, which puts U+E000..U+FFFF after
 * astral characters.
 */
export function compareStrings(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const ca = a.charCodeAt(i);
    const cb = b.charCodeAt(i);
    if (ca !== cb) return codePointRank(ca) - codePointRank(cb);
  }
  return a.length - b.length;
}

/**
 * True when every UTF-16 unit of `s` is below U+D800. Against such a string, the native `<` (UTF-16 unit
 * order) agrees with compareStrings: the two orders differ only where the first differing units are both
 * >= U+D800 (a surrogate against U+E000..U+FFFF). Lets a binary search compare natively.
 */
export function isBelowSurrogates(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) >= 0xd800) return false;
  return true;
}

function codePointRank(unit: number): number {
  if (unit >= 0xe000) return unit - 0x800; // U+E000..U+FFFF sort before astral characters
  if (unit >= 0xd800) return unit + 0x2000; // surrogates stand for code points above U+FFFF
  return unit;
}

/** The strings of `items`, sorted by compareStrings. */
export function sortedStrings(items: Iterable<string>): string[] {
  return Array.from(items).sort(compareStrings);
}

const SESSION_ID = /^[0-9a-f]{32}$/;

/** A session id: 32 lowercase hex characters (128 bits chosen by the leader). */
export function isSessionId(s: unknown): s is string {
  return typeof s === 'string' && SESSION_ID.test(s);
}

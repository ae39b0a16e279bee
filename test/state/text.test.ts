// String helpers and the sorted key index: code point order, UTF-8 sizes, well-formedness.
import { describe, expect, it } from 'vitest';
import { compareStrings, isWellFormed, utf8ByteLength } from '../../src/state';
import { isBelowSurrogates } from '../../src/state/text';
import { KeyIndex } from '../../src/state/sortedIndex';

const samples = ['', 'a', 'ab', 'b', 'é', '\u07ff', '\u0800', '\ud7ff', '\ue000', '\uffff', '\u{10000}', '\u{1F600}', '\u{10FFFF}', 'a\u{1F600}', 'a\uffff', 'A', '~'];

function bytesCompare(a: Uint8Array, b: Uint8Array): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

describe('text', () => {
  it('compareStrings is the UTF-8 byte order', () => {
    const enc = new TextEncoder();
    for (const a of samples) {
      for (const b of samples) {
        expect(Math.sign(compareStrings(a, b)), `${JSON.stringify(a)} vs ${JSON.stringify(b)}`).toBe(
          Math.sign(bytesCompare(enc.encode(a), enc.encode(b))),
        );
      }
    }
  });

  it('utf8ByteLength agrees with TextEncoder', () => {
    for (const s of [...samples, samples.join(''), 'x'.repeat(300)]) expect(utf8ByteLength(s)).toBe(new TextEncoder().encode(s).length);
  });

  it('against a string with no unit >= U+D800, the native order agrees with compareStrings', () => {
    const low = samples.filter((s) => isBelowSurrogates(s));
    expect(low).toEqual(['', 'a', 'ab', 'b', 'é', '\u07ff', '\u0800', '\ud7ff', 'A', '~']);
    for (const a of low) {
      for (const b of samples) {
        const native = a < b ? -1 : a > b ? 1 : 0;
        expect(native, `${JSON.stringify(a)} vs ${JSON.stringify(b)}`).toBe(Math.sign(compareStrings(a, b)));
      }
    }
  });

  it('isWellFormed rejects lone surrogates', () => {
    for (const s of samples) expect(isWellFormed(s)).toBe(true);
    for (const s of ['\ud800', '\udc00', 'a\ud800b', '\udc00\ud800', '\u{1F600}'.slice(0, 1)]) expect(isWellFormed(s)).toBe(false);
  });
});

describe('SortedIndex', () => {
  const keysOf = (index: KeyIndex<{ key: string }>, from?: string): string[] => {
    const out: string[] = [];
    index.scan((r) => {
      out.push(r.key);
    }, from);
    return out;
  };

  it('keeps random inserts sorted and scans from any key', () => {
    let seed = 42;
    const rnd = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    const index = new KeyIndex<{ key: string }>();
    const reference = new Set<string>();
    for (let i = 0; i < 5_000; i++) {
      const k = `k${Math.floor(rnd() * 100_000)}${rnd() < 0.1 ? '\u{1F600}' : ''}`;
      if (reference.has(k)) continue;
      reference.add(k);
      index.insert({ key: k });
    }
    const sorted = [...reference].sort(compareStrings);
    expect(keysOf(index)).toEqual(sorted);
    expect(index.size).toBe(sorted.length);
    expect(index.last()?.key).toBe(sorted[sorted.length - 1]);
    for (const probe of ['', 'k5', 'k50000', 'k99999\u{1F600}', 'z', sorted[100]!]) {
      expect(keysOf(index, probe)).toEqual(sorted.filter((k) => compareStrings(k, probe) >= 0));
    }
    let seen = 0;
    index.scan(() => ++seen < 10);
    expect(seen).toBe(10);
  });

  it('appends in order (restore), then accepts inserts anywhere', () => {
    const index = new KeyIndex<{ key: string }>();
    for (let i = 0; i < 2_000; i++) index.append({ key: `k${String(i).padStart(5, '0')}` });
    for (const key of ['k00500x', 'a', 'z']) index.insert({ key });
    const all = keysOf(index);
    expect(all.length).toBe(2_003);
    expect([...all].sort(compareStrings)).toEqual(all);
  });
});

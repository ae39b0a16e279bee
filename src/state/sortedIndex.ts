// An index of records sorted by a string key (compareStrings order): the fenced store's prefix listing, and the
// canonical snapshot order of keys, locks and sessions, kept up to date as records come and go so that a
// snapshot never sorts.
//
// Records are kept in sorted chunks of at most 2 * CHUNK, so an insert or a removal moves at most one chunk's
// elements (splicing one flat array of 1,000,000 keys costs ~1 ms per insert), and iterating in key order
// walks the records themselves, with no lookup per key. An emptied chunk is dropped, and a small chunk is
// merged into its successor when both fit in one, so chunks stay dense whatever the history.
//
// freeze() hands out the chunks as they are, for a snapshot encoded while records keep coming and going:
// until thaw(), a chunk is copied before its first change (copy on write), so the frozen chunks stay as
// they were at the freeze and only chunks that change are copied.
import { invariant } from './invariant';
import { compareStrings, isBelowSurrogates } from './text';

/* eslint-disable @typescript-eslint/no-non-null-assertion -- chunk and record indexes here are in bounds by
   construction (non-empty chunks, binary searches within [0, length)); checks would cost in the hottest loops. */
const CHUNK = 256;

/**
 * The index; a subclass says where a record's key is (keyOf). A method rather than a function passed in: the
 * searches call it on every probe, and V8 inlines a method of a few known classes, not a function value.
 */
export abstract class SortedIndex<T> {
  private readonly chunks: T[][] = [];
  /** The last key of each chunk (searched first: a small array, mostly in cache). */
  private readonly lastKeys: string[] = [];
  private count = 0;
  /** While frozen: the chunks the frozen view shares, to be copied before they change. */
  private shared: Set<T[]> | null = null;

  /** A record's key (which never changes while it is indexed). */
  protected abstract keyOf(record: T): string;

  get size(): number {
    return this.count;
  }

  /** Inserts a record whose key is not present yet. */
  insert(record: T): void {
    this.count++;
    const key = this.keyOf(record);
    if (this.chunks.length === 0) {
      this.chunks.push([record]);
      this.lastKeys.push(key);
      return;
    }
    const native = isBelowSurrogates(key);
    const ci = Math.min(this.chunkFor(key, native), this.chunks.length - 1);
    const chunk = this.own(ci);
    const i = this.lowerBound(chunk, key, native);
    chunk.splice(i, 0, record);
    if (i === chunk.length - 1) this.lastKeys[ci] = key;
    if (chunk.length > 2 * CHUNK) {
      const moved = chunk.splice(CHUNK);
      this.chunks.splice(ci + 1, 0, moved);
      this.lastKeys.splice(ci + 1, 0, this.keyOf(moved[moved.length - 1]!));
      this.lastKeys[ci] = this.keyOf(chunk[chunk.length - 1]!);
    }
  }

  /** Removes `record` (the very object inserted); false when it is not in the index. */
  delete(record: T): boolean {
    const key = this.keyOf(record);
    const native = isBelowSurrogates(key);
    const ci = this.chunkFor(key, native);
    const found = this.chunks[ci];
    if (found === undefined) return false;
    const i = this.lowerBound(found, key, native);
    if (found[i] !== record) return false;
    const chunk = this.own(ci);
    chunk.splice(i, 1);
    this.count--;
    if (chunk.length === 0) {
      this.chunks.splice(ci, 1);
      this.lastKeys.splice(ci, 1);
      return true;
    }
    if (i === chunk.length) this.lastKeys[ci] = this.keyOf(chunk[i - 1]!);
    if (chunk.length < CHUNK / 4) {
      const next = this.chunks[ci + 1];
      if (next !== undefined && chunk.length + next.length <= CHUNK) {
        for (const r of next) chunk.push(r);
        this.chunks.splice(ci + 1, 1);
        this.lastKeys[ci] = this.lastKeys[ci + 1]!;
        this.lastKeys.splice(ci + 1, 1);
      }
    }
    return true;
  }

  /** Appends a record whose key is greater than every key present (restoring a sorted snapshot). */
  append(record: T): void {
    const key = this.keyOf(record);
    const last = this.chunks.length - 1;
    const lastChunk = this.chunks[last];
    if (lastChunk === undefined || lastChunk.length >= CHUNK) {
      this.chunks.push([record]);
      this.lastKeys.push(key);
    } else {
      this.own(last).push(record);
      this.lastKeys[last] = key;
    }
    this.count++;
  }

  first(): T | undefined {
    return this.chunks[0]?.[0];
  }

  last(): T | undefined {
    const lastChunk = this.chunks[this.chunks.length - 1];
    return lastChunk?.[lastChunk.length - 1];
  }

  /**
   * The records in key order, as consecutive chunks (for walks that want a plain loop). Read only, and only
   * until the next change of the index.
   */
  chunksInOrder(): readonly (readonly T[])[] {
    return this.chunks;
  }

  /**
   * The records in key order as they are now, as consecutive chunks that stay unchanged until thaw() while
   * the index goes on changing (copy on write). One freeze at a time.
   */
  freeze(): readonly (readonly T[])[] {
    invariant(this.shared === null, 'the index is frozen already');
    this.shared = new Set(this.chunks);
    return this.chunks.slice();
  }

  /** Ends the freeze: the frozen chunks are no longer read, and chunks change in place again. */
  thaw(): void {
    this.shared = null;
  }

  /** Chunk `ci`, copied first when a frozen view shares it. */
  private own(ci: number): T[] {
    const chunk = this.chunks[ci]!;
    if (this.shared === null || !this.shared.delete(chunk)) return chunk;
    const copy = chunk.slice();
    this.chunks[ci] = copy;
    return copy;
  }

  /**
   * Calls `visit` for each record with key >= `from` (every record when omitted), in key order, until it
   * returns false.
   */
  scan(visit: (record: T) => boolean | void, from?: string): void {
    const native = from === undefined || isBelowSurrogates(from);
    let ci = from === undefined ? 0 : this.chunkFor(from, native);
    if (ci >= this.chunks.length) return;
    let i = from === undefined ? 0 : this.lowerBound(this.chunks[ci]!, from, native);
    for (; ci < this.chunks.length; ci++, i = 0) {
      const chunk = this.chunks[ci]!;
      for (; i < chunk.length; i++) if (visit(chunk[i]!) === false) return;
    }
  }

  /**
   * Self-check: the index holds exactly the records of `map` (each under its own key), in strictly increasing
   * key order. Walks both in step while the map's insertion order is the key order (as after a restore),
   * with one lookup per record only from where they differ.
   */
  matches(map: ReadonlyMap<string, T>): boolean {
    if (map.size !== this.count) return false;
    const keys = Array.from(map.keys());
    const values = Array.from(map.values());
    let n = 0;
    let inStep = true;
    let previous: string | undefined;
    if (this.lastKeys.length !== this.chunks.length) return false;
    for (let ci = 0; ci < this.chunks.length; ci++) {
      const chunk = this.chunks[ci]!;
      if (chunk.length === 0 || this.lastKeys[ci] !== this.keyOf(chunk[chunk.length - 1]!)) return false;
      for (const r of chunk) {
        const key = this.keyOf(r);
        if (previous !== undefined && compareStrings(previous, key) >= 0) return false;
        previous = key;
        if (inStep && values[n] === r && keys[n] === key) {
          n++;
          continue;
        }
        inStep = false;
        n++;
        if (map.get(key) !== r) return false;
      }
    }
    return n === this.count;
  }

  /**
   * Index of the first chunk whose last key is >= `key` (chunks.length if none). `native`: the key has no
   * unit >= U+D800, so the native `<` orders like compareStrings (see isBelowSurrogates), and several times
   * faster than comparing unit by unit in JS.
   */
  private chunkFor(key: string, native: boolean): number {
    const lastKeys = this.lastKeys;
    let lo = 0;
    let hi = lastKeys.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const k = lastKeys[mid]!;
      if (native ? k < key : compareStrings(k, key) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Position of the first record of `xs` whose key is >= `key` (`native` as for chunkFor). */
  private lowerBound(xs: readonly T[], key: string, native: boolean): number {
    let lo = 0;
    let hi = xs.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const k = this.keyOf(xs[mid]!);
      if (native ? k < key : compareStrings(k, key) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/** An index of records that carry their key as `key` (the fenced store's). */
export class KeyIndex<T extends { readonly key: string }> extends SortedIndex<T> {
  protected keyOf(record: T): string {
    return record.key;
  }
}

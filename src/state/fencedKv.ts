// The fenced key-value store. Every key belongs to one lock (bound by its first write) and carries a
// watermark: the token of the last accepted write that touched it. A deleted key stays as a tombstone
// (value null) with its binding and watermark, so a key's watermark never goes back and a key can never
// move to another lock. Records are also kept in key order (code point order) for prefix listing.
//
// Stored values are never mutated in place: a write replaces the array. So values can be shared with
// snapshots (and a restored machine can adopt a snapshot's arrays) without copying.
import { copyBytes } from './bytes';
import { TableCapture, type TableView } from './capture';
import type { WriteOp } from './writeOps';
import { invariant } from './invariant';
import { KeyIndex } from './sortedIndex';
import { compareStrings, utf8ByteLength } from './text';

export interface KvRecord {
  readonly key: string;
  /** The lock this key belongs to (changed only by an admin's MoveKeys); with `slot`, the semaphore. */
  lock: string;
  /** Set for a key bound to a semaphore's slot (issue 33): written under a permit of `lock` in this slot. */
  slot?: number;
  /** Token of the last accepted write that touched this key. */
  watermark: number;
  /** Current value; null for a tombstone (deleted key). */
  value: Uint8Array | null;
  /** The caller of the last write that touched it, who pays for it in its quotas ('' = nobody). */
  payer: string;
}

/** What the snapshot holds of a key of the fenced store. */
export interface KeyImage {
  readonly key: string;
  readonly lock: string;
  readonly slot?: number;
  readonly watermark: number;
  readonly value: Uint8Array | null;
  readonly payer: string;
}

/** A key as queries report it. `value` is a copy; null means the key was deleted (tombstone). */
export interface KvEntry {
  key: string;
  lock: string;
  /** Set when the key is bound to a slot of the semaphore `lock`. */
  slot?: number;
  watermark: number;
  value: Uint8Array | null;
}

/** Which keys a listing returns: after `startAfter` (exclusive, for paging); tombstones only when asked. */
export interface KvListOptions {
  startAfter?: string;
  includeDeleted?: boolean;
}

/** What a write would add: new keys (first-touch order) and the change of stored bytes. */
export interface WritePlan {
  newKeys: string[];
  bytesDelta: number;
}

export class FencedKv {
  private readonly records = new Map<string, KvRecord>();
  /** The same records (tombstones included), sorted by key. */
  private readonly sorted = new KeyIndex<KvRecord>();
  /** Snapshot captures of this table (capture.ts). */
  private readonly capture = new TableCapture<KvRecord, KeyImage>(this.sorted, copyKey);
  private storedBytes = 0;
  private liveCount = 0;

  /** Keys, tombstones included. */
  get size(): number {
    return this.records.size;
  }

  /** Keys that have a value. */
  get liveKeys(): number {
    return this.liveCount;
  }

  /** Summed UTF-8 key bytes and value bytes, tombstones included. */
  get bytes(): number {
    return this.storedBytes;
  }

  record(key: string): KvRecord | undefined {
    return this.records.get(key);
  }

  get(key: string): KvEntry | undefined {
    const r = this.records.get(key);
    return r === undefined ? undefined : toEntry(r);
  }

  /** Keys starting with `prefix`, sorted, at most `limit`; live ones only unless `includeDeleted`. */
  list(prefix: string, limit: number, opts: KvListOptions = {}): KvEntry[] {
    const out: KvEntry[] = [];
    if (limit <= 0) return out;
    const { startAfter, includeDeleted = false } = opts;
    const from = startAfter !== undefined && compareStrings(startAfter, prefix) >= 0 ? startAfter : prefix;
    this.sorted.scan((r) => {
      if (!r.key.startsWith(prefix)) return false;
      if ((includeDeleted || r.value !== null) && r.key !== startAfter) out.push(toEntry(r));
      return out.length < limit;
    }, from);
    return out;
  }

  /** The records (tombstones included) in key order, read live (nothing may change while it is read). */
  view(): TableView<KvRecord, KeyImage> {
    return this.capture.view(this.size);
  }

  /** The records as they are now, readable until thaw() while writes go on. */
  freeze(): TableView<KvRecord, KeyImage> {
    return this.capture.freeze(this.size);
  }

  thaw(): void {
    this.capture.thaw();
  }

  /** The records (tombstones included), in no particular order. */
  values(): IterableIterator<KvRecord> {
    return this.records.values();
  }

  /** Calls `visit` for every record (tombstones included) in key order. */
  forEachSorted(visit: (r: KvRecord) => void): void {
    this.sorted.scan(visit);
  }

  /** What applying `ops` in order would add, without changing anything. */
  plan(ops: readonly WriteOp[]): WritePlan {
    const finalValue = new Map<string, Uint8Array | null>();
    for (const op of ops) finalValue.set(op.key, op.type === 'put' ? op.value : null);
    const newKeys: string[] = [];
    let bytesDelta = 0;
    for (const [key, value] of finalValue) {
      const r = this.records.get(key);
      if (r === undefined) {
        newKeys.push(key);
        bytesDelta += utf8ByteLength(key);
      }
      bytesDelta += (value?.length ?? 0) - (r?.value?.length ?? 0);
    }
    return { newKeys, bytesDelta };
  }

  /**
   * Applies one op of an accepted write: binds a new key to `lock`, sets the watermark to `token`, copies the
   * value (the command's buffer may be a view into a larger log buffer). Returns true for a new key.
   * `slot`: the write is under a permit of the semaphore `lock` in that slot, and binds new keys to it.
   */
  apply(op: WriteOp, lock: string, token: number, payer: string, slot?: number): boolean {
    let r = this.records.get(op.key);
    const isNew = r === undefined;
    if (r === undefined) {
      r = slot === undefined ? { key: op.key, lock, watermark: token, value: null, payer } : { key: op.key, lock, slot, watermark: token, value: null, payer };
      this.records.set(op.key, r);
      this.sorted.insert(r);
      this.storedBytes += utf8ByteLength(op.key);
    }
    invariant(r.lock === lock && r.slot === slot, `key ${JSON.stringify(op.key)} written under another lock`);
    invariant(token >= r.watermark, `watermark of ${JSON.stringify(op.key)} would go back`);
    if (!isNew) this.capture.save(r);
    r.watermark = token;
    r.payer = payer;
    this.setValue(r, op.type === 'put' ? copyBytes(op.value) : null);
    return isNew;
  }

  /** Binds the key to another lock (MoveKeys); the watermark stays. */
  move(r: KvRecord, lock: string): void {
    this.capture.save(r);
    r.lock = lock;
    delete r.slot;
  }

  /** The records (tombstones included) with `prefix`, in key order, at most `limit`. */
  recordsWithPrefix(prefix: string, limit: number): KvRecord[] {
    const out: KvRecord[] = [];
    if (limit <= 0) return out;
    this.sorted.scan((r) => {
      if (!r.key.startsWith(prefix)) return false;
      out.push(r);
      return out.length < limit;
    }, prefix);
    return out;
  }

  /**
   * Restores one key from a snapshot; keys must come in strictly increasing order. Adopts `value` without
   * copying (the caller hands it over and never mutates it).
   */
  restore(key: string, lock: string, watermark: number, value: Uint8Array | null, payer: string, slot?: number): void {
    const last = this.sorted.last();
    invariant(last === undefined || compareStrings(last.key, key) < 0, 'snapshot keys out of order');
    const r: KvRecord = slot === undefined ? { key, lock, watermark, value: null, payer } : { key, lock, slot, watermark, value: null, payer };
    this.records.set(key, r);
    this.sorted.append(r);
    this.storedBytes += utf8ByteLength(key);
    this.setValue(r, value);
  }

  private setValue(r: KvRecord, value: Uint8Array | null): void {
    if (r.value !== null) {
      this.storedBytes -= r.value.length;
      this.liveCount--;
    }
    r.value = value;
    if (value !== null) {
      this.storedBytes += value.length;
      this.liveCount++;
    }
  }

  /** Self-check for tests and the simulator: counters and order agree with the records. */
  check(): string[] {
    const problems: string[] = [];
    if (this.sorted.size !== this.records.size) problems.push('sorted key index out of step');
    let bytes = 0;
    let live = 0;
    let previous: string | undefined;
    this.sorted.scan((r) => {
      if (previous !== undefined && compareStrings(previous, r.key) >= 0) problems.push('keys not sorted');
      previous = r.key;
      if (this.records.get(r.key) !== r) problems.push(`indexed key ${JSON.stringify(r.key)} is not the stored record`);
      bytes += utf8ByteLength(r.key) + (r.value?.length ?? 0);
      if (r.value !== null) live++;
    });
    if (bytes !== this.storedBytes) problems.push(`stored bytes ${this.storedBytes} != ${bytes}`);
    if (live !== this.liveCount) problems.push(`live keys ${this.liveCount} != ${live}`);
    return problems;
  }
}

/** What a key is bound to, as a refusal names it: the lock, or `SEMAPHORE#SLOT` for a semaphore's slot. */
export function keyOwner(r: Pick<KvRecord, 'lock' | 'slot'>): string {
  return r.slot === undefined ? r.lock : `${r.lock}#${r.slot}`;
}

function copyKey(r: KvRecord): KeyImage {
  const image = { key: r.key, lock: r.lock, watermark: r.watermark, value: r.value, payer: r.payer };
  return r.slot === undefined ? image : { ...image, slot: r.slot };
}

function toEntry(r: KvRecord): KvEntry {
  const entry = { key: r.key, lock: r.lock, watermark: r.watermark, value: r.value === null ? null : copyBytes(r.value) };
  return r.slot === undefined ? entry : { ...entry, slot: r.slot };
}

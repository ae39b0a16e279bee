/**
 * Durable Raft storage on LevelDB (`level` v10 / classic-level): one atomic, fsynced batch per call.
 *
 * Key layout (keys and values are raw bytes), format "fencelock-raft-v2":
 *
 *   0x00                      format marker, value = UTF-8 "fencelock-raft-v2" (written once at creation)
 *   0x01                      hard state:        frame(HardState)
 *   0x03                      snapshot manifest: frame(SnapshotManifest{meta, dataLength, chunkCount})
 *   0x04 + uint32 BE chunk    snapshot data:     frame(chunk)      (chunks of SNAPSHOT_CHUNK_BYTES)
 *   0x05 + uint64 BE index    log segment:       frame(LogSegment) (the entries of one persisted batch, from
 *                                                                    that index on; see ./segments.ts)
 *
 * frame(x) = crc32(x) as uint32 BE followed by x (the protobuf encoding of proto/fencelock/v1/raft.proto
 * records, or raw snapshot bytes). LevelDB does not verify block checksums on reads by default, so the
 * checksum is what turns a flipped bit into a StorageCorruptError instead of a wrong entry. Big-endian
 * indexes make iteration follow the log.
 *
 * Format "fencelock-raft-v1" kept one value per entry (0x02 + uint64 BE index); a v1 store is converted to
 * v2 when it is opened, in one synced batch (./migrateV1.ts), so a node upgraded in place keeps its log.
 *
 * Semantics of persist/saveSnapshot: see ./logic.ts (shared with MemoryStorage). All calls (load included)
 * run one at a time in call order, so batches land in order. A failed write poisons the instance
 * (StorageFailedError for every later call): the durable state is unknown and must be re-read by reopening.
 */
import * as fs from 'fs';
import * as path from 'path';
import { Level } from 'level';
import {
  CodecError,
  decodeHardState,
  decodeLogSegment,
  decodeSnapshotManifest,
  encodeHardState,
  encodeLogSegment,
  encodeSnapshotManifest,
} from '../codec/raftCodec';
import type { Entry, HardState, PersistedState, Snapshot } from '../raft/types';
import { frame, unframe } from './checksum';
import { StorageFailedError, StorageLockedError } from './errors';
import { indexKey, indexOfKey, INDEX_KEY_LENGTH, type BatchOp, type PutOp } from './keys';
import { migrateV1Store, V1_FORMAT_MARKER } from './migrateV1';
import { applySegments, planSegments, segmentOf, type SegmentRef } from './segments';
import {
  checkEntries,
  checkHardState,
  checkSnapshot,
  EMPTY_HARD_STATE,
  emptyLogState,
  planPersist,
  planSaveSnapshot,
  termsNeededForPersist,
  verifyPersistedState,
  type LogState,
  type Plan,
} from './logic';
import { StorageCorruptError, type PersistBatch, type RaftStorage } from './types';

export const FORMAT_MARKER = 'fencelock-raft-v2';
/** Snapshot data is stored in chunks of this size (LevelDB handles large values poorly). */
export const SNAPSHOT_CHUNK_BYTES = 1024 * 1024;

const P_MARKER = 0x00;
const P_HARD_STATE = 0x01;
const P_SNAPSHOT_MANIFEST = 0x03;
const P_SNAPSHOT_CHUNK = 0x04;
const P_SEGMENT = 0x05;

const KEY_MARKER = Uint8Array.of(P_MARKER);
const KEY_HARD_STATE = Uint8Array.of(P_HARD_STATE);
const KEY_SNAPSHOT_MANIFEST = Uint8Array.of(P_SNAPSHOT_MANIFEST);
const MARKER_VALUE = new TextEncoder().encode(FORMAT_MARKER);
const CHUNK_KEY_LENGTH = 5;

/** Files LevelDB may leave behind when it was interrupted before creating a database (no data possible). */
const PRE_CREATION_FILES = new Set(['LOCK', 'LOG', 'LOG.old']);

/** Key of the segment whose first entry is `index`. */
export function segmentKey(index: number): Uint8Array {
  return indexKey(P_SEGMENT, index);
}

function chunkKey(chunk: number): Uint8Array {
  const key = Buffer.allocUnsafe(CHUNK_KEY_LENGTH);
  key[0] = P_SNAPSHOT_CHUNK;
  key.writeUInt32BE(chunk, 1);
  return key;
}

function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** The entries of one persist, captured at call time, and their segment value when all of them are stored. */
interface PreparedEntries {
  entries: Entry[];
  value: Uint8Array | undefined;
}

type Db = Level<Uint8Array, Uint8Array>;

export class LevelStorage implements RaftStorage {
  private state: LogState = emptyLogState();
  /** The stored segments, ascending (see ./segments.ts). */
  private segments: SegmentRef[] = [];
  /** Chunks of the stored snapshot (to delete the surplus when a smaller snapshot replaces it). */
  private chunkCount = 0;
  /** The stored state has been read and verified since open (required before any write). */
  private verified = false;
  private tail: Promise<unknown> = Promise.resolve();
  private failure: Error | undefined;
  private closing: Promise<void> | undefined;
  private closed = false;

  private constructor(
    /** Absolute path of the LevelDB directory. */
    readonly dir: string,
    private readonly db: Db,
  ) {}

  /**
   * Opens (or creates) the store in `dir`.
   * - `dir` missing or empty: a new store is created (empty state).
   * - `dir` holds a fencelock LevelDB store: opened.
   * - anything else (foreign files, a LevelDB store of another application, an unreadable store):
   *   StorageCorruptError; a store locked by another process/instance: StorageLockedError. Never a silent
   *   empty log over existing content.
   */
  static async open(dir: string): Promise<LevelStorage> {
    const abs = path.resolve(dir);
    const fresh = await classifyDirectory(abs);
    // The log holds session ids (bearer secrets): only the node's own user may read the folder.
    if (fresh) await fs.promises.mkdir(abs, { recursive: true, mode: 0o700 });
    await fs.promises.chmod(abs, 0o700);
    const db: Db = new Level<Uint8Array, Uint8Array>(abs, {
      keyEncoding: 'view',
      valueEncoding: 'view',
      createIfMissing: fresh,
      errorIfExists: false,
    });
    try {
      await db.open();
    } catch (err) {
      throw translateOpenError(abs, err);
    }
    try {
      const marker = await db.get(KEY_MARKER);
      if (marker === undefined) {
        // A store we just created (or whose creation was interrupted before the marker) holds no keys.
        for await (const key of db.keys({ limit: 1 })) {
          throw new StorageCorruptError(
            `${abs}: LevelDB store without the "${FORMAT_MARKER}" marker holds data (first key ` +
              `${Buffer.from(key).toString('hex')}): not a fencelock Raft store, refusing to use it`,
          );
        }
        await db.put(KEY_MARKER, MARKER_VALUE, { sync: true });
      } else if (Buffer.from(marker).toString('utf8') === V1_FORMAT_MARKER) {
        await migrateV1Store(db, abs, { marker: { key: KEY_MARKER, value: MARKER_VALUE }, segment: segmentPut });
      } else if (!bytesEqual(marker, MARKER_VALUE)) {
        throw new StorageCorruptError(
          `${abs}: unsupported storage format marker "${Buffer.from(marker).toString('utf8')}", expected "${FORMAT_MARKER}"`,
        );
      }
    } catch (err) {
      await db.close().catch(() => undefined);
      throw err;
    }
    return new LevelStorage(abs, db);
  }

  load(): Promise<PersistedState> {
    return this.enqueue(() => this.readAll());
  }

  persist(batch: PersistBatch): Promise<void> {
    // Capture and encode now: the caller may reuse its arrays once this returns; the write happens later.
    let prepared: PreparedEntries;
    let hardState: HardState | undefined;
    let snapshot: Snapshot | undefined;
    try {
      checkEntries(batch.entries);
      if (batch.snapshot) checkSnapshot(batch.snapshot, 'batch.snapshot');
      if (batch.hardState) checkHardState(batch.hardState);
      const entries = batch.entries.map((e) => ({ index: e.index, term: e.term, type: e.type, data: e.data }));
      prepared = { entries, value: entries.length > 0 ? segmentValue(entries) : undefined };
      hardState = batch.hardState ? { ...batch.hardState } : undefined;
      snapshot = batch.snapshot;
    } catch (err) {
      return Promise.reject(err);
    }
    const snapshotOps = snapshot ? this.snapshotValues(snapshot) : undefined;
    return this.enqueue(async () => {
      await this.ensureVerified();
      const { entries } = prepared;
      const needed = termsNeededForPersist(this.state, { entries, snapshot });
      const terms = await this.fetchTerms(needed);
      const plan = planPersist(this.state, { entries, snapshot, hardState }, (i) => lookup(terms, i));
      // Entries at or below a snapshot in the same batch are skipped: their segment is encoded again.
      const value = plan.puts.length === entries.length ? prepared.value : undefined;
      await this.write(plan, { cutFrom: cutFromOf(plan, this.state), dropAll: snapshot !== undefined }, value, snapshotOps);
    });
  }

  saveSnapshot(snapshot: Snapshot): Promise<void> {
    try {
      checkSnapshot(snapshot, 'snapshot');
    } catch (err) {
      return Promise.reject(err);
    }
    const snapshotOps = this.snapshotValues(snapshot);
    return this.enqueue(async () => {
      await this.ensureVerified();
      const s = snapshot.meta.index;
      const inside = s > this.state.snapIndex && s < this.state.lastIndex;
      const terms = await this.fetchTerms(inside ? [s] : []);
      const plan = planSaveSnapshot(this.state, snapshot, (i) => lookup(terms, i));
      await this.write(plan, { cutFrom: Infinity, dropAll: false }, undefined, snapshotOps);
    });
  }

  /** Waits for queued calls, then closes the database. Idempotent. */
  close(): Promise<void> {
    if (!this.closing) {
      const done = this.tail.then(() => {
        this.closed = true;
        return this.db.close();
      });
      this.closing = done;
      this.tail = done.catch(() => undefined);
    }
    return this.closing;
  }

  // -------------------------------------------------------------------------------------------------------

  private enqueue<T>(fn: () => Promise<T>): Promise<T> {
    const run = async (): Promise<T> => {
      if (this.closed) throw new Error(`storage at ${this.dir} is closed`);
      if (this.failure) {
        throw new StorageFailedError(`storage at ${this.dir} failed earlier: ${this.failure.message}`, { cause: this.failure });
      }
      return fn();
    };
    const p = this.tail.then(run);
    this.tail = p.catch(() => undefined);
    return p;
  }

  private async ensureVerified(): Promise<void> {
    if (!this.verified) await this.readAll();
  }

  /** The snapshot's chunk values, framed (computed at call time; the data is copied into them). */
  private snapshotValues(snapshot: Snapshot): { chunks: Uint8Array[]; manifest: Uint8Array } {
    const data = snapshot.data;
    const chunks: Uint8Array[] = [];
    for (let off = 0; off < data.length; off += SNAPSHOT_CHUNK_BYTES) {
      chunks.push(frame(data.subarray(off, Math.min(off + SNAPSHOT_CHUNK_BYTES, data.length))));
    }
    const manifest = frame(encodeSnapshotManifest({ meta: snapshot.meta, dataLength: data.length, chunkCount: chunks.length }));
    return { chunks, manifest };
  }

  /**
   * Executes a plan as one synced batch, then adopts its resulting state. The plan's puts become one
   * segment (`putValue`: their encoding, when already made); `cut` says which stored segments go.
   */
  private async write(
    plan: Plan<Entry>,
    cut: { cutFrom: number; dropAll: boolean },
    putValue: Uint8Array | undefined,
    snapshotOps: { chunks: Uint8Array[]; manifest: Uint8Array } | undefined,
  ): Promise<void> {
    const changes = planSegments(this.segments, plan.next.snapIndex, cut.cutFrom, cut.dropAll);
    const ops: BatchOp[] = changes.deletes.map((first) => ({ type: 'del', key: segmentKey(first) }));
    if (changes.truncate) {
      const { segment, keepBelow } = changes.truncate;
      const kept = (await this.readSegment(segment)).filter((e) => e.index < keepBelow);
      ops.push(segmentPut(kept));
    }
    const head = plan.puts[0];
    const tail = plan.puts.at(-1);
    if (head !== undefined && tail !== undefined) {
      ops.push({ type: 'put', key: segmentKey(head.index), value: putValue ?? segmentValue(plan.puts) });
    }
    if (plan.hardState) ops.push({ type: 'put', key: KEY_HARD_STATE, value: frame(encodeHardState(plan.hardState)) });
    let chunkCount = this.chunkCount;
    if (plan.snapshot && snapshotOps) {
      const { chunks, manifest } = snapshotOps;
      for (const [c, chunk] of chunks.entries()) ops.push({ type: 'put', key: chunkKey(c), value: chunk });
      for (let c = chunks.length; c < this.chunkCount; c++) ops.push({ type: 'del', key: chunkKey(c) });
      ops.push({ type: 'put', key: KEY_SNAPSHOT_MANIFEST, value: manifest }); // last: describes the chunks above
      chunkCount = chunks.length;
    }
    if (ops.length > 0) {
      try {
        await this.db.batch(ops, { sync: true });
      } catch (err) {
        this.failure = err as Error;
        throw new StorageFailedError(`storage at ${this.dir}: synced write failed: ${(err as Error).message}`, { cause: err });
      }
    }
    this.state = plan.next;
    applySegments(this.segments, changes);
    if (head !== undefined && tail !== undefined) this.segments.push({ first: head.index, last: tail.index });
    this.chunkCount = chunkCount;
  }

  /** The entries of a stored segment. */
  private async readSegment(segment: SegmentRef): Promise<Entry[]> {
    const value = await this.db.get(segmentKey(segment.first));
    if (value === undefined) throw this.corrupt(`the segment of entries ${segment.first}..${segment.last} is missing`);
    const entries = this.decodeSegment(segment.first, value);
    const last = entries.at(-1)?.index;
    if (last !== segment.last) throw this.corrupt(`the segment from ${segment.first} ends at ${last}, expected ${segment.last}`);
    return entries;
  }

  /** Terms of stored entries (used only in the rare truncation/snapshot cases). */
  private async fetchTerms(indexes: number[]): Promise<Map<number, number>> {
    const terms = new Map<number, number>();
    for (const i of indexes) {
      const segment = segmentOf(this.segments, i);
      if (segment === undefined) throw this.corrupt(`no segment holds entry ${i} (log should hold ${this.state.snapIndex + 1}..${this.state.lastIndex})`);
      const entry = (await this.readSegment(segment)).find((e) => e.index === i);
      if (entry === undefined) throw this.corrupt(`entry ${i} is missing from its segment`);
      terms.set(i, entry.term);
    }
    return terms;
  }

  private corrupt(msg: string): StorageCorruptError {
    return new StorageCorruptError(`corrupt Raft storage at ${this.dir}: ${msg}`);
  }

  private decodeFramed<T>(what: string, value: Uint8Array, decode: (b: Uint8Array) => T): T {
    const payload = unframe(value);
    if (!payload) throw this.corrupt(`${what}: checksum mismatch or truncated value (${value.length} bytes)`);
    try {
      return decode(payload);
    } catch (err) {
      if (err instanceof CodecError) throw this.corrupt(`${what}: ${err.message}`);
      throw err;
    }
  }

  /** Decodes a segment stored under `first`: non-empty, contiguous, starting at `first`. */
  private decodeSegment(first: number, value: Uint8Array): Entry[] {
    const what = `segment ${first}`;
    const entries = this.decodeFramed(what, value, decodeLogSegment);
    if (entries.length === 0) throw this.corrupt(`${what} holds no entries`);
    let expected = first;
    for (const e of entries) {
      if (e.index !== expected) throw this.corrupt(`${what} holds entry ${e.index} where entry ${expected} belongs`);
      expected++;
    }
    return entries;
  }

  /**
   * The entries after the snapshot, from the stored segments in key order. A segment may straddle the
   * snapshot index (compaction keeps it); one wholly at or below it should have been deleted with it.
   */
  private liveEntries(stored: Entry[][], snapIndex: number): { entries: Entry[]; segments: SegmentRef[] } {
    const entries: Entry[] = [];
    const segments: SegmentRef[] = [];
    for (const segment of stored) {
      const first = segment[0];
      const last = segment.at(-1);
      if (first === undefined || last === undefined) continue; // decodeSegment refuses empty ones
      if (last.index <= snapIndex) {
        throw this.corrupt(`segment ${first.index}..${last.index} lies wholly at or below the snapshot at ${snapIndex}`);
      }
      segments.push({ first: first.index, last: last.index });
      for (const e of segment) if (e.index > snapIndex) entries.push(e);
    }
    return { entries, segments };
  }

  /** Reads and verifies everything in one pass over the key space; adopts the verified bounds. */
  private async readAll(): Promise<PersistedState> {
    let hardState: HardState = { ...EMPTY_HARD_STATE };
    let manifest: ReturnType<typeof decodeSnapshotManifest> | undefined;
    const chunks: Uint8Array[] = [];
    const stored: Entry[][] = [];
    let sawMarker = false;
    for await (const [key, value] of this.db.iterator()) {
      const prefix = key[0];
      if (prefix === P_SEGMENT && key.length === INDEX_KEY_LENGTH) {
        stored.push(this.decodeSegment(indexOfKey(key), value));
      } else if (prefix === P_SNAPSHOT_CHUNK && key.length === CHUNK_KEY_LENGTH) {
        const n = Buffer.from(key.buffer, key.byteOffset, key.byteLength).readUInt32BE(1);
        if (n !== chunks.length) throw this.corrupt(`snapshot chunk ${n} found where chunk ${chunks.length} was expected`);
        const payload = unframe(value);
        if (!payload) throw this.corrupt(`snapshot chunk ${n}: checksum mismatch or truncated value`);
        chunks.push(payload);
      } else if (key.length === 1 && prefix === P_HARD_STATE) {
        hardState = this.decodeFramed('hard state', value, decodeHardState);
      } else if (key.length === 1 && prefix === P_SNAPSHOT_MANIFEST) {
        manifest = this.decodeFramed('snapshot manifest', value, decodeSnapshotManifest);
      } else if (key.length === 1 && prefix === P_MARKER) {
        if (!bytesEqual(value, MARKER_VALUE)) throw this.corrupt('format marker changed');
        sawMarker = true;
      } else {
        throw this.corrupt(`unexpected key ${Buffer.from(key).toString('hex')}`);
      }
    }
    if (!sawMarker) throw this.corrupt(`the "${FORMAT_MARKER}" marker is missing`);

    let snapshot: Snapshot | undefined;
    if (manifest) {
      if (chunks.length !== manifest.chunkCount) {
        throw this.corrupt(`snapshot at ${manifest.meta.index} should have ${manifest.chunkCount} data chunks, found ${chunks.length}`);
      }
      const data = new Uint8Array(manifest.dataLength);
      let off = 0;
      for (const c of chunks) {
        if (off + c.length > data.length) throw this.corrupt(`snapshot data is longer than ${manifest.dataLength} bytes`);
        data.set(c, off);
        off += c.length;
      }
      if (off !== data.length) throw this.corrupt(`snapshot data is ${off} bytes, expected ${manifest.dataLength}`);
      snapshot = { meta: manifest.meta, data };
    } else if (chunks.length > 0) {
      throw this.corrupt(`${chunks.length} snapshot data chunks without a snapshot manifest`);
    }

    const { entries, segments } = this.liveEntries(stored, snapshot?.meta.index ?? 0);
    const loaded: PersistedState = { hardState, snapshot, entries };
    this.state = verifyPersistedState(loaded, `corrupt Raft storage at ${this.dir}`);
    this.segments = segments;
    this.chunkCount = chunks.length;
    this.verified = true;
    return loaded;
  }
}

/** The segment value of consecutive entries. */
function segmentValue(entries: readonly Entry[]): Uint8Array {
  return frame(encodeLogSegment(entries));
}

function segmentPut(entries: readonly Entry[]): PutOp {
  const first = entries[0];
  if (first === undefined) throw new Error('internal: an empty segment');
  return { type: 'put', key: segmentKey(first.index), value: segmentValue(entries) };
}

/**
 * The first index whose stored entry a persist replaces (its first entry) or truncates (a suffix deleted by
 * the plan); Infinity when it only appends.
 */
function cutFromOf(plan: Plan<Entry>, before: LogState): number {
  let cut = plan.puts[0]?.index ?? Infinity;
  for (const [from] of plan.deletes) if (from > before.snapIndex) cut = Math.min(cut, from);
  return cut;
}

function lookup(terms: Map<number, number>, index: number): number {
  const t = terms.get(index);
  if (t === undefined) throw new Error(`internal: term of entry ${index} was not fetched`);
  return t;
}

/** true: start a new store here; false: open the existing LevelDB store. Throws for foreign content. */
async function classifyDirectory(abs: string): Promise<boolean> {
  let stat: fs.Stats;
  try {
    stat = await fs.promises.stat(abs);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return true;
    throw new Error(`cannot access storage directory ${abs}: ${(err as Error).message}`, { cause: err });
  }
  if (!stat.isDirectory()) throw new StorageCorruptError(`storage path ${abs} exists and is not a directory`);
  const names = await fs.promises.readdir(abs);
  if (names.length === 0) return true;
  if (names.includes('CURRENT')) return false;
  if (names.every((n) => PRE_CREATION_FILES.has(n))) return true;
  const shown = names.slice(0, 5).join(', ') + (names.length > 5 ? `, ... (${names.length} files)` : '');
  throw new StorageCorruptError(
    `storage directory ${abs} is not empty and is not a LevelDB store (no CURRENT file; found ${shown}): ` +
      'refusing to start with an empty log over foreign content',
  );
}

function translateOpenError(abs: string, err: unknown): Error {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  const detail = cause?.message ?? (err as Error).message;
  if (cause?.code === 'LEVEL_LOCKED') {
    return new StorageLockedError(`storage directory ${abs} is locked by another process or open instance: ${detail}`, { cause: err });
  }
  if (cause?.code === 'LEVEL_CORRUPTION') {
    return new StorageCorruptError(`storage directory ${abs} holds a damaged LevelDB store: ${detail}`);
  }
  // Foreign or damaged files (e.g. a garbage CURRENT), or an I/O/permission problem: say so, do not guess.
  return new Error(`storage directory ${abs} cannot be opened as a LevelDB store: ${detail}`, { cause: err });
}

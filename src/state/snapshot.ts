// The state machine's tables to snapshot bytes and back (format 9), with no intermediate form: the
// encoder walks the tables in their kept order (sessions by id, locks by name, keys by key: nothing is
// sorted), and the decoder checks everything as it goes and builds the records directly (session ids are
// decoded once; a lock's holder, latest holder and waiters are the session records themselves).
//
// The bytes are deterministic (the same state always gives the same bytes: fields in a fixed order, minimal
// varints, one canonical choice wherever the grammar offers two) and exact (a machine restored from bytes
// writes those bytes again). Nodes keep them on disk and send them to followers: never change them without a
// new format number. test/state/snapshotOracle.ts is a second, plain encoder of the same grammar.
//
//   file        = magic "FLSM" | varint format (9) | varint lastApplied | varint gcFloor
//                 | list(session) | list(lock) | list(key) | list(dedupClient) | auth | semaphores
//   list(x)     = varint count | x * count
//   session     = str id | str clientName | varint ttlMs | varint openedAt | varint openIndex
//                 | varint remainingMs (its lease checkpoint, <= ttlMs) | str owner (its caller, '' = none)
//                 | list(str key | str value) (its labels, sorted by key: src/protocol/labels.ts)
//   lock        = str name | sref holder | varint token | varint grantedAt | varint latestToken
//                 | sref latestHolder | list(waiter)
//                 | varint lockDelayMs (held: the grant's lock-delay; delayed: the delay in force; else 0)
//                 | varint delayedSince (index of the entry that started the delay in force, 0 = none)
//                 | varint delayedUntil (when it ends by that leader's clock, 0 = none)
//                 | list(sharer) (the shared grants, in grant order)
//   waiter      = sref session | varint since (the `now` of the Acquire entry that queued it)
//                 | varint lockDelayMs (the lock-delay it asked for, 0 = none)
//                 | varint mode (0 exclusive, 1 shared, 2 one waiter of an AcquireAll: then str the name
//                   of the first lock of its set, in name order; multiSnapshot.ts)
//   sharer      = sref session | varint token | varint grantedAt
//   sref        = varint: 0 = '' | 1 then str = an id that is none of the sessions' | 2 + i = id of session i
//   key         = str key | lref lock | varint watermark | byte deleted (0/1) | bytes value
//                 | str payer (the caller it counts for, '' = none)
//   lref        = varint: 0 then str semaphore | varint slot = a key bound to a semaphore's slot (format 9;
//                 before 9 a name that is none of the locks', refused) | 1 + i = name of lock i
//   dedupClient = str caller | str clientId | varint floor | list(varint requestId | dstr commandType | result)
//   result      = bytes: a StoredResult message (proto/fencelock/v1/state.proto), written canonically
//                 by resultCodec.ts (fields in number order, proto3 defaults left out)
//   auth        = the auth table (users, roles, tokens), sorted: see auth/authSnapshot.ts
//   semaphores  = list(semaphore): see semaphoreSnapshot.ts
//   dstr, str, bytes, varint: see snapshotWire.ts
//
// Older formats are still read, and converted as they are: their results become the same Result objects,
// which this version writes as format 9. Format 8 (before read-write locks and semaphores): no shared byte in a
// waiter, no sharer list in a lock (every grant and wait exclusive) and no semaphore section (none). Format 7 (before lock-delays): no lock-delay fields in a lock or a
// waiter (all 0: no delay). Format 6 (before wait times): a waiter is its sref alone, and its
// wait time is then unknown (0). Format 5 (before session labels): format 6 without the labels list (none).
// Format 4 (before protobuf results): each result is a dictionary
// form or its JSON (legacyResults.ts). Format 3 (before auth): no session owner, key payer or dedup caller (all
// ''), no auth section (auth off). Format 2 (before lease checkpoints): format 3 without remainingMs, which
// is then the TTL.
//
// A snapshot names sessions and locks by position: a 32-character id once instead of up to three times per
// lock. Integrity (checksums) is the storage layer's job; decoding still rejects anything malformed.
import { readAuth, readCaller, writeAuth } from './auth/authSnapshot';
import type { AuthImage, AuthTable } from './auth/authTable';
import type { TableView } from './capture';
import { isCommandType, type CommandType } from './commands';
import type { DedupEntry, DedupTable, DedupView } from './dedup';
import type { FencedKv, KeyImage, KvRecord } from './fencedKv';
import { InvariantError, invariant } from './invariant';
import type { LockImage, LockTable } from './locks';
import { labelsProblem, type SessionLabel, type SessionLabels } from '../protocol/labels';
import { NO_LABELS, addHeld, addSharing, addWaiter, addWaiting, hasWaiter, newLockRecord, newSession, type LockRecord, type Session, type SessionImage } from './records';
import { readLegacyResult } from './legacyResults';
import type { Result } from './resultStatuses';
import { readStoredResult, writeStoredResult } from './resultCodec';
import { SetCollector, firstOf, WAITER_EXCLUSIVE, WAITER_IN_SET, WAITER_SHARED } from './multiSnapshot';
import { readSemaphores, writeSemaphores } from './semaphoreSnapshot';
import type { SemaphoreImage, SemaphoreTable } from './semaphores';
import type { SessionTable } from './sessions';
import { MAX_LOCK_DELAY_MS, MAX_PERMITS } from './limits';
import { MAX_VARINT_BYTES, Reader, SnapshotError, Writer, readMagic, strBound, writeMagic } from './snapshotWire';
import { compareStrings } from './text';

export interface StateTables {
  readonly sessions: SessionTable;
  readonly locks: LockTable;
  readonly kv: FencedKv;
  readonly dedup: DedupTable;
  readonly auth: AuthTable;
  readonly semaphores: SemaphoreTable;
}

/** The whole state as a snapshot encodes it. */
export interface StateView {
  readonly lastApplied: number;
  readonly gcFloor: number;
  readonly sessions: TableView<Session, SessionImage>;
  readonly locks: TableView<LockRecord, LockImage>;
  readonly keys: TableView<KvRecord, KeyImage>;
  readonly dedup: DedupView;
  /** Copied at the capture (the auth table is small and bounded). */
  readonly auth: AuthImage;
  /** Copied at the capture (bounded: MAX_SEMAPHORES, and their slots by the permits held). */
  readonly semaphores: readonly SemaphoreImage[];
}

export const SNAPSHOT_FORMAT = 9;
/** The formats this version reads (SNAPSHOT_FORMAT and every older one since format 2). */
export const SNAPSHOT_FORMATS_READ: readonly number[] = Object.freeze([2, 3, 4, 5, 6, 7, 8, 9]);
/** The previous format, still read: locks without shared grants or shared waiters, and no semaphores. */
const FORMAT_8 = 8;
/** The previous format, still read: locks and waiters without lock-delays. */
const FORMAT_WITHOUT_LOCK_DELAYS = 7;
/** A previous format, still read: sessions without labels. */
const FORMAT_WITHOUT_LABELS = 5;
/** The previous format, still read: waiters without the time they were queued. */
const FORMAT_WITHOUT_WAIT_TIMES = 6;
/** The format before, still read: stored results as dictionary fields or JSON (legacyResults.ts). */
const FORMAT_WITH_LEGACY_RESULTS = 4;
/** The format before, still read: sessions without their owner, no auth section. */
const FORMAT_WITHOUT_AUTH = 3;
/** The first format still read: sessions without their lease checkpoint either. */
const FORMAT_WITHOUT_CHECKPOINTS = 2;

/** `sref`: 0 = '', 1 = a literal id (not one of the sessions), 2 + i = the id of session i. */
const SREF_EMPTY = 0;
const SREF_LITERAL = 1;
const SREF_FIRST = 2;
/** `lref`: 0 = a literal name (not one of the locks), 1 + i = the name of lock i. */
/** A key bound to a semaphore's slot (format 9); before format 9, a lock without a record (refused). */
const LREF_SLOT = 0;
const LREF_FIRST = 1;

const EMPTY = new Uint8Array(0);

/**
 * Work between two yields of the encoder: a record, a stored result or a KiB of values is a unit. About
 * 2 ms of encoding at the limits, so a node's Ready loop runs between slices.
 */
export const SLICE_UNITS = 2048;

/** Counts the work of the current slice. */
class Slice {
  private left: number;

  constructor(private readonly units: number) {
    this.left = units;
  }

  /** Spends `units`; true when the slice is used up (the encoder then yields, and a new slice starts). */
  spend(units: number): boolean {
    this.left -= units;
    if (this.left > 0) return false;
    this.left = this.units;
    return true;
  }
}

// Walking records in key order touches memory in no useful order (records, their strings and number boxes
// were allocated as the log went), so the encoder waits on one cache miss after another. A first short
// loop over a chunk of records only reads what the encoding will read: with little work per iteration the
// CPU overlaps many misses at once, and the encoding loop then finds the chunk's records in cache. It
// roughly halves the time of the lock section of a large snapshot. `warm.sum` keeps the reads from being
// optimized away; its value means nothing.
const warm = { sum: 0 };

function warmSessions(chunk: readonly Session[]): void {
  let sum = 0;
  for (const s of chunk) {
    sum += s.id.length + s.clientName.length + s.openedAt;
  }
  warm.sum = sum;
}

function warmLocks(chunk: readonly LockRecord[]): void {
  let sum = 0;
  for (const rec of chunk) {
    const holder = rec.holder;
    sum += rec.name.length + rec.grantedAt + (holder === null ? 0 : holder.ordinal);
  }
  warm.sum = sum;
}

/** Encodes the state in one go (nothing may change meanwhile). */
export function writeState(view: StateView): Uint8Array {
  const slices = encodeState(view);
  for (;;) {
    const next = slices.next();
    if (next.done === true) return next.value;
  }
}

/**
 * Encodes the state a slice at a time: yields after each slice of `sliceUnits` of work, returns the bytes. The view must
 * stay as it was between slices (a frozen capture, capture.ts).
 */
export function* encodeState(view: StateView, sliceUnits = SLICE_UNITS): Generator<void, Uint8Array, void> {
  invariant(Number.isSafeInteger(sliceUnits) && sliceUnits >= 1, 'a slice needs at least one unit of work');
  const w = new Writer();
  const slice = new Slice(sliceUnits);
  writeMagic(w);
  w.varint(SNAPSHOT_FORMAT);
  w.varint(view.lastApplied);
  w.varint(view.gcFloor);
  const sessions = yield* writeSessions(w, view.sessions, slice);
  const lockAt = yield* writeLocks(w, view.locks, sessions, view.keys.size > 0, slice);
  yield* writeKeys(w, view.keys, lockAt, slice);
  yield* writeDedup(w, view.dedup, slice);
  writeAuth(w, view.auth);
  writeSemaphores(w, view.semaphores, (s) => sref(s, sessions));
  return w.finish();
}

/** The sessions of the snapshot by position, and each one's position by id. */
/**
 * The sessions of the snapshot by position (sorted by id). Each session's position is also in its `ordinal`
 * scratch field, stamped with the encoding that wrote it: another encoding meanwhile (a synchronous one
 * during a capture) restamps them, and positions are then found by id instead.
 */
class SessionPositions {
  readonly byOrdinal: Session[] = [];

  add(s: Session): void {
    s.ordinal = this.byOrdinal.length;
    s.ordinalOwner = this;
    this.byOrdinal.push(s);
  }

  /** The position of `s` (this very record), or -1 when it is not one of the snapshot's sessions. */
  of(s: Session): number {
    if (s.ordinalOwner === this && this.byOrdinal[s.ordinal] === s) return s.ordinal;
    const i = this.ofId(s.id);
    return i >= 0 && this.byOrdinal[i] === s ? i : -1;
  }

  /** The position of the session with this id, -1 when none (ids are ASCII: `<` is code point order). */
  ofId(id: string): number {
    const all = this.byOrdinal;
    let lo = 0;
    let hi = all.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const at = all[mid];
      if (at !== undefined && at.id < id) lo = mid + 1;
      else hi = mid;
    }
    return all[lo]?.id === id ? lo : -1;
  }
}

function* writeSessions(w: Writer, sessions: TableView<Session, SessionImage>, slice: Slice): Generator<void, SessionPositions, void> {
  const positions = new SessionPositions();
  w.varint(sessions.size);
  for (const chunk of sessions.chunks) {
    warmSessions(chunk);
    for (const s of chunk) {
      const id = s.id;
      const clientName = s.clientName;
      const owner = s.owner;
      positions.add(s);
      w.ensure(strBound(id) + strBound(clientName) + strBound(owner) + 4 * MAX_VARINT_BYTES);
      w.putStr(id);
      w.putStr(clientName);
      w.putVarint(s.ttlMs);
      w.putVarint(s.openedAt);
      w.putVarint(s.openIndex);
      w.putVarint(sessions.image(s).remainingMs);
      w.putStr(owner);
      writeLabels(w, s.labels);
      if (slice.spend(1)) yield;
    }
  }
  invariant(positions.byOrdinal.length === sessions.size, 'the session view lost count of its sessions');
  return positions;
}

/** Writes the locks; returns their positions by name when `positions` is asked for (keys refer to them). */
function* writeLocks(
  w: Writer,
  locks: TableView<LockRecord, LockImage>,
  sessions: SessionPositions,
  positions: boolean,
  slice: Slice,
): Generator<void, Map<string, number>, void> {
  const lockAt = new Map<string, number>();
  w.varint(locks.size);
  let ordinal = 0;
  for (const chunk of locks.chunks) {
    warmLocks(chunk);
    for (const rec of chunk) {
      if (positions) lockAt.set(rec.name, ordinal);
      ordinal++;
      writeLock(w, locks.image(rec), sessions);
      if (slice.spend(1)) yield;
    }
  }
  invariant(ordinal === locks.size, 'the lock view lost count of its locks');
  return lockAt;
}

function* writeKeys(w: Writer, keys: TableView<KvRecord, KeyImage>, lockAt: ReadonlyMap<string, number>, slice: Slice): Generator<void, void, void> {
  w.varint(keys.size);
  let count = 0;
  for (const chunk of keys.chunks) {
    for (const record of chunk) {
      const r = keys.image(record);
      w.str(r.key);
      if (r.slot !== undefined) {
        w.varint(LREF_SLOT);
        w.str(r.lock);
        w.varint(r.slot);
      } else {
        const at = lockAt.get(r.lock);
        invariant(at !== undefined, () => `key ${q(r.key)} bound to lock ${q(r.lock)} without a record`);
        w.varint(LREF_FIRST + at);
      }
      w.varint(r.watermark);
      w.byte(r.value === null ? 1 : 0);
      const value = r.value ?? EMPTY;
      w.bytes(value);
      w.str(r.payer);
      count++;
      if (slice.spend(1 + (value.length >> 10))) yield;
    }
  }
  invariant(count === keys.size, 'the key view lost count of its keys');
}

function* writeDedup(w: Writer, dedup: DedupView, slice: Slice): Generator<void, void, void> {
  w.varint(dedup.clients.length);
  for (const client of dedup.clients) {
    const c = dedup.image(client);
    w.str(client.caller);
    w.str(client.clientId);
    w.varint(c.floor);
    w.varint(c.entries.size);
    for (const e of c.entries.values()) {
      w.varint(e.requestId);
      w.dstr(e.commandType);
      writeStoredResult(w, e.result);
    }
    // Only between clients: an image read is the live client until it changes, which it may after a yield.
    if (slice.spend(1 + c.entries.size)) yield;
  }
}

/**
 * The `sref` of an open session: its position in the snapshot. Asserts that the session is the one at that
 * position (a holder or waiter that is not open would otherwise be written as another session).
 */
function sref(s: Session, sessions: SessionPositions): number {
  const ordinal = sessions.of(s);
  invariant(ordinal >= 0, () => `session ${s.id} is referred to but not open`);
  return SREF_FIRST + ordinal;
}

function writeLock(w: Writer, rec: LockImage, sessions: SessionPositions): void {
  const name = rec.name;
  const holder = rec.holder;
  w.ensure(strBound(name) + 6 * MAX_VARINT_BYTES);
  w.putStr(name);
  if (holder === null) {
    w.putVarint(SREF_EMPTY);
    w.putVarint(0); // the token
  } else {
    w.putVarint(sref(holder, sessions));
    w.putVarint(rec.latestToken); // the token
  }
  w.putVarint(rec.grantedAt);
  w.putVarint(rec.latestToken);
  const latest = rec.latestHolder;
  const latestAt = latest === '' ? -1 : holder !== null && latest === holder.id ? sessions.of(holder) : sessions.ofId(latest);
  if (latest === '') {
    w.putVarint(SREF_EMPTY);
  } else if (latestAt < 0) {
    w.putVarint(SREF_LITERAL);
    w.str(latest);
  } else {
    w.putVarint(SREF_FIRST + latestAt);
  }
  const waiters = rec.waiters;
  if (waiters === null) {
    w.varint(0);
  } else {
    w.varint(waiters.size);
    const delays = rec.waiterDelays;
    for (const [s, since] of waiters) {
      w.varint(sref(s, sessions));
      w.varint(since);
      w.varint(delays?.get(s) ?? 0);
      const set = rec.multiWaiters?.get(s);
      if (set !== undefined) {
        w.varint(WAITER_IN_SET);
        w.str(firstOf(set));
      } else {
        w.varint(rec.sharedWaiters?.has(s) === true ? WAITER_SHARED : WAITER_EXCLUSIVE);
      }
    }
  }
  w.varint(rec.lockDelayMs);
  w.varint(rec.delayedSince);
  w.varint(rec.delayedUntil);
  const sharers = rec.sharers;
  w.varint(sharers === null ? 0 : sharers.size);
  if (sharers !== null) {
    for (const [s, grant] of sharers) {
      w.varint(sref(s, sessions));
      w.varint(grant.token);
      w.varint(grant.grantedAt);
    }
  }
}

function bad(message: string): never {
  throw new SnapshotError(message);
}

const q = (s: string): string => JSON.stringify(s);

/**
 * Restores the state from `bytes` into empty tables; returns the header. Throws SnapshotError on anything
 * malformed or inconsistent (the caller runs the full invariant check afterwards). One function per section,
 * so that each loop is optimized with the type feedback of its own records.
 */
export function readState(bytes: Uint8Array, t: StateTables): { lastApplied: number; gcFloor: number } {
  const r = new Reader(bytes);
  const header = readHeader(r);
  t.locks.gcFloor = header.gcFloor;
  const sessions = readSessions(r, t.sessions, header.format);
  const locks = readLocks(r, t, sessions, {
    withWaitTimes: header.format > FORMAT_WITHOUT_WAIT_TIMES,
    withDelays: header.format > FORMAT_WITHOUT_LOCK_DELAYS,
    withShared: header.format > FORMAT_8,
  });
  const withAuth = header.format > FORMAT_WITHOUT_AUTH;
  readKeys(r, t.kv, locks, withAuth, header.format > FORMAT_8);
  readDedup(r, t.dedup, withAuth, header.format > FORMAT_WITH_LEGACY_RESULTS ? readStoredResult : readLegacyResult);
  if (withAuth) readAuth(r, t.auth);
  if (header.format > FORMAT_8) readSemaphores(r, t.semaphores, (ref) => sessionAt(sessions, ref), header.lastApplied);
  r.end();
  return header;
}

function readHeader(r: Reader): { format: number; lastApplied: number; gcFloor: number } {
  readMagic(r);
  const format = r.varint();
  if (!SNAPSHOT_FORMATS_READ.includes(format)) {
    bad(`unsupported format ${format}: this version reads formats ${SNAPSHOT_FORMATS_READ.join(', ')}${format > SNAPSHOT_FORMAT ? ' (written by a newer version: upgrade this node)' : ''}`);
  }
  const lastApplied = r.varint();
  const gcFloor = r.varint();
  return { format, lastApplied, gcFloor };
}

/** The sessions, by position. */
function readSessions(r: Reader, table: SessionTable, format: number): Session[] {
  const withCheckpoints = format > FORMAT_WITHOUT_CHECKPOINTS;
  const withOwners = format > FORMAT_WITHOUT_AUTH;
  const withLabels = format > FORMAT_WITHOUT_LABELS;
  const count = r.count(5);
  const byOrdinal: Session[] = new Array<Session>(count);
  let previousId = '';
  for (let i = 0; i < count; i++) {
    const id = r.sessionId();
    if (id === undefined) bad('a session id is not 32 lowercase hex characters');
    if (i > 0 && !(previousId < id)) bad(`session ${id} out of order`); // ids are ASCII: < is code point order
    const clientName = r.str();
    const ttlMs = r.varint();
    const s = newSession(id, clientName, ttlMs, r.varint(), r.varint(), withCheckpoints ? r.varint() : ttlMs, withOwners ? readCaller(r) : '', withLabels ? readLabels(r, id) : NO_LABELS);
    if (s.remainingMs > ttlMs) bad(`session ${id} has a lease checkpoint above its TTL`);
    table.restore(s);
    byOrdinal[i] = s;
    previousId = id;
  }
  return byOrdinal;
}

function writeLabels(w: Writer, labels: SessionLabels): void {
  w.varint(labels.length);
  for (const { key, value } of labels) {
    w.str(key);
    w.str(value);
  }
}

/** A session's labels, checked as OpenSession checks them (a snapshot holds nothing an entry could not make). */
function readLabels(r: Reader, sessionId: string): SessionLabels {
  const count = r.count(2);
  if (count === 0) return NO_LABELS;
  const labels: SessionLabel[] = new Array<SessionLabel>(count);
  for (let i = 0; i < count; i++) labels[i] = { key: r.str(), value: r.str() };
  const problem = labelsProblem(labels);
  if (problem !== null) bad(`session ${sessionId}: ${problem}`);
  return labels;
}

function sessionAt(sessions: readonly Session[], ref: number): Session {
  const s = sessions[ref - SREF_FIRST];
  if (ref < SREF_FIRST || s === undefined) bad('session reference out of range');
  return s;
}

/** The lock records, by position. */
/** Which fields of a lock the format being read has. */
interface LockFields {
  readonly withWaitTimes: boolean;
  readonly withDelays: boolean;
  readonly withShared: boolean;
}

function readLocks(r: Reader, t: StateTables, sessions: readonly Session[], fields: LockFields): LockRecord[] {
  const { withWaitTimes, withDelays, withShared } = fields;
  const count = r.count(7);
  const byOrdinal: LockRecord[] = new Array<LockRecord>(count);
  let previous = '';
  let linked = 0; // locks before this one are in their holders' lists
  const sets = new SetCollector();
  for (let i = 0; i < count; i++) {
    const name = r.str();
    if (i > 0 && compareStrings(previous, name) >= 0) bad(`lock ${q(name)} out of order`);
    const holderRef = r.varint();
    if (holderRef === SREF_LITERAL) bad(`lock ${q(name)} held by an unknown session`);
    const holder = holderRef === SREF_EMPTY ? null : sessionAt(sessions, holderRef);
    const token = r.varint();
    const grantedAt = r.varint();
    const latestToken = r.varint();
    const latestRef = r.varint();
    let latestHolder = '';
    if (latestRef === SREF_LITERAL) {
      const id = r.sessionId();
      if (id === undefined) bad(`lock ${q(name)} latest holder is not a session id`);
      if (t.sessions.has(id)) bad('a session id written as a literal');
      latestHolder = id;
    } else if (latestRef !== SREF_EMPTY) {
      latestHolder = sessionAt(sessions, latestRef).id;
    }
    const rec = newLockRecord(name, grantedAt, latestToken, latestHolder);
    if (token !== (holder === null ? 0 : latestToken)) bad(`lock ${q(name)} has token ${token}, latest ${latestToken}`);
    rec.holder = holder; // linked into the holder's list below, a batch at a time
    const waiterCount = r.count(1);
    for (let j = 0; j < waiterCount; j++) {
      const ref = r.varint();
      if (ref < SREF_FIRST) bad(`lock ${q(name)} awaited by an unknown session`);
      const s = sessionAt(sessions, ref);
      if (hasWaiter(rec, s)) bad(`lock ${q(name)} has a waiter twice`);
      const since = withWaitTimes ? r.varint() : 0;
      const delayMs = withDelays ? r.varint() : 0;
      if (delayMs > MAX_LOCK_DELAY_MS) bad(`lock ${q(name)} waiter asks for a lock-delay of ${delayMs} ms`);
      const mode = withShared ? readWaiterMode(r, name) : WAITER_EXCLUSIVE;
      if (mode === WAITER_IN_SET) sets.add(rec, s, r.str());
      addWaiter(rec, s, since, delayMs, mode === WAITER_SHARED);
      addWaiting(s, rec);
    }
    if (withDelays) readLockDelay(r, rec);
    if (withShared) readSharers(r, rec, sessions);
    t.locks.restore(rec);
    byOrdinal[i] = rec;
    previous = name;
    if (i + 1 - linked === LINK_BATCH || i + 1 === count) {
      linkHeld(byOrdinal, linked, i + 1);
      linked = i + 1;
    }
  }
  sets.link();
  return byOrdinal;
}

function readWaiterMode(r: Reader, lock: string): number {
  const v = r.varint();
  if (v > WAITER_IN_SET) bad(`lock ${q(lock)} has a waiter mode ${v}`);
  return v;
}

/** A lock's shared grants, in grant order; checkInvariants checks them against the rest. */
function readSharers(r: Reader, rec: LockRecord, sessions: readonly Session[]): void {
  const count = r.count(3);
  for (let j = 0; j < count; j++) {
    const ref = r.varint();
    if (ref < SREF_FIRST) bad(`lock ${q(rec.name)} held shared by an unknown session`);
    const s = sessionAt(sessions, ref);
    const token = r.varint();
    const grantedAt = r.varint();
    if (rec.holder !== null) bad(`lock ${q(rec.name)} held both exclusive and shared`);
    if (rec.sharers?.has(s) === true) bad(`lock ${q(rec.name)} has a shared holder twice`);
    (rec.sharers ??= new Map()).set(s, { token, grantedAt });
    addSharing(s, rec);
  }
}

/** A lock's delay fields, checked against each other (checkInvariants checks them against the rest). */
function readLockDelay(r: Reader, rec: LockRecord): void {
  rec.lockDelayMs = r.varint();
  rec.delayedSince = r.varint();
  rec.delayedUntil = r.varint();
  const q = JSON.stringify(rec.name);
  if (rec.lockDelayMs > MAX_LOCK_DELAY_MS) bad(`lock ${q} has a lock-delay of ${rec.lockDelayMs} ms`);
  if (rec.delayedSince !== 0 && rec.holder !== null) bad(`held lock ${q} is in a lock-delay`);
  if (rec.delayedSince === 0 && rec.delayedUntil !== 0) bad(`lock ${q} has a delay end but no delay`);
}

/**
 * Links the held locks among locks[from, to) into their holders' lists. Holders are all over memory; done
 * as a short loop over a batch just read (rather than one lock at a time amid decoding) the CPU overlaps
 * the cache misses of many of them. The order of a held list means nothing (it is always sorted for use).
 */
const LINK_BATCH = 1024;

function linkHeld(locks: readonly LockRecord[], from: number, to: number): void {
  for (let i = from; i < to; i++) {
    const rec = locks[i];
    if (rec !== undefined && rec.holder !== null) addHeld(rec.holder, rec);
  }
}

function readKeys(r: Reader, kv: FencedKv, locks: readonly LockRecord[], withPayers: boolean, withSlots: boolean): void {
  const count = r.count(5);
  for (let i = 0; i < count; i++) {
    const key = r.str();
    const ref = r.varint();
    if (ref === LREF_SLOT) {
      if (!withSlots) bad(`key ${q(key)} bound to an unknown lock`);
      readSlotKey(r, kv, key, withPayers);
      continue;
    }
    const rec = locks[ref - LREF_FIRST];
    if (rec === undefined) bad('lock reference out of range');
    const watermark = r.varint();
    const flag = r.byte();
    if (flag > 1) bad('bad deleted flag');
    const value = r.bytes();
    if (flag === 1 && value.length > 0) bad('a tombstone has no value');
    const payer = withPayers ? readCaller(r) : '';
    try {
      kv.restore(key, rec.name, watermark, flag === 1 ? null : value, payer);
    } catch (e) {
      throw e instanceof InvariantError ? new SnapshotError(e.message) : e;
    }
    rec.boundKeys++;
  }
}

/** The rest of a key bound to a semaphore's slot: it pins no lock record (slotFencing.ts). */
function readSlotKey(r: Reader, kv: FencedKv, key: string, withPayers: boolean): void {
  const semaphore = r.str();
  const slot = r.varint();
  if (slot >= MAX_PERMITS) bad(`key ${q(key)} bound to slot ${slot} of a semaphore`);
  const watermark = r.varint();
  const flag = r.byte();
  if (flag > 1) bad('bad deleted flag');
  const value = r.bytes();
  if (flag === 1 && value.length > 0) bad('a tombstone has no value');
  const payer = withPayers ? readCaller(r) : '';
  try {
    kv.restore(key, semaphore, watermark, flag === 1 ? null : value, payer, slot);
  } catch (e) {
    throw e instanceof InvariantError ? new SnapshotError(e.message) : e;
  }
}

function readDedup(r: Reader, dedup: DedupTable, withCallers: boolean, readResult: (r: Reader) => Result): void {
  const count = r.count(3);
  for (let i = 0; i < count; i++) {
    const caller = withCallers ? readCaller(r) : '';
    const clientId = r.str();
    const floor = r.varint();
    const entries: DedupEntry[] = new Array<DedupEntry>(r.count(3));
    for (let j = 0; j < entries.length; j++) {
      const requestId = r.varint();
      const commandType = r.dstr();
      if (!isCommandType(commandType)) bad('unknown commandType');
      entries[j] = { requestId, commandType: commandType as CommandType, result: readResult(r) };
    }
    try {
      dedup.restore(caller, clientId, floor, entries);
    } catch (e) {
      throw e instanceof InvariantError ? new SnapshotError(e.message) : e;
    }
  }
}

// The machine's own snapshot encoder and decoder: straight from its tables to the bytes and back, with no
// plain StateSnapshot in between (see snapshotView.ts for why). The format is the one of snapshotCodec.ts;
// snapshotPlain.ts encodes the same state to the same bytes (the tests check it).
//
// Writing walks the tables in their kept order (sessions by id, locks by name, keys by key: nothing is
// sorted) and refers to sessions and locks by their position in the snapshot. Reading checks everything the
// plain path checks (shape, order, references, each record's consistency) as it goes, and builds the
// records directly: session ids are decoded once, and a lock's holder, latest holder and waiters are the
// session records (and their id strings) themselves.
import { isCommandType, type CommandType } from './commands';
import type { DedupEntry, DedupTable } from './dedup';
import type { FencedKv } from './fencedKv';
import { InvariantError, invariant } from './invariant';
import type { LockTable } from './locks';
import { addHeld, addWaiter, addWaiting, hasWaiter, newLockRecord, newSession, type LockRecord, type Session } from './records';
import { freezeResult, type Result } from './results';
import type { SessionTable } from './sessions';
import { SNAPSHOT_FORMAT, SnapshotError } from './snapshot';
import { MAX_VARINT_BYTES, Reader, Writer, readResult, strBound, writeMagic, writeResult } from './snapshotFormat';
import { LREF_FIRST, LREF_LITERAL, SREF_EMPTY, SREF_FIRST, SREF_LITERAL, readHeader } from './snapshotPlain';
import { compareStrings } from './text';

export interface StateTables {
  readonly sessions: SessionTable;
  readonly locks: LockTable;
  readonly kv: FencedKv;
  readonly dedup: DedupTable;
}

const EMPTY = new Uint8Array(0);

// Walking records in key order touches memory in no useful order (records, their strings and number boxes
// were allocated as the log went), so the encoder waits on one cache miss after another. A first short
// loop over a chunk of records only reads what the encoding will read: with little work per iteration the
// CPU overlaps many misses at once, and the encoding loop then finds the chunk's records in cache. It
// roughly halves the time of the lock section of a large snapshot. `warm.sum` keeps the reads from being
// optimized away; its value means nothing.
const warm = { sum: 0 };

function warmSessions(chunk: readonly Session[]): void {
  let sum = 0;
  for (let i = 0; i < chunk.length; i++) {
    const s = chunk[i]!;
    sum += s.id.length + s.clientName.length + s.openedAt;
  }
  warm.sum = sum;
}

function warmLocks(chunk: readonly LockRecord[]): void {
  let sum = 0;
  for (let i = 0; i < chunk.length; i++) {
    const rec = chunk[i]!;
    const holder = rec.holder;
    sum += rec.name.length + rec.grantedAt + (holder === null ? 0 : holder.ordinal);
  }
  warm.sum = sum;
}

/**
 * Encodes the state. Sets every session's `ordinal` scratch field. One function per section, so that each
 * loop is optimized with the type feedback of its own records.
 */
export function writeState(lastApplied: number, t: StateTables): Uint8Array {
  const w = new Writer();
  writeMagic(w);
  w.varint(SNAPSHOT_FORMAT);
  w.varint(lastApplied);
  w.varint(t.locks.gcFloor);
  const sessions = writeSessions(w, t.sessions);
  const lockAt = writeLocks(w, t.locks, sessions, t.sessions, t.kv.size > 0);
  writeKeys(w, t.kv, lockAt);
  writeDedup(w, t.dedup);
  return w.finish();
}

/** Writes the sessions; returns them by position (each session's `ordinal`). */
function writeSessions(w: Writer, sessions: SessionTable): Session[] {
  const byOrdinal: Session[] = [];
  w.varint(sessions.size);
  for (const chunk of sessions.chunksInOrder()) {
    warmSessions(chunk);
    for (const s of chunk) {
      s.ordinal = byOrdinal.length;
      byOrdinal.push(s);
      const id = s.id;
      const clientName = s.clientName;
      w.ensure(strBound(id) + strBound(clientName) + 3 * MAX_VARINT_BYTES);
      w.putStr(id);
      w.putStr(clientName);
      w.putVarint(s.ttlMs);
      w.putVarint(s.openedAt);
      w.putVarint(s.openIndex);
    }
  }
  return byOrdinal;
}

/** Writes the locks; returns their positions by name when `positions` is asked for (keys refer to them). */
function writeLocks(
  w: Writer,
  locks: LockTable,
  sessions: readonly Session[],
  table: SessionTable,
  positions: boolean,
): Map<string, number> {
  const lockAt = new Map<string, number>();
  w.varint(locks.size);
  let ordinal = 0;
  for (const chunk of locks.chunksInOrder()) {
    warmLocks(chunk);
    for (const rec of chunk) {
      if (positions) lockAt.set(rec.name, ordinal);
      ordinal++;
      writeLock(w, rec, sessions, table);
    }
  }
  return lockAt;
}

function writeKeys(w: Writer, kv: FencedKv, lockAt: ReadonlyMap<string, number>): void {
  w.varint(kv.size);
  kv.forEachSorted((r) => {
    w.str(r.key);
    const at = lockAt.get(r.lock);
    if (at === undefined) {
      w.varint(LREF_LITERAL);
      w.str(r.lock);
    } else {
      w.varint(LREF_FIRST + at);
    }
    w.varint(r.watermark);
    w.byte(r.value === null ? 1 : 0);
    w.bytes(r.value ?? EMPTY);
  });
}

function writeDedup(w: Writer, dedup: DedupTable): void {
  w.varint(dedup.clientCount);
  for (const [clientId, c] of dedup.entries()) {
    w.str(clientId);
    w.varint(c.floor);
    w.varint(c.entries.size);
    for (const e of c.entries.values()) {
      w.varint(e.requestId);
      w.dstr(e.commandType);
      writeResult(w, e.result);
    }
  }
}

/**
 * The `sref` of an open session: its position in the snapshot. Asserts that the session is the one at that
 * position (a holder or waiter that is not open would otherwise be written as another session).
 */
function sref(s: Session, sessions: readonly Session[]): number {
  const ordinal = s.ordinal;
  invariant(sessions[ordinal] === s, () => `session ${s.id} is referred to but not open`);
  return SREF_FIRST + ordinal;
}

function writeLock(w: Writer, rec: LockRecord, sessions: readonly Session[], table: SessionTable): void {
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
  if (holder !== null && latest === holder.id) {
    w.putVarint(SREF_FIRST + holder.ordinal);
  } else if (latest === '') {
    w.putVarint(SREF_EMPTY);
  } else {
    const s = table.get(latest);
    if (s === undefined) {
      w.putVarint(SREF_LITERAL);
      w.str(latest);
    } else {
      w.putVarint(SREF_FIRST + s.ordinal);
    }
  }
  const waiters = rec.waiters;
  if (waiters === null) {
    w.varint(0);
  } else {
    w.varint(waiters.size);
    for (const s of waiters) w.varint(sref(s, sessions));
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
  const sessions = readSessions(r, t.sessions);
  const locks = readLocks(r, t, sessions);
  readKeys(r, t.kv, locks);
  readDedup(r, t.dedup);
  r.end();
  return header;
}

/** The sessions, by position. */
function readSessions(r: Reader, table: SessionTable): Session[] {
  const count = r.count(5);
  const byOrdinal: Session[] = new Array<Session>(count);
  let previousId = '';
  for (let i = 0; i < count; i++) {
    const id = r.sessionId();
    if (id === undefined) bad('a session id is not 32 lowercase hex characters');
    if (i > 0 && !(previousId < id)) bad(`session ${id} out of order`); // ids are ASCII: < is code point order
    const s = newSession(id, r.str(), r.varint(), r.varint(), r.varint());
    table.restore(s);
    byOrdinal[i] = s;
    previousId = id;
  }
  return byOrdinal;
}

function sessionAt(sessions: readonly Session[], ref: number): Session {
  const s = sessions[ref - SREF_FIRST];
  if (ref < SREF_FIRST || s === undefined) bad('session reference out of range');
  return s;
}

/** The lock records, by position. */
function readLocks(r: Reader, t: StateTables, sessions: readonly Session[]): LockRecord[] {
  const count = r.count(7);
  const byOrdinal: LockRecord[] = new Array<LockRecord>(count);
  let previous = '';
  let linked = 0; // locks before this one are in their holders' lists
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
      addWaiter(rec, s);
      addWaiting(s, rec);
    }
    t.locks.restore(rec);
    byOrdinal[i] = rec;
    previous = name;
    if (i + 1 - linked === LINK_BATCH || i + 1 === count) {
      linkHeld(byOrdinal, linked, i + 1);
      linked = i + 1;
    }
  }
  return byOrdinal;
}

/**
 * Links the held locks among locks[from, to) into their holders' lists. Holders are all over memory; done
 * as a short loop over a batch just read (rather than one lock at a time amid decoding) the CPU overlaps
 * the cache misses of many of them. The order of a held list means nothing (it is always sorted for use).
 */
const LINK_BATCH = 1024;

function linkHeld(locks: readonly LockRecord[], from: number, to: number): void {
  for (let i = from; i < to; i++) {
    const rec = locks[i]!;
    if (rec.holder !== null) addHeld(rec.holder, rec);
  }
}

function readKeys(r: Reader, kv: FencedKv, locks: readonly LockRecord[]): void {
  const count = r.count(5);
  for (let i = 0; i < count; i++) {
    const key = r.str();
    const ref = r.varint();
    if (ref === LREF_LITERAL) bad(`key ${q(key)} bound to an unknown lock`);
    const rec = locks[ref - LREF_FIRST];
    if (rec === undefined) bad('lock reference out of range');
    const watermark = r.varint();
    const flag = r.byte();
    if (flag > 1) bad('bad deleted flag');
    const value = r.bytes();
    if (flag === 1 && value.length > 0) bad('a tombstone has no value');
    try {
      kv.restore(key, rec.name, watermark, flag === 1 ? null : value);
    } catch (e) {
      throw e instanceof InvariantError ? new SnapshotError(e.message) : e;
    }
    rec.boundKeys++;
  }
}

function readDedup(r: Reader, dedup: DedupTable): void {
  const count = r.count(3);
  for (let i = 0; i < count; i++) {
    const clientId = r.str();
    const floor = r.varint();
    const entries: DedupEntry[] = new Array<DedupEntry>(r.count(3));
    for (let j = 0; j < entries.length; j++) {
      const requestId = r.varint();
      const commandType = r.dstr();
      if (!isCommandType(commandType)) bad('unknown commandType');
      entries[j] = { requestId, commandType: commandType as CommandType, result: storedResult(r) };
    }
    try {
      dedup.restore(clientId, floor, entries);
    } catch (e) {
      throw e instanceof InvariantError ? new SnapshotError(e.message) : e;
    }
  }
}

function storedResult(r: Reader): Result {
  const res = readResult(r);
  if (typeof res !== 'string') {
    if (typeof res.status !== 'string') bad('a stored result has no status');
    return Object.freeze(res) as unknown as Result; // its arrays are frozen already
  }
  let v: unknown;
  try {
    v = JSON.parse(res);
  } catch {
    bad('a stored result is not JSON');
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v) || typeof (v as Record<string, unknown>).status !== 'string') {
    bad('a stored result has no status');
  }
  return freezeResult(v as Result);
}


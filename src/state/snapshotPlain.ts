// The snapshot byte format (grammar in snapshotCodec.ts) to and from the plain StateSnapshot. The machine
// encodes and restores itself without this plain form (snapshotState.ts); this is the reference
// implementation of the format, used for plain snapshots (tests, tools, hand-made or edited snapshots) and
// to materialize the plain view of encoded bytes. Both must produce the same bytes for the same state.
import type { CommandType } from './commands';
import {
  Reader,
  Writer,
  readMagic,
  readResult,
  writeMagic,
  writeResultJson,
} from './snapshotFormat';
import {
  SNAPSHOT_FORMAT,
  SnapshotError,
  type DedupClientSnapshot,
  type KeySnapshot,
  type LockSnapshot,
  type SessionSnapshot,
  type StateSnapshot,
} from './snapshot';

/** `sref`: 0 = '', 1 = a literal id (not one of the sessions), 2 + i = the id of session i. */
export const SREF_EMPTY = 0;
export const SREF_LITERAL = 1;
export const SREF_FIRST = 2;
/** `lref`: 0 = a literal name (not one of the locks), 1 + i = the name of lock i. */
export const LREF_LITERAL = 0;
export const LREF_FIRST = 1;

/** First position of every string of `items` (the one a reference points at). */
function firstPositions(items: readonly string[]): Map<string, number> {
  const m = new Map<string, number>();
  for (let i = 0; i < items.length; i++) if (!m.has(items[i]!)) m.set(items[i]!, i);
  return m;
}

function writeSref(w: Writer, id: string, sessions: ReadonlyMap<string, number>): void {
  if (id === '') {
    w.varint(SREF_EMPTY);
    return;
  }
  const i = sessions.get(id);
  if (i === undefined) {
    w.varint(SREF_LITERAL);
    w.str(id);
  } else {
    w.varint(SREF_FIRST + i);
  }
}

/** Encodes a plain snapshot (its shape is expected to be valid; see checkSnapshotShape). */
export function encodePlainSnapshot(s: StateSnapshot): Uint8Array {
  const w = new Writer();
  writeMagic(w);
  w.varint(s.format);
  w.varint(s.lastApplied);
  w.varint(s.gcFloor);
  const sessionAt = firstPositions(s.sessions.map((x) => x.id));
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
    writeSref(w, x.holder, sessionAt);
    w.varint(x.token);
    w.varint(x.grantedAt);
    w.varint(x.latestToken);
    writeSref(w, x.latestHolder, sessionAt);
    w.varint(x.waiters.length);
    for (const waiter of x.waiters) writeSref(w, waiter, sessionAt);
  }
  const lockAt = s.keys.length === 0 ? new Map<string, number>() : firstPositions(s.locks.map((x) => x.name));
  w.varint(s.keys.length);
  for (const x of s.keys) {
    w.str(x.key);
    const i = lockAt.get(x.lock);
    if (i === undefined) {
      w.varint(LREF_LITERAL);
      w.str(x.lock);
    } else {
      w.varint(LREF_FIRST + i);
    }
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
      w.dstr(e.commandType);
      writeResultJson(w, e.result);
    }
  }
  return w.finish();
}

/** Format 1 (until the state was encoded straight from the machine): read, never written. */
const FORMAT_1 = 1;

/** The header fields of the current format, read up to the session list (the reader is left there). */
export function readHeader(r: Reader): { lastApplied: number; gcFloor: number } {
  readMagic(r);
  const format = r.varint();
  if (format !== SNAPSHOT_FORMAT) throw new SnapshotError(`unsupported format ${format}`);
  const lastApplied = r.varint();
  const gcFloor = r.varint();
  return { lastApplied, gcFloor };
}

/**
 * Decodes bytes into a plain snapshot; throws SnapshotError on anything malformed or non-canonical in the
 * encoding (so that encoding the result gives the same bytes back). The content (ids, order,
 * cross-references, invariants) is checked by LockStateMachine.fromSnapshot.
 *
 * Bytes of format 1 (what nodes wrote before format 2, e.g. a snapshot in a data directory) are decoded too:
 * the plain snapshot is the same data in both formats, so the result is an ordinary (current) plain
 * snapshot; encoding it gives its format 2 bytes.
 */
export function decodePlainSnapshot(bytes: Uint8Array): StateSnapshot {
  const r = new Reader(bytes);
  readMagic(r);
  const format = r.varint();
  if (format === FORMAT_1) return decodeFormat1(r);
  if (format !== SNAPSHOT_FORMAT) throw new SnapshotError(`unsupported format ${format}`);
  const lastApplied = r.varint();
  const gcFloor = r.varint();

  const sessions = readSessions(r);
  const sessionAt = firstPositions(sessions.map((x) => x.id));
  const sref = (): string => {
    const ref = r.varint();
    if (ref === SREF_EMPTY) return '';
    if (ref === SREF_LITERAL) {
      const id = r.str();
      if (id === '' || sessionAt.has(id)) throw new SnapshotError('a session id written as a literal');
      return id;
    }
    const i = ref - SREF_FIRST;
    const x = sessions[i];
    if (x === undefined) throw new SnapshotError('session reference out of range');
    if (sessionAt.get(x.id) !== i) throw new SnapshotError('a reference to a repeated session id');
    return x.id;
  };

  const locks: LockSnapshot[] = Array.from({ length: r.count(7) }, () => ({
    name: r.str(),
    holder: sref(),
    token: r.varint(),
    grantedAt: r.varint(),
    latestToken: r.varint(),
    latestHolder: sref(),
    waiters: Array.from({ length: r.count(1) }, sref),
  }));

  let lockAt: Map<string, number> | undefined;
  const keys: KeySnapshot[] = Array.from({ length: r.count(5) }, () => {
    lockAt ??= firstPositions(locks.map((x) => x.name));
    const key = r.str();
    const ref = r.varint();
    let lock: string;
    if (ref === LREF_LITERAL) {
      lock = r.str();
      if (lockAt.has(lock)) throw new SnapshotError('a lock name written as a literal');
    } else {
      const i = ref - LREF_FIRST;
      const x = locks[i];
      if (x === undefined) throw new SnapshotError('lock reference out of range');
      if (lockAt.get(x.name) !== i) throw new SnapshotError('a reference to a repeated lock name');
      lock = x.name;
    }
    const watermark = r.varint();
    const flag = r.byte();
    if (flag > 1) throw new SnapshotError('bad deleted flag');
    return { key, lock, watermark, deleted: flag === 1, value: r.bytes() };
  });

  const dedup: DedupClientSnapshot[] = Array.from({ length: r.count(3) }, () => ({
    clientId: r.str(),
    floor: r.varint(),
    entries: Array.from({ length: r.count(3) }, () => {
      const requestId = r.varint();
      const commandType = r.dstr();
      const res = readResult(r);
      // The command type is checked by fromSnapshot (checkSnapshotShape), like everything else of content.
      return { requestId, commandType: commandType as CommandType, result: typeof res === 'string' ? res : JSON.stringify(res) };
    }),
  }));
  r.end();
  return { format: SNAPSHOT_FORMAT, lastApplied, gcFloor, sessions, locks, keys, dedup } as StateSnapshot;
}

/**
 * Format 1, after its magic and format number:
 *   lastApplied, gcFloor | list(session) | list(lock) | list(key) | list(dedupClient), where
 *   session = str id | str clientName | varint ttlMs | varint openedAt | varint openIndex
 *   lock    = str name | str holder ('' = free) | varint token | varint grantedAt | varint latestToken
 *             | str latestHolder | list(str waiter)
 *   key     = str key | str lock | varint watermark | byte deleted (0/1) | bytes value
 *   dedupClient = str clientId | varint floor | list(varint requestId | str commandType | str resultJson)
 */
/** The session list, the same in both formats. */
function readSessions(r: Reader): SessionSnapshot[] {
  return Array.from({ length: r.count(5) }, () => ({
    id: r.str(),
    clientName: r.str(),
    ttlMs: r.varint(),
    openedAt: r.varint(),
    openIndex: r.varint(),
  }));
}

function decodeFormat1(r: Reader): StateSnapshot {
  const lastApplied = r.varint();
  const gcFloor = r.varint();
  const sessions = readSessions(r);
  const locks: LockSnapshot[] = Array.from({ length: r.count(7) }, () => ({
    name: r.str(),
    holder: r.str(),
    token: r.varint(),
    grantedAt: r.varint(),
    latestToken: r.varint(),
    latestHolder: r.str(),
    waiters: Array.from({ length: r.count(1) }, () => r.str()),
  }));
  const keys: KeySnapshot[] = Array.from({ length: r.count(5) }, () => {
    const key = r.str();
    const lock = r.str();
    const watermark = r.varint();
    const flag = r.byte();
    if (flag > 1) throw new SnapshotError('bad deleted flag');
    return { key, lock, watermark, deleted: flag === 1, value: r.bytes() };
  });
  const dedup: DedupClientSnapshot[] = Array.from({ length: r.count(3) }, () => ({
    clientId: r.str(),
    floor: r.varint(),
    entries: Array.from({ length: r.count(3) }, () => ({
      requestId: r.varint(),
      commandType: r.str() as CommandType,
      result: r.str(),
    })),
  }));
  r.end();
  return { format: SNAPSHOT_FORMAT, lastApplied, gcFloor, sessions, locks, keys, dedup };
}

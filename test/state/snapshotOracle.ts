// The oracle of the snapshot format: a second encoder of the grammar in src/state/snapshot.ts, written the
// plain way, from a plain StateSnapshot (sorted lists of plain objects; harness.ts builds one from a
// machine's tables) and with stored results encoded from their JSON: by protobufjs from state.proto in
// format 5, reflectively as the format's first encoder did in formats 2 to 4. The machine's own encoder must write exactly these bytes (snapshotOracle.test.ts): that is
// what keeps the bytes of the format unchanged.
import * as protobuf from 'protobufjs';
import { protoFile } from '../../src/codec/protoPath';
import { DICT_INDEX, Writer, writeMagic } from '../../src/state/snapshotWire';
import { isWellFormed } from '../../src/state/text';
import type { CommandType } from '../../src/state';

export interface SessionSnapshot {
  id: string;
  clientName: string;
  ttlMs: number;
  openedAt: number;
  openIndex: number;
  /** Lease checkpoint (format 3 on; format 2 has none: it is the TTL). */
  remainingMs: number;
  /** The caller that opened it, '' for none (format 4 on; before, always ''). */
  owner: string;
  /** Its labels, sorted by key (format 6 on; before, none). */
  labels?: { key: string; value: string }[];
}

export interface LockSnapshot {
  name: string;
  /** Holding session id, '' when free. */
  holder: string;
  /** Token of the current grant, 0 when free. */
  token: number;
  grantedAt: number;
  latestToken: number;
  latestHolder: string;
  /** Queued session ids in FIFO order. */
  waiters: string[];
  /** When each waiter was queued, in the same order (format 7 on; absent or short: 0). */
  waitingSince?: number[];
  /** The lock-delay each waiter asked for, in the same order (format 8 on; absent or short: 0). */
  waiterDelays?: number[];
  /** The grant's lock-delay while held, the delay in force while delayed (format 8 on; absent: 0). */
  lockDelayMs?: number;
  /** The index that started the delay in force, 0 for none (format 8 on; absent: 0). */
  delayedSince?: number;
  /** When that delay ends by the leader's clock, 0 for none (format 8 on; absent: 0). */
  delayedUntil?: number;
  /** Which waiters wait for a shared grant, in the same order (format 9 on; absent or short: none). */
  sharedWaiters?: boolean[];
  /** For each waiter of an AcquireAll, the first name of its set; '' for the others (format 9 on; absent or short: none). */
  waiterSets?: string[];
  /** The shared grants in grant order (format 9 on; absent: none). */
  sharers?: Array<{ holder: string; token: number; grantedAt: number }>;
}

export interface KeySnapshot {
  key: string;
  lock: string;
  watermark: number;
  /** True for a tombstone; `value` is then empty. */
  deleted: boolean;
  value: Uint8Array;
  /** The caller it counts for, '' for none (format 4 on; before, always ''). */
  payer: string;
  /** Set for a key bound to a slot of the semaphore `lock` (format 9 on). */
  slot?: number;
}

export interface DedupEntrySnapshot {
  requestId: number;
  commandType: CommandType;
  /** The stored Result as JSON. */
  result: string;
}

export interface DedupClientSnapshot {
  /** The identity the client's records belong to (format 4 on; before, always ''). */
  caller: string;
  clientId: string;
  floor: number;
  entries: DedupEntrySnapshot[];
}

/** The auth table as plain data (format 4 on; before, auth off and empty), every list sorted. */
export interface AuthSnapshot {
  enabled: boolean;
  users: Array<{ name: string; roles: string[] }>;
  roles: Array<{ name: string; rules: Array<{ perm: string; prefix: string }>; quotas: Array<[string, number]> }>;
  tokens: Array<{ id: string; user: string; hash: string }>;
}

/** A semaphore (format 9 on): its slots in slot order (holder '' = free), its waiters FIFO. */
export interface SemaphoreSnapshot {
  name: string;
  permits: number;
  slots: Array<{ holder: string; grantedAt: number; latestToken: number; latestHolder: string }>;
  waiters: Array<{ sessionId: string; since: number }>;
}

/** The state as plain data, every list in snapshot order. */
export interface StateSnapshot {
  format: number;
  lastApplied: number;
  gcFloor: number;
  sessions: SessionSnapshot[];
  locks: LockSnapshot[];
  keys: KeySnapshot[];
  dedup: DedupClientSnapshot[];
  auth: AuthSnapshot;
  /** Format 9 on; absent: none. */
  semaphores?: SemaphoreSnapshot[];
}

/** `sref`: 0 = '', 1 = a literal id (not one of the sessions), 2 + i = the id of session i. */
const SREF_EMPTY = 0;
const SREF_LITERAL = 1;
const SREF_FIRST = 2;
/** `lref`: 0 = a literal name (not one of the locks), 1 + i = the name of lock i. */
const LREF_LITERAL = 0;
const LREF_FIRST = 1;

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

/** Encodes a plain snapshot. */
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
    if (s.format >= 3) w.varint(x.remainingMs);
    if (s.format >= 4) w.str(x.owner);
    if (s.format >= 6) {
      const labels = x.labels ?? [];
      w.varint(labels.length);
      for (const l of labels) {
        w.str(l.key);
        w.str(l.value);
      }
    }
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
    x.waiters.forEach((waiter, i) => {
      writeSref(w, waiter, sessionAt);
      if (s.format >= 7) w.varint(x.waitingSince?.[i] ?? 0);
      if (s.format >= 8) w.varint(x.waiterDelays?.[i] ?? 0);
      const set = x.waiterSets?.[i] ?? '';
      if (s.format >= 9 && set !== '') {
        w.varint(2);
        w.str(set);
      } else if (s.format >= 9) {
        w.varint(x.sharedWaiters?.[i] === true ? 1 : 0);
      }
    });
    if (s.format >= 8) {
      w.varint(x.lockDelayMs ?? 0);
      w.varint(x.delayedSince ?? 0);
      w.varint(x.delayedUntil ?? 0);
    }
    if (s.format >= 9) {
      const sharers = x.sharers ?? [];
      w.varint(sharers.length);
      for (const g of sharers) {
        writeSref(w, g.holder, sessionAt);
        w.varint(g.token);
        w.varint(g.grantedAt);
      }
    }
  }
  const lockAt = s.keys.length === 0 ? new Map<string, number>() : firstPositions(s.locks.map((x) => x.name));
  w.varint(s.keys.length);
  for (const x of s.keys) {
    w.str(x.key);
    const i = x.slot === undefined ? lockAt.get(x.lock) : undefined;
    if (x.slot !== undefined) {
      w.varint(LREF_LITERAL);
      w.str(x.lock);
      w.varint(x.slot);
    } else if (i === undefined) {
      w.varint(LREF_LITERAL);
      w.str(x.lock);
    } else {
      w.varint(LREF_FIRST + i);
    }
    w.varint(x.watermark);
    w.byte(x.deleted ? 1 : 0);
    w.bytes(x.value);
    if (s.format >= 4) w.str(x.payer);
  }
  w.varint(s.dedup.length);
  for (const x of s.dedup) {
    if (s.format >= 4) w.str(x.caller);
    w.str(x.clientId);
    w.varint(x.floor);
    w.varint(x.entries.length);
    for (const e of x.entries) {
      w.varint(e.requestId);
      w.dstr(e.commandType);
      if (s.format >= 5) w.bytes(storedResultBytes(e.result));
      else writeResultJson(w, e.result);
    }
  }
  if (s.format >= 4) writeAuth(w, s.auth);
  if (s.format >= 9) writeSemaphores(w, s.semaphores ?? [], sessionAt);
  return w.finish();
}

const PERMISSIONS = ['lock', 'write', 'read', 'admin'];

function writeAuth(w: Writer, a: AuthSnapshot): void {
  w.byte(a.enabled ? 1 : 0);
  w.varint(a.users.length);
  for (const u of a.users) {
    w.str(u.name);
    w.varint(u.roles.length);
    for (const role of u.roles) w.str(role);
  }
  w.varint(a.roles.length);
  for (const r of a.roles) {
    w.str(r.name);
    w.varint(r.rules.length);
    for (const rule of r.rules) {
      w.byte(PERMISSIONS.indexOf(rule.perm));
      w.str(rule.prefix);
    }
    w.varint(r.quotas.length);
    for (const [name, value] of r.quotas) {
      w.str(name);
      w.varint(value);
    }
  }
  w.varint(a.tokens.length);
  for (const t of a.tokens) {
    w.str(t.id);
    w.str(t.user);
    w.str(t.hash);
  }
}

// ---- stored results, reflectively --------------------------------------------------------------------------
//
// The binary form when it carries the result's JSON exactly: a plain object whose fields all have DICT names
// and hold a well-formed string, an integer in 0..2^53, a boolean or an array of well-formed strings;
// otherwise the JSON itself. The fields added after format 2 (a handover's nextHolder and nextToken, a
// Write's index, a WRONG_LOCK's owner) have no DICT names, so those results come out as JSON here, as the
// machine writes them; the oracle needs no case of its own for them.

type Fields = Record<string, unknown>;

function binaryFormOf(json: string): Fields | undefined {
  let v: unknown;
  try {
    v = JSON.parse(json);
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v) || JSON.stringify(v) !== json) return undefined;
  for (const [k, x] of Object.entries(v)) {
    if (!DICT_INDEX.has(k)) return undefined;
    const ok =
      (typeof x === 'string' && isWellFormed(x)) ||
      (typeof x === 'number' && Number.isSafeInteger(x) && x >= 0) ||
      typeof x === 'boolean' ||
      (Array.isArray(x) && x.every((y) => typeof y === 'string' && isWellFormed(y)));
    if (!ok) return undefined;
  }
  return v as Fields;
}

/** A stored result, given as its JSON: the binary form when it carries the JSON exactly, else the JSON. */
export function writeResultJson(w: Writer, json: string): void {
  const v = binaryFormOf(json);
  if (v === undefined) {
    w.byte(0);
    w.str(json);
    return;
  }
  const entries = Object.entries(v);
  w.byte(1);
  w.varint(entries.length);
  for (const [k, x] of entries) {
    w.dstr(k);
    if (typeof x === 'string') {
      w.byte(0);
      w.dstr(x);
    } else if (typeof x === 'number') {
      w.byte(1);
      w.varint(x);
    } else if (typeof x === 'boolean') {
      w.byte(x ? 3 : 2);
    } else {
      const xs = x as string[];
      w.byte(4);
      w.varint(xs.length);
      for (const y of xs) w.dstr(y);
    }
  }
}

// ---- stored results, as protobuf (format 5 on) -------------------------------------------------------------
//
// protobufjs encodes the StoredResult of a result's JSON: the oneof member named after the status, each other
// property the field of that name. proto3 leaves a default value out unless the field is `optional`, so the
// oracle drops those (protobufjs would write a default it is handed explicitly).

export const StoredResult = protobuf.loadSync(protoFile('fencelock/v1/state.proto')).resolveAll().lookupType('fencelock.v1.state.StoredResult');

const camel = (s: string): string => s.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

/** True for a proto3 `optional` field (protobufjs puts it in a synthetic oneof of its own). */
export function isOptionalField(f: protobuf.Field): boolean {
  return f.partOf !== null;
}

const isDefault = (v: unknown): boolean => v === 0 || v === '' || v === false || (Array.isArray(v) && v.length === 0);

/** The StoredResult bytes of a result given as its JSON. */
export function storedResultBytes(json: string): Uint8Array {
  const { status, ...fields } = JSON.parse(json) as Record<string, unknown>;
  const member = StoredResult.fields[camel(String(status))];
  if (member === undefined) throw new Error(`no StoredResult member for ${String(status)}`);
  const type = member.resolvedType as protobuf.Type;
  const body: Record<string, unknown> = {};
  for (const [name, v] of Object.entries(fields)) {
    const f = type.fields[name];
    if (f === undefined) throw new Error(`no field ${name} in StoredResult.${type.name}`);
    if (!isOptionalField(f) && isDefault(v)) continue;
    body[name] = name === 'cause' ? String(v).toUpperCase() : v;
  }
  return StoredResult.encode(StoredResult.fromObject({ [member.name]: body })).finish();
}

function writeSemaphores(w: Writer, semaphores: readonly SemaphoreSnapshot[], sessions: ReadonlyMap<string, number>): void {
  w.varint(semaphores.length);
  for (const x of semaphores) {
    w.str(x.name);
    w.varint(x.permits);
    w.varint(x.slots.length);
    for (const slot of x.slots) {
      writeSref(w, slot.holder, sessions);
      w.varint(slot.grantedAt);
      w.varint(slot.latestToken);
      w.str(slot.latestHolder);
    }
    w.varint(x.waiters.length);
    for (const waiter of x.waiters) {
      writeSref(w, waiter.sessionId, sessions);
      w.varint(waiter.since);
    }
  }
}

// The snapshot of the state machine as plain data: arrays, strings, numbers, booleans and byte arrays, no
// Maps and no undefined, so the node can carry it in a protobuf message or use snapshotCodec.ts.
//
// Canonical: every list is sorted (sessions by id, locks by name, keys by key, waiters in FIFO order) except
// the dedup table, whose order is state (least recently used client first, and per client the order results
// were stored in). Two machines in the same state produce equal snapshots, whatever their history.
import { COMMAND_TYPES, type CommandType } from './commands';
import { isSessionId, isWellFormed } from './text';

export const SNAPSHOT_FORMAT = 2;

export interface SessionSnapshot {
  id: string;
  clientName: string;
  ttlMs: number;
  openedAt: number;
  openIndex: number;
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
}

export interface KeySnapshot {
  key: string;
  lock: string;
  watermark: number;
  /** True for a tombstone; `value` is then empty. */
  deleted: boolean;
  value: Uint8Array;
}

export interface DedupEntrySnapshot {
  requestId: number;
  commandType: CommandType;
  /** The stored Result as JSON (results hold only strings, safe integers, booleans and string arrays). */
  result: string;
}

export interface DedupClientSnapshot {
  clientId: string;
  floor: number;
  entries: DedupEntrySnapshot[];
}

export interface StateSnapshot {
  format: number;
  lastApplied: number;
  gcFloor: number;
  sessions: SessionSnapshot[];
  locks: LockSnapshot[];
  keys: KeySnapshot[];
  dedup: DedupClientSnapshot[];
}

export class SnapshotError extends Error {
  constructor(message: string) {
    super(`invalid state snapshot: ${message}`);
    this.name = 'SnapshotError';
  }
}

type Fields = Record<string, unknown>;

function fail(message: string): never {
  throw new SnapshotError(message);
}

function obj(v: unknown, what: string): Fields {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) fail(`${what} must be an object`);
  return v as Fields;
}

function arr(v: unknown, what: string): unknown[] {
  if (!Array.isArray(v)) fail(`${what} must be an array`);
  return v;
}

function int(v: unknown, what: string): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) fail(`${what} must be an integer >= 0`);
  return v;
}

function str(v: unknown, what: string): string {
  if (typeof v !== 'string' || !isWellFormed(v)) fail(`${what} must be a well-formed string`);
  return v;
}

function sid(v: unknown, what: string): string {
  if (!isSessionId(v)) fail(`${what} must be a session id`);
  return v;
}

/**
 * Checks the shape of a snapshot (types only; the state machine checks the cross-references and invariants
 * when it restores). Throws SnapshotError.
 */
export function checkSnapshotShape(v: unknown): asserts v is StateSnapshot {
  const s = obj(v, 'snapshot');
  if (s.format !== SNAPSHOT_FORMAT) fail(`unsupported format ${String(s.format)}`);
  int(s.lastApplied, 'lastApplied');
  int(s.gcFloor, 'gcFloor');
  for (const x of arr(s.sessions, 'sessions')) {
    const o = obj(x, 'session');
    sid(o.id, 'session id');
    str(o.clientName, 'clientName');
    int(o.ttlMs, 'ttlMs');
    int(o.openedAt, 'openedAt');
    int(o.openIndex, 'openIndex');
  }
  for (const x of arr(s.locks, 'locks')) {
    const o = obj(x, 'lock');
    str(o.name, 'lock name');
    if (o.holder !== '') sid(o.holder, 'holder');
    int(o.token, 'token');
    int(o.grantedAt, 'grantedAt');
    int(o.latestToken, 'latestToken');
    if (o.latestHolder !== '') sid(o.latestHolder, 'latestHolder');
    for (const w of arr(o.waiters, 'waiters')) sid(w, 'waiter');
  }
  for (const x of arr(s.keys, 'keys')) {
    const o = obj(x, 'key');
    str(o.key, 'key');
    str(o.lock, 'key lock');
    int(o.watermark, 'watermark');
    if (typeof o.deleted !== 'boolean') fail('deleted must be a boolean');
    if (!(o.value instanceof Uint8Array)) fail('value must be bytes');
    if (o.deleted && o.value.length > 0) fail('a tombstone has no value');
  }
  for (const x of arr(s.dedup, 'dedup')) {
    const o = obj(x, 'dedup client');
    str(o.clientId, 'clientId');
    int(o.floor, 'floor');
    for (const y of arr(o.entries, 'dedup entries')) {
      const e = obj(y, 'dedup entry');
      int(e.requestId, 'requestId');
      if (!(COMMAND_TYPES as readonly unknown[]).includes(e.commandType)) fail('unknown commandType');
      str(e.result, 'result');
    }
  }
}

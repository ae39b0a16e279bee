// The replicated lock state machine: sessions, locks with FIFO waiters, the fenced key-value store and the
// request-dedup table, driven only by apply(index, command) on committed entries in log order.
//
// Deterministic: no clock, randomness or I/O. Time and session ids come from command fields the leader
// stamped. Every replica that applies the same entries from the same snapshot gives the same results, the
// same events and the same snapshot bytes.
//
// Contract of apply(): indexes strictly increase (Raft applies each entry once, in order; entries the
// node does not hand over, e.g. configuration changes, may leave gaps). Breaking it throws InvariantError.
// A malformed command never throws: it yields an `invalid` result and changes nothing.
import {
  isCommandType,
  isRequestCommandType,
  validateCommand,
  validateRequestMeta,
  type AcquireCommand,
  type CancelWaitCommand,
  type Command,
  type OpenSessionCommand,
  type ReleaseCommand,
  type RequestCommand,
  type WriteCommand,
} from './commands';
import { DedupTable, type DedupEntry } from './dedup';
import { checkFence } from './fencing';
import { FencedKv, type KvEntry } from './fencedKv';
import { InvariantError, invariant } from './invariant';
import * as L from './limits';
import { LockTable, queuePosition, type LockRecord } from './locks';
import {
  Reason,
  freezeResult,
  invalid,
  refused,
  type CommandResult,
  type LockEvent,
  type Result,
} from './results';
import { SessionTable } from './sessions';
import {
  SNAPSHOT_FORMAT,
  SnapshotError,
  checkSnapshotShape,
  type KeySnapshot,
  type StateSnapshot,
} from './snapshot';
import { sortedStrings } from './text';

/** A session as queries report it. */
export interface SessionInfo {
  id: string;
  clientName: string;
  ttlMs: number;
  openedAt: number;
  openIndex: number;
  /** Locks held, sorted. */
  locks: string[];
  /** Locks queued for, sorted. */
  waiting: string[];
}

/**
 * A lock as queries report it. Holds session ids, which are bearer secrets (with a token they allow fenced
 * writes): for the node's own use, never to be shown to other clients as they are.
 */
export interface LockInfo {
  name: string;
  holder: { sessionId: string; clientName: string; token: number; grantIndex: number; grantedAt: number } | null;
  latestToken: number;
  /** Queued session ids, FIFO order. */
  waiters: string[];
}

export type SessionLockState =
  | { state: 'holder'; token: number }
  | { state: 'waiting'; position: number }
  | { state: 'none' };

export interface StateStats {
  lastApplied: number;
  sessions: number;
  locks: number;
  heldLocks: number;
  waiters: number;
  keys: number;
  liveKeys: number;
  storeBytes: number;
  dedupClients: number;
  dedupResults: number;
}

type Fields = Record<string, unknown>;

function isRecord(v: unknown): v is Fields {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const NOOP: Result = freezeResult({ status: 'noop' });

export class LockStateMachine {
  private applied = 0;
  private readonly sessions = new SessionTable();
  private readonly locks = new LockTable();
  private readonly kv = new FencedKv();
  private readonly dedup = new DedupTable();

  /** Index of the last applied entry (0 before the first). */
  get lastApplied(): number {
    return this.applied;
  }

  /** Applies the committed entry at `index`. See the file comment for the contract. */
  apply(index: number, command: Command): CommandResult {
    if (!Number.isSafeInteger(index) || index <= this.applied) {
      throw new InvariantError(`apply(${index}) after ${this.applied}: indexes must strictly increase`);
    }
    this.applied = index;
    const c: unknown = command;
    if (!isRecord(c) || !isCommandType(c.type)) return outcome(freezeResult(invalid('unknown command type')));
    const type = c.type;

    if (!isRequestCommandType(type)) {
      const problem = validateCommand(c);
      if (problem !== null) return outcome(freezeResult(invalid(problem)));
      if (type === 'Noop') return outcome(NOOP);
      const events: LockEvent[] = [];
      const result = this.endSession(index, c.now as number, c.sessionId as string, 'expired', events);
      return { result: freezeResult(result), events, duplicate: false };
    }

    const metaProblem = validateRequestMeta(c);
    if (metaProblem !== null) return outcome(freezeResult(invalid(metaProblem)));
    const clientId = c.clientId as string;
    const requestId = c.requestId as number;
    const ackedBelow = (c.ackedBelow as number | undefined) ?? 0;
    const deduplicated = clientId !== '';
    if (deduplicated) {
      const seen = this.dedup.begin(clientId, requestId, ackedBelow, type);
      switch (seen.kind) {
        case 'duplicate':
          return { result: seen.result, events: [], duplicate: true };
        case 'too_old':
          return outcome(freezeResult(refused(Reason.REQUEST_TOO_OLD, 0)));
        case 'reused':
          return outcome(freezeResult(refused(Reason.REQUEST_ID_REUSED, 0)));
        case 'new':
          break;
      }
    }
    const events: LockEvent[] = [];
    const problem = validateCommand(c);
    const result = freezeResult(problem !== null ? invalid(problem) : this.execute(index, c as unknown as RequestCommand, events));
    if (deduplicated) this.dedup.record(clientId, requestId, ackedBelow, type, result);
    return { result, events, duplicate: false };
  }

  private execute(index: number, c: RequestCommand, events: LockEvent[]): Result {
    switch (c.type) {
      case 'OpenSession':
        return this.openSession(index, c);
      case 'CloseSession':
        return this.endSession(index, c.now, c.sessionId, 'closed', events);
      case 'Acquire':
        return this.acquire(index, c, events);
      case 'CancelWait':
        return this.cancelWait(c, events);
      case 'Release':
        return this.release(index, c, events);
      case 'Write':
        return this.write(c);
    }
  }

  private openSession(index: number, c: OpenSessionCommand): Result {
    if (this.sessions.has(c.sessionId)) return refused(Reason.SESSION_EXISTS, 0);
    if (this.sessions.size >= L.MAX_SESSIONS) return refused(Reason.TOO_MANY_SESSIONS, 0);
    this.sessions.add({ id: c.sessionId, clientName: c.clientName, ttlMs: c.ttlMs, openedAt: c.now, openIndex: index });
    return { status: 'session_opened', sessionId: c.sessionId, ttlMs: c.ttlMs };
  }

  /**
   * Close or Expire: drops the session's waits, removes the session (so it can never be granted), then
   * releases its locks in name order, each handed to its next live waiter with token = `index`.
   */
  private endSession(index: number, now: number, sessionId: string, cause: 'closed' | 'expired', events: LockEvent[]): Result {
    const s = this.sessions.get(sessionId);
    if (s === undefined) return refused(Reason.UNKNOWN_SESSION, 0);
    for (const name of sortedStrings(s.waiting)) {
      const rec = this.locks.get(name);
      invariant(rec !== undefined && rec.waiters.delete(sessionId), `session waits for ${JSON.stringify(name)} but is not queued`);
      events.push({ type: 'wait_ended', lock: name, sessionId, cause });
    }
    s.waiting.clear();
    this.sessions.delete(sessionId);
    const released = sortedStrings(s.held);
    for (const name of released) {
      const rec = this.locks.get(name);
      invariant(rec !== undefined && rec.holder === sessionId, `session holds ${JSON.stringify(name)} but the lock disagrees`);
      const token = this.locks.clearHolder(rec);
      s.held.delete(name);
      events.push({ type: 'released', lock: name, sessionId, token, cause });
      this.handOver(rec, index, now, cause, events);
      this.locks.collectIfIdle(rec);
    }
    events.push({ type: 'session_ended', sessionId, cause });
    return { status: 'session_ended', sessionId, cause, released };
  }

  /** Grants a just-freed lock to its first live waiter (token = `index`); dead waiters are dropped. */
  private handOver(rec: LockRecord, index: number, now: number, cause: 'released' | 'closed' | 'expired', events: LockEvent[]): void {
    for (const waiter of rec.waiters) {
      rec.waiters.delete(waiter);
      const s = this.sessions.get(waiter);
      if (s === undefined) continue; // cannot happen (ending a session drops its waits); never grant the dead
      s.waiting.delete(rec.name);
      this.locks.grant(rec, waiter, index, now);
      s.held.add(rec.name);
      events.push({ type: 'granted', lock: rec.name, sessionId: waiter, token: index, cause });
      return;
    }
  }

  private acquire(index: number, c: AcquireCommand, events: LockEvent[]): Result {
    let rec = this.locks.get(c.lock);
    const watermark = rec?.latestToken ?? 0;
    const s = this.sessions.get(c.sessionId);
    if (s === undefined) return refused(Reason.UNKNOWN_SESSION, watermark);
    if (rec !== undefined && rec.holder === c.sessionId) return { status: 'granted', token: rec.token, newGrant: false };
    const perSessionFull = s.held.size + s.waiting.size >= L.MAX_LOCKS_PER_SESSION;
    if (rec !== undefined && rec.holder !== null) {
      if (rec.waiters.has(c.sessionId)) {
        return { status: 'waiting', holderToken: rec.token, position: queuePosition(rec, c.sessionId) };
      }
      if (c.tryOnly) return { status: 'held', holderToken: rec.token };
      if (rec.waiters.size >= L.MAX_WAITERS_PER_LOCK) return refused(Reason.TOO_MANY_WAITERS, watermark);
      if (perSessionFull) return refused(Reason.TOO_MANY_LOCKS, watermark);
      rec.waiters.add(c.sessionId);
      s.waiting.add(c.lock);
      events.push({ type: 'queued', lock: c.lock, sessionId: c.sessionId, position: rec.waiters.size });
      return { status: 'waiting', holderToken: rec.token, position: rec.waiters.size };
    }
    if (perSessionFull) return refused(Reason.TOO_MANY_LOCKS, watermark);
    if (rec === undefined) {
      if (this.locks.size >= L.MAX_LOCKS) return refused(Reason.TOO_MANY_LOCKS, watermark);
      rec = this.locks.create(c.lock);
    }
    invariant(rec.waiters.size === 0, `free lock ${JSON.stringify(c.lock)} has waiters`);
    this.locks.grant(rec, c.sessionId, index, c.now);
    s.held.add(c.lock);
    events.push({ type: 'granted', lock: c.lock, sessionId: c.sessionId, token: index, cause: 'acquired' });
    return { status: 'granted', token: index, newGrant: true };
  }

  /**
   * Leaves the queue. If the wait already ended in a grant, answers `granted` (newGrant false) with the
   * token: the caller owns the lock and must not report DEADLINE_EXCEEDED as if it did not.
   */
  private cancelWait(c: CancelWaitCommand, events: LockEvent[]): Result {
    const rec = this.locks.get(c.lock);
    if (rec !== undefined && rec.holder === c.sessionId) return { status: 'granted', token: rec.token, newGrant: false };
    const s = this.sessions.get(c.sessionId);
    if (s === undefined) return refused(Reason.UNKNOWN_SESSION, rec?.latestToken ?? 0);
    if (rec !== undefined && rec.waiters.delete(c.sessionId)) {
      s.waiting.delete(c.lock);
      events.push({ type: 'wait_ended', lock: c.lock, sessionId: c.sessionId, cause: 'cancelled' });
      return { status: 'cancelled' };
    }
    return { status: 'not_waiting' };
  }

  private release(index: number, c: ReleaseCommand, events: LockEvent[]): Result {
    const rec = this.locks.get(c.lock);
    const watermark = rec?.latestToken ?? 0;
    if (rec !== undefined && rec.holder === c.sessionId) {
      if (rec.token !== c.token) return refused(Reason.WRONG_TOKEN, watermark);
      const token = this.locks.clearHolder(rec);
      this.sessions.get(c.sessionId)!.held.delete(c.lock);
      events.push({ type: 'released', lock: c.lock, sessionId: c.sessionId, token, cause: 'released' });
      this.handOver(rec, index, c.now, 'released', events);
      this.locks.collectIfIdle(rec);
      return { status: 'released', token };
    }
    if (!this.sessions.has(c.sessionId)) return refused(Reason.UNKNOWN_SESSION, watermark);
    return refused(Reason.NOT_HOLDER, watermark);
  }

  /** The fenced write; see fencing.ts for the decision and its order. All ops apply, or none. */
  private write(c: WriteCommand): Result {
    const rec = this.locks.get(c.lock);
    const decision = checkFence({
      lock: c.lock,
      sessionId: c.sessionId,
      token: c.token,
      keys: c.ops.map((op) => op.key),
      record: rec,
      gcFloor: this.locks.gcFloor,
      sessionOpen: this.sessions.has(c.sessionId),
      kv: this.kv,
    });
    if (!decision.ok) return refused(decision.reason, decision.watermark, decision.key);
    invariant(rec !== undefined, 'accepted write without a lock record');
    const plan = this.kv.plan(c.ops);
    if (this.kv.size + plan.newKeys.length > L.MAX_KEYS || this.kv.bytes + plan.bytesDelta > L.MAX_STORE_BYTES) {
      return refused(Reason.STORE_FULL, c.token);
    }
    for (const op of c.ops) {
      if (this.kv.apply(op, c.lock, c.token)) rec.boundKeys++;
    }
    return { status: 'written', token: c.token, ops: c.ops.length };
  }

  // ---- read-only queries --------------------------------------------------------------------------------

  getSession(id: string): SessionInfo | undefined {
    const s = this.sessions.get(id);
    if (s === undefined) return undefined;
    return {
      id: s.id,
      clientName: s.clientName,
      ttlMs: s.ttlMs,
      openedAt: s.openedAt,
      openIndex: s.openIndex,
      locks: sortedStrings(s.held),
      waiting: sortedStrings(s.waiting),
    };
  }

  /** undefined for a lock the machine has no record of (never used, or idle without keys and forgotten). */
  describeLock(name: string): LockInfo | undefined {
    const rec = this.locks.get(name);
    if (rec === undefined) return undefined;
    const holder =
      rec.holder === null
        ? null
        : {
            sessionId: rec.holder,
            clientName: this.sessions.get(rec.holder)?.clientName ?? '',
            token: rec.token,
            grantIndex: rec.token,
            grantedAt: rec.grantedAt,
          };
    return { name: rec.name, holder, latestToken: rec.latestToken, waiters: Array.from(rec.waiters) };
  }

  /** Where `sessionId` stands with `lock`: for answering a blocked or retried Acquire. */
  sessionLockState(lock: string, sessionId: string): SessionLockState {
    const rec = this.locks.get(lock);
    if (rec === undefined) return { state: 'none' };
    if (rec.holder === sessionId) return { state: 'holder', token: rec.token };
    const position = queuePosition(rec, sessionId);
    return position > 0 ? { state: 'waiting', position } : { state: 'none' };
  }

  /** The key with its lock and watermark; `value` null for a deleted key (tombstone). */
  get(key: string): KvEntry | undefined {
    return this.kv.get(key);
  }

  /**
   * Live keys with `prefix`, in code point (= UTF-8 byte) order, at most min(limit, MAX_LIST_LIMIT + 1): one
   * more than the largest page, so that a caller asking for a full page can tell whether more follow.
   */
  list(prefix: string, limit: number, startAfter?: string): KvEntry[] {
    const cap = L.MAX_LIST_LIMIT + 1;
    const n = Number.isFinite(limit) ? Math.max(0, Math.min(Math.floor(limit), cap)) : cap;
    return this.kv.list(prefix, n, startAfter);
  }

  /** Open session ids, sorted (e.g. for a new leader to start every deadline afresh). */
  sessionIds(): string[] {
    return this.sessions.sortedIds();
  }

  stats(): StateStats {
    let heldLocks = 0;
    let waiters = 0;
    for (const rec of this.locks.values()) {
      if (rec.holder !== null) heldLocks++;
      waiters += rec.waiters.size;
    }
    return {
      lastApplied: this.applied,
      sessions: this.sessions.size,
      locks: this.locks.size,
      heldLocks,
      waiters,
      keys: this.kv.size,
      liveKeys: this.kv.liveKeys,
      storeBytes: this.kv.bytes,
      dedupClients: this.dedup.clientCount,
      dedupResults: this.dedup.resultCount,
    };
  }

  /**
   * Every invariant, checked in full (O(state)): for tests, the simulator and after a restore. Returns the
   * violations found; empty means healthy.
   */
  checkInvariants(): string[] {
    const p: string[] = [];
    const q = (s: string): string => JSON.stringify(s);
    const boundKeys = new Map<string, number>();
    this.kv.forEachSorted((r) => {
      boundKeys.set(r.lock, (boundKeys.get(r.lock) ?? 0) + 1);
      const rec = this.locks.get(r.lock);
      if (rec === undefined) p.push(`key ${q(r.key)} bound to lock ${q(r.lock)} without a record`);
      else if (r.watermark > rec.latestToken) p.push(`key ${q(r.key)} watermark ${r.watermark} above its lock's latest token`);
      if (r.watermark < 1) p.push(`key ${q(r.key)} has no watermark`);
    });
    if (this.locks.gcFloor > this.applied) p.push('gcFloor above lastApplied');
    for (const rec of this.locks.values()) {
      const n = q(rec.name);
      if (rec.latestToken < 1 || rec.latestToken > this.applied) p.push(`lock ${n} latest token ${rec.latestToken} out of range`);
      if (rec.holder !== null) {
        if (rec.token !== rec.latestToken) p.push(`lock ${n} held under ${rec.token}, latest ${rec.latestToken}`);
        if (rec.latestHolder !== rec.holder) p.push(`lock ${n} latestHolder is not the holder`);
        if (!this.sessions.get(rec.holder)?.held.has(rec.name)) p.push(`lock ${n} holder session does not know it`);
        if (rec.waiters.has(rec.holder)) p.push(`lock ${n} holder also waits`);
      } else {
        if (rec.token !== 0 || rec.grantedAt !== 0) p.push(`free lock ${n} has a token`);
        if (rec.waiters.size > 0) p.push(`free lock ${n} has waiters`);
      }
      for (const w of rec.waiters) {
        if (!this.sessions.get(w)?.waiting.has(rec.name)) p.push(`lock ${n} waiter ${w} is dead or does not know it`);
      }
      if (rec.waiters.size > L.MAX_WAITERS_PER_LOCK) p.push(`lock ${n} has too many waiters`);
      if (rec.boundKeys !== (boundKeys.get(rec.name) ?? 0)) p.push(`lock ${n} bound key count ${rec.boundKeys} is wrong`);
      if (rec.holder === null && rec.waiters.size === 0 && rec.boundKeys === 0) p.push(`idle lock ${n} not forgotten`);
    }
    for (const s of this.sessions.values()) {
      if (s.openIndex > this.applied) p.push(`session ${s.id} opened in the future`);
      for (const name of s.held) if (this.locks.get(name)?.holder !== s.id) p.push(`session ${s.id} thinks it holds ${q(name)}`);
      for (const name of s.waiting) if (!this.locks.get(name)?.waiters.has(s.id)) p.push(`session ${s.id} thinks it waits for ${q(name)}`);
      if (s.held.size + s.waiting.size > L.MAX_LOCKS_PER_SESSION) p.push(`session ${s.id} has too many locks`);
    }
    if (this.sessions.size > L.MAX_SESSIONS) p.push('too many sessions');
    if (this.locks.size > L.MAX_LOCKS) p.push('too many locks');
    if (this.kv.size > L.MAX_KEYS || this.kv.bytes > L.MAX_STORE_BYTES) p.push('store over its bounds');
    p.push(...this.kv.check(), ...this.dedup.check());
    return p;
  }

  // ---- snapshot and restore -----------------------------------------------------------------------------

  /**
   * The whole state as canonical plain data. Values are shared with the machine, not copied: stored values
   * are never mutated in place (a write replaces them), so the snapshot stays valid after further applies,
   * as long as nobody mutates its arrays.
   */
  toSnapshot(): StateSnapshot {
    return {
      format: SNAPSHOT_FORMAT,
      lastApplied: this.applied,
      gcFloor: this.locks.gcFloor,
      sessions: this.sessions.sortedIds().map((id) => {
        const s = this.sessions.get(id)!;
        return { id: s.id, clientName: s.clientName, ttlMs: s.ttlMs, openedAt: s.openedAt, openIndex: s.openIndex };
      }),
      locks: this.locks.sorted().map((rec) => ({
        name: rec.name,
        holder: rec.holder ?? '',
        token: rec.token,
        grantedAt: rec.grantedAt,
        latestToken: rec.latestToken,
        latestHolder: rec.latestHolder,
        waiters: Array.from(rec.waiters),
      })),
      keys: this.keySnapshots(),
      dedup: Array.from(this.dedup.entries(), ([clientId, c]) => ({
        clientId,
        floor: c.floor,
        entries: Array.from(c.entries.values(), (e) => ({
          requestId: e.requestId,
          commandType: e.commandType,
          result: JSON.stringify(e.result),
        })),
      })),
    };
  }

  private keySnapshots(): KeySnapshot[] {
    const keys: KeySnapshot[] = [];
    this.kv.forEachSorted((r) => {
      keys.push({ key: r.key, lock: r.lock, watermark: r.watermark, deleted: r.value === null, value: r.value ?? EMPTY });
    });
    return keys;
  }

  /**
   * Rebuilds a machine from a snapshot; throws SnapshotError if it is malformed or inconsistent. The machine
   * adopts the snapshot's value arrays without copying: do not mutate them afterwards (decodeSnapshot
   * output is fresh, and toSnapshot output shares arrays that are never mutated).
   */
  static fromSnapshot(snapshot: StateSnapshot): LockStateMachine {
    checkSnapshotShape(snapshot);
    const m = new LockStateMachine();
    m.applied = snapshot.lastApplied;
    m.locks.gcFloor = snapshot.gcFloor;
    for (const s of snapshot.sessions) {
      if (m.sessions.has(s.id)) throw new SnapshotError(`session ${s.id} twice`);
      m.sessions.add({ id: s.id, clientName: s.clientName, ttlMs: s.ttlMs, openedAt: s.openedAt, openIndex: s.openIndex });
    }
    for (const l of snapshot.locks) {
      if (m.locks.get(l.name) !== undefined) throw new SnapshotError(`lock ${JSON.stringify(l.name)} twice`);
      const holder = l.holder === '' ? null : l.holder;
      const rec: LockRecord = {
        name: l.name,
        holder,
        token: l.token,
        grantedAt: l.grantedAt,
        latestToken: l.latestToken,
        latestHolder: l.latestHolder,
        waiters: new Set(l.waiters),
        boundKeys: 0,
      };
      if (rec.waiters.size !== l.waiters.length) throw new SnapshotError(`lock ${JSON.stringify(l.name)} has a waiter twice`);
      m.locks.restore(rec);
      if (holder !== null) {
        const s = m.sessions.get(holder);
        if (s === undefined) throw new SnapshotError(`lock ${JSON.stringify(l.name)} held by an unknown session`);
        s.held.add(l.name);
      }
      for (const w of l.waiters) {
        const s = m.sessions.get(w);
        if (s === undefined) throw new SnapshotError(`lock ${JSON.stringify(l.name)} awaited by an unknown session`);
        s.waiting.add(l.name);
      }
    }
    for (const k of snapshot.keys) {
      const rec = m.locks.get(k.lock);
      if (rec === undefined) throw new SnapshotError(`key ${JSON.stringify(k.key)} bound to an unknown lock`);
      try {
        m.kv.restore(k.key, k.lock, k.watermark, k.deleted ? null : k.value);
      } catch (e) {
        throw new SnapshotError(e instanceof Error ? e.message : String(e));
      }
      rec.boundKeys++;
    }
    for (const d of snapshot.dedup) {
      const entries: DedupEntry[] = d.entries.map((e) => ({
        requestId: e.requestId,
        commandType: e.commandType,
        result: parseResult(e.result),
      }));
      try {
        m.dedup.restore(d.clientId, d.floor, entries);
      } catch (e) {
        throw new SnapshotError(e instanceof Error ? e.message : String(e));
      }
    }
    const problems = m.checkInvariants();
    if (problems.length > 0) throw new SnapshotError(problems.slice(0, 5).join('; '));
    return m;
  }
}

const EMPTY = new Uint8Array(0);

function outcome(result: Result): CommandResult {
  return { result, events: [], duplicate: false };
}

function parseResult(json: string): Result {
  let v: unknown;
  try {
    v = JSON.parse(json);
  } catch {
    throw new SnapshotError('a stored result is not JSON');
  }
  if (!isRecord(v) || typeof v.status !== 'string') throw new SnapshotError('a stored result has no status');
  return freezeResult(v as unknown as Result);
}

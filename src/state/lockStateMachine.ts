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
import { checkCaller } from './auth/access';
import { AuthTable } from './auth/authTable';
import { AuthView } from './auth/view';
import type { QuotaName } from './auth/names';
import { quotaOf } from './auth/permissions';
import { isCommandType, isRequestCommandType, validateCommand, validateRequestBody, validateRequestMeta, type Command, type LeaseCommand, type RequestCommand } from './commands';
import { DedupTable } from './dedup';
import { FencedKv, type KvEntry, type KvListOptions } from './fencedKv';
import { InvariantError, invariant } from './invariant';
import * as L from './limits';
import { LockTable, queuePosition } from './locks';
import {
  Reason,
  freezeResult,
  invalid,
  refused,
  type GrantEndCause,
  type LockEvent,
  type RefusedResult,
  type SessionEndCause,
  type SessionEndedResult,
} from './results';
import type { CommandResult, Result } from './resultStatuses';
import {
  addHeld,
  addSharing,
  clearWaiting,
  deleteHeld,
  deleteSharing,
  deleteWaiting,
  firstWaiter,
  hasWaiter,
  heldLocks,
  holderIdOf,
  isDelayed,
  isHeld,
  lockCountOf,
  multiWaitOf,
  sharedGrantById,
  sharedGrantOf,
  tokenOf,
  waiterCount,
  waiterDelayOf,
  waitsShared,
  type LockRecord,
  type Session,
} from './records';
import { entryOf, type MachineState, type PermissionScope } from './registry/index';
import type { SessionLabels } from '../protocol/labels';
import { SemaphoreTable } from './semaphores';
import { permitStateOf, semaphoreInfo, type SemaphoreInfo, type SessionPermitState } from './semaphoreInfo';
import { leaveSemaphores, releasePermits } from './semaphoreSteps';
import { SessionTable } from './sessions';
import { checkMultiWaiters, grantSet, isReady } from './multiLocks';
import { SnapshotEncoding } from './capture';
import { UsageTable, recountUsage } from './usage';
import { SLICE_UNITS, encodeState, readState, writeState, type StateTables, type StateView } from './snapshot';
import { SnapshotError } from './snapshotWire';
import { compareStrings, sortedStrings } from './text';

/** A session as queries report it. */
export interface SessionInfo {
  id: string;
  clientName: string;
  /** As given at open, sorted by key. */
  labels: SessionLabels;
  ttlMs: number;
  openedAt: number;
  openIndex: number;
  /** Locks held, sorted. */
  locks: string[];
  /** Locks queued for, sorted. */
  waiting: string[];
  /** Locks held in shared mode, sorted (absent when none). */
  sharedLocks?: string[];
}

/**
 * A lock as queries report it. Holds session ids, which are bearer secrets (with a token they allow fenced
 * writes): for the node's own use, never to be shown to other clients as they are.
 */
export interface LockInfo {
  name: string;
  holder: { sessionId: string; clientName: string; labels: SessionLabels; token: number; grantIndex: number; grantedAt: number; lockDelayMs?: number } | null;
  latestToken: number;
  /** The lock-delay in force (docs/architecture.md#lock-delay); absent when none. */
  delay?: LockDelayInfo;
  /** Queued session ids, FIFO order. */
  waiters: string[];
  /**
   * The same waiters with what their clients said of themselves; `shared`: it waits for a shared grant;
   * `set`: it is an AcquireAll set, waiting for every lock of its set at once.
   */
  waiterSessions: { sessionId: string; clientName: string; labels: SessionLabels; shared?: true; set?: true }[];
  /** The shared grants in force, in grant order, each with its own token (absent when none). */
  sharedHolders?: SharedHolderInfo[];
}

/** A shared grant as Describe reports it. */
export interface SharedHolderInfo {
  sessionId: string;
  clientName: string;
  labels: SessionLabels;
  token: number;
  grantedAt: number;
}

/** A lock-delay in force: the index of the entry that started it, its length, and when it ends by that leader's clock. */
export interface LockDelayInfo {
  since: number;
  delayMs: number;
  until: number;
}

/** A lock as a listing reports it: like LockInfo, with the head of its queue and when each waiter was queued. */
export interface LockListing {
  name: string;
  holder: { sessionId: string; token: number; grantedAt: number } | null;
  latestToken: number;
  /** The lock-delay in force; absent when none. */
  delay?: LockDelayInfo;
  /** The first `maxWaiters` waiters, FIFO, each with the `now` of the Acquire that queued it (0: unknown). */
  waiters: Array<{ sessionId: string; since: number; shared?: true }>;
  waiterCount: number;
  /** The shared grants in force, in grant order (absent when none). */
  sharedHolders?: Array<{ sessionId: string; token: number; grantedAt: number }>;
}

export interface LockListOptions {
  /** Only locks whose names sort after this one. */
  startAfter?: string;
  /** At most this many (capped at MAX_LIST_LIMIT + 1, so that a caller can tell whether more follow). */
  limit: number;
  /** Also the free locks without waiters that are kept (they own keys). */
  includeIdle: boolean;
  maxWaiters: number;
  /** Leaves out the locks it refuses (the caller's permissions): they do not count towards `limit`. */
  visible: (name: string) => boolean;
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
  /** Semaphores in use (a permit held or a waiter: an idle one is forgotten), permits held, and waits for permits. */
  semaphores: number;
  permitsHeld: number;
  permitWaiters: number;
}

type Fields = Record<string, unknown>;

function isRecord(v: unknown): v is Fields {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export class LockStateMachine {
  private applied = 0;
  /** A snapshot capture is open (captureSnapshot): the tables keep what it reads until it ends. */
  private capturing = false;
  private readonly sessions = new SessionTable();
  private readonly locks = new LockTable();
  private readonly semaphores = new SemaphoreTable();
  private readonly kv = new FencedKv();
  private readonly dedup = new DedupTable();
  private readonly authTable = new AuthTable();
  /** What each caller uses, for its quotas (derived: recounted on restore). */
  private readonly usage = new UsageTable();
  /** The auth table, session owners and usage, read-only, for the node's checks (auth/view.ts). */
  readonly auth = new AuthView(
    this.authTable,
    (id) => this.sessions.get(id)?.owner,
    (caller) => ({ ...this.usage.counts(caller), dedupClients: this.dedup.clientsOf(caller), dedupResults: this.dedup.resultsOf(caller), semaphores: this.semaphores.usedBy(caller, 'semaphores') }),
  );

  /** What registry entries execute against: the tables and the steps commands share (registry/entry.ts). */
  private readonly state: MachineState = {
    sessions: this.sessions,
    locks: this.locks,
    semaphores: this.semaphores,
    kv: this.kv,
    authTable: this.authTable,
    usage: this.usage,
    overQuota: (caller, quota, used, adding) => this.overQuota(caller, quota, used, adding),
    endSession: (index, now, sessionId, cause, events) => this.endSession(index, now, sessionId, cause, events),
    endSessionsOf: (index, now, owner, events) => this.endSessionsOf(index, now, owner, events),
    leaveSession: (s, cause, events) => this.leaveSession(s, cause, events),
    releaseSession: (index, now, s, cause, events) => this.releaseSession(index, now, s, cause, events),
    handOver: (rec, index, now, cause, events) => this.handOver(rec, index, now, cause, events),
    admitReaders: (recs, index, now, events) => this.admitReaders(recs, index, now, events),
  };

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
      const events: LockEvent[] = [];
      const command = c as unknown as LeaseCommand;
      const result = entryOf(command.type).execute(this.state, index, command, events);
      return { result: freezeResult(result), events, duplicate: false };
    }

    // Every entry is validated here, once: the codec hands over what it decoded unchecked (a log may carry
    // anything a buggy or older proposer wrote), and tests and tools apply commands that were never encoded.
    const metaProblem = validateRequestMeta(c);
    if (metaProblem !== null) return outcome(freezeResult(invalid(metaProblem)));
    const clientId = c.clientId as string;
    const requestId = c.requestId as number;
    const ackedBelow = (c.ackedBelow as number | undefined) ?? 0;
    const caller = (c.caller as string | undefined) ?? '';
    const deduplicated = clientId !== '';
    if (deduplicated) {
      const seen = this.dedup.begin(caller, clientId, requestId, ackedBelow, type);
      switch (seen.kind) {
        case 'duplicate':
          return { result: seen.result, events: [], duplicate: true };
        case 'too_old':
          return outcome(freezeResult(refused(Reason.REQUEST_TOO_OLD, 0)));
        case 'reused':
          return outcome(freezeResult(refused(Reason.REQUEST_ID_REUSED, 0)));
        case 'full':
          return outcome(freezeResult(refused(Reason.DEDUP_FULL, 0)));
        case 'new':
          break;
      }
    }
    const events: LockEvent[] = [];
    const result = freezeResult(this.checkAndExecute(index, type, c, events));
    if (deduplicated) this.dedup.record(caller, clientId, requestId, ackedBelow, type, result, quotaOf(this.authTable, caller, 'dedup_clients'));
    return { result, events, duplicate: false };
  }

  /** A request whose ids are valid: validated, its caller checked (auth/access.ts, then its entry's rule), then executed. */
  private checkAndExecute(index: number, type: RequestCommand['type'], c: Fields, events: LockEvent[]): Result {
    const problem = validateRequestBody(type, c);
    if (problem !== null) return invalid(problem);
    const command = c as unknown as RequestCommand;
    const entry = entryOf(command.type);
    const caller = checkCaller(this.authTable, command);
    if (caller !== null && caller !== 'checked') return caller;
    const refusal = caller === 'checked' ? (entry.permit?.(this.permissionScope(command.caller ?? ''), command) ?? null) : null;
    return refusal ?? entry.execute(this.state, index, command, events);
  }

  private permissionScope(caller: string): PermissionScope {
    return { table: this.authTable, caller, sessionOwner: (id) => this.sessions.get(id)?.owner };
  }

  /** Would `adding` more of `quota` take `caller` (not '') above it? Nothing added is never refused. */
  private overQuota(caller: string, quota: QuotaName, used: number, adding: number): boolean {
    return caller !== '' && adding > 0 && used + adding > quotaOf(this.authTable, caller, quota);
  }

  /**
   * Close or Expire: drops the session's waits, removes the session (so it can never be granted), then
   * releases its locks in name order, each handed to its next live waiter with token = `index`.
   */
  private endSession(index: number, now: number, sessionId: string, cause: SessionEndCause, events: LockEvent[]): SessionEndedResult | RefusedResult {
    const s = this.sessions.get(sessionId);
    if (s === undefined) return refused(Reason.UNKNOWN_SESSION, 0);
    const left = this.leaveSession(s, cause, events);
    const released = this.releaseSession(index, now, s, cause, events);
    this.admitReaders(left, index, now, events);
    return { status: 'session_ended', sessionId, cause, released };
  }

  /**
   * A deleted user's sessions end in the entry that deletes it (cause `revoked`), as expiring sessions do:
   * all leave first, so none is handed a lock another one releases; then their locks go to the next live
   * waiters, with this entry's index as token. O(sessions), on a rare admin command.
   */
  private endSessionsOf(index: number, now: number, owner: string, events: LockEvent[]): void {
    const ending = Array.from(this.sessions.values()).filter((s) => s.owner === owner);
    ending.sort((a, b) => compareStrings(a.id, b.id));
    const left = ending.flatMap((s) => this.leaveSession(s, 'revoked', events));
    for (const s of ending) this.releaseSession(index, now, s, 'revoked', events);
    this.admitReaders(left, index, now, events);
  }

  /**
   * The first half of a session's end: its waits end and it is removed, so that nothing is granted to it.
   * Returns the locks whose queues it left, in name order (for admitReaders once the ending is done).
   */
  private leaveSession(s: Session, cause: SessionEndCause, events: LockEvent[]): LockRecord[] {
    const left = sortedByName(s.waiting);
    for (const rec of left) {
      invariant(this.locks.dequeue(rec, s), () => `session waits for ${JSON.stringify(rec.name)} but is not queued`);
      events.push({ type: 'wait_ended', lock: rec.name, sessionId: s.id, cause });
    }
    clearWaiting(s);
    leaveSemaphores(this.semaphores, s, cause, events);
    this.sessions.delete(s);
    if (s.usage !== null) s.usage.sessions--;
    return left;
  }

  /**
   * The second half: its locks, exclusive and shared, are released in name order, each handed to its next
   * live waiters; returns their names.
   */
  private releaseSession(index: number, now: number, s: Session, cause: SessionEndCause, events: LockEvent[]): string[] {
    const released: string[] = [];
    const ending = [...heldLocks(s), ...sortedByName(s.sharing)].sort(byName);
    for (const rec of ending) {
      let token: number;
      if (rec.holder === s) {
        deleteHeld(s, rec);
        token = this.locks.clearHolder(rec);
        events.push({ type: 'released', lock: rec.name, sessionId: s.id, token, cause });
      } else {
        invariant(deleteSharing(s, rec), () => `session holds ${JSON.stringify(rec.name)} but the lock disagrees`);
        token = this.locks.clearSharer(rec, s);
        events.push({ type: 'released', lock: rec.name, sessionId: s.id, token, cause, shared: true });
      }
      released.push(rec.name);
      this.handOver(rec, index, now, cause, events);
      this.locks.collectIfIdle(rec);
    }
    releasePermits(this.semaphores, this.sessions, s, index, now, cause, events);
    events.push({ type: 'session_ended', sessionId: s.id, cause });
    this.usage.collect(s.usage);
    return released;
  }

  /**
   * Grants a just-freed lock to its first live waiters (token = `index`); dead waiters are dropped. Returns
   * the session id of the first new holder, undefined when nobody got the lock. A grant that ended by expiry
   * or revocation (of the lock, or of its session) starts its lock-delay instead, if it asked for one: the
   * lock then goes to nobody until EndLockDelays; a release or a close by its holder starts none. While
   * shared grants remain, nobody is handed the lock (the head of the queue is a writer waiting for them).
   */
  private handOver(rec: LockRecord, index: number, now: number, cause: GrantEndCause | 'delay_ended', events: LockEvent[]): string | undefined {
    if (rec.sharers !== null) return undefined;
    if (this.locks.startDelay(rec, DELAY_CAUSES.has(cause), index, now)) return undefined;
    return this.grantFromQueue(rec, index, now, cause, events);
  }

  /**
   * Grants the head of the queue, in FIFO order (docs/architecture.md#read-write-locks): an exclusive waiter
   * alone, when nobody holds the lock; or the run of shared waiters at the head, each with this entry's
   * index as its token, up to the first exclusive waiter. Returns the first new holder's session id.
   */
  private grantFromQueue(rec: LockRecord, index: number, now: number, cause: GrantEndCause | 'delay_ended' | 'acquired', events: LockEvent[]): string | undefined {
    let first: string | undefined;
    for (let s = firstWaiter(rec); s !== undefined; s = firstWaiter(rec)) {
      const shared = waitsShared(rec, s);
      if (!shared && rec.sharers !== null) break; // a writer waits for the readers granted before it
      const set = multiWaitOf(rec, s);
      if (set !== undefined) {
        // A set heading this queue blocks it until it can be granted whole (docs/architecture.md#atomic-multi-lock).
        if (!isReady(set)) break;
        grantSet(this.locks, set, index, now, cause, events);
        return s.id;
      }
      const delayMs = waiterDelayOf(rec, s);
      this.locks.dequeue(rec, s);
      deleteWaiting(s, rec);
      if (this.sessions.get(s.id) !== s) continue; // cannot happen (ending a session drops its waits); never grant the dead
      if (shared) {
        this.locks.grantShared(rec, s, index, now);
        addSharing(s, rec);
        events.push({ type: 'granted', lock: rec.name, sessionId: s.id, token: index, cause, shared: true });
        first ??= s.id;
        continue;
      }
      this.locks.grant(rec, s, index, now, delayMs);
      addHeld(s, rec);
      events.push({ type: 'granted', lock: rec.name, sessionId: s.id, token: index, cause });
      return s.id;
    }
    return first;
  }

  /**
   * After waiters left the queues of `recs` (cancelled, their sessions ended): a lock held only in shared
   * mode whose head is now a reader grants the readers at the head, who no longer wait behind a writer; a
   * free lock whose head was a set of an AcquireAll (multiLocks.ts) grants its new head.
   */
  private admitReaders(recs: readonly LockRecord[], index: number, now: number, events: LockEvent[]): void {
    for (const rec of recs) {
      if (rec.holder === null && !isDelayed(rec) && (rec.sharers !== null || rec.waiters !== null)) this.grantFromQueue(rec, index, now, 'acquired', events);
      this.locks.collectIfIdle(rec); // a lock only a set waited for
    }
  }

  /**
   * The answer applying `command` now would give from the dedup table (the stored result of that very
   * request: same client, request id and command type), or undefined when it would not be a stored answer
   * (new, too old, reused, not deduplicated, malformed). Read-only: changes nothing, not even LRU order.
   */
  storedResult(command: RequestCommand): Result | undefined {
    const c: unknown = command;
    if (!isRecord(c) || !isCommandType(c.type) || !isRequestCommandType(c.type)) return undefined;
    if (validateRequestMeta(c) !== null || c.clientId === '') return undefined;
    const caller = (c.caller as string | undefined) ?? '';
    return this.dedup.peek(caller, c.clientId as string, c.requestId as number, (c.ackedBelow as number | undefined) ?? 0, c.type);
  }

  // ---- read-only queries --------------------------------------------------------------------------------

  getSession(id: string): SessionInfo | undefined {
    const s = this.sessions.get(id);
    if (s === undefined) return undefined;
    return {
      id: s.id,
      clientName: s.clientName,
      labels: s.labels,
      ttlMs: s.ttlMs,
      openedAt: s.openedAt,
      openIndex: s.openIndex,
      locks: sortedStrings(heldLocks(s).map((rec) => rec.name)),
      waiting: sortedNames(s.waiting),
      ...(s.sharing === null ? {} : { sharedLocks: sortedNames(s.sharing) }),
    };
  }

  /** An open session's client name and labels: cheap, for each grant a watch shows. */
  sessionFacts(id: string): { clientName: string; labels: SessionLabels } | undefined {
    const s = this.sessions.get(id);
    return s === undefined ? undefined : { clientName: s.clientName, labels: s.labels };
  }

  /** undefined for a lock the machine has no record of (never used, or idle without keys and forgotten). */
  describeLock(name: string): LockInfo | undefined {
    const rec = this.locks.get(name);
    if (rec === undefined) return undefined;
    const holder =
      rec.holder === null
        ? null
        : {
            sessionId: rec.holder.id,
            clientName: rec.holder.clientName,
            labels: rec.holder.labels,
            token: tokenOf(rec),
            grantIndex: tokenOf(rec),
            grantedAt: rec.grantedAt,
            ...(rec.lockDelayMs === 0 ? {} : { lockDelayMs: rec.lockDelayMs }),
          };
    const queue = rec.waiters === null ? [] : Array.from(rec.waiters.keys());
    const waiters = queue.map((s) => s.id);
    const waiterSessions = queue.map((s) => ({
      sessionId: s.id,
      clientName: s.clientName,
      labels: s.labels,
      ...(waitsShared(rec, s) ? { shared: true as const } : {}),
      ...(multiWaitOf(rec, s) !== undefined ? { set: true as const } : {}),
    }));
    const delay = delayOf(rec);
    const sharedHolders = rec.sharers === null ? null : Array.from(rec.sharers, ([s, g]) => ({ sessionId: s.id, clientName: s.clientName, labels: s.labels, token: g.token, grantedAt: g.grantedAt }));
    return {
      name: rec.name,
      holder,
      latestToken: rec.latestToken,
      ...(delay === null ? {} : { delay }),
      waiters,
      waiterSessions,
      ...(sharedHolders === null ? {} : { sharedHolders }),
    };
  }

  /** undefined for a semaphore nobody holds a permit of or waits for (idle semaphores are forgotten). */
  describeSemaphore(name: string): SemaphoreInfo | undefined {
    return semaphoreInfo(this.semaphores.get(name));
  }

  /** Where `sessionId` stands with a semaphore: for answering a blocked or retried SemaphoreAcquire. */
  sessionPermitState(semaphore: string, sessionId: string): SessionPermitState {
    return permitStateOf(this.semaphores.get(semaphore), this.sessions.get(sessionId));
  }

  /** The lock's delay in force, undefined when none (or no record). */
  lockDelayOf(name: string): LockDelayInfo | undefined {
    const rec = this.locks.get(name);
    return rec === undefined ? undefined : (delayOf(rec) ?? undefined);
  }

  /** Every lock-delay in force, by lock name (for a new leader's timers). O(locks). */
  lockDelays(): Array<{ lock: string } & LockDelayInfo> {
    const out: Array<{ lock: string } & LockDelayInfo> = [];
    this.locks.forEachSorted((rec) => {
      const delay = delayOf(rec);
      if (delay !== null) out.push({ lock: rec.name, ...delay });
    });
    return out;
  }

  /** Locks whose names start with `prefix`, in name (code point) order. O(locks scanned). */
  listLocks(prefix: string, opts: LockListOptions): LockListing[] {
    const out: LockListing[] = [];
    const limit = Math.min(opts.limit, L.MAX_LIST_LIMIT + 1);
    if (limit <= 0) return out;
    const { startAfter } = opts;
    const from = startAfter !== undefined && compareStrings(startAfter, prefix) >= 0 ? startAfter : prefix;
    this.locks.scanFrom(from, (rec) => {
      if (!rec.name.startsWith(prefix)) return false;
      const busy = isHeld(rec) || rec.waiters !== null || isDelayed(rec);
      if (rec.name !== startAfter && (busy || opts.includeIdle) && opts.visible(rec.name)) out.push(listing(rec, opts.maxWaiters));
      return out.length < limit;
    });
    return out;
  }

  /** Where `sessionId` stands with `lock`: for answering a blocked or retried Acquire. */
  sessionLockState(lock: string, sessionId: string): SessionLockState {
    const rec = this.locks.get(lock);
    if (rec === undefined) return { state: 'none' };
    if (holderIdOf(rec) === sessionId) return { state: 'holder', token: tokenOf(rec) };
    const sharedGrant = sharedGrantById(rec, sessionId);
    if (sharedGrant !== undefined) return { state: 'holder', token: sharedGrant.token };
    const position = queuePosition(rec, sessionId);
    return position > 0 ? { state: 'waiting', position } : { state: 'none' };
  }

  /** The key with its lock and watermark; `value` null for a deleted key (tombstone). */
  get(key: string): KvEntry | undefined {
    return this.kv.get(key);
  }

  /**
   * Keys with `prefix` (live ones, and deleted ones with `includeDeleted`), in code point (= UTF-8 byte)
   * order, at most min(limit, MAX_LIST_LIMIT + 1): one more than the largest page, so that a caller asking
   * for a full page can tell whether more follow.
   */
  list(prefix: string, limit: number, opts: KvListOptions = {}): KvEntry[] {
    const cap = L.MAX_LIST_LIMIT + 1;
    const n = Number.isFinite(limit) ? Math.max(0, Math.min(Math.floor(limit), cap)) : cap;
    return this.kv.list(prefix, n, opts);
  }

  /** Open session ids, sorted (e.g. for a new leader to start every deadline afresh). */
  sessionIds(): string[] {
    return this.sessions.sortedIds();
  }

  /** Every open session's lease: its TTL and its last checkpoint (for a new leader's deadlines). */
  leases(): Array<{ id: string; ttlMs: number; remainingMs: number }> {
    return Array.from(this.sessions.values(), (s) => ({ id: s.id, ttlMs: s.ttlMs, remainingMs: s.remainingMs }));
  }

  /** What ending the session costs to apply: 1 plus the locks it holds and waits for (undefined: not open). */
  sessionLoad(id: string): number | undefined {
    const s = this.sessions.get(id);
    return s === undefined ? undefined : 1 + lockCountOf(s) + this.semaphores.countOf(s);
  }

  stats(): StateStats {
    let heldLocks = 0;
    let waiters = 0;
    for (const rec of this.locks.values()) {
      if (isHeld(rec)) heldLocks++;
      waiters += waiterCount(rec);
    }
    let permitsHeld = 0;
    let permitWaiters = 0;
    for (const rec of this.semaphores.values()) {
      permitsHeld += rec.held;
      permitWaiters += rec.waiters?.size ?? 0;
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
      semaphores: this.semaphores.size,
      permitsHeld,
      permitWaiters,
    };
  }

  /**
   * Every invariant, checked in full (O(state)): for tests, the simulator and after a restore. Returns the
   * violations found; empty means healthy. One pass over locks, sessions and keys with no lookups by name
   * (records point at each other); messages are built only for violations.
   */
  checkInvariants(): string[] {
    const p: string[] = [];
    const q = (s: string): string => JSON.stringify(s);
    const applied = this.applied;
    if (this.locks.gcFloor > applied) p.push('gcFloor above lastApplied');
    let keyCount = 0;
    const boundKeys = new Map<LockRecord, number>();
    this.kv.forEachSorted((r) => {
      keyCount++;
      // A key bound to a semaphore's slot pins no record: the slot's tokens only go up (slotFencing.ts).
      if (r.slot !== undefined) {
        if (r.watermark < 1) p.push(`key ${q(r.key)} has no watermark`);
        return;
      }
      const rec = this.locks.get(r.lock);
      if (rec === undefined) p.push(`key ${q(r.key)} bound to lock ${q(r.lock)} without a record`);
      else {
        boundKeys.set(rec, (boundKeys.get(rec) ?? 0) + 1);
        if (r.watermark > rec.latestToken) p.push(`key ${q(r.key)} watermark ${r.watermark} above its lock's latest token`);
      }
      if (r.watermark < 1) p.push(`key ${q(r.key)} has no watermark`);
    });
    const open = new Set<Session>(this.sessions.values());
    const isOpen = (s: Session): boolean => open.has(s);
    const maxWaiters = L.MAX_WAITERS_PER_LOCK;
    let lockCount = 0;
    let heldLocks = 0;
    let queued = 0;
    let sharedHolds = 0;
    this.locks.forEachSorted((rec) => {
      lockCount++;
      if (rec.holder !== null) heldLocks++;
      queued += waiterCount(rec);
      const latest = rec.latestToken;
      // A lock first named by a waiting AcquireAll set has issued no token yet (latest 0, or the forgotten floor).
      const neverGranted = rec.latestHolder === '' && rec.holder === null && rec.sharers === null && rec.multiWaiters !== null;
      if ((latest < 1 && !neverGranted) || latest > applied) p.push(`lock ${q(rec.name)} latest token ${latest} out of range`);
      const holder = rec.holder;
      if (holder !== null) {
        if (rec.latestHolder !== holder.id) p.push(`lock ${q(rec.name)} latestHolder is not the holder`);
        if (!isOpen(holder)) p.push(`lock ${q(rec.name)} held by a session that is not open`);
        const linked = rec.heldPrev === null ? holder.heldHead === rec : rec.heldPrev.heldNext === rec;
        if (!linked) p.push(`lock ${q(rec.name)} holder session does not know it`);
        if (hasWaiter(rec, holder)) p.push(`lock ${q(rec.name)} holder also waits`);
        if (isDelayed(rec)) p.push(`held lock ${q(rec.name)} is in a lock-delay`);
        if (rec.sharers !== null) p.push(`lock ${q(rec.name)} held both exclusive and shared`);
      } else {
        if (rec.grantedAt !== 0) p.push(`free lock ${q(rec.name)} has a grant time`);
        if (rec.heldPrev !== null || rec.heldNext !== null) p.push(`free lock ${q(rec.name)} is in a held list`);
      }
      p.push(...checkDelay(rec, applied));
      p.push(...checkShared(rec, isOpen));
      p.push(...checkMultiWaiters(rec));
      sharedHolds += rec.sharers === null ? 0 : rec.sharers.size;
      const waiters = rec.waiters;
      if (waiters !== null) {
        if (waiters.size === 0) p.push(`lock ${q(rec.name)} keeps an empty queue`);
        if (waiters.size > maxWaiters) p.push(`lock ${q(rec.name)} has too many waiters`);
        for (const w of waiters.keys()) {
          if (!isOpen(w) || w.waiting === null || !w.waiting.has(rec)) {
            p.push(`lock ${q(rec.name)} waiter ${w.id} is dead or does not know it`);
          }
        }
      }
      if (rec.boundKeys !== (keyCount === 0 ? 0 : (boundKeys.get(rec) ?? 0))) p.push(`lock ${q(rec.name)} bound key count ${rec.boundKeys} is wrong`);
      if (holder === null && rec.sharers === null && waiters === null && rec.boundKeys === 0 && !isDelayed(rec)) p.push(`idle lock ${q(rec.name)} not forgotten`);
    });
    const maxPerSession = L.MAX_LOCKS_PER_SESSION;
    let heldCount = 0;
    let waitingTotal = 0;
    let sharingTotal = 0;
    for (const s of open) {
      if (s.openIndex > applied) p.push(`session ${s.id} opened in the future`);
      // The held list: linked both ways, as long as its count, every lock in it held by this session. With the
      // totals compared below, this also shows that every held lock is in its holder's list.
      let n = 0;
      let prev: LockRecord | null = null;
      for (let rec = s.heldHead; rec !== null && n <= s.heldCount; rec = rec.heldNext) {
        n++;
        if (rec.heldPrev !== prev) p.push(`session ${s.id} held list is broken at ${q(rec.name)}`);
        if (rec.holder !== s) p.push(`session ${s.id} thinks it holds ${q(rec.name)}`);
        prev = rec;
      }
      if (n !== s.heldCount) p.push(`session ${s.id} holds ${n} locks, counts ${s.heldCount}`);
      heldCount += n;
      if (s.waiting !== null) {
        if (s.waiting.size === 0) p.push(`session ${s.id} keeps an empty waiting set`);
        waitingTotal += s.waiting.size;
        for (const rec of s.waiting) if (!hasWaiter(rec, s)) p.push(`session ${s.id} thinks it waits for ${q(rec.name)}`);
      }
      if (s.sharing !== null) {
        if (s.sharing.size === 0) p.push(`session ${s.id} keeps an empty sharing set`);
        sharingTotal += s.sharing.size;
        for (const rec of s.sharing) if (sharedGrantOf(rec, s) === undefined) p.push(`session ${s.id} thinks it holds ${q(rec.name)} shared`);
      }
      if (lockCountOf(s) > maxPerSession) p.push(`session ${s.id} has too many locks`);
    }
    // Every lock a session holds or waits for is a record of the table: each side points at the other (checked
    // above), and both sides count the same.
    if (heldLocks !== heldCount) p.push(`${heldLocks} locks held, sessions hold ${heldCount}`);
    if (queued !== waitingTotal) p.push(`${queued} waiters queued, sessions wait ${waitingTotal} times`);
    if (sharedHolds !== sharingTotal) p.push(`${sharedHolds} shared grants, sessions hold ${sharingTotal}`);
    if (lockCount !== this.locks.size || keyCount !== this.kv.size) p.push('an index is out of step with its table');
    if (this.sessions.size > L.MAX_SESSIONS) p.push('too many sessions');
    if (this.locks.size > L.MAX_LOCKS) p.push('too many locks');
    if (this.kv.size > L.MAX_KEYS || this.kv.bytes > L.MAX_STORE_BYTES) p.push('store over its bounds');
    p.push(...this.sessions.check(), ...this.locks.check(), ...this.kv.check(), ...this.dedup.check(), ...this.authTable.check());
    p.push(...this.semaphores.check(isOpen, L.MAX_PERMITS));
    p.push(...this.checkUsage());
    return p;
  }

  /** Usage is what a recount gives, and every session counts in its owner's record. */
  private checkUsage(): string[] {
    const p: string[] = [];
    for (const s of this.sessions.values()) {
      if (s.usage !== (s.owner === '' ? null : (this.usage.get(s.owner) ?? null))) p.push(`session ${s.id} does not count for its owner`);
    }
    return [...p, ...this.usage.check(recountUsage(this.sessions.values(), this.kv.values()))];
  }

  // ---- snapshot and restore -----------------------------------------------------------------------------

  /**
   * The whole state as snapshot bytes (snapshot.ts), encoded in one go straight from the tables: canonical
   * (equal states give equal bytes, whatever their history) and exact (readSnapshot of them writes them
   * again). O(state), blocking: a node uses captureSnapshot() instead.
   */
  writeSnapshot(): Uint8Array {
    const view: StateView = {
      lastApplied: this.applied,
      gcFloor: this.locks.gcFloor,
      sessions: this.sessions.view(),
      locks: this.locks.view(),
      keys: this.kv.view(),
      dedup: this.dedup.view(),
      auth: this.authTable.image(),
      semaphores: this.semaphores.images(),
    };
    return writeState(view);
  }

  /**
   * Captures the state as of now, cheaply (O(chunks of the indexes), see capture.ts), for an encoding that
   * runs a slice at a time while apply() goes on; its bytes are the ones writeSnapshot() gives now. One
   * capture at a time: the encoding must be finished or cancelled before the next. `sliceUnits`: the work
   * of one step (records, stored results and KiB of values).
   */
  captureSnapshot(sliceUnits = SLICE_UNITS): SnapshotEncoding {
    invariant(!this.capturing, 'a snapshot capture is open already');
    this.capturing = true;
    const view: StateView = {
      lastApplied: this.applied,
      gcFloor: this.locks.gcFloor,
      sessions: this.sessions.freeze(),
      locks: this.locks.freeze(),
      keys: this.kv.freeze(),
      dedup: this.dedup.freeze(),
      auth: this.authTable.image(),
      semaphores: this.semaphores.images(),
    };
    return new SnapshotEncoding(this.applied, encodeState(view, sliceUnits), () => this.thaw());
  }

  private thaw(): void {
    this.capturing = false;
    this.sessions.thaw();
    this.locks.thaw();
    this.kv.thaw();
    this.dedup.thaw();
  }

  /**
   * A machine restored from snapshot bytes, checked in full (checkInvariants); throws SnapshotError when the
   * bytes are malformed or the state they describe is inconsistent. Nothing of `bytes` is kept: values are
   * copied and strings decoded, so the caller may reuse its buffer.
   */
  static readSnapshot(bytes: Uint8Array): LockStateMachine {
    const m = new LockStateMachine();
    try {
      m.applied = readState(bytes, m.tables()).lastApplied;
      m.usage.restore(m.sessions.values(), m.kv.values());
    } catch (e) {
      throw e instanceof InvariantError ? new SnapshotError(e.message) : e;
    }
    const problems = m.checkInvariants();
    if (problems.length > 0) throw new SnapshotError(problems.slice(0, 5).join('; '));
    return m;
  }

  /**
   * The state a new cluster restored from a backup starts with (docs/backup.md), from the backup's snapshot
   * bytes, at `index` (the backup's index plus the bump, never below the backup's): every session ends as if
   * it expired at `index`, its waits first, so no lock is handed on (every waiter goes too) and each held
   * lock becomes free with its latest token unchanged: a write under an old token stays refused (STALE_TOKEN
   * below the latest, UNKNOWN_SESSION at it). Keys, watermarks, key ownership and the auth table stay.
   * The retry records stay too: they describe requests whose effects the restored state holds, so a retry
   * gets its original answer rather than running again (an AuthChange or MoveKeys applied twice); a stored
   * grant of a dropped session misleads nobody, since that session is unknown to every later call.
   */
  static restoredForNewCluster(bytes: Uint8Array, index: number): { machine: LockStateMachine; sessionsEnded: number } {
    const m = LockStateMachine.readSnapshot(bytes);
    invariant(Number.isSafeInteger(index) && index >= m.applied, () => `a restore at ${index} would go below the backup's index ${m.applied}`);
    m.applied = index;
    const sessions = Array.from(m.sessions.values());
    const events: LockEvent[] = [];
    const left = sessions.flatMap((s) => m.leaveSession(s, 'expired', events));
    for (const s of sessions) m.releaseSession(index, 0, s, 'expired', events);
    for (const rec of left) m.locks.collectIfIdle(rec); // a lock only a set waited for
    const problems = m.checkInvariants();
    invariant(problems.length === 0, () => `restored state: ${problems.slice(0, 5).join('; ')}`);
    return { machine: m, sessionsEnded: sessions.length };
  }

  private tables(): StateTables {
    return { sessions: this.sessions, locks: this.locks, kv: this.kv, dedup: this.dedup, auth: this.authTable, semaphores: this.semaphores };
  }
}

const byName = (a: LockRecord, b: LockRecord): number => compareStrings(a.name, b.name);

/** What ends a grant with its lock-delay: expiry and revocation, never its holder letting go. */
const DELAY_CAUSES: ReadonlySet<string> = new Set<GrantEndCause>(['expired', 'revoked', 'lock_revoked']);

function delayOf(rec: LockRecord): LockDelayInfo | null {
  return isDelayed(rec) ? { since: rec.delayedSince, delayMs: rec.lockDelayMs, until: rec.delayedUntil } : null;
}

/** A lock's delay fields agree with its state: a delay only on a free lock, its length within bounds. */
function checkDelay(rec: LockRecord, applied: number): string[] {
  const p: string[] = [];
  const q = JSON.stringify(rec.name);
  if (rec.lockDelayMs < 0 || rec.lockDelayMs > L.MAX_LOCK_DELAY_MS) p.push(`lock ${q} lock-delay ${rec.lockDelayMs} out of range`);
  if (isDelayed(rec)) {
    if (rec.delayedSince > applied) p.push(`lock ${q} delayed since a future entry`);
    if (rec.lockDelayMs === 0) p.push(`lock ${q} delayed without a lock-delay`);
  } else {
    if (rec.delayedUntil !== 0) p.push(`lock ${q} has a delay end but no delay`);
    if (rec.holder === null && rec.lockDelayMs !== 0) p.push(`free lock ${q} keeps a lock-delay`);
  }
  if (rec.waiterDelays !== null) {
    for (const [s, ms] of rec.waiterDelays) {
      if (!hasWaiter(rec, s) || ms <= 0 || ms > L.MAX_LOCK_DELAY_MS) p.push(`lock ${q} keeps a lock-delay of a non-waiter or out of range`);
    }
  }
  return p;
}

/**
 * A lock's shared side agrees with the rest: shared grants only on a lock neither held exclusively nor
 * delayed, each of an open session that knows it, its token issued; shared waiters are waiters; while
 * shared grants are in force the head of the queue is a writer (readers behind no writer were granted).
 */
function checkShared(rec: LockRecord, isOpen: (s: Session) => boolean): string[] {
  const p: string[] = [];
  const q = JSON.stringify(rec.name);
  if (rec.sharers !== null) {
    if (rec.sharers.size === 0) p.push(`lock ${q} keeps an empty set of shared grants`);
    if (isDelayed(rec)) p.push(`lock ${q} held shared in a lock-delay`);
    if (rec.lockDelayMs !== 0) p.push(`lock ${q} held shared keeps a lock-delay`);
    for (const [s, g] of rec.sharers) {
      if (!isOpen(s) || s.sharing === null || !s.sharing.has(rec)) p.push(`lock ${q} shared holder ${s.id} is dead or does not know it`);
      if (g.token < 1 || g.token > rec.latestToken) p.push(`lock ${q} shared grant token ${g.token} out of range`);
      if (hasWaiter(rec, s)) p.push(`lock ${q} shared holder also waits`);
    }
    const head = firstWaiter(rec);
    if (head !== undefined && waitsShared(rec, head)) p.push(`lock ${q} held shared keeps a reader at the head of its queue`);
  }
  if (rec.sharedWaiters !== null) {
    if (rec.sharedWaiters.size === 0) p.push(`lock ${q} keeps an empty set of shared waiters`);
    for (const s of rec.sharedWaiters) {
      if (!hasWaiter(rec, s)) p.push(`lock ${q} shared waiter ${s.id} is not queued`);
      if (waiterDelayOf(rec, s) !== 0) p.push(`lock ${q} shared waiter ${s.id} asks for a lock-delay`);
    }
  }
  return p;
}

/** The records of `set` (null = none) sorted by name. */
function sortedByName(set: ReadonlySet<LockRecord> | null): LockRecord[] {
  return set === null ? [] : Array.from(set).sort(byName);
}

/** The names of the records of `set` (null = none), sorted. */
function sortedNames(set: ReadonlySet<LockRecord> | null): string[] {
  return set === null ? [] : sortedStrings(Array.from(set, (rec) => rec.name));
}

function outcome(result: Result): CommandResult {
  return { result, events: [], duplicate: false };
}

function listing(rec: LockRecord, maxWaiters: number): LockListing {
  const holder = rec.holder === null ? null : { sessionId: rec.holder.id, token: tokenOf(rec), grantedAt: rec.grantedAt };
  const waiters: LockListing['waiters'] = [];
  if (rec.waiters !== null) {
    for (const [s, since] of rec.waiters) {
      if (waiters.length >= maxWaiters) break;
      waiters.push({ sessionId: s.id, since, ...(waitsShared(rec, s) ? { shared: true as const } : {}) });
    }
  }
  const delay = delayOf(rec);
  const sharedHolders = rec.sharers === null ? null : Array.from(rec.sharers, ([s, g]) => ({ sessionId: s.id, token: g.token, grantedAt: g.grantedAt }));
  return {
    name: rec.name,
    holder,
    latestToken: rec.latestToken,
    ...(delay === null ? {} : { delay }),
    waiters,
    waiterCount: waiterCount(rec),
    ...(sharedHolders === null ? {} : { sharedHolders }),
  };
}

// The records of sessions and locks, which point at each other: a lock's holder and waiters are session
// records, a session's held and awaited locks are lock records. So a session id string is stored once, in
// its session (a lock refers to the session object, not to another copy of the id), and no lookup by id or
// name is needed to walk from one to the other.
//
// Memory and speed: a machine holds up to MAX_SESSIONS sessions and MAX_LOCKS locks.
// - Each kind is made by one object literal in one factory below, with every field: one hidden class for
//   all records of a kind, fields in the object, and an allocation site V8 can pretenure when records
//   live long (restoring a snapshot makes hundreds of thousands at once; a class constructor would make
//   every one of them be copied by the young-generation collector, twice).
// - The locks a session holds are a doubly linked list through the lock records (two fields per lock
//   instead of a Set per session), and the sets of waiters and awaited locks are created only when first
//   needed and dropped when they empty again: most locks have no waiters, most sessions wait for nothing.

import type { SessionLabels } from '../protocol/labels';

/** The labels of a session opened without any (shared: labels are never changed in place). */
export const NO_LABELS: SessionLabels = Object.freeze([]);

export interface SessionInit {
  readonly id: string;
  readonly clientName: string;
  readonly ttlMs: number;
  /** `now` of the OpenSession entry. */
  readonly openedAt: number;
  /** Index of the OpenSession entry. */
  readonly openIndex: number;
  /** The caller that opened it ('' when none: node-internal, legacy); with auth on only it may use the session. */
  readonly owner: string;
  /** What its client said of itself at open (src/protocol/labels.ts): sorted by key; shown beside its handle. */
  readonly labels: SessionLabels;
}

/** What the snapshot holds of a session. */
export interface SessionImage extends SessionInit {
  /** Lease time left at the session's last checkpoint (CheckpointLeases); its TTL until the first. */
  readonly remainingMs: number;
}

export interface Session extends SessionImage {
  remainingMs: number;
  /** First of the locks this session holds (linked through LockRecord.heldNext), null when none. */
  heldHead: LockRecord | null;
  /** Number of locks this session holds. */
  heldCount: number;
  /** Locks this session is queued for, null when none. */
  waiting: Set<LockRecord> | null;
  /** Locks this session holds in shared mode (LockRecord.sharers), null when none. */
  sharing: Set<LockRecord> | null;
  /** What the owner uses (counted through this session's holds and waits); null when the owner is ''. */
  usage: Usage | null;
  /**
   * Scratch for the snapshot encoder: this session's position in the snapshot being written, and which
   * encoding wrote it (an object of the encoder's, null before any). Not state: nothing else reads them.
   */
  ordinal: number;
  ordinalOwner: object | null;
}

/** What one caller uses of the state, for its quotas (kept by usage.ts; sessions count into it here). */
export interface Usage {
  readonly caller: string;
  sessions: number;
  locks: number;
  waiters: number;
  keys: number;
  storeBytes: number;
}

export interface LockRecord {
  readonly name: string;
  /** Session holding the lock, or null when free. */
  holder: Session | null;
  /** `now` of the entry that made the current grant (0 when free). */
  grantedAt: number;
  /**
   * Highest token ever issued for this lock; survives release, never goes back. While the lock is held it
   * is the token of the current grant (see tokenOf).
   */
  latestToken: number;
  /**
   * Session id of the latestToken grant; survives release (tells "your grant ended" from "not yours"). While
   * held it is the holder's own id string (not a copy).
   */
  latestHolder: string;
  /**
   * Queued sessions, each with the `now` of the Acquire entry that queued it (0 when unknown: restored from a
   * snapshot older than format 6); null when none. Map iteration order is insertion order, i.e. FIFO.
   */
  waiters: Map<Session, number> | null;
  /** The lock-delay each waiter asked for, for the waiters that asked for one (> 0); null when none did. */
  waiterDelays: Map<Session, number> | null;
  /**
   * Lock-delay (docs/architecture.md#lock-delay), in ms. While held: the delay the current grant asked for
   * at its Acquire. While delayed: the delay in force. Otherwise 0.
   */
  lockDelayMs: number;
  /** Index of the entry whose ending of a grant started the delay in force; 0 when the lock is not delayed. */
  delayedSince: number;
  /** When the delay in force ends by the clock of the leader that started it (its `now` + lockDelayMs); 0: none. */
  delayedUntil: number;
  /** Keys of the fenced store bound to this lock (tombstones included). Derived, not snapshotted. */
  boundKeys: number;
  /** Neighbours in the holder's list of held locks (Session.heldHead); null when free or at an end. */
  heldPrev: LockRecord | null;
  heldNext: LockRecord | null;
  /**
   * The shared grants in force (docs/architecture.md#read-write-locks), each with its own token; null when
   * none. Never together with an exclusive holder or a lock-delay. Insertion order is grant order.
   */
  sharers: Map<Session, SharedGrant> | null;
  /** The waiters that asked for a shared grant (a subset of `waiters`); null when none did. */
  sharedWaiters: Set<Session> | null;
  /**
   * The waiters queued by an AcquireAll (a subset of `waiters`), each with its set, the same object in every
   * lock of the set (docs/architecture.md#atomic-multi-lock); null when none.
   */
  multiWaiters: Map<Session, MultiWait> | null;
}

/** One AcquireAll waiting: its session, queued once in each lock of `locks` (in name order, never changed). */
export interface MultiWait {
  readonly session: Session;
  readonly locks: readonly LockRecord[];
}

/** One shared grant: its token (the index of the entry that made it) and that entry's `now`. */
export interface SharedGrant {
  readonly token: number;
  readonly grantedAt: number;
}

export function newSession(id: string, clientName: string, ttlMs: number, openedAt: number, openIndex: number, remainingMs = ttlMs, owner = '', labels: SessionLabels = NO_LABELS): Session {
  return { id, clientName, ttlMs, openedAt, openIndex, owner, labels, remainingMs, heldHead: null, heldCount: 0, waiting: null, sharing: null, usage: null, ordinal: 0, ordinalOwner: null };
}

/** A free lock record (as created for a first grant, or restored and then filled in). */
export function newLockRecord(name: string, grantedAt = 0, latestToken = 0, latestHolder = ''): LockRecord {
  return {
    name,
    holder: null,
    grantedAt,
    latestToken,
    latestHolder,
    waiters: null,
    waiterDelays: null,
    lockDelayMs: 0,
    delayedSince: 0,
    delayedUntil: 0,
    boundKeys: 0,
    heldPrev: null,
    heldNext: null,
    sharers: null,
    sharedWaiters: null,
    multiWaiters: null,
  };
}

// ---- sessions (the hooks also keep the owner's usage counted: usage.ts) -----------------------------------------------------------------------------------------

/** Adds `rec` (in no session's list: it is being granted to `s`) to the locks `s` holds. */
export function addHeld(s: Session, rec: LockRecord): void {
  const head = s.heldHead;
  rec.heldPrev = null;
  rec.heldNext = head;
  if (head !== null) head.heldPrev = rec;
  s.heldHead = rec;
  s.heldCount++;
  if (s.usage !== null) s.usage.locks++;
}

/** Removes `rec`, which must be in the list of `s` (the caller knows: rec.holder is s). */
export function deleteHeld(s: Session, rec: LockRecord): void {
  const prev = rec.heldPrev;
  const next = rec.heldNext;
  if (prev === null) s.heldHead = next;
  else prev.heldNext = next;
  if (next !== null) next.heldPrev = prev;
  rec.heldPrev = null;
  rec.heldNext = null;
  s.heldCount--;
  if (s.usage !== null) s.usage.locks--;
}

/** The locks `s` holds, in no particular order. */
export function heldLocks(s: Session): LockRecord[] {
  const out: LockRecord[] = [];
  for (let rec = s.heldHead; rec !== null; rec = rec.heldNext) out.push(rec);
  return out;
}

/** Adds `rec` to the locks `s` holds in shared mode (the lock's side is the caller's business). */
export function addSharing(s: Session, rec: LockRecord): void {
  (s.sharing ??= new Set()).add(rec);
  if (s.usage !== null) s.usage.locks++;
}

/** False when `s` did not hold the lock in shared mode. */
export function deleteSharing(s: Session, rec: LockRecord): boolean {
  if (s.sharing === null || !s.sharing.delete(rec)) return false;
  if (s.sharing.size === 0) s.sharing = null;
  if (s.usage !== null) s.usage.locks--;
  return true;
}

export function sharingCount(s: Session): number {
  return s.sharing === null ? 0 : s.sharing.size;
}

/** Every lock `s` holds or waits for, in either mode: what MAX_LOCKS_PER_SESSION bounds. */
export function lockCountOf(s: Session): number {
  return s.heldCount + sharingCount(s) + waitingCount(s);
}

export function waitingCount(s: Session): number {
  return s.waiting === null ? 0 : s.waiting.size;
}

export function addWaiting(s: Session, rec: LockRecord): void {
  const waiting = (s.waiting ??= new Set());
  const before = waiting.size;
  waiting.add(rec);
  if (s.usage !== null) s.usage.waiters += waiting.size - before;
}

/** Forgets every wait of `s` (the locks' queues are the caller's business). */
export function clearWaiting(s: Session): void {
  if (s.usage !== null) s.usage.waiters -= waitingCount(s);
  s.waiting = null;
}

/** False when `s` was not waiting for the lock. */
export function deleteWaiting(s: Session, rec: LockRecord): boolean {
  if (s.waiting === null || !s.waiting.delete(rec)) return false;
  if (s.waiting.size === 0) s.waiting = null;
  if (s.usage !== null) s.usage.waiters--;
  return true;
}

// ---- locks ----------------------------------------------------------------------------------------------

/** Token of the current grant, 0 when free: a grant's token is always the latest token. */
export function tokenOf(rec: LockRecord): number {
  return rec.holder === null ? 0 : rec.latestToken;
}

/** Id of the holding session, null when free. */
export function holderIdOf(rec: LockRecord): string | null {
  return rec.holder === null ? null : rec.holder.id;
}

export function waiterCount(rec: LockRecord): number {
  return rec.waiters === null ? 0 : rec.waiters.size;
}

export function hasWaiter(rec: LockRecord, s: Session): boolean {
  return rec.waiters !== null && rec.waiters.has(s);
}

/**
 * Queues `s` last; `since` is the `now` of the entry that queues it; `delayMs` the lock-delay it asked for;
 * `shared`: it waits for a shared grant.
 */
export function addWaiter(rec: LockRecord, s: Session, since: number, delayMs = 0, shared = false): void {
  (rec.waiters ??= new Map()).set(s, since);
  if (delayMs > 0) (rec.waiterDelays ??= new Map()).set(s, delayMs);
  if (shared) (rec.sharedWaiters ??= new Set()).add(s);
}

/** False when `s` was not queued. */
export function deleteWaiter(rec: LockRecord, s: Session): boolean {
  if (rec.waiters === null || !rec.waiters.delete(s)) return false;
  if (rec.waiters.size === 0) rec.waiters = null;
  if (rec.waiterDelays !== null && rec.waiterDelays.delete(s) && rec.waiterDelays.size === 0) rec.waiterDelays = null;
  if (rec.sharedWaiters !== null && rec.sharedWaiters.delete(s) && rec.sharedWaiters.size === 0) rec.sharedWaiters = null;
  if (rec.multiWaiters !== null && rec.multiWaiters.delete(s) && rec.multiWaiters.size === 0) rec.multiWaiters = null;
  return true;
}

/** The set of locks the queued session waits for with this one (an AcquireAll); undefined for a single Acquire. */
export function multiWaitOf(rec: LockRecord, s: Session): MultiWait | undefined {
  return rec.multiWaiters === null ? undefined : rec.multiWaiters.get(s);
}

/** Queues `s` last as part of the AcquireAll `wait` (one waiter in each of its locks' queues). */
export function addMultiWaiter(rec: LockRecord, wait: MultiWait, since: number): void {
  addWaiter(rec, wait.session, since);
  (rec.multiWaiters ??= new Map()).set(wait.session, wait);
}

/** The queued session waits for a shared grant. */
export function waitsShared(rec: LockRecord, s: Session): boolean {
  return rec.sharedWaiters !== null && rec.sharedWaiters.has(s);
}

/** The session's shared grant of the lock, undefined when it holds none. */
export function sharedGrantOf(rec: LockRecord, s: Session): SharedGrant | undefined {
  return rec.sharers === null ? undefined : rec.sharers.get(s);
}

/** The shared grant of the lock held by the session with this id (O(shared holders)). */
export function sharedGrantById(rec: LockRecord, sessionId: string): SharedGrant | undefined {
  if (rec.sharers === null) return undefined;
  for (const [s, g] of rec.sharers) if (s.id === sessionId) return g;
  return undefined;
}

/** Somebody holds the lock, in either mode. */
export function isHeld(rec: LockRecord): boolean {
  return rec.holder !== null || rec.sharers !== null;
}

/** The lock-delay a queued session asked for (0: none). */
export function waiterDelayOf(rec: LockRecord, s: Session): number {
  return rec.waiterDelays?.get(s) ?? 0;
}

/** The lock is in a lock-delay: free, and granted to nobody until the delay is ended. */
export function isDelayed(rec: LockRecord): boolean {
  return rec.delayedSince !== 0;
}

/** The head of the queue, if any. */
export function firstWaiter(rec: LockRecord): Session | undefined {
  if (rec.waiters === null) return undefined;
  for (const s of rec.waiters.keys()) return s;
  return undefined;
}

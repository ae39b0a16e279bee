// The lock table: per lock its current grant, the highest token ever issued, and the FIFO queue.
//
// Tokens are entry indexes, so a new grant's token is above every token issued before it, for any lock.
// A lock record is kept while it is held, has waiters, or owns keys of the fenced store; an idle record
// without keys is forgotten (bounded memory), and `gcFloor` remembers the highest latestToken of any
// forgotten record, so a token can still be classified as "maybe issued" (<= gcFloor) or "never issued for
// this lock" (> gcFloor and no record).
import { TableCapture, type TableView } from './capture';
import { invariant } from './invariant';
import { addMultiWaiter, addWaiter, deleteWaiter, isDelayed, newLockRecord, tokenOf, type LockRecord, type MultiWait, type Session, type SharedGrant } from './records';
import { SortedIndex } from './sortedIndex';

export type { LockRecord };

/** What the snapshot holds of a lock. */
export interface LockImage {
  readonly name: string;
  readonly holder: Session | null;
  readonly grantedAt: number;
  readonly latestToken: number;
  readonly latestHolder: string;
  readonly waiters: ReadonlyMap<Session, number> | null;
  readonly waiterDelays: ReadonlyMap<Session, number> | null;
  readonly lockDelayMs: number;
  readonly delayedSince: number;
  readonly delayedUntil: number;
  readonly sharers: ReadonlyMap<Session, SharedGrant> | null;
  readonly sharedWaiters: ReadonlySet<Session> | null;
  readonly multiWaiters: ReadonlyMap<Session, MultiWait> | null;
}

class LockIndex extends SortedIndex<LockRecord> {
  protected keyOf(rec: LockRecord): string {
    return rec.name;
  }
}

export class LockTable {
  private readonly byName = new Map<string, LockRecord>();
  /** The same records in name order (code point order: canonical for snapshots, kept without sorting). */
  private readonly sorted = new LockIndex();
  /** Snapshot captures of this table (capture.ts). */
  private readonly capture = new TableCapture<LockRecord, LockImage>(this.sorted, copyLock);
  /** Highest latestToken of any forgotten lock record (0 when none was forgotten). */
  gcFloor = 0;

  get size(): number {
    return this.byName.size;
  }

  get(name: string): LockRecord | undefined {
    return this.byName.get(name);
  }

  values(): IterableIterator<LockRecord> {
    return this.byName.values();
  }

  /** The records in name order, as consecutive chunks (see SortedIndex.chunksInOrder). */
  chunksInOrder(): readonly (readonly LockRecord[])[] {
    return this.sorted.chunksInOrder();
  }

  /** The records in name order, read live (nothing may change while the view is read). */
  view(): TableView<LockRecord, LockImage> {
    return this.capture.view(this.size);
  }

  /** The records as they are now, readable until thaw() while the table goes on changing. */
  freeze(): TableView<LockRecord, LockImage> {
    return this.capture.freeze(this.size);
  }

  thaw(): void {
    this.capture.thaw();
  }

  /** Calls `visit` for every record in name order. */
  forEachSorted(visit: (rec: LockRecord) => void): void {
    this.sorted.scan(visit);
  }

  /** Calls `visit` for every record whose name is >= `from`, in name order, until it returns false. */
  scanFrom(from: string, visit: (rec: LockRecord) => boolean): void {
    this.sorted.scan(visit, from);
  }

  create(name: string): LockRecord {
    invariant(!this.byName.has(name), () => `lock ${JSON.stringify(name)} created twice`);
    const rec = newLockRecord(name);
    this.byName.set(name, rec);
    this.sorted.insert(rec);
    return rec;
  }

  /**
   * Restores a record from a snapshot; names must come in strictly increasing order (the caller checks, and
   * validates the record).
   */
  restore(rec: LockRecord): void {
    this.byName.set(rec.name, rec);
    this.sorted.append(rec);
  }

  /** Grants a free lock: the token is the index of the entry being applied; `delayMs`: the grant's lock-delay. */
  grant(rec: LockRecord, session: Session, index: number, now: number, delayMs = 0): void {
    invariant(rec.holder === null, () => `grant of held lock ${JSON.stringify(rec.name)}`);
    invariant(!isDelayed(rec), () => `grant of lock ${JSON.stringify(rec.name)} in its lock-delay`);
    invariant(index > rec.latestToken, () => `token of ${JSON.stringify(rec.name)} would not increase: ${index} <= ${rec.latestToken}`);
    invariant(index > this.gcFloor, () => `token ${index} not above forgotten tokens (${this.gcFloor})`);
    this.capture.save(rec);
    rec.holder = session;
    rec.grantedAt = now;
    rec.latestToken = index;
    rec.latestHolder = session.id;
    rec.lockDelayMs = delayMs;
  }

  /**
   * A shared grant (docs/architecture.md#read-write-locks): the lock has no exclusive holder and no delay;
   * the token is the index of the entry being applied, above every token before it, as for any grant. The
   * readers one entry grants together (a handover to the readers at the head of the queue) share its index.
   */
  grantShared(rec: LockRecord, session: Session, index: number, now: number): void {
    invariant(rec.holder === null, () => `shared grant of exclusively held lock ${JSON.stringify(rec.name)}`);
    invariant(!isDelayed(rec), () => `shared grant of lock ${JSON.stringify(rec.name)} in its lock-delay`);
    // latestToken can equal `index` only if this very entry set it (indexes strictly increase).
    const sameEntry = index === rec.latestToken && rec.sharers !== null;
    invariant(index > rec.latestToken || sameEntry, () => `token of ${JSON.stringify(rec.name)} would not increase: ${index} <= ${rec.latestToken}`);
    invariant(index > this.gcFloor, () => `token ${index} not above forgotten tokens (${this.gcFloor})`);
    this.capture.save(rec);
    (rec.sharers ??= new Map()).set(session, { token: index, grantedAt: now });
    rec.latestToken = index;
    rec.latestHolder = session.id;
  }

  /** Ends the session's shared grant; returns its token. */
  clearSharer(rec: LockRecord, session: Session): number {
    const grant = rec.sharers?.get(session);
    invariant(grant !== undefined, () => `session ${session.id} holds no shared grant of ${JSON.stringify(rec.name)}`);
    this.capture.save(rec);
    rec.sharers?.delete(session);
    if (rec.sharers?.size === 0) rec.sharers = null;
    return grant.token;
  }

  /**
   * Right after clearHolder: the ended grant's lock-delay starts (true), or there is none or `delays` is
   * false (a release) and the lock is simply free (false).
   */
  startDelay(rec: LockRecord, delays: boolean, index: number, now: number): boolean {
    invariant(rec.holder === null && !isDelayed(rec), () => `lock-delay of held or delayed lock ${JSON.stringify(rec.name)}`);
    if (rec.lockDelayMs === 0) return false;
    this.capture.save(rec);
    if (!delays) {
      rec.lockDelayMs = 0;
      return false;
    }
    rec.delayedSince = index;
    rec.delayedUntil = now + rec.lockDelayMs;
    return true;
  }

  /** Ends the lock's delay (it may be granted again). */
  endDelay(rec: LockRecord): void {
    this.capture.save(rec);
    rec.lockDelayMs = 0;
    rec.delayedSince = 0;
    rec.delayedUntil = 0;
  }

  /**
   * Raises a free lock's latest token to `token` (keys moved to it keep their watermarks, and a key's
   * watermark never exceeds its lock's latest token). The raised token was not this lock's grant, so no
   * session was its holder.
   */
  raiseLatest(rec: LockRecord, token: number): void {
    invariant(rec.holder === null, () => `raising the latest token of held lock ${JSON.stringify(rec.name)}`);
    if (token <= rec.latestToken) return;
    this.capture.save(rec);
    rec.latestToken = token;
    rec.latestHolder = '';
  }

  /** Ends the current grant; returns its token. */
  clearHolder(rec: LockRecord): number {
    invariant(rec.holder !== null, () => `release of free lock ${JSON.stringify(rec.name)}`);
    const token = tokenOf(rec);
    this.capture.save(rec);
    rec.holder = null;
    rec.grantedAt = 0;
    return token;
  }

  /** Queues `s` last for the lock, waiting since `now` (the queueing entry's), asking for a lock-delay of `delayMs`. */
  enqueue(rec: LockRecord, s: Session, now: number, delayMs = 0, shared = false): void {
    this.capture.save(rec);
    addWaiter(rec, s, now, delayMs, shared);
  }

  /** Queues the session of `wait` last for the lock, as one part of an AcquireAll waiting since `now`. */
  enqueueMulti(rec: LockRecord, wait: MultiWait, now: number): void {
    this.capture.save(rec);
    addMultiWaiter(rec, wait, now);
  }

  /** Takes `s` out of the lock's queue; false when it was not queued. */
  dequeue(rec: LockRecord, s: Session): boolean {
    this.capture.save(rec);
    return deleteWaiter(rec, s);
  }

  /** Forgets the record if nothing refers to it any more. */
  collectIfIdle(rec: LockRecord): void {
    // Already forgotten earlier in the same entry (a release, then the hand-on after its waiters left).
    if (this.byName.get(rec.name) !== rec) return;
    if (rec.holder !== null || rec.sharers !== null || rec.waiters !== null || rec.boundKeys > 0 || isDelayed(rec)) return;
    this.byName.delete(rec.name);
    invariant(this.sorted.delete(rec), () => `lock ${JSON.stringify(rec.name)} missing from the name index`);
    if (rec.latestToken > this.gcFloor) this.gcFloor = rec.latestToken;
  }

  /** Self-check: the sorted index holds exactly the records of the map, in strictly increasing order. */
  check(): string[] {
    return this.sorted.matches(this.byName) ? [] : ['lock index out of step with the lock table'];
  }
}

function copyLock(rec: LockRecord): LockImage {
  return {
    name: rec.name,
    holder: rec.holder,
    grantedAt: rec.grantedAt,
    latestToken: rec.latestToken,
    latestHolder: rec.latestHolder,
    waiters: rec.waiters === null ? null : new Map(rec.waiters),
    waiterDelays: rec.waiterDelays === null ? null : new Map(rec.waiterDelays),
    lockDelayMs: rec.lockDelayMs,
    delayedSince: rec.delayedSince,
    delayedUntil: rec.delayedUntil,
    sharers: rec.sharers === null ? null : new Map(rec.sharers),
    sharedWaiters: rec.sharedWaiters === null ? null : new Set(rec.sharedWaiters),
    multiWaiters: rec.multiWaiters === null ? null : new Map(rec.multiWaiters),
  };
}

/** 1-based position of `sessionId` in the queue, 0 when not queued. O(queue length). */
export function queuePosition(rec: LockRecord, sessionId: string): number {
  if (rec.waiters === null) return 0;
  let i = 0;
  for (const w of rec.waiters.keys()) {
    i++;
    if (w.id === sessionId) return i;
  }
  return 0;
}

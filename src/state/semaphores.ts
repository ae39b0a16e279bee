// The semaphore table (issue 33): per semaphore its number of permits, one slot per permit taken so far
// (each slot a fenced resource of its own: its current holder and the highest token it ever issued), and a
// FIFO queue of sessions waiting for a permit.
//
// Semaphores have their own namespace: a semaphore and a lock of the same name are two resources. A session
// holds at most one permit of a semaphore (a second Acquire of it answers the same slot and token). A record
// is kept while a permit is held or a session waits; an idle one is forgotten with its permit count, so
// the next first Acquire sets the count afresh. Tokens are entry indexes, so a slot's next token is above
// every token issued before, for any slot: a forgotten slot's watermark needs no keeping for fencing.
import { invariant } from './invariant';
import type { Session } from './records';
import { compareStrings } from './text';

export interface PermitSlot {
  /** Session holding this slot's permit, or null when free. */
  holder: Session | null;
  /** `now` of the entry that made the current grant (0 when free). */
  grantedAt: number;
  /** The slot's watermark: the highest token it issued; while held, the current grant's token. */
  latestToken: number;
  /** Session id of the latestToken grant (survives its end). */
  latestHolder: string;
}

export interface SemaphoreRecord {
  readonly name: string;
  /** Permits in force, 1..MAX_PERMITS: fixed while any permit is held or anyone waits. */
  readonly permits: number;
  /** Slots 0..slots.length-1, each taken at least once since the record was made (length <= permits). */
  readonly slots: PermitSlot[];
  /** Permits held now. */
  held: number;
  /** Queued sessions with the `now` of the entry that queued each, FIFO (insertion order); null when none. */
  waiters: Map<Session, number> | null;
}

/** What the snapshot holds of a semaphore (copied when a capture starts: the table is small and bounded). */
export interface SemaphoreImage {
  readonly name: string;
  readonly permits: number;
  readonly slots: readonly Readonly<PermitSlot>[];
  readonly waiters: ReadonlyArray<readonly [Session, number]>;
}

export class SemaphoreTable {
  private readonly byName = new Map<string, SemaphoreRecord>();
  /** Semaphores each session holds a permit of or waits for (a session's end visits only these). */
  private readonly bySession = new Map<Session, Set<SemaphoreRecord>>();
  /**
   * Per session owner (not ''): permits held and waits, for its `locks` and `waiters` quotas, and the
   * semaphores it is in (holds a permit of or waits for), for its `semaphores` quota.
   */
  private readonly byOwner = new Map<string, OwnerUse>();
  /** Per semaphore, how many sessions of each owner hold a permit of it or wait for one. */
  private readonly owners = new Map<SemaphoreRecord, Map<string, number>>();

  get size(): number {
    return this.byName.size;
  }

  get(name: string): SemaphoreRecord | undefined {
    return this.byName.get(name);
  }

  values(): IterableIterator<SemaphoreRecord> {
    return this.byName.values();
  }

  create(name: string, permits: number): SemaphoreRecord {
    invariant(!this.byName.has(name), () => `semaphore ${JSON.stringify(name)} created twice`);
    const rec: SemaphoreRecord = { name, permits, slots: [], held: 0, waiters: null };
    this.byName.set(name, rec);
    return rec;
  }

  /** Semaphores `s` holds a permit of or waits for, in name order. */
  ofSession(s: Session): SemaphoreRecord[] {
    const set = this.bySession.get(s);
    return set === undefined ? [] : Array.from(set).sort((a, b) => compareStrings(a.name, b.name));
  }

  /** Permits held plus waits of `s`, over all semaphores. */
  countOf(s: Session): number {
    return this.bySession.get(s)?.size ?? 0;
  }

  /** What `owner` holds and waits for over all semaphores, or how many semaphores it is in. */
  usedBy(owner: string, what: keyof OwnerUse): number {
    return this.byOwner.get(owner)?.[what] ?? 0;
  }

  /** Does a session of `owner` hold a permit of `rec` or wait for one? */
  isIn(rec: SemaphoreRecord, owner: string): boolean {
    return this.owners.get(rec)?.has(owner) === true;
  }

  /** Grants the lowest free slot to `s` with token `index`; returns the slot. */
  grant(rec: SemaphoreRecord, s: Session, index: number, now: number): number {
    invariant(rec.held < rec.permits, () => `grant of a full semaphore ${JSON.stringify(rec.name)}`);
    let slot = rec.slots.findIndex((y) => y.holder === null);
    let x = rec.slots[slot];
    if (x === undefined) {
      slot = rec.slots.length;
      x = { holder: null, grantedAt: 0, latestToken: 0, latestHolder: '' };
      rec.slots.push(x);
    }
    invariant(index > x.latestToken, () => `token of ${JSON.stringify(rec.name)} slot ${slot} would not increase`);
    x.holder = s;
    x.grantedAt = now;
    x.latestToken = index;
    x.latestHolder = s.id;
    rec.held++;
    this.link(s, rec);
    this.count(s, 'locks', 1);
    return slot;
  }

  /** The token of the grant of `slot` while held; its watermark once free (0: no such slot). */
  tokenOf(rec: SemaphoreRecord, slot: number): number {
    return rec.slots[slot]?.latestToken ?? 0;
  }

  /** The slot `s` holds, -1 when none. */
  slotOf(rec: SemaphoreRecord, s: Session): number {
    return rec.slots.findIndex((x) => x.holder === s);
  }

  /** Ends the grant of `slot`; returns its token. */
  clearSlot(rec: SemaphoreRecord, slot: number): number {
    const x = rec.slots[slot];
    invariant(x !== undefined && x.holder !== null, () => `release of free slot ${slot} of ${JSON.stringify(rec.name)}`);
    this.unlink(x.holder, rec);
    this.count(x.holder, 'locks', -1);
    x.holder = null;
    x.grantedAt = 0;
    rec.held--;
    return x.latestToken;
  }

  enqueue(rec: SemaphoreRecord, s: Session, now: number): void {
    (rec.waiters ??= new Map()).set(s, now);
    this.link(s, rec);
    this.count(s, 'waiters', 1);
  }

  /** Takes `s` out of the queue; false when it was not queued. */
  dequeue(rec: SemaphoreRecord, s: Session): boolean {
    if (rec.waiters === null || !rec.waiters.delete(s)) return false;
    if (rec.waiters.size === 0) rec.waiters = null;
    this.unlink(s, rec);
    this.count(s, 'waiters', -1);
    return true;
  }

  /** Forgets the record when no permit is held and nobody waits. */
  collectIfIdle(rec: SemaphoreRecord): void {
    if (rec.held === 0 && rec.waiters === null) this.byName.delete(rec.name);
  }

  /** Restores a record from a snapshot (the caller validates it). */
  restore(rec: SemaphoreRecord): void {
    invariant(!this.byName.has(rec.name), () => `semaphore ${JSON.stringify(rec.name)} restored twice`);
    this.byName.set(rec.name, rec);
    for (const x of rec.slots) {
      if (x.holder === null) continue;
      this.link(x.holder, rec);
      this.count(x.holder, 'locks', 1);
    }
    for (const s of rec.waiters?.keys() ?? []) {
      this.link(s, rec);
      this.count(s, 'waiters', 1);
    }
  }

  /** The records in name order, copied. */
  images(): SemaphoreImage[] {
    const records = Array.from(this.byName.values()).sort((a, b) => compareStrings(a.name, b.name));
    return records.map((rec) => {
      return { name: rec.name, permits: rec.permits, slots: rec.slots.map((x) => ({ ...x })), waiters: rec.waiters === null ? [] : Array.from(rec.waiters) };
    });
  }

  /** Self-check: the per-session index matches the records both ways. */
  check(isOpen: (s: Session) => boolean, maxPermits: number): string[] {
    const p: string[] = [];
    let links = 0;
    for (const rec of this.byName.values()) {
      const q = JSON.stringify(rec.name);
      if (rec.permits < 1 || rec.permits > maxPermits) p.push(`semaphore ${q} permits ${rec.permits} out of range`);
      if (rec.slots.length > rec.permits) p.push(`semaphore ${q} has more slots than permits`);
      const holders = rec.slots.flatMap((x) => (x.holder === null ? [] : [x.holder]));
      if (rec.slots.some((x) => x.holder !== null && x.latestHolder !== x.holder.id)) p.push(`semaphore ${q} slot's latestHolder is not its holder`);
      if (holders.length !== rec.held) p.push(`semaphore ${q} counts ${rec.held} permits held, slots say ${holders.length}`);
      if (rec.held === 0 && rec.waiters === null) p.push(`idle semaphore ${q} not forgotten`);
      if (rec.waiters !== null && rec.held < rec.permits) p.push(`semaphore ${q} has waiters and a free permit`);
      for (const s of holders) {
        if (!isOpen(s)) p.push(`semaphore ${q} slot held by a session that is not open`);
        if (rec.waiters?.has(s) === true) p.push(`semaphore ${q} holder also waits`);
        if (this.bySession.get(s)?.has(rec) !== true) p.push(`semaphore ${q} holder does not know it`);
      }
      if (new Set(holders).size !== holders.length) p.push(`semaphore ${q} has a session holding two permits`);
      links += holders.length;
      for (const s of rec.waiters?.keys() ?? []) {
        if (!isOpen(s) || this.bySession.get(s)?.has(rec) !== true) p.push(`semaphore ${q} waiter ${s.id} is dead or does not know it`);
        links++;
      }
    }
    let indexed = 0;
    for (const set of this.bySession.values()) indexed += set.size;
    if (indexed !== links) p.push(`semaphore session index counts ${indexed}, records ${links}`);
    p.push(...this.checkOwners());
    return p;
  }

  /** The per-owner presence counts match the records' holders and waiters. */
  private checkOwners(): string[] {
    const p: string[] = [];
    const inCount = new Map<string, number>();
    for (const rec of this.byName.values()) {
      const present = new Map<string, number>();
      const sessions = [...rec.slots.flatMap((x) => (x.holder === null ? [] : [x.holder])), ...(rec.waiters?.keys() ?? [])];
      for (const s of sessions) if (s.owner !== '') present.set(s.owner, (present.get(s.owner) ?? 0) + 1);
      const kept = this.owners.get(rec) ?? new Map<string, number>();
      if (kept.size !== present.size || [...present].some(([o, n]) => kept.get(o) !== n)) p.push(`semaphore ${JSON.stringify(rec.name)} owner counts do not match its holders and waiters`);
      for (const o of present.keys()) inCount.set(o, (inCount.get(o) ?? 0) + 1);
    }
    for (const [o, use] of this.byOwner) if (use.semaphores !== (inCount.get(o) ?? 0)) p.push(`owner ${JSON.stringify(o)} counted in ${use.semaphores} semaphores, records say ${inCount.get(o) ?? 0}`);
    if ([...this.owners.keys()].some((rec) => this.byName.get(rec.name) !== rec)) p.push('owner counts kept for a forgotten semaphore');
    return p;
  }

  private link(s: Session, rec: SemaphoreRecord): void {
    let set = this.bySession.get(s);
    if (set === undefined) this.bySession.set(s, (set = new Set()));
    set.add(rec);
    this.countIn(s, rec, 1);
  }

  private count(s: Session, what: keyof OwnerUse, delta: number): void {
    if (s.owner === '') return;
    let used = this.byOwner.get(s.owner);
    if (used === undefined) this.byOwner.set(s.owner, (used = { locks: 0, waiters: 0, semaphores: 0 }));
    used[what] += delta;
    if (used.locks === 0 && used.waiters === 0 && used.semaphores === 0) this.byOwner.delete(s.owner);
  }

  /** One session of s's owner more (or less) in `rec`; the owner's `semaphores` count moves when it enters or leaves. */
  private countIn(s: Session, rec: SemaphoreRecord, delta: 1 | -1): void {
    if (s.owner === '') return;
    let present = this.owners.get(rec);
    if (present === undefined) this.owners.set(rec, (present = new Map()));
    const before = present.get(s.owner) ?? 0;
    const after = before + delta;
    if (after === 0) present.delete(s.owner);
    else present.set(s.owner, after);
    if (present.size === 0) this.owners.delete(rec);
    if (before === 0) this.count(s, 'semaphores', 1);
    if (after === 0) this.count(s, 'semaphores', -1);
  }

  private unlink(s: Session, rec: SemaphoreRecord): void {
    const set = this.bySession.get(s);
    if (set === undefined || !set.delete(rec)) return;
    if (set.size === 0) this.bySession.delete(s);
    this.countIn(s, rec, -1);
  }
}

interface OwnerUse {
  locks: number;
  waiters: number;
  semaphores: number;
}

// The lock table: per lock its current grant, the highest token ever issued, and the FIFO queue.
//
// Tokens are entry indexes, so a new grant's token is above every token issued before it, for any lock.
// A lock record is kept while it is held, has waiters, or owns keys of the fenced store; an idle record
// without keys is forgotten (bounded memory), and `gcFloor` remembers the highest latestToken of any
// forgotten record, so a token can still be classified as "maybe issued" (<= gcFloor) or "never issued for
// this lock" (> gcFloor and no record).
import { invariant } from './invariant';
import { compareStrings } from './text';

export interface LockRecord {
  readonly name: string;
  /** Session holding the lock, or null when free. */
  holder: string | null;
  /** Token of the current grant (0 when free). Equals latestToken while held. */
  token: number;
  /** `now` of the entry that made the current grant (0 when free). */
  grantedAt: number;
  /** Highest token ever issued for this lock; survives release, never goes back. */
  latestToken: number;
  /** Session of the latestToken grant; survives release (tells "your grant ended" from "not yours"). */
  latestHolder: string;
  /** Queued session ids; Set iteration order is insertion order, i.e. FIFO. */
  readonly waiters: Set<string>;
  /** Keys of the fenced store bound to this lock (tombstones included). Derived, not snapshotted. */
  boundKeys: number;
}

export class LockTable {
  private readonly byName = new Map<string, LockRecord>();
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

  /** Lock records in code point order of their names. */
  sorted(): LockRecord[] {
    return Array.from(this.byName.values()).sort((a, b) => compareStrings(a.name, b.name));
  }

  create(name: string): LockRecord {
    invariant(!this.byName.has(name), `lock ${JSON.stringify(name)} created twice`);
    const rec: LockRecord = {
      name,
      holder: null,
      token: 0,
      grantedAt: 0,
      latestToken: 0,
      latestHolder: '',
      waiters: new Set(),
      boundKeys: 0,
    };
    this.byName.set(name, rec);
    return rec;
  }

  /** Restores a record from a snapshot (no checks beyond uniqueness: the caller validates). */
  restore(rec: LockRecord): void {
    invariant(!this.byName.has(rec.name), `lock ${JSON.stringify(rec.name)} restored twice`);
    this.byName.set(rec.name, rec);
  }

  /** Grants a free lock: the token is the index of the entry being applied. */
  grant(rec: LockRecord, sessionId: string, index: number, now: number): void {
    invariant(rec.holder === null, `grant of held lock ${JSON.stringify(rec.name)}`);
    invariant(index > rec.latestToken, `token of ${JSON.stringify(rec.name)} would not increase: ${index} <= ${rec.latestToken}`);
    invariant(index > this.gcFloor, `token ${index} not above forgotten tokens (${this.gcFloor})`);
    rec.holder = sessionId;
    rec.token = index;
    rec.grantedAt = now;
    rec.latestToken = index;
    rec.latestHolder = sessionId;
  }

  /** Ends the current grant; returns its token. */
  clearHolder(rec: LockRecord): number {
    invariant(rec.holder !== null, `release of free lock ${JSON.stringify(rec.name)}`);
    const token = rec.token;
    rec.holder = null;
    rec.token = 0;
    rec.grantedAt = 0;
    return token;
  }

  /** Forgets the record if nothing refers to it any more. */
  collectIfIdle(rec: LockRecord): void {
    if (rec.holder !== null || rec.waiters.size > 0 || rec.boundKeys > 0) return;
    this.byName.delete(rec.name);
    if (rec.latestToken > this.gcFloor) this.gcFloor = rec.latestToken;
  }
}

/** 1-based position of `sessionId` in the queue, 0 when not queued. O(queue length). */
export function queuePosition(rec: LockRecord, sessionId: string): number {
  let i = 0;
  for (const w of rec.waiters) {
    i++;
    if (w === sessionId) return i;
  }
  return 0;
}

// The steps of an atomic multi-lock (AcquireAll, docs/architecture.md#atomic-multi-lock): one waiter queued in
// every lock of its set, granted in one entry only when it heads all of those queues and every lock is free,
// so its session never holds part of the set. A set that heads some queues but not others blocks those
// queues (FIFO): that is the price of never granting a partial set, and what keeps later single acquirers
// from starving it.
import type { LockTable } from './locks';
import { addHeld, deleteWaiting, firstWaiter, isDelayed, type LockRecord, type MultiWait } from './records';
import type { GrantEndCause, LockEvent, SessionEndCause } from './results';
import { compareStrings } from './text';

export type MultiGrantCause = 'acquired' | 'delay_ended' | GrantEndCause;

/** Nobody holds the lock in either mode and it is in no lock-delay (it may have waiters). */
export function isFree(rec: LockRecord): boolean {
  return rec.holder === null && rec.sharers === null && !isDelayed(rec);
}

/** The set may be granted now: every lock of it is free and its session heads every one of their queues. */
export function isReady(wait: MultiWait): boolean {
  return wait.locks.every((rec) => isFree(rec) && firstWaiter(rec) === wait.session);
}

/** Grants every lock of a ready set to its session, with this entry's index as every token. */
export function grantSet(locks: LockTable, wait: MultiWait, index: number, now: number, cause: MultiGrantCause, events: LockEvent[]): void {
  const s = wait.session;
  for (const rec of wait.locks) {
    locks.dequeue(rec, s);
    deleteWaiting(s, rec);
    locks.grant(rec, s, index, now);
    addHeld(s, rec);
    events.push({ type: 'granted', lock: rec.name, sessionId: s.id, token: index, cause });
  }
}

/** Takes the set's waiter out of every queue of the set (cancelled, or its session ends); returns those locks. */
export function leaveSet(locks: LockTable, wait: MultiWait, cause: 'cancelled' | SessionEndCause, events: LockEvent[]): readonly LockRecord[] {
  const s = wait.session;
  for (const rec of wait.locks) {
    locks.dequeue(rec, s);
    deleteWaiting(s, rec);
    events.push({ type: 'wait_ended', lock: rec.name, sessionId: s.id, cause });
  }
  return wait.locks;
}

/**
 * A lock's multi waiters agree with the rest: each set is the same object in every lock of it, in strict
 * name order, its session queued (exclusive, with no lock-delay) in each; a free lock has waiters only behind
 * a set at its head that cannot be granted yet (a grantable one would have been granted).
 */
export function checkMultiWaiters(rec: LockRecord): string[] {
  const p: string[] = [];
  const q = JSON.stringify(rec.name);
  for (const [s, wait] of rec.multiWaiters ?? []) {
    if (wait.session !== s || !wait.locks.includes(rec)) p.push(`lock ${q} keeps a set that is not its waiter's`);
    let previous: LockRecord | undefined;
    for (const other of wait.locks) {
      if (previous !== undefined && compareStrings(previous.name, other.name) >= 0) p.push(`lock ${q} waiter ${s.id} has a set out of name order`);
      previous = other;
      if (other.multiWaiters?.get(s) !== wait || other.waiters?.has(s) !== true) p.push(`lock ${q} waiter ${s.id}: its set is not queued in ${JSON.stringify(other.name)}`);
    }
    if (rec.sharedWaiters?.has(s) === true || rec.waiterDelays?.has(s) === true) p.push(`lock ${q} multi waiter ${s.id} asks for a shared grant or a lock-delay`);
  }
  if (rec.multiWaiters?.size === 0) p.push(`lock ${q} keeps an empty map of multi waiters`);
  if (isFree(rec) && rec.waiters !== null) {
    const head = firstWaiter(rec);
    const wait = head === undefined ? undefined : rec.multiWaiters?.get(head);
    if (wait === undefined || isReady(wait)) p.push(`free lock ${q} has waiters`);
  }
  return p;
}

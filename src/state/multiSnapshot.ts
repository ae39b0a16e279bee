// The sets of AcquireAll waiters in a snapshot (format 9; docs/architecture.md#atomic-multi-lock). A waiter
// of a set is written in each of its locks' queues with mode WAITER_IN_SET and the name of the first lock of
// its set (name order): a session is queued at most once per lock, so (session, first name) names one set,
// and the set is rebuilt from the locks that carry that pair, one object shared by all of them.
import type { LockRecord, MultiWait, Session } from './records';
import { SnapshotError } from './snapshotWire';

/** A waiter's mode byte in format 9: exclusive, shared, or one waiter of an AcquireAll set. */
export const WAITER_EXCLUSIVE = 0;
export const WAITER_SHARED = 1;
export const WAITER_IN_SET = 2;

/** The name of the first lock of a set (every set names at least one). */
export function firstOf(wait: MultiWait): string {
  return wait.locks[0]?.name ?? '';
}

/** Collects the set waiters while the locks are read (in name order), then links each set. */
export class SetCollector {
  private readonly sets = new Map<Session, Map<string, LockRecord[]>>();

  add(rec: LockRecord, s: Session, first: string): void {
    const bySession = this.sets.get(s) ?? new Map<string, LockRecord[]>();
    this.sets.set(s, bySession);
    const locks = bySession.get(first) ?? [];
    bySession.set(first, locks);
    locks.push(rec);
  }

  /** Makes each set one MultiWait in all of its locks; throws when a set does not begin with the lock it names. */
  link(): void {
    for (const [s, bySession] of this.sets) {
      for (const [first, locks] of bySession) {
        if (locks[0]?.name !== first) throw new SnapshotError(`session ${s.id} waits for a set of locks that does not begin with ${JSON.stringify(first)}`);
        const wait: MultiWait = { session: s, locks };
        for (const rec of locks) (rec.multiWaiters ??= new Map()).set(s, wait);
      }
    }
  }
}

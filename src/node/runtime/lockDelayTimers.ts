import type { LockDelayRef } from '../../state';
import { DeadlineHeap } from './deadlineHeap';

interface Delay {
  lock: string;
  since: number;
  deadline: number;
  /** Its EndLockDelays is proposed and not yet applied. */
  ending: boolean;
}

/**
 * The leader's timers of the lock-delays in force (docs/architecture.md#lock-delay), on monotonic time and
 * in memory, as session leases are: promoted once the leader applied an entry of its term, cleared when it
 * stops leading. A leader times every delay it finds at promotion in full from then on, since it cannot know
 * how long the previous leader had timed it: a delay may last longer across a leader change, never shorter.
 * A delay is named by the entry that started it, so a late answer about an older delay of the same lock
 * changes nothing.
 */
export class LockDelayTimers {
  private readonly delays = new Map<string, Delay>();
  private readonly due = new DeadlineHeap<Delay>();
  private isPromoted = false;

  constructor(private readonly clock: () => number) {}

  get size(): number {
    return this.delays.size;
  }

  promote(delays: Iterable<{ lock: string; since: number; delayMs: number }>): void {
    this.demote();
    this.isPromoted = true;
    const now = this.clock();
    for (const d of delays) this.track(d.lock, d.since, now + d.delayMs);
  }

  demote(): void {
    this.isPromoted = false;
    this.delays.clear();
    this.due.clear();
  }

  /** The lock's delay as the state machine has it now (undefined: none), after an entry that may have changed it. */
  sync(lock: string, delay: { since: number; delayMs: number } | undefined): void {
    if (!this.isPromoted) return;
    if (delay === undefined) {
      this.delays.delete(lock);
      return;
    }
    if (this.delays.get(lock)?.since === delay.since) return;
    this.track(lock, delay.since, this.clock() + delay.delayMs);
  }

  /** Up to `limit` delays whose time is over, each handed out once until retry(). */
  ended(limit: number): LockDelayRef[] {
    const now = this.clock();
    const out: LockDelayRef[] = [];
    while (out.length < limit && this.due.peekDeadline() <= now) {
      const d = this.due.pop();
      if (d === undefined || this.delays.get(d.lock) !== d || d.ending) continue;
      d.ending = true;
      out.push({ lock: d.lock, since: d.since });
    }
    return out;
  }

  /** The EndLockDelays proposal failed: hand these delays out again. */
  retry(refs: readonly LockDelayRef[]): void {
    for (const ref of refs) {
      const d = this.delays.get(ref.lock);
      if (d === undefined || d.since !== ref.since || !d.ending) continue;
      d.ending = false;
      this.due.push(d.deadline, d);
    }
  }

  private track(lock: string, since: number, deadline: number): void {
    const d: Delay = { lock, since, deadline, ending: false };
    this.delays.set(lock, d);
    this.due.push(deadline, d);
  }
}

/**
 * Blocked acquires on this node, one record per (lock, session) however many calls wait on it: a client that
 * retries its Acquire (same request id, after a dropped connection or a leader change) joins the same wait.
 *
 * A wait ends with the session's grant, the end of its place in the queue, or its deadline, when the owner
 * proposes CancelWait. A call that goes away does not withdraw the wait at once, since its retry may be on
 * the way; if no call comes back within the grace period, the wait is withdrawn.
 */
import type { Clock, TimerHandle, Timers } from './ports';

export type WaitOutcome =
  | { kind: 'granted'; token: number }
  | { kind: 'ended'; cause: string }
  | { kind: 'timeout' }
  /** The deadline passed but the waiter could not be withdrawn (leadership moved): it may still be queued. */
  | { kind: 'withdraw-failed'; error: Error };

interface Wait {
  deadline: number;
  listeners: Set<(o: WaitOutcome) => void>;
  timer: TimerHandle | undefined;
}

export class AcquireWaits {
  private readonly waits = new Map<string, Wait>();

  constructor(
    /** Withdraws the waiter by an entry; resolves to the grant token if it turned out granted meanwhile. */
    private readonly withdraw: (lock: string, sessionId: string) => Promise<number | undefined>,
    private readonly graceMs: number,
    private readonly clock: Clock,
    private readonly timers: Timers,
  ) {}

  private static key(lock: string, sessionId: string): string {
    return `${lock}\u0000${sessionId}`;
  }

  /** Attaches a call to the wait of (lock, session), creating or extending it; returns a detach function. */
  attach(lock: string, sessionId: string, waitMs: number, listener: (o: WaitOutcome) => void): () => void {
    const k = AcquireWaits.key(lock, sessionId);
    const deadline = this.clock.monotonicMs() + waitMs;
    let w = this.waits.get(k);
    if (!w) {
      w = { deadline, listeners: new Set(), timer: undefined };
      this.waits.set(k, w);
    }
    w.deadline = Math.max(w.deadline, deadline);
    w.listeners.add(listener);
    this.arm(lock, sessionId, w, w.deadline - this.clock.monotonicMs());
    return () => {
      const cur = this.waits.get(k);
      if (!cur || !cur.listeners.delete(listener) || cur.listeners.size > 0) return;
      // Nobody waits any more: withdraw after the grace period unless a retry re-attaches.
      this.arm(lock, sessionId, cur, Math.min(this.graceMs, cur.deadline - this.clock.monotonicMs()));
    };
  }

  private arm(lock: string, sessionId: string, w: Wait, ms: number): void {
    this.timers.clearTimeout(w.timer);
    w.timer = this.timers.setTimeout(() => void this.expire(lock, sessionId, w), Math.max(0, ms));
  }

  private async expire(lock: string, sessionId: string, w: Wait): Promise<void> {
    const k = AcquireWaits.key(lock, sessionId);
    if (this.waits.get(k) !== w) return;
    let outcome: WaitOutcome;
    try {
      const token = await this.withdraw(lock, sessionId);
      outcome = token !== undefined ? { kind: 'granted', token } : { kind: 'timeout' };
    } catch (err) {
      outcome = { kind: 'withdraw-failed', error: err as Error };
    }
    if (this.waits.get(k) !== w) return;
    this.finish(k, outcome);
  }

  /** A grant or a wait end was applied: tell every call attached to it. */
  settle(lock: string, sessionId: string, outcome: WaitOutcome): void {
    const k = AcquireWaits.key(lock, sessionId);
    if (this.waits.has(k)) this.finish(k, outcome);
  }

  private finish(k: string, outcome: WaitOutcome): void {
    const w = this.waits.get(k);
    if (!w) return;
    this.waits.delete(k);
    this.timers.clearTimeout(w.timer);
    for (const l of w.listeners) l(outcome);
  }

  /** Shutdown: no timer outlives the node. */
  clear(): void {
    for (const w of this.waits.values()) this.timers.clearTimeout(w.timer);
    this.waits.clear();
  }
}

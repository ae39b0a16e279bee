import type { LeaseCheckpoint } from '../../state';
import { DeadlineHeap } from './deadlineHeap';

interface Lease {
  id: string;
  ttlMs: number;
  deadline: number;
  /** Its Expire entry is proposed and not yet applied: it is not renewed any more. */
  expiring: boolean;
  /** The lease time left at the session's last applied checkpoint, as the log says (its TTL until one). */
  checkpointMs: number;
  /** A checkpoint of it is proposed and not yet applied. */
  checkpointing: boolean;
}

/** What a renewal gets from the leases: the time left, and whether a checkpoint must be reset first. */
export interface Renewal {
  remainingMs: number;
  /** The log holds (or will hold) a checkpoint below the TTL: a next leader would cut this renewal short. */
  needsReset: boolean;
}

/**
 * Session deadlines on monotonic time, kept by the leader only and in memory: renewals are not log entries
 * (docs/architecture.md#sessions-and-expiry). Like etcd's lessor, the leases are promoted only once the leader's state includes every
 * committed entry (it applied an entry of its own term), and each deadline then starts from the session's
 * checkpoint plus `extendMs` (an election timeout): a deposed leader may have acknowledged renewals until it
 * noticed, and those must end before this leader expires anyone. Until promoted, nothing is renewed or
 * expired.
 *
 * Checkpoints (etcd's lease checkpoints) keep leader changes from postponing expiries forever: a session
 * that is not renewed gets its time left written to the log when it falls to half its TTL, a quarter, and
 * nothing; a next leader starts from there instead of a full TTL. A client that renews every third of its
 * TTL is never checkpointed. Checkpoints start two election timeouts after promotion, when no older leader
 * can still acknowledge a renewal, so a checkpoint never undercuts an acknowledged lease; a renewal of a
 * checkpointed session is acknowledged only once a reset to the full TTL is applied (LeaderDuties).
 *
 * Two heaps pop what is due, so each session costs O(log n) per TTL rather than a scan every tick; a lease
 * renewed since it was pushed is pushed again at its new time.
 */
export class SessionLeases {
  private readonly leases = new Map<string, Lease>();
  private readonly due = new DeadlineHeap<Lease>();
  private readonly checkpointDue = new DeadlineHeap<Lease>();
  private isPromoted = false;
  private checkpointsFrom = Infinity;

  constructor(private readonly clock: () => number) {}

  get size(): number {
    return this.leases.size;
  }

  get promoted(): boolean {
    return this.isPromoted;
  }

  /** The leader's state is complete: every open session's deadline starts from its checkpoint plus extendMs. */
  promote(sessions: Iterable<{ id: string; ttlMs: number; remainingMs: number }>, extendMs: number): void {
    this.demote();
    this.isPromoted = true;
    const now = this.clock();
    this.checkpointsFrom = now + 2 * extendMs;
    for (const s of sessions) this.track(s.id, s.ttlMs, now + Math.min(s.remainingMs, s.ttlMs) + extendMs, s.remainingMs);
  }

  /** Leadership lost: the next leader keeps the deadlines. */
  demote(): void {
    this.isPromoted = false;
    this.leases.clear();
    this.due.clear();
    this.checkpointDue.clear();
  }

  opened(id: string, ttlMs: number): void {
    if (this.isPromoted) this.track(id, ttlMs, this.clock() + ttlMs, ttlMs);
  }

  ended(id: string): void {
    this.leases.delete(id);
  }

  /** Extends the lease; undefined when the session is unknown, expiring or past its deadline. */
  renew(id: string): Renewal | undefined {
    const lease = this.leases.get(id);
    if (!this.isPromoted || !lease || lease.expiring) return undefined;
    const now = this.clock();
    if (now >= lease.deadline) return undefined;
    lease.deadline = now + lease.ttlMs;
    return { remainingMs: lease.ttlMs, needsReset: lease.checkpointMs < lease.ttlMs || lease.checkpointing };
  }

  /**
   * Whole milliseconds left, rounded up: the clock is fractional, and the answer goes to an int64 field. Up,
   * so that a live lease never reads 0 and one renewed just now reads its TTL, never more.
   */
  remaining(id: string): number | undefined {
    const lease = this.leases.get(id);
    return lease ? Math.max(0, Math.ceil(lease.deadline - this.clock())) : undefined;
  }

  /** Up to `limit` sessions past their deadline, each handed out once until retryExpire(). */
  expired(limit: number): string[] {
    const now = this.clock();
    const out: string[] = [];
    for (let lease = this.popDue(this.due, now); lease !== undefined; lease = out.length < limit ? this.popDue(this.due, now) : undefined) {
      if (lease.expiring) continue; // already handed out
      if (lease.deadline > now) {
        this.due.push(lease.deadline, lease); // renewed since it was pushed
        continue;
      }
      lease.expiring = true;
      out.push(lease.id);
    }
    return out;
  }

  /** The Expire proposal failed (for example leadership moved): hand the session out again next time. */
  retryExpire(id: string): void {
    const lease = this.leases.get(id);
    if (!lease || !lease.expiring) return;
    lease.expiring = false;
    this.due.push(lease.deadline, lease);
  }

  /** Up to `limit` checkpoints that fell due, each handed out once until checkpointApplied() or checkpointFailed(). */
  checkpointsDue(limit: number): LeaseCheckpoint[] {
    const now = this.clock();
    const out: LeaseCheckpoint[] = [];
    if (now < this.checkpointsFrom) return out;
    for (let lease = this.popDue(this.checkpointDue, now); lease !== undefined; lease = out.length < limit ? this.popDue(this.checkpointDue, now) : undefined) {
      if (lease.checkpointing) continue; // pushed again when its checkpoint is applied or fails
      const dueAt = checkpointDueAt(lease);
      if (dueAt > now) {
        this.checkpointDue.push(dueAt, lease); // renewed since it was pushed
        continue;
      }
      lease.checkpointing = true;
      out.push({ sessionId: lease.id, remainingMs: Math.min(lease.ttlMs, Math.max(0, Math.floor(lease.deadline - now))) });
    }
    return out;
  }

  /** A checkpoint of the session was applied (proposed by this leader or an earlier one). */
  checkpointApplied(id: string, remainingMs: number): void {
    const lease = this.leases.get(id);
    if (!lease) return;
    lease.checkpointMs = Math.min(remainingMs, lease.ttlMs);
    this.checkpointSettled(lease);
  }

  /** The checkpoint proposal failed: the session's next checkpoint is due again. */
  checkpointFailed(id: string): void {
    const lease = this.leases.get(id);
    if (lease) this.checkpointSettled(lease);
  }

  private checkpointSettled(lease: Lease): void {
    lease.checkpointing = false;
    const dueAt = checkpointDueAt(lease);
    if (dueAt < Infinity) this.checkpointDue.push(dueAt, lease);
  }

  /** The next lease of `heap` due by `now` that is still tracked, or undefined. */
  private popDue(heap: DeadlineHeap<Lease>, now: number): Lease | undefined {
    while (heap.peekDeadline() <= now) {
      const lease = heap.pop();
      if (lease !== undefined && this.leases.get(lease.id) === lease) return lease;
    }
    return undefined;
  }

  private track(id: string, ttlMs: number, deadline: number, checkpointMs: number): void {
    const lease: Lease = { id, ttlMs, deadline, expiring: false, checkpointMs: Math.min(checkpointMs, ttlMs), checkpointing: false };
    this.leases.set(id, lease);
    this.due.push(deadline, lease);
    const dueAt = checkpointDueAt(lease);
    if (dueAt < Infinity) this.checkpointDue.push(dueAt, lease);
  }
}

/**
 * When the lease's next checkpoint falls due: the time left is written when it falls to half the TTL, then
 * to a quarter, then to nothing (Infinity: nothing more to write).
 */
function checkpointDueAt(lease: Lease): number {
  const { ttlMs, checkpointMs } = lease;
  const level = checkpointMs > ttlMs / 2 ? ttlMs / 2 : checkpointMs > ttlMs / 4 ? ttlMs / 4 : checkpointMs > 0 ? 0 : -1;
  return level < 0 ? Infinity : lease.deadline - level;
}

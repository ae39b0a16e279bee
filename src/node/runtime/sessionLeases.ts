import { DeadlineHeap } from './deadlineHeap';

interface Lease {
  id: string;
  ttlMs: number;
  deadline: number;
  /** Its Expire entry is proposed and not yet applied: it is not renewed any more. */
  expiring: boolean;
}

/**
 * Session deadlines on monotonic time, kept by the leader only and in memory: renewals are not log entries
 * (DESIGN.md 3). Like etcd's lessor, the leases are promoted only once the leader's state includes every
 * committed entry (it applied an entry of its own term), and each deadline then starts from a full TTL plus
 * `extendMs` (an election timeout): a deposed leader may have acknowledged renewals until it noticed, and
 * those must end before this leader expires anyone. Until promoted, nothing is renewed or expired.
 *
 * The sweep pops due deadlines from a heap; a lease renewed since it was pushed is pushed again at its new
 * deadline, so each session costs O(log n) per TTL rather than a scan of every session every tick.
 */
export class SessionLeases {
  private readonly leases = new Map<string, Lease>();
  private readonly due = new DeadlineHeap<Lease>();
  private isPromoted = false;

  constructor(private readonly clock: () => number) {}

  get size(): number {
    return this.leases.size;
  }

  get promoted(): boolean {
    return this.isPromoted;
  }

  /** The leader's state is complete: every open session gets a full TTL plus extendMs from now. */
  promote(sessions: Iterable<{ id: string; ttlMs: number }>, extendMs: number): void {
    this.demote();
    this.isPromoted = true;
    const now = this.clock();
    for (const s of sessions) this.track(s.id, s.ttlMs, now + s.ttlMs + extendMs);
  }

  /** Leadership lost: the next leader keeps the deadlines. */
  demote(): void {
    this.isPromoted = false;
    this.leases.clear();
    this.due.clear();
  }

  opened(id: string, ttlMs: number): void {
    if (this.isPromoted) this.track(id, ttlMs, this.clock() + ttlMs);
  }

  ended(id: string): void {
    this.leases.delete(id);
  }

  /** Extends the lease; returns the time left in ms, or undefined when the session is unknown, expiring or past its deadline. */
  renew(id: string): number | undefined {
    const lease = this.leases.get(id);
    if (!this.isPromoted || !lease || lease.expiring) return undefined;
    const now = this.clock();
    if (now >= lease.deadline) return undefined;
    lease.deadline = now + lease.ttlMs;
    return lease.ttlMs;
  }

  remaining(id: string): number | undefined {
    const lease = this.leases.get(id);
    return lease ? Math.max(0, lease.deadline - this.clock()) : undefined;
  }

  /** Up to `limit` sessions past their deadline, each handed out once until retryExpire(). */
  expired(limit: number): string[] {
    const now = this.clock();
    const out: string[] = [];
    while (out.length < limit && this.due.peekDeadline() <= now) {
      const lease = this.due.pop();
      if (lease === undefined) break; // empty (only reachable if now is Infinity, an empty heap's deadline)
      if (this.leases.get(lease.id) !== lease || lease.expiring) continue; // ended, or already handed out
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

  private track(id: string, ttlMs: number, deadline: number): void {
    const lease: Lease = { id, ttlMs, deadline, expiring: false };
    this.leases.set(id, lease);
    this.due.push(deadline, lease);
  }
}

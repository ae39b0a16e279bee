/**
 * Session deadlines, kept by the leader only and in memory: renewals are not log entries (DESIGN.md 3).
 * On becoming leader every session starts afresh (TTL is a lower bound: a failover never shortens a lease);
 * a session whose deadline passes is handed out by expired() once, for the caller to propose its Expire entry.
 */
export class SessionLeases {
  private readonly deadlines = new Map<string, { deadline: number; ttlMs: number }>();
  /** Sessions whose Expire entry is proposed and not yet applied: they are not renewed any more. */
  private readonly expiring = new Set<string>();

  constructor(private readonly clock: () => number) {}

  get size(): number {
    return this.deadlines.size;
  }

  /** Leadership gained: every open session gets a full TTL from now. */
  resetAll(sessions: Iterable<{ id: string; ttlMs: number }>): void {
    this.clear();
    const now = this.clock();
    for (const s of sessions) this.deadlines.set(s.id, { deadline: now + s.ttlMs, ttlMs: s.ttlMs });
  }

  /** Leadership lost: the next leader keeps the deadlines. */
  clear(): void {
    this.deadlines.clear();
    this.expiring.clear();
  }

  opened(id: string, ttlMs: number): void {
    this.deadlines.set(id, { deadline: this.clock() + ttlMs, ttlMs });
  }

  ended(id: string): void {
    this.deadlines.delete(id);
    this.expiring.delete(id);
  }

  /** Extends the lease; returns the time left in ms, or undefined when the session is unknown or expiring. */
  renew(id: string): number | undefined {
    const lease = this.deadlines.get(id);
    if (!lease || this.expiring.has(id)) return undefined;
    const now = this.clock();
    if (now >= lease.deadline) return undefined;
    lease.deadline = now + lease.ttlMs;
    return lease.ttlMs;
  }

  remaining(id: string): number | undefined {
    const lease = this.deadlines.get(id);
    return lease ? Math.max(0, lease.deadline - this.clock()) : undefined;
  }

  /** Sessions past their deadline and not yet handed out; each is handed out once until retryExpire(). */
  expired(): string[] {
    const now = this.clock();
    const out: string[] = [];
    for (const [id, lease] of this.deadlines) {
      if (now >= lease.deadline && !this.expiring.has(id)) {
        this.expiring.add(id);
        out.push(id);
      }
    }
    return out;
  }

  /** The Expire proposal failed (for example leadership moved): hand the session out again next time. */
  retryExpire(id: string): void {
    this.expiring.delete(id);
  }
}

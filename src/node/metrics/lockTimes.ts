import { Histogram, type Registry } from 'prom-client';
import type { LockEvent } from '../../state';
import { LOCK_SECONDS } from './buckets';
import { lockLabel } from './lockLabel';

/** What a pair of wait and hold histograms measures: locks, or semaphores' permits. */
interface TimedKind {
  prefix: 'fencelock_lock' | 'fencelock_permit';
  /** The label naming the resource (only with a label depth > 0), cut as lock labels are. */
  label: 'lock' | 'semaphore';
  what: string;
}

/**
 * How long sessions waited for grants of one kind and held them, measured on the log's clock: every entry
 * carries `now`, the leader's clock (ms) when it proposed the entry, so every member observes the same
 * durations as it applies the same log, whatever its own clock says. Only the starts of the waits and grants
 * the state machine holds right now are remembered, each by resource and session (a shared lock has several
 * holders, a semaphore several permits), and each is dropped when its wait or grant ends.
 */
export class GrantTimes {
  readonly wait: Histogram<string>;
  readonly hold: Histogram<string>;
  /** `now` of the entry that queued a session, by resource and session. */
  private readonly queuedAt = new Map<string, number>();
  /** `now` of the entry that made a grant, by resource and session. */
  private readonly grantedAt = new Map<string, number>();

  constructor(
    registry: Registry,
    private readonly kind: TimedKind,
    private readonly labelDepth: number,
  ) {
    const registers = [registry];
    const labelNames = labelDepth > 0 ? ['cause', kind.label] : ['cause'];
    this.wait = new Histogram({
      name: `${kind.prefix}_wait_seconds`,
      help: `Time from the entry that queued a session to the entry that granted it ${kind.what}, from the leader clock each entry carries (now); immediate grants count as 0 under cause "acquired". cause: acquired (free), or what ended the previous grant (released, closed, expired, revoked).`,
      labelNames, buckets: LOCK_SECONDS, registers,
    });
    this.hold = new Histogram({
      name: `${kind.prefix}_hold_seconds`,
      help: `Time from the entry that granted ${kind.what} to the entry that ended the grant, from the leader clock each entry carries (now). cause: released, closed, expired (session lease ran out), revoked.`,
      labelNames, buckets: LOCK_SECONDS, registers,
    });
  }

  queued(resource: string, sessionId: string, now: number): void {
    const key = keyOf(resource, sessionId);
    if (!this.queuedAt.has(key)) this.queuedAt.set(key, now);
  }

  waitEnded(resource: string, sessionId: string): void {
    this.queuedAt.delete(keyOf(resource, sessionId));
  }

  granted(resource: string, sessionId: string, cause: string, now: number): void {
    const key = keyOf(resource, sessionId);
    const queued = this.queuedAt.get(key);
    this.queuedAt.delete(key);
    this.grantedAt.set(key, now);
    // A handover to a waiter queued before this node's state was restored has no known start: skipped.
    const waited = queued !== undefined ? now - queued : cause === 'acquired' ? 0 : undefined;
    if (waited !== undefined) this.wait.observe(this.labels(resource, cause), seconds(waited));
  }

  released(resource: string, sessionId: string, cause: string, now: number): void {
    const key = keyOf(resource, sessionId);
    const at = this.grantedAt.get(key);
    this.grantedAt.delete(key);
    if (at !== undefined) this.hold.observe(this.labels(resource, cause), seconds(now - at));
  }

  forget(): void {
    this.queuedAt.clear();
    this.grantedAt.clear();
  }

  remembered(): number {
    return this.queuedAt.size + this.grantedAt.size;
  }

  private labels(resource: string, cause: string): Record<string, string> {
    const prefix = lockLabel(resource, this.labelDepth);
    return prefix === undefined ? { cause } : { cause, [this.kind.label]: prefix };
  }
}

/** The wait and hold times of locks and of permits, from what each applied entry did. */
export class LockTimes {
  readonly locks: GrantTimes;
  readonly permits: GrantTimes;

  constructor(registry: Registry, lockLabelDepth: number) {
    this.locks = new GrantTimes(registry, { prefix: 'fencelock_lock', label: 'lock', what: 'the lock' }, lockLabelDepth);
    this.permits = new GrantTimes(registry, { prefix: 'fencelock_permit', label: 'semaphore', what: 'a permit of a semaphore' }, lockLabelDepth);
  }

  /** Observes what one applied entry, proposed at `now`, did to waits and grants. */
  applied(now: number, events: readonly LockEvent[]): void {
    for (const e of events) {
      if (e.type === 'queued') this.locks.queued(e.lock, e.sessionId, now);
      else if (e.type === 'wait_ended') this.locks.waitEnded(e.lock, e.sessionId);
      else if (e.type === 'granted') this.locks.granted(e.lock, e.sessionId, e.cause, now);
      else if (e.type === 'released') this.locks.released(e.lock, e.sessionId, e.cause, now);
      else if (e.type === 'permit_queued') this.permits.queued(e.semaphore, e.sessionId, now);
      else if (e.type === 'permit_wait_ended') this.permits.waitEnded(e.semaphore, e.sessionId);
      else if (e.type === 'permit_granted') this.permits.granted(e.semaphore, e.sessionId, e.cause, now);
      else if (e.type === 'permit_released') this.permits.released(e.semaphore, e.sessionId, e.cause, now);
    }
  }

  /** The state was replaced (a snapshot installed): its waits and grants started at times not known here. */
  forget(): void {
    this.locks.forget();
    this.permits.forget();
  }

  /** How many starts are remembered: no more than the waits and grants the state machine holds. */
  remembered(): number {
    return this.locks.remembered() + this.permits.remembered();
  }
}

function keyOf(resource: string, sessionId: string): string {
  return `${sessionId}\u0000${resource}`;
}

/** A new leader's clock may be behind the old one's: a negative span counts as 0. */
function seconds(ms: number): number {
  return Math.max(0, ms) / 1000;
}

import { Histogram, type Registry } from 'prom-client';
import type { LockEvent } from '../../state';
import { LOCK_SECONDS } from './buckets';
import { lockLabel } from './lockLabel';

type TimeLabel = 'cause' | 'lock';

/**
 * How long sessions waited for locks and held them, measured on the log's clock: every entry carries `now`,
 * the leader's clock (ms) when it proposed the entry, so every member observes the same durations as it
 * applies the same log, whatever its own clock says. Only the starts of the waits and grants the state
 * machine holds right now are remembered, and each is dropped when its wait or grant ends.
 */
export class LockTimes {
  readonly wait: Histogram<TimeLabel>;
  readonly hold: Histogram<TimeLabel>;
  /** `now` of the Acquire that queued a session, by lock and session. */
  private readonly queuedAt = new Map<string, number>();
  /** `now` of the entry that granted a lock, and to whom, by lock. */
  private readonly grantedAt = new Map<string, { sessionId: string; at: number }>();

  constructor(
    registry: Registry,
    private readonly lockLabelDepth: number,
  ) {
    const registers = [registry];
    const labelNames: TimeLabel[] = lockLabelDepth > 0 ? ['cause', 'lock'] : ['cause'];
    this.wait = new Histogram({
      name: 'fencelock_lock_wait_seconds',
      help: 'Time from the Acquire entry that queued a session to the entry that granted it the lock, from the leader clock each entry carries (now); immediate grants count as 0 under cause "acquired". cause: acquired (free lock), or what ended the previous grant (released, closed, expired, revoked).',
      labelNames, buckets: LOCK_SECONDS, registers,
    });
    this.hold = new Histogram({
      name: 'fencelock_lock_hold_seconds',
      help: 'Time from the entry that granted a lock to the entry that ended the grant, from the leader clock each entry carries (now). cause: released, closed, expired (session lease ran out), revoked.',
      labelNames, buckets: LOCK_SECONDS, registers,
    });
  }

  /** Observes what one applied entry, proposed at `now`, did to waits and grants. */
  applied(now: number, events: readonly LockEvent[]): void {
    for (const e of events) {
      if (e.type === 'queued') this.queued(e.lock, e.sessionId, now);
      else if (e.type === 'wait_ended') this.queuedAt.delete(waitKey(e.lock, e.sessionId));
      else if (e.type === 'granted') this.granted(e.lock, e.sessionId, e.cause, now);
      else if (e.type === 'released') this.released(e.lock, e.sessionId, e.cause, now);
    }
  }

  /** The state was replaced (a snapshot installed): its waits and grants started at times not known here. */
  forget(): void {
    this.queuedAt.clear();
    this.grantedAt.clear();
  }

  /** How many starts are remembered: no more than the waits and grants the state machine holds. */
  remembered(): number {
    return this.queuedAt.size + this.grantedAt.size;
  }

  private queued(lock: string, sessionId: string, now: number): void {
    const key = waitKey(lock, sessionId);
    if (!this.queuedAt.has(key)) this.queuedAt.set(key, now);
  }

  private granted(lock: string, sessionId: string, cause: string, now: number): void {
    const key = waitKey(lock, sessionId);
    const queued = this.queuedAt.get(key);
    this.queuedAt.delete(key);
    this.grantedAt.set(lock, { sessionId, at: now });
    // A handover to a waiter queued before this node's state was restored has no known start: skipped.
    const waited = queued !== undefined ? now - queued : cause === 'acquired' ? 0 : undefined;
    if (waited !== undefined) this.wait.observe(this.labels(lock, cause), seconds(waited));
  }

  private released(lock: string, sessionId: string, cause: string, now: number): void {
    const grant = this.grantedAt.get(lock);
    this.grantedAt.delete(lock);
    if (grant?.sessionId === sessionId) this.hold.observe(this.labels(lock, cause), seconds(now - grant.at));
  }

  private labels(lock: string, cause: string): Partial<Record<TimeLabel, string>> {
    const prefix = lockLabel(lock, this.lockLabelDepth);
    return prefix === undefined ? { cause } : { cause, lock: prefix };
  }
}

function waitKey(lock: string, sessionId: string): string {
  return `${sessionId}\u0000${lock}`;
}

/** A new leader's clock may be behind the old one's: a negative span counts as 0. */
function seconds(ms: number): number {
  return Math.max(0, ms) / 1000;
}

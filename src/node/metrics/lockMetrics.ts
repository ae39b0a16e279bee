import { Counter, Gauge, type Registry } from 'prom-client';
import type { Command, CommandResult, StateStats } from '../../state';
import type { LockApp } from '../lockApp';
import { LockTimes } from './lockTimes';

/**
 * The lock state's metrics. Counts (sessions, locks, permits, waiters, keys) are read from the state machine when
 * scraped; events (grants, releases, session ends, refused writes) are counted from what each applied
 * entry did, so every member counts the same events as it applies the same log.
 */
export class LockMetrics {
  private app: LockApp | undefined;
  /** stats() walks every lock: one walk serves every gauge of a scrape, until an entry applies. */
  private cached: { machine: LockApp['machine']; applied: number; stats: StateStats } | undefined;

  readonly grants: Counter<'cause'>;
  readonly releases: Counter<'cause'>;
  readonly permitGrants: Counter<'cause'>;
  readonly permitReleases: Counter<'cause'>;
  readonly sessionsOpened: Counter;
  readonly sessionsEnded: Counter<'cause'>;
  readonly writes: Counter;
  readonly writeRefusals: Counter<'reason'>;
  readonly refusals: Counter<'command' | 'reason'>;
  readonly times: LockTimes;

  /** `lockLabelDepth`: the segments of a lock name the wait and hold times are labelled with (0: none). */
  constructor(registry: Registry, lockLabelDepth = 0) {
    const registers = [registry];
    // collect() runs with the gauge as `this`: the state is reached through this closure.
    const stats = (): StateStats | undefined => this.stats();
    const count = (name: string, help: string, read: (s: StateStats) => number): void => {
      new Gauge({ name, help, registers, collect() { const s = stats(); if (s) this.set(read(s)); } });
    };
    count('fencelock_sessions', 'Open sessions.', (s) => s.sessions);
    count('fencelock_locks_held', 'Locks held by a session.', (s) => s.heldLocks);
    count('fencelock_lock_waiters', 'Sessions queued for a lock, over all locks.', (s) => s.waiters);
    count('fencelock_lock_records', 'Lock records kept (held, waited for, or owning keys).', (s) => s.locks);
    count('fencelock_semaphores', 'Semaphores in use: a permit held or waited for (an idle semaphore is forgotten).', (s) => s.semaphores);
    count('fencelock_permits_held', 'Permits held, over all semaphores.', (s) => s.permitsHeld);
    count('fencelock_permit_waiters', 'Sessions queued for a permit, over all semaphores.', (s) => s.permitWaiters);
    count('fencelock_kv_keys', 'Keys in the fenced store, deleted ones (tombstones) included.', (s) => s.keys);
    count('fencelock_kv_store_bytes', 'Bytes of keys and values in the fenced store.', (s) => s.storeBytes);
    this.grants = new Counter({ name: 'fencelock_lock_grants_total', help: 'Locks granted; cause: acquired (the lock was free), or what ended the previous grant (released, closed, expired) for a handover.', labelNames: ['cause'], registers });
    this.releases = new Counter({ name: 'fencelock_lock_releases_total', help: 'Grants ended, by cause (released, closed, expired).', labelNames: ['cause'], registers });
    this.permitGrants = new Counter({ name: 'fencelock_permit_grants_total', help: 'Semaphore permits granted; cause: acquired (a permit was free), or what ended the previous grant of the slot (released, closed, expired, revoked) for a handover.', labelNames: ['cause'], registers });
    this.permitReleases = new Counter({ name: 'fencelock_permit_releases_total', help: 'Semaphore permit grants ended, by cause (released, closed, expired, revoked).', labelNames: ['cause'], registers });
    this.sessionsOpened = new Counter({ name: 'fencelock_sessions_opened_total', help: 'Sessions opened.', registers });
    this.sessionsEnded = new Counter({ name: 'fencelock_sessions_ended_total', help: 'Sessions ended, by cause: closed by their client, or expired (their lease ran out).', labelNames: ['cause'], registers });
    this.writes = new Counter({ name: 'fencelock_fenced_writes_total', help: 'Fenced writes accepted.', registers });
    this.writeRefusals = new Counter({ name: 'fencelock_fenced_write_refusals_total', help: 'Fenced writes refused, by reason (STALE_TOKEN, LOCK_NOT_HELD, WRONG_LOCK, UNKNOWN_SESSION, NOT_HOLDER, ...).', labelNames: ['reason'], registers });
    this.refusals = new Counter({ name: 'fencelock_refusals_total', help: 'Applied log entries the state machine refused (nothing changed), by command type (Acquire, Release, Write, OpenSession, ...) and refusal reason (a fixed set: STALE_TOKEN, TOO_MANY_WAITERS, PERMISSION_DENIED, ...). Counted on every member as it applies the entry.', labelNames: ['command', 'reason'], registers });
    this.times = new LockTimes(registry, lockLabelDepth);
  }

  /** Reads this app's state from now on and counts what its applied entries do. */
  watch(app: LockApp): void {
    this.app = app;
    app.on('applied', (_index: number, command: Command, outcome: CommandResult) => this.count(command, outcome));
    app.on('restored', () => this.times.forget());
  }

  private stats(): StateStats | undefined {
    const machine = this.app?.machine;
    if (!machine) return undefined;
    const c = this.cached;
    if (c?.machine === machine && c.applied === machine.lastApplied) return c.stats;
    const stats = machine.stats();
    this.cached = { machine, applied: machine.lastApplied, stats };
    return stats;
  }

  private count(command: Command, outcome: CommandResult): void {
    // A retry answered from the dedup table did nothing now.
    if (outcome.duplicate) return;
    for (const e of outcome.events) {
      if (e.type === 'granted') this.grants.inc({ cause: e.cause });
      else if (e.type === 'released') this.releases.inc({ cause: e.cause });
      else if (e.type === 'permit_granted') this.permitGrants.inc({ cause: e.cause });
      else if (e.type === 'permit_released') this.permitReleases.inc({ cause: e.cause });
      else if (e.type === 'session_ended') this.sessionsEnded.inc({ cause: e.cause });
    }
    this.times.applied(command.now, outcome.events);
    const { result } = outcome;
    if (result.status === 'refused') this.refusals.inc({ command: command.type, reason: result.reason });
    if (result.status === 'session_opened') this.sessionsOpened.inc();
    if (command.type !== 'Write') return;
    if (result.status === 'written') this.writes.inc();
    else if (result.status === 'refused') this.writeRefusals.inc({ reason: result.reason });
  }
}

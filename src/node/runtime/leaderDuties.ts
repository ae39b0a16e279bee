import { MAX_CHECKPOINTS_PER_ENTRY, MAX_DELAYS_PER_ENTRY, MAX_SESSIONS_PER_EXPIRY, type Command, type CommandResult, type LeaseCheckpoint, type LeaseCommand } from '../../state';
import type { LockApp } from '../lockApp';
import type { Logger } from '../logger';
import type { RaftDriver } from '../raftDriver';
import { Role } from '../../raft/types';
import type { NodePorts, TimerHandle } from './ports';
import { LockDelayTimers } from './lockDelayTimers';
import { SessionLeases } from './sessionLeases';

/**
 * At most this many sessions expired a second (etcd revokes at most 1,000 leases a second; ours are cheaper
 * to end, several per entry): 100,000 sessions ending together are expired over 20 s while the event loop
 * keeps answering.
 */
export const MAX_EXPIRIES_PER_SECOND = 5_000;

/**
 * What one ExpireSession entry may cost to apply: each session counts 1 plus the locks it holds and waits
 * for (each released, maybe handed over). About a millisecond of apply time.
 */
export const MAX_EXPIRY_LOAD_PER_ENTRY = 2_048;

/** At most this many lease checkpoints written a second (each a few bytes in a CheckpointLeases entry). */
export const MAX_CHECKPOINTS_PER_SECOND = 10_000;

/** Fixed defects the simulator can plant again (see test/nodesim). Never set outside it. */
export interface LeaseBugs {
  /** Session deadlines on the wall clock: a clock step expires sessions early. */
  wallClockLeases?: boolean;
  /** Leases promoted on election, before the leader applied an entry of its term (answers from stale state). */
  promoteOnElection?: boolean;
  /** No election timeout added to the deadlines at promotion (a deposed leader's late acknowledgements outlive them). */
  noPromoteExtension?: boolean;
  /** A checkpointed session's renewal acknowledged before its checkpoint is reset (a next leader cuts it short). */
  ackBeforeCheckpointReset?: boolean;
}

/** What a renewal on the KeepAlive stream gets: an acknowledgement, or nothing (the lease is not extended). */
export type RenewalAnswer = { alive: boolean; remainingMs: number } | 'no-ack';

/**
 * The leader's duties over session leases, as one promote/demote object in the style of etcd's lessor:
 * promoted when this node leads and has applied an entry of its own term, demoted when it stops leading.
 * Promoted, it acknowledges renewals (while it heard from a quorum within an election timeout) and proposes
 * the expiry of sessions whose deadline passed, in bounded batches.
 */
export class LeaderDuties {
  readonly leases: SessionLeases;
  /** The lock-delays in force, timed by this leader (it proposes their end as it proposes expiries). */
  readonly delays: LockDelayTimers;
  private sweeper: TimerHandle | undefined;
  private stopped = false;
  /** Resets of checkpointed sessions in flight, by session: renewals wait for them before they are acknowledged. */
  private readonly resets = new Map<string, Promise<unknown>>();

  constructor(
    private readonly driver: RaftDriver<CommandResult>,
    private readonly app: LockApp,
    private readonly ports: NodePorts,
    private readonly tickMs: number,
    private readonly proposeLeaseCommand: (command: LeaseCommand) => Promise<unknown>,
    private readonly logger: Logger,
    private readonly bugs: LeaseBugs = {},
  ) {
    const { clock } = ports;
    this.leases = new SessionLeases(bugs.wallClockLeases ? () => clock.wallMs() : () => clock.monotonicMs());
    this.delays = new LockDelayTimers(() => clock.monotonicMs());
    driver.on('role', (role: Role) => this.onRole(role));
    driver.on('applied', () => this.maybePromote());
    app.on('applied', (_index: number, command: Command, outcome: CommandResult) => this.onApplied(command, outcome));
    this.armSweeper();
  }

  /**
   * The answer to one renewal (the caller checked that this node leads): at once, or once the reset of the
   * session's checkpoint is applied when the log holds one below its TTL (a next leader would start from it).
   */
  renew(sessionId: string): RenewalAnswer | Promise<RenewalAnswer> {
    // Not promoted: this leader may not have applied what the previous one committed (an expiry, an open).
    if (!this.leases.promoted || !this.driver.leadsWithQuorumContact()) return 'no-ack';
    const ttlMs = this.app.machine.getSession(sessionId)?.ttlMs;
    if (ttlMs === undefined) return { alive: false, remainingMs: 0 };
    const renewal = this.leases.renew(sessionId);
    // Past its deadline (or its expiry proposed) but not yet ended: alive=false would be premature, since a
    // leader change before the expiry commits gives the session a fresh TTL. Saying nothing is the truth.
    if (renewal === undefined) return 'no-ack';
    if (!renewal.needsReset || this.bugs.ackBeforeCheckpointReset) return { alive: true, remainingMs: renewal.remainingMs };
    return this.resetCheckpoint(sessionId, ttlMs).then(
      () => this.answerAfterReset(sessionId),
      (): RenewalAnswer => 'no-ack',
    );
  }

  /** Proposes a checkpoint of a full TTL for the session, once however many renewals wait for it. */
  private resetCheckpoint(sessionId: string, ttlMs: number): Promise<unknown> {
    const pending = this.resets.get(sessionId);
    if (pending) return pending;
    const reset = this.proposeLeaseCommand({ type: 'CheckpointLeases', now: this.ports.clock.wallMs(), leases: [{ sessionId, remainingMs: ttlMs }] });
    this.resets.set(sessionId, reset);
    const forget = (): void => void this.resets.delete(sessionId);
    reset.then(forget, forget);
    return reset;
  }

  private answerAfterReset(sessionId: string): RenewalAnswer {
    if (!this.leases.promoted || !this.driver.leadsWithQuorumContact()) return 'no-ack';
    const remainingMs = this.leases.remaining(sessionId);
    return remainingMs === undefined || remainingMs === 0 ? 'no-ack' : { alive: true, remainingMs };
  }

  stop(): void {
    this.stopped = true;
    this.ports.timers.clearTimeout(this.sweeper);
    this.leases.demote();
    this.delays.demote();
  }

  private onRole(role: Role): void {
    if (role !== Role.Leader) {
      this.leases.demote();
      this.delays.demote();
      return;
    }
    if (this.bugs.promoteOnElection) this.promote();
  }

  private maybePromote(): void {
    if (!this.leases.promoted && this.driver.hasAppliedOwnTerm()) this.promote();
  }

  private promote(): void {
    const sessions = this.app.machine.leases();
    const extendMs = this.bugs.noPromoteExtension ? 0 : this.driver.electionTimeoutMs();
    this.leases.promote(sessions, extendMs);
    const delays = this.app.machine.lockDelays();
    this.delays.promote(delays);
    this.logger.info({ sessions: sessions.length, extendMs, lockDelays: delays.length }, 'leader: session leases promoted, each deadline starts from its checkpoint; lock-delays start afresh');
  }

  private onApplied(command: Command, outcome: CommandResult): void {
    if (!this.leases.promoted || outcome.duplicate) return;
    const r = outcome.result;
    if (r.status === 'session_opened') this.leases.opened(r.sessionId, r.ttlMs);
    if (command.type === 'CheckpointLeases') for (const l of command.leases) this.leases.checkpointApplied(l.sessionId, l.remainingMs);
    for (const e of outcome.events) if (e.type === 'session_ended') this.leases.ended(e.sessionId);
    // A grant that ended may have started a delay; an EndLockDelays may have ended one (or found it ended).
    for (const e of outcome.events) if (e.type === 'released') this.syncDelay(e.lock);
    if (command.type === 'EndLockDelays') for (const d of command.delays) this.syncDelay(d.lock);
  }

  private syncDelay(lock: string): void {
    this.delays.sync(lock, this.app.machine.lockDelayOf(lock));
  }

  private armSweeper(): void {
    if (this.stopped) return;
    this.sweeper = this.ports.timers.setTimeout(() => {
      this.sweep();
      this.armSweeper();
    }, this.tickMs);
  }

  private sweep(): void {
    if (!this.leases.promoted || !this.driver.isLeader()) return;
    this.proposeExpiries();
    this.proposeCheckpoints();
    this.proposeDelayEnds();
  }

  /** Lock-delays whose time is over, one entry a tick: each lock goes to its first waiter. */
  private proposeDelayEnds(): void {
    const delays = this.delays.ended(MAX_DELAYS_PER_ENTRY);
    if (delays.length === 0) return;
    this.logger.info({ locks: delays.length, first: delays[0]?.lock }, 'lock-delays over; proposing their end');
    this.proposeLeaseCommand({ type: 'EndLockDelays', now: this.ports.clock.wallMs(), delays }).catch((err) => {
      this.delays.retry(delays);
      this.logger.warn({ err: (err as Error).message }, 'lock-delay end proposal failed; will retry');
    });
  }

  /** Sessions past their deadline, this tick's share of the rate, several per entry. */
  private proposeExpiries(): void {
    const expired = this.leases.expired(this.perTick(MAX_EXPIRIES_PER_SECOND));
    for (const sessionIds of this.expiryEntries(expired)) {
      this.logger.info({ sessions: sessionIds.length, first: sessionIds[0]?.slice(0, 8) }, 'session deadlines passed; proposing expiry');
      this.proposeLeaseCommand({ type: 'ExpireSession', now: this.ports.clock.wallMs(), sessionIds }).catch((err) => {
        for (const id of sessionIds) this.leases.retryExpire(id);
        this.logger.warn({ err: (err as Error).message }, 'expiry proposal failed; will retry');
      });
    }
  }

  /** Groups sessions into entries of at most MAX_SESSIONS_PER_EXPIRY sessions and MAX_EXPIRY_LOAD_PER_ENTRY. */
  private expiryEntries(sessionIds: readonly string[]): string[][] {
    const entries: string[][] = [];
    let entry: string[] = [];
    let load = 0;
    for (const id of sessionIds) {
      const cost = this.app.machine.sessionLoad(id) ?? 1;
      if (entry.length > 0 && (entry.length === MAX_SESSIONS_PER_EXPIRY || load + cost > MAX_EXPIRY_LOAD_PER_ENTRY)) {
        entries.push(entry);
        entry = [];
        load = 0;
      }
      entry.push(id);
      load += cost;
    }
    if (entry.length > 0) entries.push(entry);
    return entries;
  }

  /** Leases whose time left fell to their next checkpoint, this tick's share of the rate. */
  private proposeCheckpoints(): void {
    const due = this.leases.checkpointsDue(this.perTick(MAX_CHECKPOINTS_PER_SECOND));
    for (let i = 0; i < due.length; i += MAX_CHECKPOINTS_PER_ENTRY) {
      const leases: LeaseCheckpoint[] = due.slice(i, i + MAX_CHECKPOINTS_PER_ENTRY);
      this.proposeLeaseCommand({ type: 'CheckpointLeases', now: this.ports.clock.wallMs(), leases }).catch(() => {
        for (const l of leases) this.leases.checkpointFailed(l.sessionId);
      });
    }
  }

  private perTick(perSecond: number): number {
    return Math.max(1, Math.ceil((perSecond * this.tickMs) / 1_000));
  }
}

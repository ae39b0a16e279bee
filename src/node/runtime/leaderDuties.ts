import type { CommandResult } from '../../state';
import type { LockApp } from '../lockApp';
import type { Logger } from '../logger';
import type { RaftDriver } from '../raftDriver';
import { Role } from '../../raft/types';
import type { NodePorts, TimerHandle } from './ports';
import { SessionLeases } from './sessionLeases';

/**
 * At most this many Expire proposals a second (etcd revokes at most 1,000 leases a second): a fleet of
 * sessions ending together is expired over a few seconds, and the event loop keeps answering meanwhile.
 */
export const MAX_EXPIRIES_PER_SECOND = 1_000;

/** Fixed defects the simulator can plant again (see test/nodesim). Never set outside it. */
export interface LeaseBugs {
  /** Session deadlines on the wall clock: a clock step expires sessions early. */
  wallClockLeases?: boolean;
  /** Leases promoted on election, before the leader applied an entry of its term (answers from stale state). */
  promoteOnElection?: boolean;
  /** No election timeout added to the deadlines at promotion (a deposed leader's late acknowledgements outlive them). */
  noPromoteExtension?: boolean;
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
  private sweeper: TimerHandle | undefined;
  private stopped = false;

  constructor(
    private readonly driver: RaftDriver<CommandResult>,
    private readonly app: LockApp,
    private readonly ports: NodePorts,
    private readonly tickMs: number,
    private readonly proposeExpiry: (sessionId: string) => Promise<unknown>,
    private readonly logger: Logger,
    private readonly bugs: LeaseBugs = {},
  ) {
    const { clock } = ports;
    this.leases = new SessionLeases(bugs.wallClockLeases ? () => clock.wallMs() : () => clock.monotonicMs());
    driver.on('role', (role: Role) => this.onRole(role));
    driver.on('applied', () => this.maybePromote());
    app.on('applied', (_index: number, _command: unknown, outcome: CommandResult) => this.onApplied(outcome));
    this.armSweeper();
  }

  /** The answer to one renewal (the caller checked that this node leads). */
  renew(sessionId: string): RenewalAnswer {
    // Not promoted: this leader may not have applied what the previous one committed (an expiry, an open).
    if (!this.leases.promoted || !this.driver.leadsWithQuorumContact()) return 'no-ack';
    if (!this.app.machine.getSession(sessionId)) return { alive: false, remainingMs: 0 };
    const remaining = this.leases.renew(sessionId);
    // Past its deadline (or its expiry proposed) but not yet ended: alive=false would be premature, since a
    // leader change before the expiry commits gives the session a fresh TTL. Saying nothing is the truth.
    return remaining === undefined ? 'no-ack' : { alive: true, remainingMs: remaining };
  }

  stop(): void {
    this.stopped = true;
    this.ports.timers.clearTimeout(this.sweeper);
    this.leases.demote();
  }

  private onRole(role: Role): void {
    if (role !== Role.Leader) {
      this.leases.demote();
      return;
    }
    if (this.bugs.promoteOnElection) this.promote();
  }

  private maybePromote(): void {
    if (!this.leases.promoted && this.driver.hasAppliedOwnTerm()) this.promote();
  }

  private promote(): void {
    const machine = this.app.machine;
    const sessions = machine.sessionIds().map((id) => {
      const session = machine.getSession(id);
      if (session === undefined) throw new Error(`leader: open session ${id} has no record in the state machine`);
      return { id, ttlMs: session.ttlMs };
    });
    const extendMs = this.bugs.noPromoteExtension ? 0 : this.driver.electionTimeoutMs();
    this.leases.promote(sessions, extendMs);
    this.logger.info({ sessions: sessions.length, extendMs }, 'leader: session leases promoted, every deadline starts afresh');
  }

  private onApplied(outcome: CommandResult): void {
    if (!this.leases.promoted || outcome.duplicate) return;
    const r = outcome.result;
    if (r.status === 'session_opened') this.leases.opened(r.sessionId, r.ttlMs);
    for (const e of outcome.events) if (e.type === 'session_ended') this.leases.ended(e.sessionId);
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
    const batch = Math.max(1, Math.ceil((MAX_EXPIRIES_PER_SECOND * this.tickMs) / 1_000));
    for (const sessionId of this.leases.expired(batch)) {
      this.logger.info({ session: sessionId.slice(0, 8) }, 'session deadline passed; proposing expiry');
      this.proposeExpiry(sessionId).catch((err) => {
        this.leases.retryExpire(sessionId);
        this.logger.warn({ err: (err as Error).message }, 'expiry proposal failed; will retry');
      });
    }
  }
}

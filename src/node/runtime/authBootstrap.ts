// Turns auth on when the config asks for it (docs/auth.md "Bootstrap"): the leader, once it has applied an
// entry of its term, proposes one AuthChange `enable` naming the config's admin, unless the replicated state
// has auth on already. Every later leader sees it on and does nothing; the entry is idempotent anyway.
//
// An enable the state machine refuses would be refused again (the same entry on the same state): the node
// logs why once, as an error, and proposes it no more until it restarts, rather than every tick.
import { AUTH_RULES_CLOSED_WHEN_OFF, type Command, type CommandResult, type Result } from '../../state';
import type { NodeConfig } from '../config';
import type { LockApp } from '../lockApp';
import type { Logger } from '../logger';
import type { RaftDriver } from '../raftDriver';
import type { NodePorts, TimerHandle } from './ports';

export class AuthBootstrap {
  private proposing = false;
  private stopped = false;
  private refused = false;
  private timer: TimerHandle | undefined;

  constructor(
    private readonly config: NodeConfig,
    private readonly driver: RaftDriver<CommandResult>,
    private readonly app: LockApp,
    private readonly ports: NodePorts,
    private readonly propose: (command: Command) => Promise<{ result: Result }>,
    private readonly logger: Logger,
  ) {}

  start(): void {
    if (!this.config.auth.enabled) return;
    this.arm();
  }

  stop(): void {
    this.stopped = true;
    this.ports.timers.clearTimeout(this.timer);
  }

  private arm(): void {
    if (this.stopped || this.refused) return;
    this.timer = this.ports.timers.setTimeout(() => {
      this.check();
      if (!this.app.machine.auth.authEnabled()) this.arm();
    }, this.config.tickMs);
  }

  private check(): void {
    const user = this.config.auth.admin;
    if (user === undefined || this.proposing || this.refused || this.app.machine.auth.authEnabled() || !this.driver.isLeader() || !this.driver.hasAppliedOwnTerm()) return;
    this.proposing = true;
    this.logger.info({ admin: user }, 'auth: turning auth on, with the configured admin');
    const change = { op: 'enable' as const, user, version: AUTH_RULES_CLOSED_WHEN_OFF };
    this.propose({ type: 'AuthChange', clientId: '', requestId: 0, now: this.ports.clock.wallMs(), change })
      .then(({ result }) => {
        if (result.status !== 'refused' && result.status !== 'invalid') return;
        this.refused = true;
        const why = result.status === 'refused' ? `${result.reason}${result.subject === undefined ? '' : ` (${result.subject})`}` : result.message;
        this.logger.error({ admin: user, why }, 'auth: the state machine refused to turn auth on; not proposing it again until this node restarts');
      })
      .catch((err) => this.logger.warn({ err: (err as Error).message }, 'auth: enabling failed; will retry'))
      .finally(() => {
        this.proposing = false;
      });
  }
}

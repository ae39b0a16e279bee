// Turns auth on when the config asks for it (docs/auth.md "Auth on"): the leader, once it has applied an
// entry of its term, proposes one AuthChange `enable` naming the config's admin, unless the replicated state
// has auth on already. Every later leader sees it on and does nothing; the entry is idempotent anyway.
import type { NodeConfig } from '../config';
import type { LockApp } from '../lockApp';
import type { Logger } from '../logger';
import type { RaftDriver } from '../raftDriver';
import type { Command, CommandResult } from '../../state';
import type { NodePorts, TimerHandle } from './ports';

export class AuthBootstrap {
  private proposing = false;
  private stopped = false;
  private timer: TimerHandle | undefined;

  constructor(
    private readonly config: NodeConfig,
    private readonly driver: RaftDriver<CommandResult>,
    private readonly app: LockApp,
    private readonly ports: NodePorts,
    private readonly propose: (command: Command) => Promise<unknown>,
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
    if (this.stopped) return;
    this.timer = this.ports.timers.setTimeout(() => {
      this.check();
      if (!this.app.machine.auth.authEnabled()) this.arm();
    }, this.config.tickMs);
  }

  private check(): void {
    const user = this.config.auth.admin;
    if (user === undefined || this.proposing || this.app.machine.auth.authEnabled() || !this.driver.isLeader() || !this.driver.hasAppliedOwnTerm()) return;
    this.proposing = true;
    this.logger.info({ admin: user }, 'auth: turning auth on, with the configured admin');
    this.propose({ type: 'AuthChange', clientId: '', requestId: 0, now: this.ports.clock.wallMs(), change: { op: 'enable', user } })
      .catch((err) => this.logger.warn({ err: (err as Error).message }, 'auth: enabling failed; will retry'))
      .finally(() => {
        this.proposing = false;
      });
  }
}

// The sessions an admin ended lately (RevokeSession, or a deleted user's), so that a renewal of one is
// answered alive=false with reason REVOKED rather than as an expiry. Every node applies the same entries, so
// a new leader knows them too; memory is bounded: the oldest are forgotten (a renewal that late is answered
// as for an unknown session).
import type { EventEmitter } from 'node:events';
import type { Command, CommandResult } from '../../state';

const REMEMBERED = 10_000;

export class RevokedSessions {
  private readonly ids = new Set<string>();

  /** `entries`: the node's LockApp, which says 'applied' for every entry it applies. */
  constructor(entries: EventEmitter) {
    entries.on('applied', (_index: number, _command: Command, outcome: CommandResult) => {
      for (const e of outcome.events) if (e.type === 'session_ended' && e.cause === 'revoked') this.add(e.sessionId);
    });
  }

  has(sessionId: string): boolean {
    return this.ids.has(sessionId);
  }

  private add(sessionId: string): void {
    this.ids.add(sessionId);
    if (this.ids.size > REMEMBERED) this.ids.delete(this.ids.values().next().value as string);
  }
}

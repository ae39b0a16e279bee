/**
 * Defects in issue 34's capabilities, planted for one simulated run (`--bug NAME`) by patching a prototype of
 * the node runtime or the client library, as clientBugs.ts does: neither has a switch for them.
 */
import { ElectionObserver } from '../../src/client/electionObserver';
import { Session } from '../../src/client/session';
import { LockDelayTimers } from '../../src/node/runtime/lockDelayTimers';
import type { ClientBug } from './clientBugs';
import { patchMember } from './patchMember';


export const FEATURE_BUGS: Readonly<Record<string, ClientBug>> = {
  // A new leader that does not time the delays in force afresh from its takeover: it ends them at once, so a
  // leader change during a delay cuts it short.
  'lock-delay-not-restarted': { plant: () => patchMember(LockDelayTimers.prototype, 'promote', () => function (this: LockDelayTimers, delays: Iterable<{ lock: string; since: number; delayMs: number }>) {
    const self = this as unknown as { demote(): void; isPromoted: boolean; clock(): number; track(lock: string, since: number, deadline: number): void };
    self.demote();
    self.isPromoted = true;
    const now = self.clock();
    for (const d of delays) self.track(d.lock, d.since, now);
  }) },
  // A client that ignores the grants its renewals say were revoked: the holder goes on believing it holds the lock.
  'revoke-not-reported': { plant: () => patchMember(Session.prototype, 'grantsRevoked', () => function () {
    // ignores them
  }) },
  // An observer without its token guard: it reports a leadership it already reported (or an older one) again.
  'observer-reports-again': { plant: () => patchMember(ElectionObserver.prototype, 'apply', () => function (this: ElectionObserver, state: { kind: string; leader?: { token: bigint } }) {
    const self = this as unknown as { lastToken: bigint; current: bigint | undefined; call(fn: () => void): void; onLeader(l: unknown): void; opts: { onVacant?: (t: bigint) => void } };
    if (state.kind !== 'leader' || !state.leader) return;
    const leader = state.leader;
    self.lastToken = leader.token;
    self.current = leader.token;
    self.call(() => self.onLeader(leader));
  }) },
};

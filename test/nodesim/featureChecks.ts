/**
 * The end checks of issue 34's capabilities in the whole-node simulator, fed as the cluster first applies each
 * entry and as the applications (featureWorkload.ts) act:
 * - elections: one leadership per token; the values written under the election's key are accepted in
 *   increasing token order; every observer reports leaderships in strictly increasing token order, each one a
 *   campaigner's, with its value;
 * - revoke: once a RevokeLock entry applied, no write under the revoked grant is accepted, and the holder
 *   stops believing it holds the lock (the renewal says REVOKED, a write is refused, or its lease estimate
 *   runs out) within a bound;
 * - lock-delay: the grant that ends a delay is applied no earlier than the delay after the entry that started
 *   it (true time, less the clock-drift bound), also across leader changes; a release starts no delay.
 */
import { CLOCK_RATE_BOUND } from '../../src/client/session';
import type { LockStateMachine } from '../../src/state/lockStateMachine';
import type { Command, CommandResult } from '../../src/state';
import { ELECTION, type Believer } from './featureWorkload';
import type { Actor, World } from './world';

/** Grant-end causes that start the grant's lock-delay (docs/architecture.md#lock-delay). */
const DELAY_CAUSES = new Set(['expired', 'revoked', 'lock_revoked']);

export class FeatureChecks {
  /** Indexes already checked: each entry is checked once, when some node first applies it. */
  private newestIndex = 0;
  /** Token -> the campaign (its first value) that led under it. */
  private readonly leaderOf = new Map<number, string>();
  private newestElectionWrite = 0;
  private readonly observedNewest = new Map<string, number>();
  /** `lock@token` of revoked grants -> the index of the RevokeLock entry. */
  private readonly revokedAt = new Map<string, number>();
  /** Per lock, the delay in force: the real time its starting entry was first applied, and its length. */
  private readonly delays = new Map<string, { since: number; delayMs: number; at: number }>();
  readonly counts = { leaderships: 0, observed: 0, revokes: 0, delays: 0, delaysEnded: 0 };

  constructor(
    private readonly world: World,
    /** Runs the checks that wait (a revoke's bound) on the simulator's own actor. */
    private readonly sim: Actor,
    private readonly believers: () => readonly Believer[],
    /** The holders' session TTL: how long a lease estimate can outlast a revoke. */
    private readonly ttlMs: number,
    private readonly fail: (what: string) => void,
  ) {}

  isRevoked(lock: string, token: number): boolean {
    return this.revokedAt.has(`${lock}@${token}`);
  }

  /** An entry as some node applied it; only the first application of each index counts. */
  applied(index: number, command: Command, outcome: CommandResult, machine: LockStateMachine): void {
    if (index <= this.newestIndex) return;
    this.newestIndex = index;
    for (const e of outcome.events) {
      if (e.type === 'released') this.grantEnded(index, e.lock, e.sessionId, e.token, e.cause, machine);
      if (e.type === 'granted') this.delayEnded(e.lock, e.token, e.cause);
    }
    if (command.type === 'Write' && outcome.result.status === 'written' && !outcome.duplicate) this.written(index, command);
    // A delay that ended with nobody waiting leaves the lock free: it ended no earlier than a granted one may.
    if (command.type === 'EndLockDelays') for (const d of command.delays) if (machine.lockDelayOf(d.lock) === undefined) this.delayEnded(d.lock, undefined, 'delay_ended');
  }

  private grantEnded(index: number, lock: string, sessionId: string, token: number, cause: string, machine: LockStateMachine): void {
    const delay = machine.lockDelayOf(lock);
    if (!DELAY_CAUSES.has(cause)) {
      // A release (or its holder closing the session) is letting go: no delay starts.
      if (delay !== undefined) this.fail(`lock-delay: the ${cause} of ${lock} token ${token} at index ${index} started a delay of ${delay.delayMs} ms`);
    } else if (delay !== undefined) {
      this.delays.set(lock, { since: index, delayMs: delay.delayMs, at: this.world.now });
      this.counts.delays++;
    }
    if (cause === 'lock_revoked') this.revoked(index, lock, sessionId, token);
  }

  /**
   * A delay ends only by EndLockDelays, proposed by a leader whose monotonic clock ran the delay out after it
   * applied the starting entry itself (or, for a new leader, after its takeover, later still). That clock runs
   * at 1 ± CLOCK_RATE_BOUND of true time, so `delayMs` on it last at least delayMs / (1 + bound) true ms: the
   * grant that follows cannot be applied anywhere before that much true time after the starting entry was
   * first applied. Stalls and crashes of the leader only lengthen it.
   */
  private delayEnded(lock: string, token: number | undefined, cause: string): void {
    const delay = this.delays.get(lock);
    if (delay === undefined) return;
    this.delays.delete(lock);
    const what = token === undefined ? `${lock}'s delay ended` : `${lock} was granted again (token ${token})`;
    if (cause !== 'delay_ended') return this.fail(`lock-delay: ${what} by ${cause} during the delay of ${delay.delayMs} ms started at index ${delay.since}`);
    this.counts.delaysEnded++;
    const earliest = delay.at + delay.delayMs / (1 + CLOCK_RATE_BOUND);
    if (this.world.now < earliest) {
      this.fail(`lock-delay: ${what} ${(this.world.now - delay.at).toFixed(1)} ms after its delay of ${delay.delayMs} ms started at index ${delay.since}`);
    }
  }

  private revoked(index: number, lock: string, sessionId: string, token: number): void {
    this.revokedAt.set(`${lock}@${token}`, index);
    this.counts.revokes++;
    const at = this.world.now;
    // The holder's next renewal (every TTL/3) answered by a leader that applied the revoke says REVOKED;
    // without one, its lease estimate, at most one TTL on its clock from a renewal sent before the leader
    // applied the revoke, runs out. A tenth of the TTL more covers the clock-drift bound and the round trip.
    // (These applications are never stalled.)
    const bound = this.ttlMs + this.ttlMs / 10;
    this.world.at(at + bound, this.sim, () => {
      for (const b of this.believers()) {
        if (b.sessionOf(lock) !== sessionId || b.believes(lock) !== token || b.actor.isStalled()) continue;
        const why = b.handleOf(lock, token)?.lossError()?.reason ?? 'nothing';
        this.fail(`revoke: ${b.name} still believes it holds ${lock} (token ${token}) ${bound} ms after its RevokeLock applied at index ${index} (told: ${why})`);
      }
    });
  }

  private written(index: number, command: Extract<Command, { type: 'Write' }>): void {
    const revokedAt = this.revokedAt.get(`${command.lock}@${command.token}`);
    if (revokedAt !== undefined && revokedAt < index) {
      this.fail(`revoke: a write under ${command.lock} token ${command.token} was accepted at index ${index}, after its grant was revoked at index ${revokedAt}`);
    }
    if (!command.ops.some((op) => op.key === ELECTION)) return;
    if (command.token < this.newestElectionWrite) {
      this.fail(`election: a value under token ${command.token} was accepted at index ${index}, after one under token ${this.newestElectionWrite}`);
    }
    this.newestElectionWrite = Math.max(this.newestElectionWrite, command.token);
    for (const op of command.ops) if (op.key === ELECTION && op.type === 'put') this.ledBy(command.token, campaignOf(Buffer.from(op.value).toString()));
  }

  /** A campaign returned leading under `token`. */
  leads(token: number, value: string): void {
    this.counts.leaderships++;
    this.ledBy(token, value);
  }

  private ledBy(token: number, campaign: string): void {
    const first = this.leaderOf.get(token);
    if (first === undefined) this.leaderOf.set(token, campaign);
    else if (first !== campaign) this.fail(`election: token ${token} was led by ${first} and by ${campaign}`);
  }

  /** Every observer reports leaderships in strictly increasing token order, each one a campaign's, with its value. */
  observed(observer: string, token: number, text: string): void {
    this.counts.observed++;
    const before = this.observedNewest.get(observer) ?? 0;
    if (token <= before) this.fail(`election: observer ${observer} reported the leadership of token ${token} after that of token ${before}`);
    this.observedNewest.set(observer, Math.max(before, token));
    const leader = this.leaderOf.get(token);
    if (leader !== campaignOf(text)) this.fail(`election: observer ${observer} reported token ${token} with value ${text}, led by ${leader ?? 'nobody'}`);
  }
}

/** A campaign's value is `NAME#N`; its proclaims append `/p`. */
function campaignOf(value: string): string {
  return value.split('/')[0]!;
}

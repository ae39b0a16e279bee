/**
 * The end checks of issue 33's read-write locks in the whole-node simulator, fed as the cluster first applies
 * each entry (the lease promise per mode is simulation.ts's, with the other locks'):
 * - no write is accepted under a shared grant (each is refused SHARED_GRANT);
 * - an exclusive grant's token is above every earlier shared grant's of the lock;
 * - the readers one entry grants together share its token, and no other grant has it.
 */
import type { Command, CommandResult } from '../../src/state';

export class RwChecks {
  /** Indexes already checked: each entry is checked once, when some node first applies it. */
  private newestIndex = 0;
  /** `lock@token` of every shared grant applied. */
  private readonly sharedGrants = new Set<string>();
  /** Per lock, the newest shared grant's token. */
  private readonly newestShared = new Map<string, number>();
  readonly counts = { sharedGrants: 0, exclusiveGrants: 0, sharedWritesRefused: 0 };

  constructor(private readonly fail: (what: string) => void) {}

  applied(index: number, command: Command, outcome: CommandResult): void {
    if (index <= this.newestIndex) return;
    this.newestIndex = index;
    for (const e of outcome.events) if (e.type === 'granted') this.granted(index, e.lock, e.token, e.shared === true);
    if (command.type !== 'Write') return;
    const key = `${command.lock}@${command.token}`;
    if (outcome.result.status === 'written' && !outcome.duplicate && this.sharedGrants.has(key)) {
      this.fail(`read-write: a write under the shared grant of ${command.lock} token ${command.token} was accepted at index ${index}`);
    }
    if (outcome.result.status === 'refused' && outcome.result.reason === 'SHARED_GRANT' && !outcome.duplicate) this.counts.sharedWritesRefused++;
  }

  private granted(index: number, lock: string, token: number, shared: boolean): void {
    if (token !== index) this.fail(`read-write: ${lock} was granted at index ${index} under token ${token}`);
    if (shared) {
      this.sharedGrants.add(`${lock}@${token}`);
      this.newestShared.set(lock, token);
      this.counts.sharedGrants++;
      return;
    }
    this.counts.exclusiveGrants++;
    const newest = this.newestShared.get(lock) ?? 0;
    if (token <= newest) this.fail(`read-write: the exclusive grant of ${lock} token ${token} is not above the shared grant of token ${newest}`);
  }
}

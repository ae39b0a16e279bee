/**
 * The end checks of issue 33's atomic multi-lock (AcquireAll) in the whole-node simulator, fed as the cluster
 * first applies each entry (the lease promise on each lock is simulation.ts's, with the other locks'):
 * - a set is granted whole, in one entry: the locks one entry grants a session are exactly a set that session
 *   asked for (every set asked has two locks or more, so a lock granted alone is a partial set);
 * - every grant's token is the index of the entry that made it (so the locks of a set share one token);
 * - no two sessions hold one lock at any applied entry.
 */
import type { Command, CommandResult } from '../../src/state';

export class MultiLockChecks {
  private newestIndex = 0;
  /** The lock -> the session holding it now. */
  private readonly holders = new Map<string, string>();
  /** Per session, every set it asked for (names sorted and joined). */
  private readonly asked = new Map<string, Set<string>>();
  readonly counts = { setsGranted: 0 };

  constructor(
    private readonly locks: readonly string[],
    private readonly fail: (what: string) => void,
  ) {}

  setAsked(sessionId: string, locks: readonly string[]): void {
    let sets = this.asked.get(sessionId);
    if (sets === undefined) this.asked.set(sessionId, (sets = new Set()));
    sets.add(setKey(locks));
  }

  applied(index: number, _command: Command, outcome: CommandResult): void {
    if (index <= this.newestIndex) return;
    this.newestIndex = index;
    const granted = new Map<string, string[]>();
    for (const e of outcome.events) {
      if ((e.type !== 'granted' && e.type !== 'released') || !this.locks.includes(e.lock)) continue;
      const holder = this.holders.get(e.lock);
      if (e.type === 'released') {
        if (holder !== e.sessionId) this.fail(`acquire-all: index ${index} released ${e.lock} of session ${e.sessionId.slice(0, 8)}, which did not hold it`);
        this.holders.delete(e.lock);
        continue;
      }
      if (e.token !== index) this.fail(`acquire-all: ${e.lock} was granted at index ${index} under token ${e.token}`);
      if (holder !== undefined) this.fail(`acquire-all: ${e.lock} was granted to session ${e.sessionId.slice(0, 8)} at index ${index} while session ${holder.slice(0, 8)} held it`);
      this.holders.set(e.lock, e.sessionId);
      granted.set(e.sessionId, [...(granted.get(e.sessionId) ?? []), e.lock]);
    }
    for (const [session, locks] of granted) {
      if (this.asked.get(session)?.has(setKey(locks)) === true) this.counts.setsGranted++;
      else this.fail(`acquire-all: index ${index} granted ${locks.join(',')} to session ${session.slice(0, 8)}, not a whole set it asked for (${[...(this.asked.get(session) ?? [])].join(' | ') || 'none'})`);
    }
  }
}

function setKey(locks: readonly string[]): string {
  return [...locks].sort().join(',');
}

/**
 * The end checks of issue 33's semaphores in the whole-node simulator, fed as the cluster first applies each
 * entry (each entry is checked once; entries are first applied in index order):
 * - at most `permits` permits held at any applied entry, and one holder per slot;
 * - every grant's token is the index of the entry that made it, and a slot's tokens strictly increase;
 * - no write under a slot is accepted with a token below that slot's latest grant;
 * - the lease promise per slot: when a slot is granted, no other session's holder still believes, on its own
 *   clock, that it holds that slot under an older token; nor starts believing after such a grant.
 */
import type { Command, CommandResult } from '../../src/state';
import type { PermitBeliever } from './semaphoreWorkload';

interface SlotState {
  /** Session holding the slot now, or null. */
  holder: string | null;
  /** The slot's latest grant's token, and the session it went to (kept after its end). */
  token: number;
  grantedTo: string;
}

export class SemaphoreChecks {
  private newestIndex = 0;
  /** Per `semaphore#slot`, its holder and latest token. */
  private readonly slots = new Map<string, SlotState>();
  readonly counts = { permitGrants: 0, permitWrites: 0 };

  constructor(
    private readonly permits: number,
    private readonly believers: () => readonly PermitBeliever[],
    private readonly fail: (what: string) => void,
  ) {}

  applied(index: number, command: Command, outcome: CommandResult): void {
    if (index <= this.newestIndex) return;
    this.newestIndex = index;
    for (const e of outcome.events) {
      if (e.type === 'permit_released') this.released(e.semaphore, e.slot, e.sessionId, index);
      if (e.type === 'permit_granted') this.granted(index, e.semaphore, e.slot, e.sessionId, e.token);
    }
    if (command.type === 'Write' && command.slot !== undefined && outcome.result.status === 'written' && !outcome.duplicate) this.written(index, command.lock, command.slot, command.token);
  }

  /** A holder started believing it holds `slot` under `token`: no newer grant of that slot to another session may be applied. */
  beliefStarted(holder: PermitBeliever, semaphore: string, slot: number, token: number): void {
    const newest = this.slots.get(`${semaphore}#${slot}`);
    if (holder.believesPermit(semaphore, slot) !== token || newest === undefined || newest.token <= token) return;
    if (newest.grantedTo !== holder.permitSession()) this.fail(`semaphore: ${holder.name} believes it holds ${semaphore} slot ${slot} (token ${token}) after a grant of that slot to another session (token ${newest.token}) was applied`);
  }

  private released(semaphore: string, slot: number, session: string, index: number): void {
    const x = this.slots.get(`${semaphore}#${slot}`);
    if (x?.holder !== session) return this.fail(`semaphore: index ${index} released ${semaphore} slot ${slot} of session ${session.slice(0, 8)}, which did not hold it`);
    x.holder = null;
  }

  private granted(index: number, semaphore: string, slot: number, session: string, token: number): void {
    this.counts.permitGrants++;
    const key = `${semaphore}#${slot}`;
    const x = this.slots.get(key) ?? { holder: null, token: 0, grantedTo: '' };
    if (token !== index) this.fail(`semaphore: ${semaphore} slot ${slot} was granted at index ${index} under token ${token}`);
    if (x.holder !== null) this.fail(`semaphore: ${semaphore} slot ${slot} was granted to session ${session.slice(0, 8)} at index ${index} while session ${x.holder.slice(0, 8)} held it`);
    if (token <= x.token) this.fail(`semaphore: ${semaphore} slot ${slot}'s token went from ${x.token} to ${token} at index ${index}`);
    if (slot < 0 || slot >= this.permits) this.fail(`semaphore: ${semaphore} granted slot ${slot} of ${this.permits} permits at index ${index}`);
    this.slots.set(key, { holder: session, token: Math.max(token, x.token), grantedTo: session });
    const held = [...this.slots].filter(([k, y]) => k.startsWith(`${semaphore}#`) && y.holder !== null).length;
    if (held > this.permits) this.fail(`semaphore: ${held} permits of ${semaphore} held after index ${index}, of ${this.permits}`);
    for (const b of this.believers()) {
      const believed = b.believesPermit(semaphore, slot);
      if (believed !== undefined && believed < token && b.permitSession() !== session) {
        this.fail(`semaphore lease promise: ${b.name} still believes it holds ${semaphore} slot ${slot} (token ${believed}) when its grant to session ${session.slice(0, 8)} (token ${token}) was applied`);
      }
    }
  }

  private written(index: number, semaphore: string, slot: number, token: number): void {
    this.counts.permitWrites++;
    const latest = this.slots.get(`${semaphore}#${slot}`)?.token ?? 0;
    if (token < latest) this.fail(`semaphore: a write under ${semaphore} slot ${slot} with token ${token} was accepted at index ${index}, below the slot's latest grant ${latest}`);
  }
}

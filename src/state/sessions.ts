// The session table. A session carries locks (etcd lease, Chubby session); its deadline lives on the
// leader only, so the replicated record holds what was decided when it opened plus the locks it holds and
// waits for (kept in step with the lock table by the state machine).
import { sortedStrings } from './text';

export interface Session {
  readonly id: string;
  readonly clientName: string;
  readonly ttlMs: number;
  /** `now` of the OpenSession entry. */
  readonly openedAt: number;
  /** Index of the OpenSession entry. */
  readonly openIndex: number;
  /** Names of the locks this session holds. */
  readonly held: Set<string>;
  /** Names of the locks this session is queued for. */
  readonly waiting: Set<string>;
}

export type SessionInit = Omit<Session, 'held' | 'waiting'>;

export class SessionTable {
  private readonly byId = new Map<string, Session>();

  get size(): number {
    return this.byId.size;
  }

  get(id: string): Session | undefined {
    return this.byId.get(id);
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  add(init: SessionInit): Session {
    const s: Session = { ...init, held: new Set(), waiting: new Set() };
    this.byId.set(s.id, s);
    return s;
  }

  delete(id: string): void {
    this.byId.delete(id);
  }

  values(): IterableIterator<Session> {
    return this.byId.values();
  }

  /** Session ids in code point order (independent of history, so snapshots are canonical). */
  sortedIds(): string[] {
    return sortedStrings(this.byId.keys());
  }
}

// The session table: open sessions by id, and in id order. The records are in records.ts.
import { TableCapture, type TableView } from './capture';
import { newSession, type Session, type SessionImage, type SessionInit } from './records';
import { SortedIndex } from './sortedIndex';

export type { Session, SessionImage, SessionInit };

class SessionIndex extends SortedIndex<Session> {
  protected keyOf(s: Session): string {
    return s.id;
  }
}

export class SessionTable {
  private readonly byId = new Map<string, Session>();
  /** The same sessions in id order (code point order: canonical for snapshots, kept without sorting). */
  private readonly sorted = new SessionIndex();
  /** Snapshot captures of this table (capture.ts). */
  private readonly capture = new TableCapture<Session, SessionImage>(this.sorted, copySession);

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
    const s = newSession(init.id, init.clientName, init.ttlMs, init.openedAt, init.openIndex, init.ttlMs, init.owner, init.labels);
    this.byId.set(s.id, s);
    this.sorted.insert(s);
    return s;
  }

  /** Restores a session from a snapshot; ids must come in strictly increasing order (the caller checks). */
  restore(s: Session): void {
    this.byId.set(s.id, s);
    this.sorted.append(s);
  }

  delete(s: Session): void {
    this.byId.delete(s.id);
    this.sorted.delete(s);
  }

  values(): IterableIterator<Session> {
    return this.byId.values();
  }

  /** The records in id order, as consecutive chunks (see SortedIndex.chunksInOrder). */
  chunksInOrder(): readonly (readonly Session[])[] {
    return this.sorted.chunksInOrder();
  }

  /** The sessions in id order, read live (nothing may change while the view is read). */
  view(): TableView<Session, SessionImage> {
    return this.capture.view(this.size);
  }

  /** The sessions as they are now, readable until thaw() while sessions come, go and are checkpointed. */
  freeze(): TableView<Session, SessionImage> {
    return this.capture.freeze(this.size);
  }

  thaw(): void {
    this.capture.thaw();
  }

  /** Records the session's lease checkpoint (at most its TTL). */
  checkpoint(s: Session, remainingMs: number): void {
    this.capture.save(s);
    s.remainingMs = Math.min(remainingMs, s.ttlMs);
  }

  /** Session ids in code point order (independent of history, so snapshots are canonical). */
  sortedIds(): string[] {
    const ids: string[] = [];
    this.sorted.scan((s) => {
      ids.push(s.id);
    });
    return ids;
  }

  /** Self-check: the sorted index holds exactly the sessions of the map, in strictly increasing order. */
  check(): string[] {
    return this.sorted.matches(this.byId) ? [] : ['session index out of step with the session table'];
  }
}

function copySession(s: Session): SessionImage {
  return { id: s.id, clientName: s.clientName, ttlMs: s.ttlMs, openedAt: s.openedAt, openIndex: s.openIndex, owner: s.owner, labels: s.labels, remainingMs: s.remainingMs };
}

// Request de-duplication (DESIGN.md 1.4): the result of every applied request, keyed by (clientId,
// requestId), so a retry gets the original answer and never applies twice — refusals included.
//
// Bounded, deterministically:
// - per client at most DEDUP_MAX_RESULTS_PER_CLIENT results; the oldest applied is dropped first;
// - `ackedBelow` on a request drops that client's results with lower ids;
// - per client a `floor`: every requestId below it was acknowledged or its result dropped, so a request
//   below the floor that has no stored result is refused (REQUEST_TOO_OLD) — it may have been applied;
// - at most DEDUP_MAX_CLIENTS clients and DEDUP_MAX_RESULTS results overall: the least recently used client
//   is forgotten entirely (Map insertion order, refreshed on every request of the client, is the LRU order).
//   A forgotten client's very late retry would be applied again: see the caveat in index.ts.
import { SavedImages, sameRecord } from './capture';
import type { CommandType } from './commands';
import { invariant } from './invariant';
import * as L from './limits';
import type { Result } from './results';

export interface DedupEntry {
  readonly requestId: number;
  readonly commandType: CommandType;
  readonly result: Result;
}

export interface DedupClient {
  floor: number;
  /** Insertion order = application order (the eviction order). */
  readonly entries: Map<number, DedupEntry>;
}

/** What the snapshot holds of a dedup client. */
export interface DedupImage {
  readonly floor: number;
  readonly entries: ReadonlyMap<number, DedupEntry>;
}

/** The dedup table as the encoder reads it: clients from least to most recently used. */
export interface DedupView {
  readonly clients: readonly (readonly [string, DedupClient])[];
  image(client: DedupClient): DedupImage;
}

export type DedupLookup =
  | { kind: 'new' }
  | { kind: 'duplicate'; result: Result }
  | { kind: 'too_old' }
  | { kind: 'reused' };

export class DedupTable {
  private readonly clients = new Map<string, DedupClient>();
  private total = 0;
  /** While a snapshot capture is open: the clients' contents as they were at the capture (capture.ts). */
  private images: SavedImages<DedupClient, DedupImage> | null = null;

  get clientCount(): number {
    return this.clients.size;
  }

  get resultCount(): number {
    return this.total;
  }

  /** Clients from least to most recently used. */
  entries(): IterableIterator<[string, DedupClient]> {
    return this.clients.entries();
  }

  /** The clients, read live (nothing may change while the view is read). */
  view(): DedupView {
    return { clients: Array.from(this.clients), image: sameRecord };
  }

  /** The clients as they are now, readable until thaw() while requests go on. O(clients), not O(results). */
  freeze(): DedupView {
    invariant(this.images === null, 'the dedup table is frozen already');
    const images = new SavedImages<DedupClient, DedupImage>(copyClient);
    this.images = images;
    return { clients: Array.from(this.clients), image: (c) => images.image(c) };
  }

  thaw(): void {
    this.images = null;
  }

  /**
   * Looks a request up before it is applied; marks the client as most recently used and applies
   * `ackedBelow`. `new` means: apply it, then call record().
   */
  begin(clientId: string, requestId: number, ackedBelow: number, commandType: CommandType): DedupLookup {
    const c = this.clients.get(clientId);
    if (c === undefined) return { kind: 'new' };
    this.clients.delete(clientId);
    this.clients.set(clientId, c);
    this.raiseFloor(c, ackedBelow);
    const e = c.entries.get(requestId);
    if (e !== undefined) return e.commandType === commandType ? { kind: 'duplicate', result: e.result } : { kind: 'reused' };
    if (requestId < c.floor) return { kind: 'too_old' };
    return { kind: 'new' };
  }

  /**
   * The stored result of (clientId, requestId) when applying the request now would answer with it
   * (`duplicate` of begin()), else undefined. Read-only: no LRU refresh, no floor raise. A request id
   * below `ackedBelow` is left to begin() (it drops that result and refuses the request).
   */
  peek(clientId: string, requestId: number, ackedBelow: number, commandType: CommandType): Result | undefined {
    if (requestId < ackedBelow) return undefined;
    const e = this.clients.get(clientId)?.entries.get(requestId);
    return e !== undefined && e.commandType === commandType ? e.result : undefined;
  }

  /** Stores the result of an applied request (its result must be frozen: it is handed out again). */
  record(clientId: string, requestId: number, ackedBelow: number, commandType: CommandType, result: Result): void {
    let c = this.clients.get(clientId);
    if (c === undefined) {
      c = { floor: 0, entries: new Map() };
      this.raiseFloor(c, ackedBelow);
    }
    this.clients.delete(clientId);
    this.clients.set(clientId, c);
    this.images?.save(c);
    invariant(!c.entries.has(requestId), () => `request ${requestId} of ${JSON.stringify(clientId)} recorded twice`);
    c.entries.set(requestId, { requestId, commandType, result });
    this.total++;
    while (c.entries.size > L.DEDUP_MAX_RESULTS_PER_CLIENT) {
      const oldest = c.entries.keys().next().value as number;
      c.entries.delete(oldest);
      this.total--;
      if (oldest + 1 > c.floor) c.floor = oldest + 1;
    }
    while (this.clients.size > L.DEDUP_MAX_CLIENTS || (this.total > L.DEDUP_MAX_RESULTS && this.clients.size > 1)) {
      const [lruId, lru] = this.clients.entries().next().value as [string, DedupClient];
      invariant(lruId !== clientId, 'dedup evicts the client it is recording for');
      this.clients.delete(lruId);
      this.total -= lru.entries.size;
    }
  }

  /** Restores one client from a snapshot, as the most recently used so far (call in LRU order). */
  restore(clientId: string, floor: number, entries: readonly DedupEntry[]): void {
    invariant(!this.clients.has(clientId), () => `dedup client ${JSON.stringify(clientId)} restored twice`);
    const c: DedupClient = { floor, entries: new Map() };
    for (const e of entries) c.entries.set(e.requestId, e);
    invariant(c.entries.size === entries.length, () => `a dedup request of ${JSON.stringify(clientId)} restored twice`);
    this.clients.set(clientId, c);
    this.total += c.entries.size;
  }

  private raiseFloor(c: DedupClient, ackedBelow: number): void {
    if (ackedBelow <= c.floor) return;
    this.images?.save(c);
    c.floor = ackedBelow;
    for (const id of Array.from(c.entries.keys())) {
      if (id < ackedBelow) {
        c.entries.delete(id);
        this.total--;
      }
    }
  }

  /** Self-check: counters agree, bounds hold. */
  check(): string[] {
    const problems: string[] = [];
    let total = 0;
    for (const [id, c] of this.clients) {
      total += c.entries.size;
      if (c.entries.size > L.DEDUP_MAX_RESULTS_PER_CLIENT) problems.push(`dedup client ${JSON.stringify(id)} over its bound`);
    }
    if (total !== this.total) problems.push(`dedup result count ${this.total} != ${total}`);
    if (this.clients.size > L.DEDUP_MAX_CLIENTS) problems.push('too many dedup clients');
    if (this.total > L.DEDUP_MAX_RESULTS && this.clients.size > 1) problems.push('too many dedup results');
    return problems;
  }
}

function copyClient(c: DedupClient): DedupImage {
  return { floor: c.floor, entries: new Map(c.entries) };
}

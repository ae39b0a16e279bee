// Request de-duplication (docs/architecture.md#promises, promise 4): the result of every applied request, keyed by (caller, clientId,
// requestId), so a retry gets the original answer and never applies twice — refusals included. Records are
// per identity (docs/auth.md "Retry records per identity"): another caller's requests can never see, replay
// or evict them. Caller '' (the node, old logs) is one more identity.
//
// Bounded, deterministically, and every bound is met by evicting the requesting caller's own records only:
// - per client at most DEDUP_MAX_RESULTS_PER_CLIENT results; the oldest applied is dropped first;
// - `ackedBelow` on a request drops that client's results with lower ids;
// - per client a `floor`: every requestId below it was acknowledged or its result dropped, so a request
//   below the floor that has no stored result is refused (REQUEST_TOO_OLD) — it may have been applied;
// - per caller other than '' a share: at most its `dedup_clients` quota of clients and
//   DEDUP_MAX_RESULTS_PER_IDENTITY results; beyond, its own least recently used client is forgotten (its
//   current client's oldest results last);
// - at most DEDUP_MAX_CLIENTS clients and DEDUP_MAX_RESULTS results overall: the requesting caller makes room
//   from its own records as above. A request whose caller has nothing of its own to give up is refused
//   before it is applied (`full`: RESOURCE_EXHAUSTED, DEDUP_FULL), never recorded by evicting another
//   identity's records: that other identity's retry would be applied twice.
// - a request from a caller other than '' whose client has no record and whose requestId is above 1 is
//   refused (REQUEST_TOO_OLD): its record may have been forgotten, so it may have been applied. (Caller ''
//   keeps the old rule: logs written before callers were stamped replay as they did; they hold only ''.)
// Eviction order is Map insertion order, refreshed on every request of a client: the LRU order.
import { SavedImages, sameRecord } from './capture';
import type { CommandType } from './commands';
import { InvariantError, invariant } from './invariant';
import * as L from './limits';
import type { Result } from './resultStatuses';

export interface DedupEntry {
  readonly requestId: number;
  readonly commandType: CommandType;
  readonly result: Result;
}

export interface DedupClient {
  readonly caller: string;
  readonly clientId: string;
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
  readonly clients: readonly DedupClient[];
  image(client: DedupClient): DedupImage;
}

/**
 * The key of a client in the table. Callers are printable ASCII (no NUL), so the first NUL ends the caller
 * whatever the client id holds: two (caller, clientId) pairs never share a key.
 */
function keyOf(caller: string, clientId: string): string {
  return `${caller}\u0000${clientId}`;
}

export type DedupLookup =
  | { kind: 'new' }
  | { kind: 'duplicate'; result: Result }
  | { kind: 'too_old' }
  | { kind: 'reused' }
  /** The global bounds are met and the caller has no record of its own to give up: refuse, unrecorded. */
  | { kind: 'full' };

export class DedupTable {
  /** Insertion order, refreshed on every request of a client, is the LRU order. */
  private readonly clients = new Map<string, DedupClient>();
  /** The clients of each caller ('' included), in the same LRU order (its own evictions take its first). */
  private readonly byCaller = new Map<string, Set<DedupClient>>();
  /** The results each caller holds (derived, like byCaller). */
  private readonly resultsByCaller = new Map<string, number>();
  private total = 0;
  /**
   * The client touched last: the last of `clients` and of its caller's. begin() and record() touch the same
   * client for one request; the second touch would move nothing.
   */
  private mostRecent: DedupClient | undefined;
  /** While a snapshot capture is open: the clients' contents as they were at the capture (capture.ts). */
  private images: SavedImages<DedupClient, DedupImage> | null = null;

  get clientCount(): number {
    return this.clients.size;
  }

  get resultCount(): number {
    return this.total;
  }

  /** The clients of `caller` ('' included). */
  clientsOf(caller: string): number {
    return this.byCaller.get(caller)?.size ?? 0;
  }

  /** The results `caller` holds ('' included). */
  resultsOf(caller: string): number {
    return this.resultsByCaller.get(caller) ?? 0;
  }

  /** Clients from least to most recently used. */
  values(): IterableIterator<DedupClient> {
    return this.clients.values();
  }

  /** The clients, read live (nothing may change while the view is read). */
  view(): DedupView {
    return { clients: Array.from(this.clients.values()), image: sameRecord };
  }

  /** The clients as they are now, readable until thaw() while requests go on. O(clients), not O(results). */
  freeze(): DedupView {
    invariant(this.images === null, 'the dedup table is frozen already');
    const images = new SavedImages<DedupClient, DedupImage>(copyClient);
    this.images = images;
    return { clients: Array.from(this.clients.values()), image: (c) => images.image(c) };
  }

  thaw(): void {
    this.images = null;
  }

  /**
   * Looks a request up before it is applied; marks the client as most recently used and applies
   * `ackedBelow`. `new` means: apply it, then call record().
   */
  begin(caller: string, clientId: string, requestId: number, ackedBelow: number, commandType: CommandType): DedupLookup {
    const c = this.clients.get(keyOf(caller, clientId));
    if (c === undefined) {
      if (caller !== '' && requestId > 1) return { kind: 'too_old' };
      return this.hasRoom(caller, undefined) ? { kind: 'new' } : { kind: 'full' };
    }
    this.touch(c);
    this.raiseFloor(c, ackedBelow);
    const e = c.entries.get(requestId);
    if (e !== undefined) return e.commandType === commandType ? { kind: 'duplicate', result: e.result } : { kind: 'reused' };
    if (requestId < c.floor) return { kind: 'too_old' };
    return this.hasRoom(caller, c) ? { kind: 'new' } : { kind: 'full' };
  }

  /**
   * Whether one more result of `caller` (for its client `c`; undefined: a new client) fits within the global
   * bounds by giving up only records of `caller`: its other clients, and `c`'s own older results.
   */
  private hasRoom(caller: string, c: DedupClient | undefined): boolean {
    const others = this.clientsOf(caller) - (c === undefined ? 0 : 1);
    const clientsOk = c !== undefined || this.clients.size < L.DEDUP_MAX_CLIENTS || others > 0;
    const resultsOk = this.total < L.DEDUP_MAX_RESULTS || this.resultsOf(caller) > 0;
    return clientsOk && resultsOk;
  }

  /**
   * The stored result of (caller, clientId, requestId) when applying the request now would answer with it
   * (`duplicate` of begin()), else undefined. Read-only: no LRU refresh, no floor raise. A request id
   * below `ackedBelow` is left to begin() (it drops that result and refuses the request).
   */
  peek(caller: string, clientId: string, requestId: number, ackedBelow: number, commandType: CommandType): Result | undefined {
    if (requestId < ackedBelow) return undefined;
    const e = this.clients.get(keyOf(caller, clientId))?.entries.get(requestId);
    return e !== undefined && e.commandType === commandType ? e.result : undefined;
  }

  /**
   * Stores the result of an applied request (its result must be frozen: it is handed out again); begin()
   * said `new`, so the bounds can be met from the caller's own records. `maxClients`: the caller's
   * dedup_clients quota (at least its current client is kept; unused for '').
   */
  record(caller: string, clientId: string, requestId: number, ackedBelow: number, commandType: CommandType, result: Result, maxClients: number): void {
    let c = this.clients.get(keyOf(caller, clientId));
    if (c === undefined) {
      c = { caller, clientId, floor: 0, entries: new Map() };
      this.raiseFloor(c, ackedBelow);
    }
    this.touch(c);
    this.images?.save(c);
    invariant(!c.entries.has(requestId), () => `request ${requestId} of ${JSON.stringify(clientId)} recorded twice`);
    c.entries.set(requestId, { requestId, commandType, result });
    this.counted(caller, 1);
    while (c.entries.size > L.DEDUP_MAX_RESULTS_PER_CLIENT) this.dropOldest(c);
    const own = this.byCaller.get(caller);
    invariant(own !== undefined, 'a recorded client is not among its caller\'s');
    const share = caller === '' ? Infinity : L.DEDUP_MAX_RESULTS_PER_IDENTITY;
    const clientBound = caller === '' ? Infinity : Math.max(1, maxClients);
    while (own.size > clientBound) this.forget(firstOf(own));
    while (this.clients.size > L.DEDUP_MAX_CLIENTS || this.total > L.DEDUP_MAX_RESULTS || this.resultsOf(caller) > share) {
      const lru = firstOf(own);
      if (lru !== c) this.forget(lru);
      else if (c.entries.size > 1) this.dropOldest(c);
      else throw new InvariantError(`dedup has no room of ${JSON.stringify(caller)}'s own for its request (begin() said it had)`);
    }
  }

  /** Drops the oldest result of `c`; its floor rises above it, so a retry of it is REQUEST_TOO_OLD. */
  private dropOldest(c: DedupClient): void {
    this.images?.save(c);
    const oldest = c.entries.keys().next().value as number;
    c.entries.delete(oldest);
    this.counted(c.caller, -1);
    if (oldest + 1 > c.floor) c.floor = oldest + 1;
  }

  private counted(caller: string, delta: number): void {
    this.total += delta;
    const n = (this.resultsByCaller.get(caller) ?? 0) + delta;
    if (n === 0) this.resultsByCaller.delete(caller);
    else this.resultsByCaller.set(caller, n);
  }

  /** Restores one client from a snapshot, as the most recently used so far (call in LRU order). */
  restore(caller: string, clientId: string, floor: number, entries: readonly DedupEntry[]): void {
    invariant(!this.clients.has(keyOf(caller, clientId)), () => `dedup client ${JSON.stringify(clientId)} of ${JSON.stringify(caller)} restored twice`);
    const c: DedupClient = { caller, clientId, floor, entries: new Map() };
    for (const e of entries) c.entries.set(e.requestId, e);
    invariant(c.entries.size === entries.length, () => `a dedup request of ${JSON.stringify(clientId)} restored twice`);
    this.touch(c);
    this.counted(caller, c.entries.size);
  }

  /** Makes `c` the most recently used client (adding it if new), in the table and among its caller's. */
  private touch(c: DedupClient): void {
    if (c === this.mostRecent) return;
    this.mostRecent = c;
    const key = keyOf(c.caller, c.clientId);
    this.clients.delete(key);
    this.clients.set(key, c);
    let own = this.byCaller.get(c.caller);
    if (own === undefined) {
      own = new Set();
      this.byCaller.set(c.caller, own);
    }
    own.delete(c);
    own.add(c);
  }

  private forget(c: DedupClient): void {
    if (c === this.mostRecent) this.mostRecent = undefined;
    this.clients.delete(keyOf(c.caller, c.clientId));
    this.counted(c.caller, -c.entries.size);
    const own = this.byCaller.get(c.caller);
    if (own === undefined) return;
    own.delete(c);
    if (own.size === 0) this.byCaller.delete(c.caller);
  }

  private raiseFloor(c: DedupClient, ackedBelow: number): void {
    if (ackedBelow <= c.floor) return;
    this.images?.save(c);
    c.floor = ackedBelow;
    // Deleting from a Map while iterating it is defined (later keys are still visited): no copy per request.
    for (const id of c.entries.keys()) {
      if (id < ackedBelow) {
        c.entries.delete(id);
        this.counted(c.caller, -1);
      }
    }
  }

  /** Self-check: counters agree, bounds hold, each caller's clients are its clients of the table, in order. */
  check(): string[] {
    const problems: string[] = [];
    let total = 0;
    const expected = new Map<string, DedupClient[]>();
    const results = new Map<string, number>();
    for (const [key, c] of this.clients) {
      total += c.entries.size;
      if (key !== keyOf(c.caller, c.clientId)) problems.push(`dedup client ${JSON.stringify(c.clientId)} filed under another key`);
      if (c.entries.size > L.DEDUP_MAX_RESULTS_PER_CLIENT) problems.push(`dedup client ${JSON.stringify(c.clientId)} over its bound`);
      const list = expected.get(c.caller);
      if (list === undefined) expected.set(c.caller, [c]);
      else list.push(c);
      results.set(c.caller, (results.get(c.caller) ?? 0) + c.entries.size);
    }
    if (total !== this.total) problems.push(`dedup result count ${this.total} != ${total}`);
    for (const caller of new Set([...results.keys(), ...this.resultsByCaller.keys()])) {
      if ((results.get(caller) || undefined) !== this.resultsByCaller.get(caller)) problems.push(`dedup results of ${JSON.stringify(caller)} miscounted`);
    }
    // Per-identity shares are not checked here: a snapshot of an older version may hold more, trimmed by the
    // identity's next request.
    if (this.clients.size > L.DEDUP_MAX_CLIENTS) problems.push('too many dedup clients');
    if (this.total > L.DEDUP_MAX_RESULTS) problems.push('too many dedup results');
    const sameOrder = (a: readonly DedupClient[], b: readonly DedupClient[]): boolean => a.length === b.length && a.every((c, i) => c === b[i]);
    const callers = new Set([...expected.keys(), ...this.byCaller.keys()]);
    for (const caller of callers) {
      if (!sameOrder(Array.from(this.byCaller.get(caller) ?? []), expected.get(caller) ?? [])) problems.push(`dedup clients of ${JSON.stringify(caller)} out of step`);
    }
    return problems;
  }
}

function firstOf<T>(items: Iterable<T>): T {
  for (const x of items) return x;
  throw new InvariantError('no first of an empty collection');
}

function copyClient(c: DedupClient): DedupImage {
  return { floor: c.floor, entries: new Map(c.entries) };
}

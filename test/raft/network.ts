// A tiny synchronous in-memory cluster for the Raft core tests.
//
// Every node's Ready is handled at once, in the documented order: `messages` are queued, the Ready is
// persisted into the node's MemStore, `messagesAfterPersist` are queued, committed entries are applied
// to a toy state machine (the list of applied entries), then advance(). Messages are delivered in FIFO
// order unless a test drops, reorders or edits them. Safety is checked on the fly: at most one leader
// per term (Election Safety) and the same entry applied at each index on every node (State Machine
// Safety). Violations throw, or are recorded when `strict` is false (to prove a deliberate bug shows).

import {
  MessageType,
  NONE,
  RawNode,
  Role,
  type Entry,
  type HardState,
  type Message,
  type NodeId,
  type PersistedState,
  type RaftConfig,
  type ReadState,
  type Ready,
  type Snapshot,
  type WireMessage,
} from '../../src/raft';
import { flattenMessage, makeMessage, narrowMessage, type WireFields } from '../../src/raft/messages';
import { brokenRawNode, type RaftBugs } from '../support/brokenRawNode';
import { mulberry32 } from '../support/prng';

/** A small seeded PRNG (mulberry32). */
export const seededRandom = mulberry32;

export const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
export const dec = (b: Uint8Array): string => new TextDecoder().decode(b);

/** Durable storage of one node, following the Ready contract. */
export class MemStore {
  hardState: HardState = { term: 0, vote: NONE, commit: 0 };
  snapshot: Snapshot | undefined;
  entries: Entry[] = [];

  persist(rd: Ready): void {
    if (rd.snapshot !== undefined) {
      this.snapshot = rd.snapshot;
      this.entries = [];
    }
    if (rd.entries.length > 0) {
      const first = rd.entries[0].index;
      const base = this.snapshot?.meta.index ?? 0;
      this.entries = this.entries.filter((e) => e.index < first).concat(rd.entries);
      this.entries.forEach((e, i) => {
        if (e.index !== base + 1 + i) throw new Error(`store: entries not contiguous at ${e.index}`);
      });
    }
    if (rd.hardState !== undefined) this.hardState = { ...rd.hardState };
  }

  saveSnapshot(snap: Snapshot): void {
    this.snapshot = snap;
    this.entries = this.entries.filter((e) => e.index > snap.meta.index);
  }

  persisted(): PersistedState {
    return { hardState: { ...this.hardState }, snapshot: this.snapshot, entries: [...this.entries] };
  }
}

/** One applied entry of the toy state machine. */
export interface Applied {
  index: number;
  term: number;
  data: string;
}

export interface TestNode {
  id: NodeId;
  raw: RawNode;
  config: RaftConfig;
  /** RawNode, or a class with Raft rules broken on purpose (testOnlyBugs). */
  Core: typeof RawNode;
  store: MemStore;
  alive: boolean;
  /** The state machine: every entry applied so far, in order (restored from snapshots). */
  state: Applied[];
  appliedIndex: number;
  readStates: ReadState[];
  installedSnapshots: Snapshot[];
  readies: Ready[];
  /** A Ready taken by beginReady() and not yet finished. */
  pending?: Ready;
  pendingTerm: number;
}

export type NetOptions = Partial<Omit<RaftConfig, 'id' | 'voters' | 'random'>> & {
  seed?: number;
  /** Raft rules broken on purpose, to show a test catches the damage. */
  testOnlyBugs?: RaftBugs;
  /** Keep every Ready handed out (for inspection). */
  keepReadies?: boolean;
};

export class Network {
  readonly nodes = new Map<NodeId, TestNode>();
  // Messages travel as wire records (flattenMessage), as on a real network, so tests see (and may tamper
  // with) what is on the wire; deliver() narrows them as the codec does.
  /** In flight, FIFO. */
  queue: WireMessage[] = [];
  /** Every message the nodes sent, in order. */
  readonly sent: WireMessage[] = [];
  /** Every message handed to a node's step(). */
  readonly delivered: WireMessage[] = [];
  /** Return false to drop a message on delivery. */
  filter: ((m: WireMessage) => boolean) | undefined;
  strict = true;
  readonly violations: string[] = [];
  private readonly blocked = new Set<string>();
  private readonly leadersByTerm = new Map<number, NodeId>();
  private readonly appliedAt = new Map<number, string>();

  constructor(
    readonly ids: NodeId[],
    private readonly opts: NetOptions | ((id: NodeId) => NetOptions) = {},
  ) {
    for (const id of ids) this.add(id);
  }

  optionsOf(id: NodeId): NetOptions {
    return typeof this.opts === 'function' ? this.opts(id) : this.opts;
  }

  /** A node that joins the running cluster: it starts with an empty log, as a learner that knows `voters`. */
  join(id: NodeId, voters: NodeId[]): void {
    this.ids.push(id);
    this.add(id, { voters, learners: [id] });
  }

  private add(id: NodeId, bootstrap: Pick<RaftConfig, 'voters' | 'learners'> = { voters: this.ids }): void {
    const { seed, keepReadies: _keep, testOnlyBugs, ...rest } = this.optionsOf(id);
    const Core = brokenRawNode(testOnlyBugs);
    const config: RaftConfig = {
      electionTicks: 10,
      heartbeatTicks: 1,
      ...rest,
      id,
      ...bootstrap,
      voters: [...bootstrap.voters],
      random: seededRandom((seed ?? 1) * 7919 + this.ids.indexOf(id) * 104729),
    };
    const store = new MemStore();
    this.nodes.set(id, {
      id,
      raw: new Core(config),
      config,
      Core,
      store,
      alive: true,
      state: [],
      appliedIndex: 0,
      readStates: [],
      installedSnapshots: [],
      readies: [],
      pendingTerm: 0,
    });
  }

  n(id: NodeId): TestNode {
    const node = this.nodes.get(id);
    if (node === undefined) throw new Error(`no node ${id}`);
    return node;
  }

  raw(id: NodeId): RawNode {
    return this.n(id).raw;
  }

  private violation(msg: string): void {
    if (this.strict) throw new Error(`safety violation: ${msg}`);
    this.violations.push(msg);
  }

  // ---- Ready handling ---------------------------------------------------------------------------

  /** Handles one Ready of `id` completely. `crashBeforePersist` sends `messages` and then crashes. */
  processReady(id: NodeId, opts: { crashBeforePersist?: boolean } = {}): Ready {
    const rd = this.beginReady(id);
    if (opts.crashBeforePersist) {
      this.crash(id);
      return rd;
    }
    return this.finishReady(id);
  }

  /**
   * First half of handling a Ready: take it and send `messages`. Until finishReady() the node may
   * receive messages and ticks (as with a real, asynchronous disk write); a crash loses the Ready.
   */
  beginReady(id: NodeId): Ready {
    const node = this.n(id);
    if (node.pending !== undefined) throw new Error(`${id} already has a Ready in progress`);
    const rd = node.raw.ready();
    if (this.optionsOf(id).keepReadies) node.readies.push(rd);
    this.enqueue(rd.messages);
    node.pending = rd;
    node.pendingTerm = node.raw.status().term; // the term the Ready's softState belongs to
    return rd;
  }

  /** Second half: persist, send `messagesAfterPersist`, install/apply, advance. */
  finishReady(id: NodeId): Ready {
    const node = this.n(id);
    const rd = node.pending;
    if (rd === undefined) throw new Error(`${id} has no Ready in progress`);
    node.pending = undefined;
    node.store.persist(rd);
    this.enqueue(rd.messagesAfterPersist);
    if (rd.snapshot !== undefined) {
      node.state = decodeState(rd.snapshot.data);
      node.appliedIndex = rd.snapshot.meta.index;
      node.installedSnapshots.push(rd.snapshot);
    }
    for (const e of rd.committedEntries) {
      if (e.index !== node.appliedIndex + 1) throw new Error(`${id}: applied ${e.index} after ${node.appliedIndex}`);
      node.appliedIndex = e.index;
      const a: Applied = { index: e.index, term: e.term, data: dec(e.data) };
      node.state.push(a);
      const key = `${a.term}:${a.data}`;
      const seen = this.appliedAt.get(e.index);
      if (seen === undefined) this.appliedAt.set(e.index, key);
      else if (seen !== key) this.violation(`index ${e.index} applied as ${seen} and as ${key} (on ${id})`);
    }
    node.readStates.push(...rd.readStates);
    node.raw.advance(rd);
    if (rd.softState?.role === Role.Leader) {
      const term = node.pendingTerm;
      const other = this.leadersByTerm.get(term);
      if (other !== undefined && other !== id) this.violation(`two leaders in term ${term}: ${other} and ${id}`);
      this.leadersByTerm.set(term, id);
    }
    return rd;
  }

  private enqueue(msgs: Message[]): void {
    for (const sent of msgs) {
      const m = flattenMessage(sent);
      this.sent.push(m);
      this.queue.push(m);
    }
  }

  flushReadies(): void {
    for (const node of this.nodes.values()) {
      if (node.alive && node.pending !== undefined) this.finishReady(node.id);
      while (node.alive && node.raw.hasReady()) this.processReady(node.id);
    }
  }

  /** Delivers the oldest queued message. Returns false when the queue is empty. */
  deliverOne(): boolean {
    const m = this.queue.shift();
    if (m === undefined) return false;
    this.deliver(m);
    return true;
  }

  deliver(m: WireMessage): void {
    const to = this.nodes.get(m.to);
    if (to === undefined || !to.alive || this.blocked.has(`${m.from}->${m.to}`)) return;
    if (this.filter !== undefined && !this.filter(m)) return;
    this.delivered.push(m);
    to.raw.step(narrowMessage(m));
  }

  /** Runs until no node has a Ready and no message is in flight. */
  stabilize(maxSteps = 1_000_000): void {
    for (let i = 0; i < maxSteps; i++) {
      this.flushReadies();
      if (this.queue.length === 0) return;
      const batch = this.queue;
      this.queue = [];
      for (const m of batch) this.deliver(m);
    }
    throw new Error('network did not stabilize');
  }

  /** Ticks every live node `n` times, stabilizing after each round. */
  tick(n = 1, ids: NodeId[] = this.ids): void {
    for (let i = 0; i < n; i++) {
      for (const id of ids) {
        const node = this.n(id);
        if (node.alive) node.raw.tick();
      }
      this.stabilize();
    }
  }

  // ---- faults -----------------------------------------------------------------------------------

  /** Cuts both directions between `id` and everyone else. */
  isolate(id: NodeId): void {
    for (const other of this.ids) {
      if (other === id) continue;
      this.cut(id, other);
    }
  }

  cut(a: NodeId, b: NodeId, oneWay = false): void {
    this.blocked.add(`${a}->${b}`);
    if (!oneWay) this.blocked.add(`${b}->${a}`);
  }

  /** Splits the cluster into groups that cannot talk to each other. */
  partition(...groups: NodeId[][]): void {
    for (const g of groups) for (const h of groups) if (g !== h) for (const a of g) for (const b of h) this.cut(a, b, true);
  }

  heal(): void {
    this.blocked.clear();
  }

  /** Loses everything not persisted: buffered output and messages in flight to the node. */
  crash(id: NodeId): void {
    const node = this.n(id);
    node.alive = false;
    node.pending = undefined;
    this.queue = this.queue.filter((m) => m.to !== id);
  }

  restart(id: NodeId): void {
    const node = this.n(id);
    const persisted = node.store.persisted();
    node.raw = new node.Core(node.config, persisted);
    node.alive = true;
    node.state = persisted.snapshot !== undefined ? decodeState(persisted.snapshot.data) : [];
    node.appliedIndex = persisted.snapshot?.meta.index ?? 0;
  }

  /** Replaces `id` with a node restarted from `persisted` (also written to its store). */
  load(id: NodeId, persisted: PersistedState): void {
    const node = this.n(id);
    node.store.hardState = { ...persisted.hardState };
    node.store.snapshot = persisted.snapshot;
    node.store.entries = [...persisted.entries];
    this.restart(id);
  }

  /** Gives `id` a log with entries of the given terms (1..n) and a hard state at the last term. */
  loadLog(id: NodeId, terms: number[], hs: Partial<HardState> = {}): void {
    const lastTerm = terms.length > 0 ? terms[terms.length - 1] : 0;
    this.load(id, { hardState: { term: lastTerm, vote: NONE, commit: 0, ...hs }, entries: entries(terms) });
  }

  /** Terms of the stored log of `id` after its snapshot. */
  storedTerms(id: NodeId): number[] {
    return this.n(id).store.entries.map((e) => e.term);
  }

  // ---- helpers ----------------------------------------------------------------------------------

  /** Makes `id` campaign now and runs the election to completion. */
  elect(id: NodeId): void {
    this.raw(id).campaign();
    this.stabilize();
    const st = this.raw(id).status();
    if (st.role !== Role.Leader) throw new Error(`${id} failed to become leader: ${st.role} at term ${st.term}`);
  }

  propose(id: NodeId, data: string): { index: number; term: number } {
    const r = this.raw(id).propose(enc(data));
    this.stabilize();
    return r;
  }

  /** The application snapshot of `id` at its applied index, handed to compact() and stored. */
  compact(id: NodeId, index = this.n(id).appliedIndex): Snapshot {
    const node = this.n(id);
    const snap = node.raw.compact(index, encodeState(node.state.filter((a) => a.index <= index)));
    node.store.saveSnapshot(snap);
    return snap;
  }

  leaders(): NodeId[] {
    return this.ids.filter((id) => this.n(id).alive && this.raw(id).status().role === Role.Leader);
  }

  /** Application data of applied non-empty entries (no-ops skipped). */
  appliedData(id: NodeId): string[] {
    return this.n(id).state.filter((a) => a.data !== '').map((a) => a.data);
  }

  count(type: MessageType, pred: (m: WireMessage) => boolean = () => true): number {
    return this.delivered.filter((m) => m.type === type && pred(m)).length;
  }
}

export function encodeState(state: Applied[]): Uint8Array {
  return enc(JSON.stringify(state));
}

export function decodeState(data: Uint8Array): Applied[] {
  return JSON.parse(dec(data)) as Applied[];
}

/** A message from its wire fields, every other field defaulted. */
export function msg(fields: WireFields): Message {
  return makeMessage(fields);
}

/** The same, as a wire record (for net.deliver and tests that tamper with the wire). */
export function wireMsg(fields: WireFields): WireMessage {
  return flattenMessage(makeMessage(fields));
}

/** Entries with the given terms, starting at index `from` (default 1). */
export function entries(terms: number[], from = 1): Entry[] {
  return terms.map((term, i) => ({ term, index: from + i, type: 0, data: enc(`e${from + i}t${term}`) }));
}

/** A node restored from a log of `terms` (entries 1..n) at hard state `hs`. */
export function nodeWithLog(
  id: NodeId,
  voters: NodeId[],
  terms: number[],
  hs: Partial<HardState> = {},
  { testOnlyBugs, ...extra }: Partial<RaftConfig> & { testOnlyBugs?: RaftBugs } = {},
): RawNode {
  const lastTerm = terms.length > 0 ? terms[terms.length - 1] : 0;
  const Core = brokenRawNode(testOnlyBugs);
  return new Core(
    { id, voters, electionTicks: 10, heartbeatTicks: 1, random: seededRandom(42), ...extra },
    { hardState: { term: lastTerm, vote: NONE, commit: 0, ...hs }, entries: entries(terms) },
  );
}

/** Drains a standalone node's Ready (persist is a no-op), returning everything it sent, as wire records. */
export function drain(raw: RawNode): WireMessage[] {
  const out: WireMessage[] = [];
  while (raw.hasReady()) {
    const rd = raw.ready();
    out.push(...rd.messages.map(flattenMessage), ...rd.messagesAfterPersist.map(flattenMessage));
    raw.advance(rd);
  }
  return out;
}

/**
 * The seeded whole-cluster Raft simulator.
 *
 * A run is a pure function of (seed, options): a cluster of 3 or 5 cores, each with its own simulated disk
 * and application, on one virtual clock, driven by a queue of events (ticks, message deliveries, disk syncs,
 * crashes, restarts, and a "chaos" event every tick that injects faults and workload). Every random choice
 * comes from Prng streams derived from the seed. After every event the checker verifies the invariants
 * (see invariants.ts); the first violation ends the run and is reported with the seed.
 *
 * Phases: a safety phase under the chosen fault profile, then a liveness phase with every fault healed in
 * which exactly one leader must emerge, a new proposal must commit everywhere and all applied sequences must
 * converge, within a bounded number of ticks.
 *
 * The Ready loop per node follows src/raft/types.ts: send `messages`; issue the write of snapshot + entries +
 * hard state; it becomes durable after a random disk delay (a crash before then loses it); then send
 * `messagesAfterPersist`, install the snapshot, apply the committed entries, `advance()`. No new Ready is
 * taken while a write is outstanding, but the node keeps ticking and receiving messages.
 */
import type { RaftConfig } from '../../src/raft/config';
import { MessageType, Role, type Entry, type Message, type NodeId, type PersistedState, type Ready, type TestOnlyBugs } from '../../src/raft/types';
import { AppState, decodeSnapshotData, decodeValue, encodeValue } from './app';
import { EventQueue } from './eventQueue';
import { Network, describePartition } from './network';
import { Checker, InvariantViolation } from './invariants';
import { Prng } from './prng';
import { PROFILES, TICK, findProfile, healed, type FaultProfile, type PartitionKind } from './profiles';
import type { RaftFactory, SimRaftNode, SimStatus } from './raftApi';
import { ProposalDroppedError } from '../../src/raft/errors';
import { MemoryStorage } from '../../src/storage/memoryStorage';
import { SimStorage } from './simStorage';

export interface SimOptions {
  seed: number;
  /** Cluster size; by default odd seeds run 3 nodes and even seeds 5. */
  nodes?: number;
  /** Fault profile name; by default chosen from the seed so that consecutive seeds cycle through all. */
  profile?: string;
  bugs?: TestOnlyBugs;
  /** Ticks of the faulty safety phase. */
  safetyTicks?: number;
  /** Upper bound on the ticks the healed cluster may take to elect, commit and converge. */
  livenessTicks?: number;
  /** Direct durability checks (see CheckerOptions); on by default. */
  durabilityChecks?: boolean;
  /** Receives one line per event when set (verbose replay). */
  trace?: (line: string) => void;
  factory: RaftFactory;
}

export interface Violation {
  invariant: string;
  detail: string;
  /** Virtual time of the violation, in ticks. */
  tick: number;
  error?: unknown;
}

export interface SimStats {
  events: number;
  ticks: number;
  messagesSent: number;
  messagesDelivered: number;
  messagesDropped: number;
  messagesDuplicated: number;
  partitions: number;
  crashes: number;
  crashesLosingWrites: number;
  restarts: number;
  proposals: number;
  proposalsRefused: number;
  acked: number;
  committed: number;
  leaderTerms: number;
  snapshotsInstalled: number;
  compactions: number;
  reads: number;
  readStates: number;
  /**
   * Append acknowledgements that left after their Ready synced but named an index the node's durable log
   * no longer held (a newer leader truncated it meanwhile): legal, and a checker pitfall (see regressions).
   */
  staleAcks: number;
  livenessTicks: number;
}

export interface SimResult {
  seed: number;
  nodes: number;
  profile: string;
  ok: boolean;
  violation?: Violation;
  stats: SimStats;
}

export const DEFAULT_SAFETY_TICKS = 1000;
export const DEFAULT_LIVENESS_TICKS = 600;

/** The cluster size and profile a seed runs with when the caller does not choose. */
export function setupForSeed(seed: number): { nodes: number; profile: string } {
  const s = Math.abs(Math.trunc(seed));
  return { nodes: s % 2 === 1 ? 3 : 5, profile: PROFILES[Math.floor(s / 2) % PROFILES.length]!.name };
}

/**
 * Every other run of all sizes and profiles runs as the node does: followers learn the commit index lazily,
 * committed entries are applied while a write is in flight (also those taken with takeCommittedEntries). Taken from the
 * seed, not from the setup stream, so that existing seeds replay the scenarios they always did.
 */
function lazyCommitNoticeAndEarlyApplyFor(seed: number): boolean {
  return Math.floor(Math.abs(Math.trunc(seed)) / (2 * PROFILES.length)) % 2 === 1;
}

export function runSeed(opts: SimOptions): SimResult {
  return new Simulation(opts).run();
}

type Ev =
  | { k: 'tick'; node: SimNode }
  | { k: 'deliver'; msg: Message }
  | { k: 'sync'; node: SimNode; inc: number }
  | { k: 'crash'; node: SimNode; inc: number; why: string }
  | { k: 'restart'; node: SimNode; inc: number }
  | { k: 'unreachable'; node: SimNode; inc: number; peer: NodeId }
  | { k: 'depose'; node: SimNode; inc: number; term: number }
  | { k: 'chaos' };

interface SimNode {
  id: NodeId;
  idx: number;
  raft: SimRaftNode | null;
  /** Bumped by every crash: events of an earlier incarnation are ignored. */
  inc: number;
  /** The node's disk: src/storage's in-memory twin, with un-synced writes lost on crash. */
  disk: MemoryStorage;
  /** The simulator's own model of the same disk, readable at any index by the checker. */
  storage: SimStorage;
  app: AppState;
  /** The Ready whose write is issued but not yet synced. */
  awaiting: Ready | null;
  /** The awaited Ready's committed entries were applied when it was handed out. */
  awaitingApplied: boolean;
  term: number;
  lastCompact: number;
  /** This incarnation's accepted proposals by index: applied with the same term = acknowledged. */
  proposals: Map<number, { term: number; value: string }>;
  jitter: Prng;
  /** Crash during the next write, between issuing it and its sync. */
  armed: boolean;
}

class Simulation {
  private readonly seed: number;
  private readonly size: number;
  private readonly baseProfile: FaultProfile;
  private profile: FaultProfile;
  private readonly factory: RaftFactory;
  private readonly bugs: TestOnlyBugs | undefined;
  private readonly trace: ((line: string) => void) | undefined;
  private readonly safetyTicks: number;
  private readonly livenessTicks: number;
  private readonly preVote: boolean;
  private readonly applyEarly: boolean;
  private readonly checkQuorum: boolean;

  private readonly queue = new EventQueue<Ev>();
  private readonly nodes: SimNode[] = [];
  private readonly byId = new Map<NodeId, SimNode>();
  private readonly ids: NodeId[];
  private readonly checker: Checker;
  private readonly net: Network;
  private readonly faults: Prng;
  private readonly work: Prng;
  private readonly disk: Prng;

  private now = 0;
  private phase: 'safety' | 'liveness' = 'safety';
  private partitionHealAt = -1;
  private proposalSeq = 0;
  private readSeq = 0;
  /** Acknowledged proposals: value -> index. */
  private readonly acked = new Map<string, number>();
  private liveness: { start: number; marker?: { value: string; leader: NodeId; term: number; at: number }; done: boolean } = {
    start: 0,
    done: false,
  };
  private readonly markerSeen = new Map<string, Set<NodeId>>();

  readonly stats: SimStats = {
    events: 0,
    ticks: 0,
    messagesSent: 0,
    messagesDelivered: 0,
    messagesDropped: 0,
    messagesDuplicated: 0,
    partitions: 0,
    crashes: 0,
    crashesLosingWrites: 0,
    restarts: 0,
    proposals: 0,
    proposalsRefused: 0,
    acked: 0,
    committed: 0,
    leaderTerms: 0,
    snapshotsInstalled: 0,
    compactions: 0,
    reads: 0,
    readStates: 0,
    staleAcks: 0,
    livenessTicks: 0,
  };

  constructor(opts: SimOptions) {
    this.seed = opts.seed;
    const setup = setupForSeed(opts.seed);
    this.size = opts.nodes ?? setup.nodes;
    if (!Number.isInteger(this.size) || this.size < 1 || this.size > 9) throw new Error(`bad cluster size ${this.size}`);
    this.baseProfile = findProfile(opts.profile ?? setup.profile);
    this.profile = this.baseProfile;
    this.factory = opts.factory;
    this.bugs = opts.bugs;
    this.trace = opts.trace;
    this.safetyTicks = opts.safetyTicks ?? DEFAULT_SAFETY_TICKS;
    this.livenessTicks = opts.livenessTicks ?? DEFAULT_LIVENESS_TICKS;
    const setupRng = Prng.derive(this.seed, 'setup');
    const p = this.baseProfile;
    this.preVote = p.preVote === 'random' ? setupRng.chance(0.5) : p.preVote;
    this.checkQuorum = p.checkQuorum === 'random' ? setupRng.chance(0.5) : p.checkQuorum;
    this.applyEarly = lazyCommitNoticeAndEarlyApplyFor(this.seed);
    this.ids = Array.from({ length: this.size }, (_, i) => `n${i + 1}`);
    this.net = new Network(this.ids, Prng.derive(this.seed, 'net'), this.profile);
    this.faults = Prng.derive(this.seed, 'faults');
    this.work = Prng.derive(this.seed, 'work');
    this.disk = Prng.derive(this.seed, 'disk');
    for (const [idx, id] of this.ids.entries()) {
      const node: SimNode = {
        id,
        idx,
        raft: null,
        inc: 0,
        disk: new MemoryStorage(),
        storage: new SimStorage(),
        app: new AppState(),
        awaiting: null,
        awaitingApplied: false,
        term: 0,
        lastCompact: 0,
        proposals: new Map(),
        jitter: Prng.derive(this.seed, `jitter:${id}`),
        armed: false,
      };
      this.nodes.push(node);
      this.byId.set(id, node);
    }
    this.checker = new Checker(this.ids, (id) => this.byId.get(id)!.storage.durable, {
      durability: opts.durabilityChecks ?? true,
    });
  }

  run(): SimResult {
    let violation: Violation | undefined;
    try {
      this.log(
        `seed ${this.seed}: ${this.size} nodes, profile ${this.baseProfile.name} (preVote ${this.preVote}, ` +
          `checkQuorum ${this.checkQuorum}, lazyCommitNotice and early apply ${this.applyEarly})${this.bugs ? `, bugs ${JSON.stringify(this.bugs)}` : ''}`,
      );
      for (const n of this.nodes) this.boot(n, false);
      for (const n of this.nodes) this.queue.push(1 + n.idx, { k: 'tick', node: n });
      this.queue.push(TICK, { k: 'chaos' });
      const safetyEnd = this.safetyTicks * TICK;
      this.loop(safetyEnd);
      this.enterLiveness();
      this.loop(safetyEnd + this.livenessTicks * TICK);
      if (!this.liveness.done) this.failLiveness();
      this.finalChecks();
    } catch (e) {
      violation = this.toViolation(e);
      this.log(`VIOLATION ${violation.invariant}: ${violation.detail}`);
    }
    this.stats.ticks = Math.floor(this.now / TICK);
    this.stats.committed = this.checker.maxDecided;
    this.stats.leaderTerms = this.checker.leaders.size;
    const result: SimResult = { seed: this.seed, nodes: this.size, profile: this.baseProfile.name, ok: !violation, stats: this.stats };
    if (violation) result.violation = violation;
    return result;
  }

  private toViolation(e: unknown): Violation {
    const tick = Math.round((this.now / TICK) * 10) / 10;
    if (e instanceof InvariantViolation) return { invariant: e.invariant, detail: e.detail, tick, error: e };
    return { invariant: 'SimulatorError', detail: e instanceof Error ? (e.stack ?? e.message) : String(e), tick, error: e };
  }

  private log(line: string): void {
    if (this.trace) this.trace(`[${(this.now / TICK).toFixed(1).padStart(6)}] ${line}`);
  }

  private loop(until: number): void {
    for (;;) {
      const t = this.queue.peekTime();
      if (t === undefined || t > until || this.liveness.done) break;
      const { time, item } = this.queue.pop()!;
      this.now = time;
      this.stats.events++;
      this.handle(item);
    }
    if (!this.liveness.done) this.now = Math.max(this.now, until);
  }

  // ------------------------------------------------------------------------------------------------
  // Calls into the core: an exception from the core is a finding, reported with the node and call.

  private core<T>(n: SimNode, what: string, fn: (r: SimRaftNode) => T): T {
    try {
      return fn(n.raft!);
    } catch (e) {
      throw coreError(n, what, e);
    }
  }

  private status(n: SimNode): SimStatus {
    return this.core(n, 'status()', (r) => r.status());
  }

  private config(n: SimNode): RaftConfig {
    const p = this.baseProfile;
    const cfg: RaftConfig = {
      id: n.id,
      voters: this.ids.slice(),
      electionTicks: p.electionTicks,
      heartbeatTicks: p.heartbeatTicks,
      random: () => n.jitter.next(),
      preVote: this.preVote,
      checkQuorum: this.checkQuorum,
      lazyCommitNotice: this.applyEarly,
      // As the server does: the application decodes a received snapshot fully before it is stored.
      validateSnapshot: (snap) => {
        decodeSnapshotData(snap.data);
        return true;
      },
    };
    if (p.maxMsgBytes !== undefined) cfg.maxMsgBytes = p.maxMsgBytes;
    if (p.maxInflight !== undefined) cfg.maxInflight = p.maxInflight;
    if (p.snapshotChunkBytes !== undefined) cfg.snapshotChunkBytes = p.snapshotChunkBytes;
    if (this.bugs) cfg.testOnlyBugs = { ...this.bugs };
    return cfg;
  }

  private boot(n: SimNode, restart: boolean): void {
    const persisted = restart ? this.loadAndCompare(n) : undefined;
    try {
      n.raft = this.factory(this.config(n), persisted);
    } catch (e) {
      throw new InvariantViolation('CoreError', `${n.id} could not ${restart ? 'restart' : 'start'}: ${e instanceof Error ? e.message : String(e)}`);
    }
    n.awaiting = null;
    n.app = AppState.fromSnapshot(persisted?.snapshot);
    n.lastCompact = n.app.appliedIndex;
    n.proposals.clear();
    const st = this.status(n);
    n.term = st.term;
    if (persisted) {
      this.checker.onRestart(n.id, persisted, st);
      this.log(
        `${n.id} RESTART term ${st.term} commit ${st.commit} last ${st.lastIndex} snapshot ${persisted.snapshot?.meta.index ?? 0}`,
      );
    }
    this.checker.onStatus(n.id, n.inc, st);
    this.afterNodeEvent(n);
  }

  /** Reads the node's disk back and checks it against the simulator's model of what is durable. */
  private loadAndCompare(n: SimNode): PersistedState {
    let got: PersistedState;
    try {
      got = n.disk.loadSync();
    } catch (e) {
      throw new InvariantViolation('StorageLoad', `${n.id}: ${e instanceof Error ? e.message : String(e)}`);
    }
    const want = n.storage.loadSync();
    const a = describePersisted(got);
    const b = describePersisted(want);
    if (a !== b) throw new InvariantViolation('StorageModel', `${n.id} loaded ${a} but the model expects ${b}`);
    return got;
  }

  // ------------------------------------------------------------------------------------------------
  // Events

  private handle(ev: Ev): void {
    switch (ev.k) {
      case 'tick': {
        this.queue.push(this.now + TICK, ev);
        const n = ev.node;
        if (!n.raft) return;
        this.core(n, 'tick()', (r) => r.tick());
        this.afterNodeEvent(n);
        return;
      }
      case 'deliver': {
        const m = ev.msg;
        const to = this.byId.get(m.to)!;
        if (!to.raft || this.net.isBlocked(m.from, m.to)) {
          this.stats.messagesDropped++;
          return;
        }
        this.stats.messagesDelivered++;
        if (this.trace) this.log(`${m.to} <- ${fmtMsg(m)}`);
        this.core(to, `step(${MessageType[m.type]} from ${m.from})`, (r) => r.step(m));
        if (this.applyEarly && to.awaiting) this.applyTaken(to);
        this.afterNodeEvent(to);
        return;
      }
      case 'sync': {
        const n = ev.node;
        if (n.inc !== ev.inc || !n.raft || !n.awaiting) return;
        this.finishReady(n, n.awaiting, n.awaitingApplied);
        this.afterNodeEvent(n);
        return;
      }
      case 'crash': {
        const n = ev.node;
        if (n.inc !== ev.inc || !n.raft || this.phase !== 'safety') return;
        this.crash(n, ev.why);
        return;
      }
      case 'restart': {
        const n = ev.node;
        if (n.inc !== ev.inc || n.raft) return;
        this.stats.restarts++;
        this.boot(n, true);
        return;
      }
      case 'unreachable': {
        const n = ev.node;
        if (n.inc !== ev.inc || !n.raft) return;
        this.core(n, 'reportUnreachable()', (r) => r.reportUnreachable(ev.peer));
        this.afterNodeEvent(n);
        return;
      }
      case 'depose': {
        const n = ev.node;
        if (n.inc !== ev.inc || !n.raft || this.phase !== 'safety') return;
        const st = this.status(n);
        if (st.role !== Role.Leader || st.term !== ev.term) return;
        if (this.partitionHealAt < 0 && this.faults.chance(0.5)) this.partition('leaderMinority', n);
        else this.crash(n, `deposed leader of term ${ev.term}`);
        return;
      }
      case 'chaos':
        this.queue.push(this.now + TICK, ev);
        if (this.phase === 'safety') this.chaos();
        else this.livenessStep();
        return;
    }
  }

  /** Takes and processes Readies, then checks the node's invariants. */
  private afterNodeEvent(n: SimNode): void {
    this.pump(n);
    if (n.raft) this.observe(n);
  }

  private observe(n: SimNode): void {
    const st = this.status(n);
    this.checker.onStatus(n.id, n.inc, st);
    n.term = st.term;
    if (st.role === Role.Leader) {
      if (!this.checker.leaders.has(st.term) && this.phase === 'safety' && this.faults.chance(this.profile.deposeNewLeaderRate)) {
        const at = this.now + this.faults.range(1, this.profile.electionTicks) * TICK;
        this.queue.push(at, { k: 'depose', node: n, inc: n.inc, term: st.term });
      }
      this.checker.onLeader(n.id, st.term);
      // The written log is the core's log only while nothing is waiting to be written.
      if (!n.awaiting) this.checker.checkLeader(n.id, st.term, n.storage.latest, st.lastIndex);
    }
  }

  private pump(n: SimNode): void {
    for (let guard = 0; n.raft && !n.awaiting && this.core(n, 'hasReady()', (r) => r.hasReady()); guard++) {
      if (guard > 1000) throw new InvariantViolation('CoreError', `${n.id} keeps producing Readies (1000 in one step)`);
      const rd = this.core(n, 'ready()', (r) => r.ready());
      this.handleReady(n, rd);
    }
  }

  private handleReady(n: SimNode, rd: Ready): void {
    if (rd.hardState) n.term = rd.hardState.term;
    if (this.trace) this.log(`${n.id} READY ${fmtReady(rd)}`);
    const write = rd.hardState !== undefined || rd.entries.length > 0 || rd.snapshot !== undefined;
    if (write) {
      // Issued now, durable at sync: issuing before the sends changes nothing a crash could observe.
      const batch: { entries: typeof rd.entries; hardState?: typeof rd.hardState; snapshot?: typeof rd.snapshot } = {
        entries: rd.entries,
      };
      if (rd.hardState) batch.hardState = rd.hardState;
      if (rd.snapshot) batch.snapshot = rd.snapshot;
      try {
        n.storage.write(batch);
        n.disk.write(batch);
      } catch (e) {
        throw new InvariantViolation('StorageRefusal', `${n.id}: ${e instanceof Error ? e.message : String(e)}`);
      }
      const latest = n.storage.latest;
      this.checker.onLogWrite(n.id, latest, rd.entries);
      if (rd.hardState) this.checker.onCommitClaim(n.id, rd.hardState.term, rd.hardState.commit, latest);
    }
    for (const m of rd.messages) this.send(n, m, true);
    // As the node's driver does: committed entries are applied while the Ready's write is in flight.
    const appliedNow = this.applyEarly && !rd.snapshot;
    if (appliedNow) this.applyEntries(n, rd.committedEntries);
    for (const rs of rd.readStates) {
      this.stats.readStates++;
      this.checker.onReadState(n.id, decodeValue(rs.context), rs.index);
    }
    if (!write) {
      this.finishReady(n, rd, appliedNow);
      return;
    }
    n.awaiting = rd;
    n.awaitingApplied = appliedNow;
    const delay = this.disk.range(this.profile.syncDelay[0], this.profile.syncDelay[1]);
    if (delay === 0) {
      this.finishReady(n, rd, appliedNow);
      return;
    }
    this.queue.push(this.now + delay, { k: 'sync', node: n, inc: n.inc });
    if (n.armed && this.phase === 'safety') {
      n.armed = false;
      this.queue.push(this.now + this.faults.range(0, delay - 1), { k: 'crash', node: n, inc: n.inc, why: 'between write and sync' });
    }
  }

  /** Committed entries the core handed out while a write is in flight (takeCommittedEntries). */
  private applyTaken(n: SimNode): void {
    const entries = this.core(n, 'takeCommittedEntries()', (r) => r.takeCommittedEntries?.() ?? []);
    if (entries.length > 0 && this.trace) this.log(`${n.id} TAKE apply ${entries[0]!.index}..${entries[entries.length - 1]!.index}`);
    this.applyEntries(n, entries);
  }

  private applyEntries(n: SimNode, entries: readonly Entry[]): void {
    for (const e of entries) {
      this.checker.onApply(n.id, n.term, e, n.app.appliedIndex);
      n.app.apply(e);
      const value = e.data.length > 0 ? decodeValue(e.data) : '';
      const p = n.proposals.get(e.index);
      if (p) {
        n.proposals.delete(e.index);
        if (p.term === e.term && p.value === value) {
          this.acked.set(value, e.index);
          this.stats.acked++;
        }
      }
      this.noteMarker(n, value);
    }
  }

  private finishReady(n: SimNode, rd: Ready, alreadyApplied = false): void {
    n.storage.sync();
    n.disk.sync();
    for (const m of rd.messagesAfterPersist) this.send(n, m, false);
    if (rd.snapshot) {
      const snap = rd.snapshot;
      const values = decodeSnapshotData(snap.data);
      this.checker.onSnapshotInstall(n.id, n.term, snap.meta, values, n.app.appliedIndex);
      n.app.install(snap);
      n.lastCompact = Math.max(n.lastCompact, snap.meta.index);
      this.stats.snapshotsInstalled++;
      for (const [, v] of values) this.noteMarker(n, v);
    }
    if (!alreadyApplied) this.applyEntries(n, rd.committedEntries);
    this.core(n, 'advance()', (r) => r.advance(rd));
    n.awaiting = null;
    this.maybeCompact(n);
  }

  private maybeCompact(n: SimNode): void {
    const applied = n.app.appliedIndex;
    if (applied - n.lastCompact < this.baseProfile.compactEvery) return;
    const term = n.storage.latest.term(applied);
    if (term === undefined) return;
    const data = n.app.serialize();
    const snap = { meta: { index: applied, term, config: { voters: this.ids.slice() } }, data };
    try {
      n.storage.saveSnapshotSync(snap);
      n.disk.saveSnapshotSync(snap);
    } catch (e) {
      throw new InvariantViolation('StorageRefusal', `${n.id} compaction: ${e instanceof Error ? e.message : String(e)}`);
    }
    this.core(n, 'compact()', (r) => r.compact(applied, data));
    n.lastCompact = applied;
    this.stats.compactions++;
    if (this.trace) this.log(`${n.id} COMPACT at ${applied} (term ${term})`);
  }

  // ------------------------------------------------------------------------------------------------
  // Network

  private send(n: SimNode, m: Message, immediate: boolean): void {
    const to = this.byId.get(m.to);
    if (!to || m.from !== n.id) {
      throw new InvariantViolation('BadMessage', `${n.id} sent ${fmtMsg(m)}`);
    }
    this.checker.onSend(m, n.storage.latest, immediate);
    this.stats.messagesSent++;
    if (!immediate && m.type === MessageType.AppResp && !m.reject) {
      const dv = n.storage.durable;
      if (m.index > dv.snapshotIndex && dv.term(m.index) === undefined) this.stats.staleAcks++;
    }
    if (!to.raft || this.net.isBlocked(m.from, m.to)) {
      // The transport notices a dead or cut-off peer now and then.
      this.stats.messagesDropped++;
      if (this.phase === 'safety' && this.faults.chance(0.2)) {
        this.queue.push(this.now + TICK, { k: 'unreachable', node: n, inc: n.inc, peer: m.to });
      }
      return;
    }
    const delays = this.net.deliveries();
    if (delays.length === 0) this.stats.messagesDropped++;
    if (delays.length > 1) this.stats.messagesDuplicated += delays.length - 1;
    for (const d of delays) this.queue.push(this.now + d, { k: 'deliver', msg: cloneMsg(m) });
  }

  private partition(kind: PartitionKind, target?: SimNode): void {
    let leader = target?.id;
    if (!leader && kind === 'leaderMinority') {
      const leaders = this.leaders();
      if (leaders.length > 0) leader = this.faults.pick(leaders).id;
    }
    const shape = this.net.partition(kind, this.faults, leader);
    const ticks = this.faults.range(this.profile.partitionTicks[0], this.profile.partitionTicks[1]);
    this.partitionHealAt = this.now + ticks * TICK;
    this.stats.partitions++;
    this.log(`PARTITION ${describePartition(shape)} for ${ticks} ticks`);
  }

  private heal(): void {
    this.net.heal();
    this.partitionHealAt = -1;
    this.log('HEAL partitions');
  }

  // ------------------------------------------------------------------------------------------------
  // Faults and workload

  private crash(n: SimNode, why: string): void {
    const unsynced = n.storage.unsyncedWrites;
    // Sometimes the outstanding write lands on disk even though the node dies before learning so.
    const keep = unsynced > 0 && this.faults.chance(0.25) ? unsynced : 0;
    const lost = unsynced - keep;
    this.stats.crashes++;
    if (lost > 0) this.stats.crashesLosingWrites++;
    n.storage.crash(keep);
    n.disk.crash(keep);
    n.raft = null;
    n.inc++;
    n.awaiting = null;
    n.armed = false;
    n.proposals.clear();
    this.log(`${n.id} CRASH (${why})${lost > 0 ? `, ${lost} unsynced write(s) lost` : ''}${keep > 0 ? ', unsynced write landed' : ''}`);
    if (this.phase === 'safety') {
      const down = this.faults.range(this.profile.downTicks[0], this.profile.downTicks[1]);
      this.queue.push(this.now + down * TICK, { k: 'restart', node: n, inc: n.inc });
    }
  }

  private upNodes(): SimNode[] {
    return this.nodes.filter((n) => n.raft);
  }

  private leaders(): SimNode[] {
    return this.nodes.filter((n) => n.raft && this.status(n).role === Role.Leader);
  }

  /** Expected count `rate` per tick: floor(rate) events plus one more with the fractional probability. */
  private count(rng: Prng, rate: number): number {
    const whole = Math.floor(rate);
    return whole + (rng.chance(rate - whole) ? 1 : 0);
  }

  private chaos(): void {
    const p = this.profile;
    const f = this.faults;
    if (this.partitionHealAt >= 0) {
      if (this.now >= this.partitionHealAt) this.heal();
    } else if (f.chance(p.partitionRate)) {
      this.partition(f.weighted(p.partitionKinds));
    }
    if (f.chance(p.crashAllRate)) {
      for (const n of this.upNodes()) this.crash(n, 'whole cluster');
    } else if (f.chance(p.crashRate)) {
      const up = this.upNodes();
      const leaders = this.leaders();
      if (up.length > 0) {
        const victim = leaders.length > 0 && f.chance(p.crashLeaderBias) ? f.pick(leaders) : f.pick(up);
        if (f.chance(p.crashBeforeSyncRate)) {
          victim.armed = true;
          this.log(`${victim.id} ARMED to crash during its next write`);
        } else {
          this.crash(victim, 'random');
        }
      }
    }
    const w = this.work;
    for (let k = this.count(w, p.proposalRate); k > 0; k--) this.propose();
    for (let k = this.count(w, p.readRate); k > 0; k--) this.read();
    if (w.chance(p.transferRate)) {
      const leaders = this.leaders();
      if (leaders.length > 0) {
        const l = w.pick(leaders);
        const to = w.pick(this.ids.filter((id) => id !== l.id));
        this.log(`${l.id} TRANSFER leadership to ${to}`);
        try {
          l.raft!.transferLeadership(to);
        } catch (e) {
          if (!(e instanceof ProposalDroppedError)) throw coreError(l, 'transferLeadership()', e);
        }
        this.afterNodeEvent(l);
      }
    }
    if (w.chance(p.campaignRate)) {
      const up = this.upNodes();
      if (up.length > 0) {
        const n = w.pick(up);
        this.log(`${n.id} CAMPAIGN (forced)`);
        this.core(n, 'campaign()', (r) => r.campaign());
        this.afterNodeEvent(n);
      }
    }
  }

  private propose(value = `v${this.seed}.${++this.proposalSeq}`, target?: SimNode): boolean {
    if (!target) {
      const up = this.upNodes();
      if (up.length === 0) return false;
      const leaders = this.leaders();
      target = leaders.length > 0 && this.work.chance(0.85) ? this.work.pick(leaders) : this.work.pick(up);
    }
    let accepted = false;
    try {
      const r = target.raft!.propose(encodeValue(value));
      target.proposals.set(r.index, { term: r.term, value });
      this.stats.proposals++;
      accepted = true;
      if (this.trace) this.log(`${target.id} PROPOSE ${value} -> index ${r.index} term ${r.term}`);
    } catch (e) {
      if (!(e instanceof ProposalDroppedError)) throw coreError(target, 'propose()', e);
      this.stats.proposalsRefused++;
    }
    this.afterNodeEvent(target);
    return accepted;
  }

  private read(): void {
    const up = this.upNodes();
    if (up.length === 0) return;
    const leaders = this.leaders();
    const n = leaders.length > 0 && this.work.chance(0.6) ? this.work.pick(leaders) : this.work.pick(up);
    const ctx = `r${this.seed}.${++this.readSeq}`;
    this.checker.onReadRequest(ctx);
    this.stats.reads++;
    try {
      n.raft!.readIndex(encodeValue(ctx));
    } catch (e) {
      if (!(e instanceof ProposalDroppedError)) throw coreError(n, 'readIndex()', e);
    }
    this.afterNodeEvent(n);
  }

  // ------------------------------------------------------------------------------------------------
  // Liveness

  private enterLiveness(): void {
    this.phase = 'liveness';
    this.profile = healed(this.baseProfile);
    this.net.profile = this.profile;
    this.liveness = { start: this.now, done: false };
    this.log('=== LIVENESS: faults healed, crashed nodes restart ===');
    this.heal();
    for (const n of this.nodes) {
      if (!n.raft) {
        this.stats.restarts++;
        this.boot(n, true);
      }
    }
  }

  private noteMarker(n: SimNode, value: string): void {
    if (!value.startsWith('live-')) return;
    let s = this.markerSeen.get(value);
    if (!s) this.markerSeen.set(value, (s = new Set()));
    s.add(n.id);
  }

  private livenessStep(): void {
    const st = this.nodes.map((n) => this.status(n));
    const leaders = st.filter((s) => s.role === Role.Leader);
    if (leaders.length !== 1) return;
    const l = leaders[0]!;
    if (!st.every((s) => s.term === l.term && s.leader === l.id)) return;
    const lv = this.liveness;
    const stale = lv.marker && (lv.marker.leader !== l.id || lv.marker.term !== l.term || this.now - lv.marker.at > 30 * TICK);
    if (!lv.marker || stale) {
      const value = `live-${this.seed}.${++this.proposalSeq}`;
      if (this.propose(value, this.byId.get(l.id)!)) lv.marker = { value, leader: l.id, term: l.term, at: this.now };
      return;
    }
    const seen = this.markerSeen.get(lv.marker.value);
    if (!seen || seen.size < this.size) return;
    const applied = this.nodes.map((n) => n.app.appliedIndex);
    if (!applied.every((a) => a === applied[0]) || st.some((s) => s.commit !== applied[0])) return;
    lv.done = true;
    this.stats.livenessTicks = Math.round((this.now - lv.start) / TICK);
    this.log(`LIVENESS OK after ${this.stats.livenessTicks} ticks: leader ${l.id} term ${l.term}, all applied ${applied[0]}`);
  }

  private failLiveness(): void {
    const desc = this.nodes
      .map((n) => {
        const s = this.status(n);
        let line = `${n.id}: ${s.role} term ${s.term} leader '${s.leader}' commit ${s.commit} applied ${n.app.appliedIndex} last ${s.lastIndex} snapshot ${s.snapshotIndex}`;
        if (s.role === Role.Leader && s.progress) {
          const prs = Object.entries(s.progress).filter(([id]) => id !== n.id);
          line += ` progress {${prs.map(([id, p]) => `${id}: ${p.state} match ${p.match} next ${p.next}${p.inflight !== undefined ? ` inflight ${p.inflight}` : ''}`).join(', ')}}`;
        }
        return line;
      })
      .join('; ');
    const marker = this.liveness.marker
      ? `marker ${this.liveness.marker.value} applied on ${[...(this.markerSeen.get(this.liveness.marker.value) ?? [])].join(',') || 'none'}`
      : 'no marker accepted';
    throw new InvariantViolation('Liveness', `no convergence within ${this.livenessTicks} healed ticks (${marker}): ${desc}`);
  }

  private finalChecks(): void {
    const ref = JSON.stringify(this.nodes[0]!.app.values);
    for (const n of this.nodes) {
      if (JSON.stringify(n.app.values) !== ref) {
        throw new InvariantViolation('Convergence', `${n.id}'s applied sequence differs from ${this.nodes[0]!.id}'s`);
      }
    }
    const final = new Map(this.nodes[0]!.app.values.map(([i, v]) => [i, v]));
    for (const [value, index] of this.acked) {
      if (final.get(index) !== value) {
        throw new InvariantViolation('AckedLost', `acknowledged ${value} at index ${index} is not in the final sequence`);
      }
    }
  }
}

/** An exception out of the core is a finding (the core throws only on a broken invariant or misuse). */
function coreError(n: SimNode, what: string, e: unknown): InvariantViolation {
  if (e instanceof InvariantViolation) return e;
  const msg = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  return new InvariantViolation('CoreError', `${n.id}.${what} threw ${msg}`);
}

function describePersisted(p: PersistedState): string {
  const hs = p.hardState;
  const snap = p.snapshot ? `${p.snapshot.meta.index}/${p.snapshot.meta.term}` : '-';
  const ents = p.entries.map((e) => `${e.index}/${e.term}/${e.type}:${Buffer.from(e.data).toString('hex')}`).join(',');
  return `{hs ${hs.term}/'${hs.vote}'/${hs.commit} snap ${snap} entries [${ents}]}`;
}

function cloneMsg(m: Message): Message {
  return { ...m, entries: m.entries.map((e) => ({ ...e })) };
}

export function fmtMsg(m: Message): string {
  let s = `${MessageType[m.type] ?? m.type} ${m.from}->${m.to} t${m.term}`;
  switch (m.type) {
    case MessageType.App:
      s += ` prev ${m.index}/${m.logTerm} ents ${m.entries.length ? `${m.entries[0]!.index}..${m.entries[m.entries.length - 1]!.index}` : '-'}`;
      s += ` [${m.entries.map((e) => e.term).join(',')}] commit ${m.commit}`;
      break;
    case MessageType.AppResp:
      s += m.reject ? ` REJECT ${m.index} hint ${m.rejectHint}/${m.logTerm}` : ` ok ${m.index}`;
      break;
    case MessageType.Vote:
    case MessageType.PreVote:
      s += ` last ${m.index}/${m.logTerm}`;
      break;
    case MessageType.VoteResp:
    case MessageType.PreVoteResp:
      s += m.reject ? ' REJECT' : ' GRANT';
      break;
    case MessageType.Heartbeat:
      s += ` commit ${m.commit}`;
      break;
    case MessageType.Snap:
      s += ` snap ${m.snapshotMeta?.index}/${m.snapshotMeta?.term} off ${m.snapshotOffset}${m.snapshotDone ? ' done' : ''}`;
      break;
    case MessageType.SnapResp:
      s += ` ${m.reject ? 'REJECT ' : ''}${m.index}`;
      break;
    default:
      if (m.reject) s += ' REJECT';
  }
  return s;
}

function fmtReady(rd: Ready): string {
  const parts: string[] = [];
  if (rd.softState) parts.push(`${rd.softState.role} (leader '${rd.softState.leader}')`);
  if (rd.hardState) parts.push(`hs t${rd.hardState.term} v'${rd.hardState.vote}' c${rd.hardState.commit}`);
  if (rd.snapshot) parts.push(`snapshot ${rd.snapshot.meta.index}/${rd.snapshot.meta.term}`);
  if (rd.entries.length) {
    parts.push(`entries ${rd.entries[0]!.index}..${rd.entries[rd.entries.length - 1]!.index} [${rd.entries.map((e) => e.term).join(',')}]`);
  }
  if (rd.committedEntries.length) {
    parts.push(`apply ${rd.committedEntries[0]!.index}..${rd.committedEntries[rd.committedEntries.length - 1]!.index}`);
  }
  if (rd.messages.length) parts.push(`msgs ${rd.messages.length}`);
  if (rd.messagesAfterPersist.length) parts.push(`after-persist ${rd.messagesAfterPersist.length}`);
  if (rd.readStates.length) parts.push(`reads ${rd.readStates.map((r) => r.index).join(',')}`);
  return parts.join(', ') || '(empty)';
}

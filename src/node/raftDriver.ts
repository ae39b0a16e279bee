import { EventEmitter } from 'node:events';
import { ProposalDroppedError, RawNode, decodeConfigEntry, type ConfChange, type FullConfig } from '../raft';
import { invariant } from '../raft/errors';
import type { RaftConfig } from '../raft/config';
import { EntryType, Role, type Entry, type HardState, type Message, type NodeId, type Ready } from '../raft/types';
import { crc32 } from '../storage/checksum';
import type { RaftStorage } from '../storage/types';
import type { PeerTransport } from '../transport/peerTransport';

export type { PeerTransport };
import type { Logger } from './logger';
import type { DriverMetrics } from './metrics/driverMetrics';
import type { ReplicatedApp, SnapshotJob } from './replicatedApp';
import type { NodePorts, TimerHandle } from './runtime/ports';

/** This node does not lead: the client retries at the leader (requests carry ids, so it is safe). */
export class NotLeaderError extends Error {
  constructor(
    readonly leader: NodeId,
    message = 'this node is not the leader',
  ) {
    super(message);
    this.name = 'NotLeaderError';
  }
}

/**
 * This node stopped (shutdown, or a storage or apply failure): a proposal in flight may or may not have
 * committed, so the client retries elsewhere with the same request id.
 */
export class NodeStoppedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NodeStoppedError';
  }
}

/** The entry may or may not have committed (leadership changed under it): only a retry with the same id tells. */
export class OutcomeUnknownError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OutcomeUnknownError';
  }
}

/**
 * ReadIndex contexts are 128 random bits: a peer cannot guess the context of a read in flight (to answer it
 * with a forged ReadIndexResp or heartbeat acknowledgement), nor learn anything from one it saw.
 */
const READ_CONTEXT_BYTES = 16;


export interface DriverOptions<Result> {
  raft: RaftConfig;
  storage: RaftStorage;
  transport: PeerTransport;
  app: ReplicatedApp<Result>;
  tickMs: number;
  snapshotEveryEntries: number;
  logger: Logger;
  /** Time, timers and randomness (ReadIndex contexts): real in the server, virtual in the simulator. */
  ports: NodePorts;
  /** Defects re-introduced on purpose, only by the simulator, to show that it catches them. */
  plantedBugs?: DriverBugs;
  /** What only the driver sees (docs/metrics.md). */
  metrics?: DriverMetrics;
}

/** Fixed defects the simulator can plant again (see test/nodesim). Never set outside it. */
export interface DriverBugs {
  /** One tick per timer firing, however long the event loop stalled (the old setInterval ticker). */
  tickPerTimer?: boolean;
  /** Compact while a snapshot from the leader waits to be installed (a follower then stopped). */
  compactDuringPendingSnapshot?: boolean;
  /** A core with a Raft rule broken (test/support/brokenRawNode.ts). */
  brokenCore?: typeof RawNode;
}

export interface Applied<Result> {
  index: number;
  result: Result;
}

interface PendingProposal<Result> {
  term: number;
  resolve: (applied: Applied<Result>) => void;
  reject: (err: Error) => void;
}

/** A snapshot of the app being encoded between turns of the Ready loop, then compacted into the log. */
interface SnapshotWork {
  readonly job: SnapshotJob;
  /** The applied index it captures. */
  readonly index: number;
  readonly startedMs: number;
  readonly captureMs: number;
  slices: number;
  longestSliceMs: number;
  /** The bytes, once encoded: the Ready loop compacts the log with them. */
  data?: Uint8Array;
}

interface PendingRead {
  resolve: () => void;
  reject: (err: Error) => void;
  /** Set once the leader confirmed the read: it completes when applied reaches this index. */
  readIndex?: number;
}

/**
 * Drives one RawNode in real time: ticks it, feeds it peer messages, and runs the Ready loop
 * (send, persist with one synced batch, send acknowledgements, apply, advance).
 *
 * Group commit falls out of the loop: while one batch is being fsynced, proposals and messages pile up
 * in the core, and the next Ready carries them all as one batch, one fsync and one append per follower.
 *
 * Events: 'role' (role, leader, term) on every change; 'applied' (index) after each run of applied entries;
 * 'config' (FullConfig) when the configuration in force changes (an entry appended, a snapshot installed);
 * 'removed' (index) once a committed configuration leaves this node out.
 */
export class RaftDriver<Result> extends EventEmitter {
  readonly core: RawNode;
  private readonly opts: DriverOptions<Result>;
  private readonly pendingProposals = new Map<number, PendingProposal<Result>>();
  private readonly pendingReads = new Map<string, PendingRead>();
  private readonly confirmedReads: PendingRead[] = [];
  private ticker: TimerHandle | undefined;
  /** Monotonic time up to which ticks were delivered: a stalled event loop gets the ticks it missed. */
  private tickedUntil = 0;
  private loopRunning = false;
  private loopEnded: (() => void) | undefined;
  private loopAgain = false;
  private stopped = false;
  private fatal: Error | undefined;
  private lastSnapshotIndex: number;
  /** The role the last 'role' event announced: losing leadership fails what the old term had pending. */
  private reportedRole: Role = Role.Follower;
  /** A hard state that changed only its commit index, not yet written (see persist()). */
  private deferredHardState: HardState | undefined;
  /** The snapshot being encoded or waiting to be compacted into the log (one at a time). */
  private snapshotWork: SnapshotWork | undefined;
  /** The configuration the last 'config' event announced. */
  private announcedConfig: FullConfig;

  private constructor(opts: DriverOptions<Result>, core: RawNode, snapshotIndex: number) {
    super();
    this.opts = opts;
    this.core = core;
    this.lastSnapshotIndex = snapshotIndex;
    this.announcedConfig = core.config();
  }

  /** Loads durable state, restores the app from the stored snapshot and starts ticking. */
  static async start<Result>(opts: DriverOptions<Result>): Promise<RaftDriver<Result>> {
    const persisted = await opts.storage.load();
    if (persisted.snapshot) opts.app.restore(persisted.snapshot.data);
    const { app, logger } = opts;
    const Core = opts.plantedBugs?.brokenCore ?? RawNode;
    const node = new Core(
      {
        // Native CRC-32, the same function as the core's pure default.
        checksum: crc32,
        ...opts.raft,
        // A snapshot from the leader is decoded fully before storage sees it (see RaftConfig).
        validateSnapshot: (snap) => {
          app.validateSnapshot(snap.data);
          return true;
        },
        onRefused: (reason, from) => logger.warn({ from, reason }, 'refused a message from a peer'),
      },
      persisted,
    );
    const driver = new RaftDriver(opts, node, persisted.snapshot?.meta.index ?? 0);
    opts.transport.onMessages((msgs) => driver.receive(msgs));
    opts.transport.onUnreachable((peer) => {
      if (!driver.stopped) driver.core.reportUnreachable(peer);
    });
    driver.tickedUntil = opts.ports.clock.monotonicMs();
    driver.armTicker();
    driver.schedule();
    return driver;
  }

  get id(): NodeId {
    return this.opts.raft.id;
  }

  isLeader(): boolean {
    return this.core.basicStatus().role === Role.Leader;
  }

  leaderId(): NodeId {
    return this.core.basicStatus().leader;
  }

  currentRole(): Role {
    return this.core.basicStatus().role;
  }

  /**
   * This node leads and has applied an entry of its current term (its no-op at least): its state includes
   * every entry committed before its term.
   */
  hasAppliedOwnTerm(): boolean {
    const st = this.core.basicStatus();
    return st.role === Role.Leader && st.appliedTerm === st.term;
  }

  /**
   * This node leads and heard from a quorum within an election timeout: it may acknowledge lease renewals.
   * Ticks due are delivered first, so a leader that just woke from a stall steps down before it answers
   * the renewals that piled up meanwhile.
   */
  leadsWithQuorumContact(): boolean {
    if (!this.isLeader()) return false;
    if (!this.opts.plantedBugs?.tickPerTimer) this.deliverDueTicks();
    return this.core.quorumActive();
  }

  currentTerm(): number {
    return this.core.basicStatus().term;
  }

  /** An election timeout in ms: how long a deposed leader may still believe it leads (check-quorum). */
  electionTimeoutMs(): number {
    return this.opts.raft.electionTicks * this.opts.tickMs;
  }

  /** Proposals waiting to be applied (for metrics). */
  pendingProposalCount(): number {
    return this.pendingProposals.size;
  }

  /** Linearizable reads waiting for confirmation or for their index to be applied (for metrics). */
  pendingReadCount(): number {
    return this.pendingReads.size + this.confirmedReads.length;
  }

  /** Proposes data; resolves with the entry's index and the app's result once it is applied on this node. */
  propose(data: Uint8Array): Promise<Applied<Result>> {
    return this.submit(() => this.core.propose(data));
  }

  /**
   * Proposes one membership change (see RawNode.proposeConfChange); resolves with its index once it is
   * applied here. A change that cannot be made rejects with ConfChangeRefusedError.
   */
  proposeConfChange(change: ConfChange): Promise<number> {
    return this.submit(() => {
      const slot = this.core.proposeConfChange(change);
      this.noticeConfig();
      return slot;
    }).then((applied) => applied.index);
  }

  /** Appends one entry with `append` and waits for it to apply; a refusal of the core is NotLeaderError. */
  private submit(append: () => { index: number; term: number }): Promise<Applied<Result>> {
    if (this.stopped) return Promise.reject(this.stoppedError());
    let slot: { index: number; term: number };
    try {
      slot = append();
    } catch (err) {
      if (err instanceof ProposalDroppedError) return Promise.reject(new NotLeaderError(this.leaderId(), err.message));
      return Promise.reject(err as Error);
    }
    this.schedule();
    return new Promise<Applied<Result>>((resolve, reject) => {
      this.pendingProposals.set(slot.index, { term: slot.term, resolve, reject });
    });
  }

  /** The configuration in force. */
  config(): FullConfig {
    return this.core.config();
  }

  /**
   * Whether a committed configuration removed `id`. The one in force is committed unless a change is
   * pending; names are never given again, so the answer never turns back to false.
   */
  removedByCommittedConfig(id: NodeId): boolean {
    return !this.core.confChangePending() && this.core.config().removed.includes(id);
  }

  /** Hands leadership to the most up-to-date other voter; resolves once this node no longer leads (or on time-out). */
  async handOver(timeoutMs: number): Promise<void> {
    if (this.isLeader()) await this.transferLeadershipAway(timeoutMs);
  }

  /** Resolves once this node's state reflects every write committed before the call (ReadIndex). */
  linearizableRead(): Promise<void> {
    if (this.stopped) return Promise.reject(this.stoppedError());
    if (!this.isLeader()) return Promise.reject(new NotLeaderError(this.leaderId()));
    const context = this.opts.ports.random.bytes(READ_CONTEXT_BYTES);
    const id = Buffer.from(context).toString('hex');
    if (context.byteLength < READ_CONTEXT_BYTES || this.pendingReads.has(id)) {
      return Promise.reject(new Error('read context source returned too few or repeated bytes'));
    }
    try {
      this.core.readIndex(context);
    } catch (err) {
      return Promise.reject(err instanceof ProposalDroppedError ? new NotLeaderError(this.leaderId(), err.message) : err);
    }
    this.schedule();
    return new Promise<void>((resolve, reject) => this.pendingReads.set(id, { resolve, reject }));
  }

  /** Graceful stop: hands leadership over when leading, finishes the batch in flight, stops ticking. */
  async stop(transferTimeoutMs = 2_000): Promise<void> {
    if (this.stopped) return;
    if (this.isLeader()) await this.transferLeadershipAway(transferTimeoutMs);
    this.stopped = true;
    this.opts.ports.timers.clearTimeout(this.ticker);
    if (this.loopRunning) await new Promise<void>((resolve) => (this.loopEnded = resolve));
    this.dropSnapshotWork();
    await this.flushDeferred();
    this.failPending(this.stoppedError());
  }

  private stoppedError(): NodeStoppedError {
    return new NodeStoppedError(this.fatal ? 'this node stopped after a storage or apply failure' : 'this node is shutting down');
  }

  private async transferLeadershipAway(timeoutMs: number): Promise<void> {
    const st = this.core.status();
    // Voters only: a learner cannot be elected.
    // Only a voter being replicated to: a peer whose stream ended (a stopping or dead node, reported
    // unreachable and back in probe) cannot take over, and waiting for it would only delay this stop.
    const candidates = Object.entries(st.progress ?? {})
      .filter(([id, pr]) => id !== this.id && st.config.voters.includes(id) && pr.state === 'replicate')
      .sort((a, b) => b[1].match - a[1].match);
    const target = candidates[0]?.[0];
    if (target === undefined) {
      this.opts.logger.info('no voter is being replicated to: stopping without a leadership transfer');
      return;
    }
    this.opts.logger.info({ target }, 'transferring leadership before shutdown');
    this.core.transferLeadership(target);
    this.schedule();
    const { clock, timers } = this.opts.ports;
    const deadline = clock.monotonicMs() + timeoutMs;
    while (this.isLeader() && clock.monotonicMs() < deadline) await new Promise<void>((r) => timers.setTimeout(r, 10));
  }

  private armTicker(): void {
    this.ticker = this.opts.ports.timers.setTimeout(() => this.onTickTimer(), this.opts.tickMs);
  }

  /**
   * Ticks follow elapsed monotonic time: after a stall of D ms the core gets D / tickMs ticks at once, so a
   * deposed leader's check-quorum steps down as soon as it runs again instead of one tick later per stall.
   */
  private onTickTimer(): void {
    if (this.stopped) return;
    if (this.opts.plantedBugs?.tickPerTimer) {
      this.tickedUntil = this.opts.ports.clock.monotonicMs();
      this.core.tick();
    } else {
      this.deliverDueTicks();
    }
    this.armTicker();
    this.schedule();
  }

  /** Ticks the core once per tickMs of monotonic time elapsed since the last tick delivered. */
  private deliverDueTicks(): void {
    const { tickMs } = this.opts;
    const ticks = Math.floor((this.opts.ports.clock.monotonicMs() - this.tickedUntil) / tickMs);
    if (ticks <= 0 || this.stopped) return;
    this.tickedUntil += ticks * tickMs;
    for (let i = 0; i < ticks; i++) this.core.tick();
    this.schedule();
  }

  private receive(messages: Message[]): void {
    if (this.stopped) return;
    for (const m of messages) this.core.step(m);
    if (this.loopRunning && this.isLeader()) {
      try {
        this.applyEarly();
      } catch (err) {
        this.die(err as Error);
        return;
      }
    }
    this.schedule();
  }

  /**
   * While the Ready loop waits for an fsync, acknowledgements that commit entries are applied (and their
   * proposals answered) at once rather than after that fsync and the next Ready.
   */
  private applyEarly(): void {
    const entries = this.core.takeCommittedEntries();
    if (entries.length === 0) return;
    this.applyCommitted(entries);
    this.releaseReads();
  }

  /** Runs the Ready loop on a later turn, so that everything arriving in this turn joins one batch. */
  private schedule(): void {
    if (this.loopRunning) {
      this.loopAgain = true;
      return;
    }
    if (this.stopped || this.fatal) return;
    this.loopRunning = true;
    this.opts.ports.timers.defer(() => void this.runLoop());
  }

  private async runLoop(): Promise<void> {
    try {
      do {
        this.loopAgain = false;
        await this.compactIfEncoded();
        while (!this.stopped && this.core.hasReady()) {
          await this.handleReady(this.core.ready());
          await this.compactIfEncoded();
        }
      } while (this.loopAgain && !this.stopped);
    } catch (err) {
      this.die(err as Error);
    } finally {
      this.loopRunning = false;
      this.loopEnded?.();
    }
  }

  /**
   * A failed fsync leaves the durable state unknown, and a failed apply leaves the state machine half
   * changed: continuing could acknowledge what was never stored, or answer from a broken state.
   */
  private die(err: Error): void {
    if (this.fatal) return;
    this.fatal = err;
    this.opts.logger.fatal({ err }, 'the Ready loop failed (storage or apply); stopping this node');
    this.stopped = true;
    this.opts.ports.timers.clearTimeout(this.ticker);
    this.dropSnapshotWork();
    this.failPending(this.stoppedError());
    this.emit('fatal', err);
  }

  private async handleReady(rd: Ready): Promise<void> {
    const { transport, app } = this.opts;
    // Before sending: the transport must know a member the configuration just added.
    this.noticeConfig();
    if (rd.messages.length > 0) {
      transport.send(rd.messages);
      transport.flush?.();
    }
    if (rd.snapshot) {
      // The snapshot replaces the state the committed entries build on: store it, restore, then apply.
      await this.persist(rd);
      // Our own snapshot in the making is of the state being replaced, and older than the leader's.
      this.dropSnapshotWork();
      app.restore(rd.snapshot.data);
      this.lastSnapshotIndex = rd.snapshot.meta.index;
      this.dropProposalsUpTo(rd.snapshot.meta.index);
      this.applyCommitted(rd.committedEntries);
    } else {
      // Committed entries are durable on a majority already, so they are applied while this Ready's new
      // entries are being synced: under load the answers no longer wait for the next batch's fsync.
      const persisting = this.persist(rd);
      try {
        this.applyCommitted(rd.committedEntries);
      } finally {
        await persisting;
      }
    }
    if (rd.messagesAfterPersist.length > 0) {
      transport.send(rd.messagesAfterPersist);
      transport.flush?.();
    }
    for (const rs of rd.readStates) {
      const id = Buffer.from(rs.context).toString('hex');
      const read = this.pendingReads.get(id);
      if (!read) continue;
      this.pendingReads.delete(id);
      read.readIndex = rs.index;
      this.confirmedReads.push(read);
    }
    this.core.advance(rd);
    this.noticeConfig();
    if (rd.softState) this.onSoftState(rd.softState.role, rd.softState.leader);
    this.releaseReads();
    const { applied } = this.core.basicStatus();
    if (applied - this.lastSnapshotIndex >= this.opts.snapshotEveryEntries) this.startSnapshot(applied);
  }

  /** Applies committed entries in order, settles their proposals and reports them applied to the core. */
  private applyCommitted(entries: Entry[]): void {
    if (entries.length === 0) return;
    let expected = this.core.basicStatus().applied + 1;
    for (const entry of entries) {
      invariant(entry.index === expected, () => `applying entry ${entry.index}, expected ${expected}`);
      expected++;
      const pending = this.pendingProposals.get(entry.index);
      if (pending) this.pendingProposals.delete(entry.index);
      if (entry.data.length === 0) {
        // A leader's no-op took this index: whatever was proposed here under an older term is gone.
        pending?.reject(new OutcomeUnknownError('leadership changed before the entry committed'));
        continue;
      }
      // A configuration is the core's business; the app never sees it (its index is no token).
      const result = entry.type === EntryType.ConfChange ? this.configCommitted(entry) : this.opts.app.apply(entry.index, entry.data);
      if (pending) {
        if (pending.term === entry.term) pending.resolve({ index: entry.index, result });
        else pending.reject(new OutcomeUnknownError('leadership changed before the entry committed'));
      }
    }
    const last = expected - 1;
    this.core.appliedTo(last);
    this.emit('applied', last);
  }

  private configCommitted(entry: Entry): Result {
    const config = decodeConfigEntry(entry.data);
    invariant(typeof config !== 'string', () => `committed configuration at ${entry.index} is malformed`);
    this.opts.logger.info({ index: entry.index, voters: config.voters, learners: config.learners }, 'membership change committed');
    // `removed` and not just absent: a node that joins replays the configurations from before it was added.
    if (config.removed.includes(this.id)) this.emit('removed', entry.index);
    // Nothing to hand back: proposeConfChange resolves with the index alone.
    return undefined as Result;
  }

  private noticeConfig(): void {
    const config = this.core.config();
    if (config === this.announcedConfig) return;
    this.announcedConfig = config;
    this.emit('config', config);
  }

  /**
   * Makes the Ready durable with one synced batch. A hard state whose only change is the commit index is not
   * worth an fsync of its own (a restarted node learns the commit index again from the leader): it is kept
   * and written with the next batch that has to be synced anyway, or at shutdown.
   */
  private async persist(rd: Ready): Promise<void> {
    if (!rd.mustSync) {
      if (rd.hardState) this.deferredHardState = rd.hardState;
      return;
    }
    const hardState = rd.hardState ?? this.deferredHardState;
    this.deferredHardState = undefined;
    await this.opts.storage.persist({ hardState, entries: rd.entries, snapshot: rd.snapshot });
  }

  /** Writes a deferred commit index before the node stops, so a clean restart resumes where it was. */
  private async flushDeferred(): Promise<void> {
    if (!this.deferredHardState || this.fatal) return;
    const hardState = this.deferredHardState;
    this.deferredHardState = undefined;
    await this.opts.storage.persist({ hardState, entries: [] });
  }

  private releaseReads(): void {
    if (this.confirmedReads.length === 0) return;
    const { applied } = this.core.basicStatus();
    const waiting: PendingRead[] = [];
    for (const read of this.confirmedReads) {
      if (read.readIndex !== undefined && read.readIndex <= applied) read.resolve();
      else waiting.push(read);
    }
    this.confirmedReads.length = 0;
    this.confirmedReads.push(...waiting);
  }

  /**
   * Captures the app's state at `applied` and encodes it a slice at a time on later turns, so the Ready loop
   * (heartbeats, appends, answers) keeps running while a large state is encoded. The loop compacts the log
   * once the bytes are ready (compactIfEncoded).
   */
  private startSnapshot(applied: number): void {
    if (this.snapshotWork !== undefined || this.mustWaitForLeaderSnapshot()) return;
    const { clock } = this.opts.ports;
    const startedMs = clock.monotonicMs();
    const job = this.opts.app.captureSnapshot();
    const work: SnapshotWork = { job, index: applied, startedMs, captureMs: clock.monotonicMs() - startedMs, slices: 0, longestSliceMs: 0 };
    this.snapshotWork = work;
    this.encodeSlice(work);
  }

  private encodeSlice(work: SnapshotWork): void {
    if (this.snapshotWork !== work || this.stopped) return;
    const { clock, timers } = this.opts.ports;
    const started = clock.monotonicMs();
    let done: boolean;
    try {
      done = work.job.step();
    } catch (err) {
      this.die(err as Error);
      return;
    }
    work.slices++;
    work.longestSliceMs = Math.max(work.longestSliceMs, clock.monotonicMs() - started);
    if (!done) {
      timers.defer(() => this.encodeSlice(work));
      return;
    }
    work.data = work.job.bytes();
    this.schedule();
  }

  /**
   * A snapshot from the leader is installed by the next Ready: compacting now would hand storage that
   * snapshot (the core's latest) as if it were ours, before its entries are stored. Compact after it.
   */
  private mustWaitForLeaderSnapshot(): boolean {
    return this.core.hasPendingSnapshot() && !this.opts.plantedBugs?.compactDuringPendingSnapshot;
  }

  /** Compacts the log up to an encoded snapshot, between Readys (nothing is being persisted meanwhile). */
  private async compactIfEncoded(): Promise<void> {
    const work = this.snapshotWork;
    if (work?.data === undefined || this.stopped || this.mustWaitForLeaderSnapshot()) return;
    this.snapshotWork = undefined;
    if (work.index <= this.lastSnapshotIndex) return;
    const data = work.data;
    // The core keeps the snapshot to send to lagging followers; storage keeps it for restarts. A crash
    // between the two leaves the full log on disk, which is still correct.
    const snapshot = this.core.compact(work.index, data);
    await this.opts.storage.saveSnapshot(snapshot);
    this.lastSnapshotIndex = work.index;
    this.opts.metrics?.snapshotTaken((this.opts.ports.clock.monotonicMs() - work.startedMs) / 1000, data.length);
    const ms = (x: number): number => Math.round(x * 10) / 10;
    this.opts.logger.info(
      {
        index: work.index,
        bytes: data.length,
        captureMs: ms(work.captureMs),
        encodeMs: ms(this.opts.ports.clock.monotonicMs() - work.startedMs),
        slices: work.slices,
        longestSliceMs: ms(work.longestSliceMs),
      },
      'snapshot taken, log compacted',
    );
  }

  /** Gives up the snapshot being encoded or waiting to be compacted. */
  private dropSnapshotWork(): void {
    this.snapshotWork?.job.cancel();
    this.snapshotWork = undefined;
  }

  private onSoftState(role: Role, leader: NodeId): void {
    const before = this.reportedRole;
    this.reportedRole = role;
    const { term } = this.core.basicStatus();
    this.opts.logger.info({ role, leader, term }, 'role changed');
    if (before === Role.Leader && role !== Role.Leader) {
      // Proposals of the old term may still commit, or not: the client learns which by retrying its request id.
      for (const p of this.pendingProposals.values()) p.reject(new OutcomeUnknownError('leadership lost before the entry was applied'));
      this.pendingProposals.clear();
      // Reads confirmed by the old term can no longer be trusted to be the latest.
      const err = new NotLeaderError(leader, 'leadership lost');
      for (const read of this.pendingReads.values()) read.reject(err);
      this.pendingReads.clear();
      for (const read of this.confirmedReads) read.reject(err);
      this.confirmedReads.length = 0;
    }
    this.emit('role', role, leader, term);
  }

  private dropProposalsUpTo(index: number): void {
    for (const [i, pending] of this.pendingProposals) {
      if (i <= index) {
        pending.reject(new OutcomeUnknownError('replaced by a snapshot; retry to learn the outcome'));
        this.pendingProposals.delete(i);
      }
    }
  }

  private failPending(err: Error): void {
    for (const p of this.pendingProposals.values()) p.reject(err);
    this.pendingProposals.clear();
    for (const r of this.pendingReads.values()) r.reject(err);
    this.pendingReads.clear();
    for (const r of this.confirmedReads) r.reject(err);
    this.confirmedReads.length = 0;
  }
}

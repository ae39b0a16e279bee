// The Raft consensus core (Raft paper + thesis: pre-vote, check-quorum, ReadIndex, leadership transfer,
// chunked InstallSnapshot), as a pure state machine in the style of etcd-io/raft's RawNode.
//
// Inputs: tick(), step(message), propose(), readIndex(), transferLeadership(), compact().
// Output: Ready batches (see types.ts for the order in which the caller must handle them), then advance().
// No clock, timers, randomness or I/O: time is tick(), randomness is config.random.

import { RAFT_DEFAULTS, type RaftConfig } from './config';
import { applyConfChange, configProblem, decodeConfigEntry, encodeConfigEntry, fullConfig, isMember, type ConfChange, type FullConfig } from './confChange';
import { ConfChangeRefusedError, invariant, ProposalDroppedError } from './errors';
import { Membership } from './membership';
import {
  EMPTY_BYTES,
  isAdoptableTerm,
  isVoteRequest,
  isWellFormed,
  sentAfterPersist,
  voteResponseType,
} from './messages';
import { Progress, type ProgressStateKind, type SnapshotState } from './progress';
import { committedIndex, quorumSize, voteResult } from './quorum';
import { entryBytes, RaftLog } from './raftLog';
import { ReadOnly } from './readOnly';
import { SnapshotReceiver } from './snapshotReceiver';
import {
  EntryType,
  MessageType,
  NONE,
  RAFT_NUMBER_LIMIT,
  Role,
  type AppendRequest,
  type AppendResponse,
  type Entry,
  type HardState,
  type HeartbeatRequest,
  type HeartbeatResponse,
  type Message,
  type NodeId,
  type PersistedState,
  type ReadState,
  type Ready,
  type Snapshot,
  type SnapshotChunk,
  type SnapshotMeta,
  type SnapshotResponse,
  type SoftState,
  type VoteRequest,
} from './types';

export interface ProgressStatus {
  match: number;
  next: number;
  state: ProgressStateKind;
  /** App messages in flight (replicate state). */
  inflight: number;
}

export interface BasicStatus {
  id: NodeId;
  term: number;
  vote: NodeId;
  commit: number;
  applied: number;
  /** Term of the entry at `applied` (of the snapshot when it is the snapshot's index; 0 before any). */
  appliedTerm: number;
  leader: NodeId;
  role: Role;
  lastIndex: number;
  snapshotIndex: number;
  stableIndex: number;
  /** Target of a leadership transfer in progress, or NONE. */
  leadTransferee: NodeId;
  /** Peer messages dropped because they contradict the protocol (forged or corrupt), since start. */
  refusedMessages: number;
}

export interface RaftStatus extends BasicStatus {
  /** Per member (voters and learners), including the leader itself; empty unless leader. */
  progress: Record<NodeId, ProgressStatus>;
  /** The configuration in force: that of the last ConfChange entry in the log. */
  config: FullConfig;
}

type ResolvedConfig = Required<RaftConfig>;

function resolveConfig(c: RaftConfig): ResolvedConfig {
  const r: ResolvedConfig = {
    ...RAFT_DEFAULTS,
    ...Object.fromEntries(Object.entries(c).filter(([, v]) => v !== undefined)),
  } as unknown as ResolvedConfig;
  r.maxInflightBytes ??= r.maxInflight * r.maxMsgBytes;
  const positive = (x: number) => Number.isSafeInteger(x) && x >= 1;
  if (r.id === NONE) throw new Error('RaftConfig.id must not be empty');
  if (!positive(r.electionTicks) || !positive(r.heartbeatTicks) || r.heartbeatTicks >= r.electionTicks) {
    throw new Error('RaftConfig needs 1 <= heartbeatTicks < electionTicks');
  }
  for (const k of [
    'maxMsgBytes',
    'maxInflight',
    'maxInflightBytes',
    'maxUncommittedEntries',
    'snapshotChunkBytes',
    'maxSnapshotBytes',
    'snapshotInflightChunks',
    'maxPendingReads',
    'maxPromoteLag',
  ] as const) {
    if (!positive(r[k])) throw new Error(`RaftConfig.${k} must be a positive integer`);
  }
  return r;
}

interface PendingRead {
  context: Uint8Array;
  from: NodeId;
}

export class RawNode {
  readonly id: NodeId;
  private readonly cfg: ResolvedConfig;
  /** The configuration in force (membership.current()), and its voters. */
  private conf: FullConfig;
  private voters: NodeId[];
  private readonly membership: Membership;

  // Persistent state (HardState) and the log.
  private term: number;
  private vote: NodeId;
  private readonly log: RaftLog;

  // Volatile state.
  private role: Role = Role.Follower;
  private leader: NodeId = NONE;
  /** Ticks since this node last heard from a leader (follower) or started campaigning (candidate). */
  private electionElapsed = 0;
  private randomizedElectionTimeout = 0;
  private heartbeatElapsed = 0;
  /** Total ticks since construction: the core's only notion of time. */
  private ticks = 0;
  private readonly votes = new Map<NodeId, boolean>();

  // Leader state.
  private readonly progress = new Map<NodeId, Progress>();
  /**
   * Members that left while we lead, still replicated to until their removal is committed and then for an
   * election timeout (the tick given; Infinity while uncommitted), so that they learn of it and stop.
   */
  private readonly departing = new Map<NodeId, number>();
  private leaderSinceTick = 0;
  private transferee: NodeId = NONE;
  private transferElapsed = 0;
  private readOnly = new ReadOnly();
  /** ReadIndex requests that arrived before this leader committed an entry of its term. */
  private pendingReads: PendingRead[] = [];
  // Work deferred to the next ready() so that one turn yields one App (and heartbeat) per follower.
  private pendingAppend = false;
  private pendingCommitNotice = false;
  private pendingReadHeartbeat = false;

  private readonly snapshotReceiver: SnapshotReceiver;
  /**
   * Follower: the highest index known to match the current leader's log in this term (from its appends and
   * snapshots). A heartbeat's commit is honoured only up to it. Reset with the term or the leader.
   */
  private leaderMatch = 0;
  /** Messages dropped because they contradict the protocol (e.g. overwriting a committed entry). */
  private refusedMessages = 0;

  // Output buffers and what the caller has been handed.
  private msgs: Message[] = [];
  private msgsAfterPersist: Message[] = [];
  private readStates: ReadState[] = [];
  private prevHard: HardState;
  private prevSoft: SoftState = { leader: NONE, role: Role.Follower };
  private outstanding: Ready | undefined;

  constructor(config: RaftConfig, persisted?: PersistedState) {
    this.cfg = resolveConfig(config);
    this.snapshotReceiver = new SnapshotReceiver(this.cfg.maxSnapshotBytes);
    this.id = this.cfg.id;
    const hs = persisted?.hardState ?? { term: 0, vote: NONE, commit: 0 };
    const snapshot = this.withChecksum(persisted?.snapshot);
    // The bootstrap configuration counts only for a log that holds no configuration of its own.
    const base = fullConfig(snapshot?.meta.config ?? { voters: this.cfg.voters, learners: this.cfg.learners, addresses: this.cfg.addresses });
    const problem = configProblem(base);
    if (problem !== undefined) throw new Error(`the ${snapshot ? 'stored snapshot\'s' : 'bootstrap'} configuration is not valid: ${problem}`);
    this.log = new RaftLog(snapshot, persisted?.entries ?? [], hs.commit, (ents) => this.membership.appended(ents));
    this.membership = new Membership(base, (persisted?.entries ?? []).filter((e) => e.index > (snapshot?.meta.index ?? 0)));
    this.conf = this.membership.current();
    this.voters = this.conf.voters;
    this.term = hs.term;
    this.vote = hs.vote;
    invariant(this.log.lastTerm() <= this.term, 'persisted log has entries from a term beyond the hard state');
    this.prevHard = { term: this.term, vote: this.vote, commit: this.log.committed };
    this.resetRandomizedElectionTimeout();
  }

  // ---- public API ---------------------------------------------------------------------------------

  tick(): void {
    this.ticks++;
    if (this.role === Role.Leader) this.tickLeader();
    else this.tickElection();
  }

  /**
   * Members, and members that just left; the leader we follow in this term, also once our log says it is
   * removed (it leads until the removal commits, then hands over with TimeoutNow, dissertation §4.2.2); and a
   * leader of this term or a later one that our log does not name yet. A member that missed the changes
   * which added today's leader learns them only from that leader (dissertation §4.1: a server accepts
   * AppendEntries from a leader outside its latest configuration). Only a leader sends these, and no leader
   * is elected without a majority of its configuration, so this admits no vote and no stranger's campaign.
   * (Not even a name our log says was removed is refused: that entry may be an uncommitted one, which only
   * the leader it names can truncate.)
   */
  private mayHearFrom(m: Message): boolean {
    if (isMember(this.conf, m.from) || this.departing.has(m.from)) return true;
    if (m.from === this.leader && m.term === this.term) return true;
    return (m.type === MessageType.App || m.type === MessageType.Heartbeat || m.type === MessageType.Snap) && m.term >= this.term;
  }

  /** Feeds one message from a peer. Malformed, misaddressed, stale or duplicate input is ignored. */
  step(m: Message): void {
    if (!isWellFormed(m)) return;
    if (m.to !== this.id || m.from === this.id || !this.mayHearFrom(m)) return;
    // A term we could never move past is never adopted (nor voted on): see RAFT_NUMBER_LIMIT.
    if (!isAdoptableTerm(m.term)) return;

    if (m.term > this.term) {
      if ((m.type === MessageType.Vote || m.type === MessageType.PreVote) && this.inLease(m)) {
        // Leader lease (thesis 4.2.3): we heard from a live leader within the election timeout, so
        // this candidate is disruptive (e.g. a partitioned node rejoining). Ignore it: no term bump.
        return;
      }
      if (m.type === MessageType.PreVote) {
        // A pre-vote request changes nothing at the receiver, least of all its term.
      } else if (m.type === MessageType.PreVoteResp && !m.reject) {
        // A granted pre-vote carries the term the pre-candidate will campaign at; it is not ours yet.
      } else if (m.type === MessageType.App || m.type === MessageType.Heartbeat || m.type === MessageType.Snap) {
        this.becomeFollower(m.term, m.from);
      } else {
        this.becomeFollower(m.term, NONE);
      }
    } else if (m.term < this.term) {
      this.stepStale(m);
      return;
    }

    if (isVoteRequest(m)) {
      this.handleVoteRequest(m);
      return;
    }
    switch (this.role) {
      case Role.Leader:
        this.stepLeader(m);
        return;
      case Role.PreCandidate:
      case Role.Candidate:
        this.stepCandidate(m);
        return;
      case Role.Follower:
        this.stepFollower(m);
        return;
    }
  }

  propose(data: Uint8Array): { index: number; term: number } {
    if (!(data instanceof Uint8Array)) throw new TypeError('propose: data must be a Uint8Array');
    if (this.role !== Role.Leader) throw new ProposalDroppedError('not-leader');
    if (this.transferee !== NONE) throw new ProposalDroppedError('transferring');
    if (this.log.lastIndex() - this.log.committed >= this.cfg.maxUncommittedEntries) {
      throw new ProposalDroppedError('too-many-uncommitted');
    }
    if (this.log.lastIndex() + 1 >= RAFT_NUMBER_LIMIT) throw new ProposalDroppedError('log-full');
    const e = this.appendEntry(data);
    return { index: e.index, term: e.term };
  }

  /**
   * Proposes one membership change (add a learner, promote a learner, remove a member). One at a time, and
   * only once this leader has committed an entry of its term: without that rule a new leader could add a
   * change on top of an uncommitted one of a deposed leader, and two disjoint majorities could decide
   * (the single-server bug, dissertation §4.1 and Ongaro's 2015 correction). A learner is promoted only
   * when it answers and is within maxPromoteLag entries of the commit index (checkPromotable), so that a
   * promotion never leaves the cluster waiting for a voter that is still catching up, or that is not there.
   * The new configuration takes effect at once.
   */
  proposeConfChange(change: ConfChange): { index: number; term: number } {
    if (this.role !== Role.Leader) throw new ProposalDroppedError('not-leader');
    if (this.transferee !== NONE) throw new ProposalDroppedError('transferring');
    const blocked = this.confChangeBlocked();
    if (blocked !== undefined) throw new ProposalDroppedError(blocked);
    const next = applyConfChange(this.conf, change);
    if (typeof next === 'string') throw new ConfChangeRefusedError(next);
    if (change.type === 'promote') this.checkPromotable(change.node);
    if (this.log.lastIndex() + 1 >= RAFT_NUMBER_LIMIT) throw new ProposalDroppedError('log-full');
    const e = this.appendEntry(encodeConfigEntry(next), EntryType.ConfChange);
    return { index: e.index, term: e.term };
  }

  /**
   * A learner is promoted only if it answered a heartbeat of this leader within an election timeout (the
   * measure check-quorum uses) and holds the log up to maxPromoteLag entries below the commit index, and at
   * least one entry. Position alone is not enough: on a log shorter than the lag, a learner that never ran
   * would pass, and as a voter it would count towards the quorum while it cannot answer.
   */
  private checkPromotable(id: NodeId): void {
    const pr = this.progressOf(id);
    if (this.ticks - pr.lastAckTick >= this.cfg.electionTicks) {
      const peer = this.conf.addresses[id]?.peer;
      throw new ConfChangeRefusedError(
        `learner ${id} has not answered this leader within an election timeout (it holds ${pr.match} of ${this.log.committed} committed entries): is its node running, and can the leader reach its peer address${peer === undefined ? '' : ` ${peer}`}? Promote it once it has caught up`,
        'learner-behind',
      );
    }
    if (pr.match === 0 || pr.match + this.cfg.maxPromoteLag < this.log.committed) {
      throw new ConfChangeRefusedError(
        `learner ${id} is behind (it holds ${pr.match} of ${this.log.committed} committed entries); promote it once it has caught up`,
        'learner-behind',
      );
    }
  }

  /** The configuration in force (the same object until it changes: compare by reference). */
  config(): FullConfig {
    return this.conf;
  }

  /** The leader's view of how far `id` holds its log (0 when not leading or not tracked). */
  matchOf(id: NodeId): number {
    return this.role === Role.Leader ? (this.progress.get(id)?.match ?? 0) : 0;
  }

  /** A membership change is in the log and not yet committed. */
  confChangePending(): boolean {
    return this.membership.lastChangeIndex() > this.log.committed;
  }

  /**
   * Linearizable read (thesis 6.4). The answer is a ReadState{index, context} in a later Ready (on this
   * node, also when the request was forwarded): the read may be served once applied >= index. Contexts
   * must be unique among outstanding requests; a request may be lost silently (leader change, message
   * loss), so callers time out and retry.
   */
  readIndex(context: Uint8Array): void {
    if (!(context instanceof Uint8Array)) throw new TypeError('readIndex: context must be a Uint8Array');
    if (this.role === Role.Leader) {
      this.leaderReadIndex({ context, from: this.id });
      return;
    }
    if (this.leader === NONE) throw new ProposalDroppedError('not-leader');
    this.send({ type: MessageType.ReadIndex, from: this.id, to: this.leader, term: this.term, context });
  }

  /**
   * Hands leadership to `to` (thesis 3.10): proposals are refused meanwhile, the target is brought up to
   * date, then told to campaign at once (TimeoutNow). Aborted after an election timeout.
   */
  transferLeadership(to: NodeId): void {
    if (this.role !== Role.Leader) throw new ProposalDroppedError('not-leader');
    if (to === this.id || !this.voters.includes(to)) {
      this.transferee = NONE;
      return;
    }
    if (this.transferee === to) return;
    this.transferee = to;
    this.transferElapsed = 0;
    const pr = this.progressOf(to);
    if (pr.match === this.log.lastIndex()) this.sendTimeoutNow(to);
    else this.sendAppend(to, pr, true);
  }

  /** Starts an election now (with pre-vote when enabled). */
  campaign(): void {
    this.hup(false);
  }

  hasReady(): boolean {
    if (this.outstanding !== undefined) return false;
    return (
      this.msgs.length > 0 ||
      this.msgsAfterPersist.length > 0 ||
      this.readStates.length > 0 ||
      this.pendingAppend ||
      this.pendingCommitNotice ||
      this.pendingReadHeartbeat ||
      this.log.pendingSnapshot !== undefined ||
      this.log.hasUnstableEntries() ||
      this.log.hasNextCommittedEntries() ||
      this.softChanged() ||
      this.hardChanged()
    );
  }

  /** The next batch of work. One Ready at a time: call advance(ready) before the next ready(). */
  ready(): Ready {
    invariant(this.outstanding === undefined, 'ready() called again before advance()');
    this.flushBroadcasts();
    const rd: Ready = {
      entries: this.log.unstableEntries(),
      committedEntries: this.log.takeNextCommitted(this.cfg.maxMsgBytes),
      messages: this.msgs,
      messagesAfterPersist: this.msgsAfterPersist,
      readStates: this.readStates,
      mustSync: false,
    };
    if (this.log.pendingSnapshot !== undefined) rd.snapshot = this.log.pendingSnapshot;
    if (this.softChanged()) {
      this.prevSoft = { leader: this.leader, role: this.role };
      rd.softState = { ...this.prevSoft };
    }
    let termOrVoteChanged = false;
    if (this.hardChanged()) {
      const hs = { term: this.term, vote: this.vote, commit: this.log.committed };
      invariant(hs.term >= this.prevHard.term, 'term went back');
      invariant(hs.commit >= this.prevHard.commit, 'commit went back');
      invariant(hs.term > this.prevHard.term || this.prevHard.vote === NONE || hs.vote === this.prevHard.vote, 'vote changed within a term');
      termOrVoteChanged = hs.term !== this.prevHard.term || hs.vote !== this.prevHard.vote;
      this.prevHard = hs;
      rd.hardState = { ...hs };
    }
    rd.mustSync = termOrVoteChanged || rd.entries.length > 0 || rd.snapshot !== undefined;
    this.msgs = [];
    this.msgsAfterPersist = [];
    this.readStates = [];
    this.outstanding = rd;
    return rd;
  }

  /**
   * The caller persisted `rd` (synced when mustSync), sent its messages, installed its snapshot and applied
   * its committed entries.
   */
  advance(rd: Ready): void {
    invariant(rd === this.outstanding, 'advance() must be given the Ready returned by the last ready()');
    this.outstanding = undefined;
    if (rd.snapshot !== undefined) this.log.snapshotInstalled(rd.snapshot);
    this.log.stableTo(rd.entries);
    const last = rd.committedEntries.at(-1);
    // takeCommittedEntries() may have handed out, and the caller applied, later entries meanwhile.
    if (last !== undefined && last.index > this.log.applied) this.log.appliedTo(last.index);
    if (this.role === Role.Leader) {
      // The leader counts itself towards a quorum only for entries it has made durable.
      this.progressOf(this.id).maybeUpdate(this.log.stable);
      if (this.maybeCommit()) this.onCommitAdvanced();
    }
  }

  /**
   * Committed entries that are durable here and were handed out by no Ready, for the caller to apply now,
   * while a Ready's write is still in flight: a leader answers its clients as soon as a quorum holds an
   * entry instead of after its next batch's fsync. The caller reports them with appliedTo() once applied;
   * they are in no later Ready. None while the outstanding Ready carries a snapshot (it is installed
   * first); entries follow those of the outstanding Ready, which the caller must apply first.
   */
  takeCommittedEntries(): Entry[] {
    if (this.outstanding?.snapshot !== undefined) return [];
    return this.log.takeNextCommitted(this.cfg.maxMsgBytes);
  }

  /** The caller applied every entry up to `index`, which it was handed (by a Ready or takeCommittedEntries). */
  appliedTo(index: number): void {
    this.log.appliedTo(index);
  }

  /**
   * The application's snapshot at `index` (<= applied): it becomes the latest snapshot (sent to followers
   * that need compacted entries) and the entries up to it are dropped. Returns the latest snapshot (the
   * existing one, unchanged, when `index` is not beyond it), for the caller to store.
   */
  compact(index: number, data: Uint8Array): Snapshot {
    invariant(Number.isSafeInteger(index) && index >= 1, 'compact: index must be a positive integer');
    const advances = index > this.log.snapshotIndex();
    this.log.compact(index, data, this.membership.at(index), this.cfg.checksum(data) >>> 0);
    if (advances) this.membership.compacted(index);
    const snapshot = this.log.snapshot;
    invariant(snapshot !== undefined, 'compact left no snapshot');
    return snapshot;
  }

  /** A snapshot from the leader is waiting to be installed: the application must not compact meanwhile. */
  hasPendingSnapshot(): boolean {
    return this.log.pendingSnapshot !== undefined;
  }

  /** The transport could not reach `id`: stop optimistic pipelining to it until it answers a probe. */
  reportUnreachable(id: NodeId): void {
    if (this.role !== Role.Leader) return;
    const pr = this.progress.get(id);
    if (pr !== undefined && id !== this.id && pr.state.kind === 'replicate') pr.becomeProbe();
  }

  /** The node's state without the leader's progress map: cheap enough to call on every request. */
  basicStatus(): BasicStatus {
    return {
      id: this.id,
      term: this.term,
      vote: this.vote,
      commit: this.log.committed,
      applied: this.log.applied,
      appliedTerm: this.log.term(this.log.applied) ?? 0,
      leader: this.leader,
      role: this.role,
      lastIndex: this.log.lastIndex(),
      snapshotIndex: this.log.snapshotIndex(),
      stableIndex: this.log.stable,
      leadTransferee: this.transferee,
      refusedMessages: this.refusedMessages,
    };
  }

  /** basicStatus() plus each voter's replication progress (leader only): for status reports. */
  status(): RaftStatus {
    const progress: Record<NodeId, ProgressStatus> = {};
    if (this.role === Role.Leader) {
      for (const [id, pr] of this.progress) {
        progress[id] = { match: pr.match, next: pr.next, state: pr.state.kind, inflight: pr.inflightCount() };
      }
    }
    return { ...this.basicStatus(), progress, config: fullConfig(this.conf) };
  }

  /**
   * Leader only: a quorum (counting this node) answered heartbeats this leader sent within the last
   * electionTicks ticks. Those peers refuse to vote for anyone else until an election timeout after
   * receiving them (leader lease, with check-quorum on), so no other leader can have been elected
   * meanwhile, up to clock drift between the nodes' ticks. Check-quorum uses the same measure.
   */
  quorumActive(): boolean {
    if (this.role !== Role.Leader) return false;
    return this.countRecentlyHeard(-Infinity) >= quorumSize(this.voters.length);
  }

  // ---- roles --------------------------------------------------------------------------------------

  private reset(term: number): void {
    if (term !== this.term) {
      invariant(term > this.term, () => `term going back from ${this.term} to ${term}`);
      this.term = term;
      this.vote = NONE;
      this.snapshotReceiver.reset();
    }
    this.leader = NONE;
    this.leaderMatch = 0;
    this.electionElapsed = 0;
    this.heartbeatElapsed = 0;
    this.resetRandomizedElectionTimeout();
    this.votes.clear();
    this.progress.clear();
    this.departing.clear();
    this.transferee = NONE;
    this.readOnly = new ReadOnly();
    this.pendingReads = [];
    this.pendingAppend = false;
    this.pendingCommitNotice = false;
    this.pendingReadHeartbeat = false;
  }

  private becomeFollower(term: number, leader: NodeId): void {
    this.reset(term);
    this.role = Role.Follower;
    this.leader = leader;
  }

  private becomePreCandidate(): void {
    invariant(this.role !== Role.Leader, 'leader cannot become pre-candidate');
    // Same term, same vote: a pre-election changes no persistent state.
    this.reset(this.term);
    this.role = Role.PreCandidate;
  }

  private becomeCandidate(): void {
    invariant(this.role !== Role.Leader, 'leader cannot become candidate');
    this.reset(this.term + 1);
    this.vote = this.id;
    this.role = Role.Candidate;
  }

  private becomeLeader(): void {
    invariant(this.role === Role.Candidate, 'only a candidate can become leader');
    this.reset(this.term);
    this.role = Role.Leader;
    this.leader = this.id;
    this.leaderSinceTick = this.ticks;
    for (const v of [...this.conf.voters, ...this.conf.learners, this.id]) this.trackProgress(v);
    // A member removed by an entry we hold may not know it yet (its leader may have fallen before telling
    // it the commit): replicate to it as the proposing leader would, until an election timeout after the commit.
    for (const id of this.membership.removedInLog()) {
      this.trackProgress(id);
      this.departing.set(id, Infinity);
    }
    const self = this.progressOf(this.id);
    self.maybeUpdate(this.log.stable);
    self.becomeReplicate();
    // The no-op lets the leader commit (and learn the commit index of) entries of earlier terms (5.4.2).
    this.appendEntry(EMPTY_BYTES);
  }

  private promotable(): boolean {
    return this.voters.includes(this.id);
  }

  private hup(transfer: boolean): void {
    if (this.role === Role.Leader || !this.promotable()) return;
    // Never campaign at a term the others would refuse to adopt (unreachable: no such term is adopted).
    if (!isAdoptableTerm(this.term + 1)) return;
    if (this.cfg.preVote && !transfer) {
      this.becomePreCandidate();
      this.startElection(MessageType.PreVote, false);
    } else {
      this.becomeCandidate();
      this.startElection(MessageType.Vote, transfer);
    }
  }

  private startElection(type: MessageType.PreVote | MessageType.Vote, transfer: boolean): void {
    this.votes.set(this.id, true);
    if (voteResult(this.voters, this.votes) === 'won') {
      this.electionWon();
      return;
    }
    // A pre-vote asks about the term we would campaign at, without moving to it.
    const term = type === MessageType.PreVote ? this.term + 1 : this.term;
    for (const v of this.voters) {
      if (v === this.id) continue;
      this.send({ type, from: this.id, to: v, term, lastLogIndex: this.log.lastIndex(), lastLogTerm: this.log.lastTerm(), transfer });
    }
  }

  private electionWon(): void {
    if (this.role === Role.PreCandidate) {
      this.becomeCandidate();
      this.startElection(MessageType.Vote, false);
    } else {
      this.becomeLeader();
    }
  }

  // ---- ticks --------------------------------------------------------------------------------------

  private tickElection(): void {
    this.electionElapsed++;
    if (this.promotable() && this.electionElapsed >= this.randomizedElectionTimeout) {
      this.hup(false);
    }
  }

  private tickLeader(): void {
    if (this.transferee !== NONE && ++this.transferElapsed >= this.cfg.electionTicks) {
      this.transferee = NONE; // the target did not take over in time: accept proposals again
    }
    if (this.cfg.checkQuorum && this.countRecentlyHeard(this.leaderSinceTick) < quorumSize(this.voters.length)) {
      // Check-quorum (thesis 6.2): cut off from a majority, we may no longer be the leader.
      this.becomeFollower(this.term, NONE);
      return;
    }
    for (const [id, until] of this.departing) {
      if (until > this.ticks) continue;
      this.departing.delete(id);
      this.progress.delete(id);
    }
    for (const [id, pr] of this.progress) {
      if (pr.state.kind !== 'snapshot') continue;
      const latest = this.log.snapshot;
      if (++pr.state.idleTicks >= this.cfg.electionTicks && latest !== undefined) {
        // The transfer went silent (lost chunks, follower restarted): start over with our latest snapshot.
        this.sendSnapshotChunks(id, pr.becomeSnapshot(latest));
      }
    }
    if (++this.heartbeatElapsed >= this.cfg.heartbeatTicks) {
      this.heartbeatElapsed = 0;
      this.bcastHeartbeat();
    }
  }

  /** Voters (counting self) that answered a heartbeat sent within electionTicks, `floorTick` counting as one. */
  private countRecentlyHeard(floorTick: number): number {
    let n = 0;
    for (const v of this.voters) {
      if (v === this.id) {
        n++;
        continue;
      }
      const pr = this.progress.get(v);
      if (pr !== undefined && this.ticks - Math.max(pr.lastAckTick, floorTick) < this.cfg.electionTicks) n++;
    }
    return n;
  }

  private resetRandomizedElectionTimeout(): void {
    const e = this.cfg.electionTicks;
    const r = this.cfg.random();
    const jitter = Number.isFinite(r) ? Math.min(e - 1, Math.max(0, Math.floor(r * e))) : 0;
    this.randomizedElectionTimeout = e + jitter;
  }

  /** Would we refuse this (pre-)vote request because a leader is alive? */
  private inLease(m: VoteRequest): boolean {
    if (m.type === MessageType.Vote) {
      if (!this.cfg.checkQuorum || m.transfer) return false;
    }
    if (this.role === Role.Leader) return true;
    return this.leader !== NONE && this.electionElapsed < this.cfg.electionTicks;
  }

  // ---- step by message ----------------------------------------------------------------------------

  /** A message from an older term: tell the sender our term where that helps it step down. */
  private stepStale(m: Message): void {
    switch (m.type) {
      case MessageType.App:
      case MessageType.Heartbeat:
      case MessageType.Snap:
        // A stale leader learns the new term from the reply's term and steps down.
        this.send({ type: MessageType.AppResp, from: this.id, to: m.from, term: this.term, reject: false, matchIndex: 0 });
        return;
      case MessageType.PreVote:
      case MessageType.Vote:
        this.send({ type: voteResponseType(m.type), from: this.id, to: m.from, term: this.term, reject: true });
        return;
      default:
        return; // stale responses are ignored
    }
  }

  private handleVoteRequest(m: VoteRequest): void {
    const type = m.type;
    // One vote per term (paper 5.2); a pre-vote for a future term binds nothing.
    const canVote =
      this.vote === m.from ||
      (this.vote === NONE && this.leader === NONE) ||
      (type === MessageType.PreVote && m.term > this.term);
    const upToDate = this.candidateIsUpToDate(m.lastLogIndex, m.lastLogTerm);
    if (canVote && upToDate) {
      this.send({ type: voteResponseType(type), from: this.id, to: m.from, term: m.term, reject: false });
      if (type === MessageType.Vote) {
        this.electionElapsed = 0;
        this.vote = m.from;
      }
    } else {
      this.send({ type: voteResponseType(type), from: this.id, to: m.from, term: this.term, reject: true });
    }
  }

  private stepFollower(m: Message): void {
    switch (m.type) {
      case MessageType.App:
        this.electionElapsed = 0;
        this.followLeader(m.from);
        this.handleAppend(m);
        return;
      case MessageType.Heartbeat:
        this.electionElapsed = 0;
        this.followLeader(m.from);
        this.handleHeartbeat(m);
        return;
      case MessageType.Snap:
        this.electionElapsed = 0;
        this.followLeader(m.from);
        this.handleSnapshotChunk(m);
        return;
      case MessageType.TimeoutNow:
        // Leadership transfer: campaign at once, skipping pre-vote; our Vote carries the transfer flag.
        this.hup(true);
        return;
      case MessageType.ReadIndexResp:
        // Only the leader we forwarded the read to answers it: another voter's answer is forged or stale.
        if (m.from !== this.leader) return;
        this.readStates.push({ index: m.index, context: m.context });
        return;
      default:
        return;
    }
  }

  /** `from` leads this term (stepFollower has checked the term). A change of leader forgets the match. */
  private followLeader(from: NodeId): void {
    if (this.leader !== from) this.leaderMatch = 0;
    this.leader = from;
  }

  private stepCandidate(m: Message): void {
    switch (m.type) {
      case MessageType.App:
      case MessageType.Heartbeat:
      case MessageType.Snap:
        // Someone won this term: follow it.
        this.becomeFollower(this.term, m.from);
        this.stepFollower(m);
        return;
      case MessageType.PreVoteResp:
      case MessageType.VoteResp: {
        const mine = this.role === Role.PreCandidate ? MessageType.PreVoteResp : MessageType.VoteResp;
        if (m.type !== mine) return;
        // Pre-vote grants name the term we would campaign at; anything else is from an older round.
        if (this.role === Role.PreCandidate && !m.reject && m.term !== this.term + 1) return;
        if (!this.votes.has(m.from)) this.votes.set(m.from, !m.reject);
        const result = voteResult(this.voters, this.votes);
        if (result === 'won') this.electionWon();
        else if (result === 'lost') this.becomeFollower(this.term, NONE);
        return;
      }
      default:
        return;
    }
  }

  private stepLeader(m: Message): void {
    const pr = this.progress.get(m.from);
    if (pr === undefined) return;
    switch (m.type) {
      case MessageType.AppResp:
        this.handleAppendResponse(m, pr);
        return;
      case MessageType.HeartbeatResp:
        // The answer echoes the tick at which we sent the heartbeat (see bcastHeartbeat).
        if (m.sentAtTick <= this.ticks) pr.lastAckTick = Math.max(pr.lastAckTick, m.sentAtTick);
        this.handleHeartbeatResponse(m, pr);
        return;
      case MessageType.SnapResp:
        this.handleSnapshotResponse(m, pr);
        return;
      case MessageType.ReadIndex:
        this.leaderReadIndex({ context: m.context, from: m.from });
        return;
      default:
        return;
    }
  }

  // ---- follower: replication ----------------------------------------------------------------------

  private handleAppend(m: AppendRequest): void {
    const envelope = { type: MessageType.AppResp, from: this.id, to: m.from, term: this.term } as const;
    const badConfig = m.entries.find((e) => e.type === EntryType.ConfChange && typeof decodeConfigEntry(e.data) === 'string');
    if (badConfig !== undefined) {
      // No leader writes a configuration that does not decode: forged or corrupt. Dropped, and counted.
      this.refuse(`append carries a malformed configuration at ${badConfig.index}: ${String(decodeConfigEntry(badConfig.data))}`, m.from);
      return;
    }
    if (m.prevLogIndex < this.log.committed) {
      // Everything up to our commit matches any leader's log; tell the leader where to continue.
      this.send({ ...envelope, reject: false, matchIndex: this.log.committed });
      return;
    }
    const out = this.log.maybeAppend(m.prevLogIndex, m.prevLogTerm, m.entries);
    this.onConfigMaybeChanged();
    switch (out.kind) {
      case 'matched':
        this.leaderMatch = Math.max(this.leaderMatch, out.lastNew);
        // Paper Figure 2, rule 5: never past the last entry this append is known to match.
        this.log.commitTo(Math.min(m.commit, out.lastNew));
        this.send({ ...envelope, reject: false, matchIndex: out.lastNew });
        return;
      case 'overwrites-committed':
        // No leader sends that (Leader Completeness): forged or corrupt. Dropped, and counted.
        this.refuse(`append at ${m.prevLogIndex + 1} would overwrite committed entry ${out.index}`, m.from);
        return;
      case 'mismatch': {
        // Consistency check failed. Hint the last index whose term is <= the leader's term at prevLogIndex:
        // the leader can then skip a whole term per round trip instead of one entry.
        const hint = this.log.findConflictByTerm(Math.min(m.prevLogIndex, this.log.lastIndex()), m.prevLogTerm);
        this.send({ ...envelope, reject: true, rejectedIndex: m.prevLogIndex, hintIndex: hint.index, hintTerm: hint.term });
        return;
      }
    }
  }

  private handleHeartbeat(m: HeartbeatRequest): void {
    // A heartbeat proves nothing about our log: commit only up to what an append of this leader in this
    // term has matched (a forged commit must not commit our own unreplicated tail). The leader sends
    // min(commit, our match), so normally this loses nothing; when it does (we restarted and forgot the
    // match), the answer says so (reject) and the leader sends an append that re-establishes it.
    const target = Math.min(m.commit, this.log.lastIndex());
    const allowed = Math.min(target, Math.max(this.leaderMatch, this.log.committed));
    this.log.commitTo(allowed);
    this.send({
      type: MessageType.HeartbeatResp,
      from: this.id,
      to: m.from,
      term: this.term,
      sentAtTick: m.sentAtTick,
      context: m.context,
      needsAppend: m.commit > this.log.committed,
    });
  }

  private handleSnapshotChunk(m: SnapshotChunk): void {
    const meta = m.meta;
    const envelope = { type: MessageType.SnapResp, from: this.id, to: m.from, term: this.term, meta } as const;
    if (meta.index <= this.log.committed) {
      // Not newer than what we have committed: nothing to install; we match the leader up to our commit.
      this.snapshotReceiver.reset();
      this.send({ ...envelope, done: true, matchIndex: this.log.committed });
      return;
    }
    const out = this.snapshotReceiver.receive(m.from, m.term, meta, m.offset, m.data, m.done);
    switch (out.kind) {
      case 'progress':
      case 'gap':
        this.send({ ...envelope, done: false, received: out.received, gap: out.kind === 'gap' });
        return;
      case 'too-large':
        // No answer: the leader's transfer goes idle; a real leader's snapshot is never this large.
        this.refuse(`snapshot at ${meta.index} (term ${meta.term}) grew past ${this.cfg.maxSnapshotBytes} bytes`, m.from);
        return;
      case 'complete': {
        const refusal = this.snapshotRefusal(out.snapshot);
        if (refusal !== undefined) {
          // Dropped before anything of it is persisted or installed; no answer, so the leader's transfer
          // goes idle and it sends its snapshot again later.
          this.refuse(`snapshot at ${meta.index} (term ${meta.term}, ${out.snapshot.data.byteLength} bytes): ${refusal}`, m.from);
          return;
        }
        const kept = this.log.matchTerm(meta.index, meta.term);
        this.log.restore(out.snapshot);
        this.membership.restored(meta.index, fullConfig(meta.config), kept);
        this.onConfigMaybeChanged();
        this.leaderMatch = meta.index;
        this.send({ ...envelope, done: true, matchIndex: meta.index });
        return;
      }
    }
  }

  /**
   * A whole snapshot received from the leader may be installed only if its data matches its checksum,
   * its configuration is one a cluster can run with, and the application has decoded it fully. Its
   * configuration is the one in force at its index (members may have changed since our log ended), so it
   * is taken as it is: only the authenticated current leader sends snapshots (the transport binds every
   * message to its peer's certificate, and the term was checked).
   */
  private snapshotRefusal(snap: Snapshot): string | undefined {
    const { crc32 } = snap.meta;
    if (crc32 === undefined) return 'no checksum';
    if (this.cfg.checksum(snap.data) >>> 0 !== crc32) return 'checksum mismatch';
    const problem = configProblem(fullConfig(snap.meta.config));
    if (problem !== undefined) return `its configuration is not valid: ${problem}`;
    try {
      if (this.cfg.validateSnapshot(snap) !== true) return 'the application refused it';
    } catch (err) {
      return `the application refused it: ${err instanceof Error ? err.message : String(err)}`;
    }
    return undefined;
  }

  private refuse(reason: string, from: NodeId): void {
    this.refusedMessages++;
    this.cfg.onRefused(reason, from);
  }

  /** A stored snapshot from before checksums existed gets one (it was checked by storage when read). */
  private withChecksum(snap: Snapshot | undefined): Snapshot | undefined {
    if (snap === undefined || snap.meta.crc32 !== undefined) return snap;
    return { meta: { ...snap.meta, crc32: this.cfg.checksum(snap.data) >>> 0 }, data: snap.data };
  }

  // ---- leader: replication ------------------------------------------------------------------------

  private appendEntry(data: Uint8Array, type = EntryType.Normal): Entry {
    const e: Entry = { term: this.term, index: this.log.lastIndex() + 1, type, data };
    this.log.append([e]);
    this.pendingAppend = true;
    if (type === EntryType.ConfChange) this.onConfigMaybeChanged();
    return e;
  }

  // ---- membership ---------------------------------------------------------------------------------

  /** After anything that may have replaced the configuration in force (an append, a snapshot). */
  private onConfigMaybeChanged(): void {
    const next = this.membership.current();
    if (next === this.conf) return;
    this.conf = next;
    this.voters = next.voters;
    if (this.role !== Role.Leader) return;
    // A leader replicates to every member; one that left is no longer tracked (the leader always is).
    for (const id of [...next.voters, ...next.learners]) this.trackProgress(id);
    for (const id of this.progress.keys()) {
      if (id === this.id) continue;
      if (isMember(next, id)) this.departing.delete(id);
      else if (!this.departing.has(id)) this.departing.set(id, Infinity);
    }
    if (this.transferee !== NONE && !next.voters.includes(this.transferee)) this.transferee = NONE;
  }

  private trackProgress(id: NodeId): void {
    if (this.progress.has(id)) return;
    // Members join as learners, whose answers count towards no quorum: a promoted one keeps its record.
    this.progress.set(id, new Progress(this.log.lastIndex() + 1, this.cfg.maxInflight, this.cfg.maxInflightBytes));
  }

  /**
   * A leader whose removal is committed steps down (dissertation §4.2.2), first telling the most
   * up-to-date voter to campaign at once so that the cluster is not left waiting an election timeout.
   */
  private stepDownIfRemoved(): void {
    if (this.role !== Role.Leader || this.conf.voters.includes(this.id) || this.confChangePending()) return;
    let best: NodeId = NONE;
    let bestMatch = -1;
    for (const v of this.conf.voters) {
      const match = this.progress.get(v)?.match ?? -1;
      if (match > bestMatch) [best, bestMatch] = [v, match];
    }
    if (best !== NONE && bestMatch === this.log.lastIndex()) this.sendTimeoutNow(best);
    this.becomeFollower(this.term, NONE);
  }

  /** Sends the next App (or snapshot) to `to` if its progress allows. Returns whether anything was sent. */
  private sendAppend(to: NodeId, pr: Progress, sendIfEmpty: boolean): boolean {
    if (pr.isPaused()) return false;
    invariant(pr.next <= this.log.lastIndex() + 1, () => `next ${pr.next} of ${to} beyond last index`);
    const prevIndex = pr.next - 1;
    const prevTerm = this.log.term(prevIndex);
    if (prevTerm === undefined) {
      // The entries this follower needs are compacted away.
      this.startSnapshot(to, pr);
      return true;
    }
    const entries = pr.next <= this.log.lastIndex() ? this.log.slice(pr.next, this.log.lastIndex(), this.cfg.maxMsgBytes) : [];
    if (entries.length === 0 && !sendIfEmpty) return false;
    this.send({ type: MessageType.App, from: this.id, to, term: this.term, prevLogIndex: prevIndex, prevLogTerm: prevTerm, entries, commit: this.log.committed });
    pr.sentEntries(entries.at(-1)?.index ?? prevIndex, entries.length, dataBytes(entries));
    return true;
  }

  /** Probe: one App. Replicate: as many as the window and the log allow. */
  private sendAppendLoop(to: NodeId, pr: Progress, sendIfEmpty: boolean): void {
    let first = true;
    while (this.sendAppend(to, pr, first && sendIfEmpty)) {
      first = false;
      if (pr.state.kind !== 'replicate') return;
    }
  }

  private flushBroadcasts(): void {
    if (this.role === Role.Leader) {
      if (this.pendingAppend || this.pendingCommitNotice) {
        for (const [id, pr] of this.progress) {
          if (id !== this.id) this.sendAppendLoop(id, pr, this.pendingCommitNotice);
        }
      }
      if (this.pendingReadHeartbeat) this.bcastHeartbeat();
    }
    this.pendingAppend = false;
    this.pendingCommitNotice = false;
    this.pendingReadHeartbeat = false;
  }

  private bcastHeartbeat(): void {
    // Heartbeats carry the newest waiting ReadIndex context: an answer confirms it and all before it.
    const context = this.readOnly.lastPendingContext() ?? EMPTY_BYTES;
    for (const [id, pr] of this.progress) {
      if (id === this.id) continue;
      this.send({
        type: MessageType.Heartbeat,
        from: this.id,
        to: id,
        term: this.term,
        // Never more than the follower is known to hold: it must not commit an entry it lacks.
        commit: Math.min(pr.match, this.log.committed),
        sentAtTick: this.ticks,
        context,
      });
    }
  }

  private handleAppendResponse(m: AppendResponse, pr: Progress): void {
    if (m.reject) {
      // Fast backtracking: skip every entry of ours whose term exceeds the follower's term at its hint.
      const probe = m.hintTerm > 0 ? this.log.findConflictByTerm(m.hintIndex, m.hintTerm).index : m.hintIndex;
      if (pr.maybeDecrTo(m.rejectedIndex, probe)) {
        if (pr.state.kind === 'replicate') pr.becomeProbe();
        this.sendAppend(m.from, pr, true);
      }
      return;
    }
    if (m.matchIndex > this.log.lastIndex()) return; // claims entries we never had: not from our term
    this.handleMatched(m.from, pr, m.matchIndex);
  }

  /** `from` acknowledged holding (durably) our entries up to `index`. */
  private handleMatched(from: NodeId, pr: Progress, index: number): void {
    if (pr.maybeUpdate(index) || (pr.match === index && pr.state.kind === 'probe')) {
      if (pr.state.kind === 'probe') pr.becomeReplicate();
      else if (pr.state.kind === 'snapshot') this.leaveSnapshotState(pr);
      else pr.state.inflights.freeLE(index);
      if (this.maybeCommit()) this.onCommitAdvanced();
      this.sendAppendLoop(from, pr, false);
    }
    if (from === this.transferee && pr.match === this.log.lastIndex()) this.sendTimeoutNow(from);
  }

  private handleHeartbeatResponse(m: HeartbeatResponse, pr: Progress): void {
    const behind = pr.match < this.log.lastIndex() || m.needsAppend;
    if (behind && this.ticks - pr.lastRetryTick >= this.cfg.heartbeatTicks) {
      pr.lastRetryTick = this.ticks;
      if (pr.state.kind === 'probe') {
        // The probe in flight may be lost: the follower is alive, so probe again.
        pr.state.probeSent = false;
        this.sendAppend(m.from, pr, true);
      } else if (pr.state.kind === 'replicate') {
        // Pipelined Apps may have been lost (a lost last App leaves no gap to detect). An empty App
        // at next-1 is accepted if all arrived, otherwise rejected, which sends us back to probing.
        this.sendResync(m.from, pr);
      }
    }
    if (m.context.length > 0 && this.readOnly.recvAck(m.from, m.context, this.voters) >= quorumSize(this.voters.length)) {
      for (const req of this.readOnly.advance(m.context)) this.respondRead(req.index, req.context, req.from);
    }
  }

  private sendResync(to: NodeId, pr: Progress): void {
    const prevIndex = pr.next - 1;
    const prevTerm = this.log.term(prevIndex);
    if (prevTerm === undefined) {
      // We compacted past what we sent: probe from the follower's match, which ends in a snapshot.
      pr.becomeProbe();
      this.sendAppend(to, pr, true);
      return;
    }
    this.send({ type: MessageType.App, from: this.id, to, term: this.term, prevLogIndex: prevIndex, prevLogTerm: prevTerm, entries: [], commit: this.log.committed });
  }

  /**
   * Commit rule (paper 5.3, 5.4.2): an index is committed once a majority holds it, but only an entry
   * of the current term is committed by counting replicas (Figure 8); earlier ones follow implicitly.
   */
  private maybeCommit(): boolean {
    const mci = committedIndex(this.voters.map((v) => this.progressOf(v).match));
    if (mci <= this.log.committed) return false;
    if (!this.mayCommitByCounting(mci)) return false;
    this.log.commitTo(mci);
    return true;
  }

  private onCommitAdvanced(): void {
    if (!this.cfg.lazyCommitNotice) this.pendingCommitNotice = true;
    this.stepDownIfRemoved();
    if (this.role !== Role.Leader) return;
    if (!this.confChangePending()) {
      for (const [id, until] of this.departing) if (until === Infinity) this.departing.set(id, this.ticks + this.cfg.electionTicks);
    }
    if (this.committedInCurrentTerm() && this.pendingReads.length > 0) {
      const reads = this.pendingReads;
      this.pendingReads = [];
      for (const r of reads) this.leaderReadIndex(r);
    }
  }

  private committedInCurrentTerm(): boolean {
    return this.log.term(this.log.committed) === this.term;
  }

  private sendTimeoutNow(to: NodeId): void {
    this.send({ type: MessageType.TimeoutNow, from: this.id, to, term: this.term });
  }

  // ---- leader: snapshots --------------------------------------------------------------------------

  private startSnapshot(to: NodeId, pr: Progress): void {
    invariant(this.log.snapshot !== undefined, 'entries are compacted but there is no snapshot');
    this.sendSnapshotChunks(to, pr.becomeSnapshot(this.log.snapshot));
  }

  /** Streams chunks of the outgoing snapshot while the chunk window has room. */
  private sendSnapshotChunks(to: NodeId, out: SnapshotState): void {
    const data = out.snapshot.data;
    const chunk = this.cfg.snapshotChunkBytes;
    const window = chunk * this.cfg.snapshotInflightChunks;
    while (!out.doneSent && out.sent - out.acked < window) {
      const end = Math.min(out.sent + chunk, data.byteLength);
      const done = end === data.byteLength;
      this.send({
        type: MessageType.Snap,
        from: this.id,
        to,
        term: this.term,
        meta: out.snapshot.meta,
        offset: out.sent,
        data: data.subarray(out.sent, end),
        done,
        commit: this.log.committed,
      });
      out.sent = end;
      out.doneSent = done;
    }
  }

  private handleSnapshotResponse(m: SnapshotResponse, pr: Progress): void {
    if (m.done) {
      // Installed (or found unnecessary): the follower holds our log up to m.matchIndex.
      if (m.matchIndex > this.log.lastIndex()) return;
      if (pr.state.kind === 'snapshot') {
        pr.maybeUpdate(m.matchIndex);
        this.leaveSnapshotState(pr);
        if (this.maybeCommit()) this.onCommitAdvanced();
        this.sendAppendLoop(m.from, pr, false);
        if (m.from === this.transferee && pr.match === this.log.lastIndex()) this.sendTimeoutNow(m.from);
      } else {
        this.handleMatched(m.from, pr, m.matchIndex);
      }
      return;
    }
    const out = pr.state;
    if (out.kind !== 'snapshot' || !sameMeta(out.snapshot.meta, m.meta)) return;
    // Continue from what the follower holds (go back on a gap, skip ahead after a restart).
    const received = Math.min(m.received, out.snapshot.data.byteLength);
    out.idleTicks = 0;
    if (m.gap) {
      out.sent = received;
      out.acked = received;
      out.doneSent = false;
    } else {
      if (received > out.sent) {
        out.sent = received;
        out.doneSent = false;
      }
      out.acked = Math.max(out.acked, received);
    }
    this.sendSnapshotChunks(m.from, out);
  }

  private leaveSnapshotState(pr: Progress): void {
    // If we compacted past the follower again meanwhile, probing will start another snapshot.
    if (pr.match + 1 >= this.log.firstIndex()) pr.becomeReplicate();
    else pr.becomeProbe();
  }

  // ---- leader: ReadIndex --------------------------------------------------------------------------

  private leaderReadIndex(req: PendingRead): void {
    const local = req.from === this.id;
    if (!this.committedInCurrentTerm()) {
      // Our commit index may lag the previous leader's until our no-op commits (thesis 6.4 step 1).
      if (this.pendingReads.length >= this.cfg.maxPendingReads) {
        if (local) throw new ProposalDroppedError('too-many-pending-reads');
        return;
      }
      this.pendingReads.push(req);
      return;
    }
    if (this.voters.length === 1 && this.voters[0] === this.id) {
      this.respondRead(this.log.committed, req.context, req.from);
      return;
    }
    if (this.readOnly.size() >= this.cfg.maxPendingReads) {
      if (local) throw new ProposalDroppedError('too-many-pending-reads');
      return;
    }
    if (this.readOnly.add(this.log.committed, req.context, req.from, this.id)) this.pendingReadHeartbeat = true;
  }

  private respondRead(index: number, context: Uint8Array, from: NodeId): void {
    if (from === this.id) this.readStates.push({ index, context });
    else this.send({ type: MessageType.ReadIndexResp, from: this.id, to: from, term: this.term, index, context });
  }

  // ---- output -------------------------------------------------------------------------------------

  private send(m: Message): void {
    if (this.waitsForPersist(m)) this.msgsAfterPersist.push(m);
    else this.msgs.push(m);
  }

  /** A voter's progress: a leader tracks every voter, itself included. */
  private progressOf(id: NodeId): Progress {
    const pr = this.progress.get(id);
    invariant(pr !== undefined, () => `no progress tracked for ${id}`);
    return pr;
  }

  // ---- the rules the simulators break on purpose (test/support/brokenRawNode.ts overrides them) ----

  /** Raft §5.4.1: a vote goes only to a candidate whose log is at least as up to date as ours. */
  protected candidateIsUpToDate(lastLogIndex: number, lastLogTerm: number): boolean {
    return this.log.isUpToDate(lastLogIndex, lastLogTerm);
  }

  /** Raft §5.4.2 (Figure 8): counting replicas commits only an entry of the leader's own term. */
  protected mayCommitByCounting(index: number): boolean {
    return this.log.term(index) === this.term;
  }

  /** Dissertation §4.1: one membership change at a time, none before this leader committed an entry of its term. */
  protected confChangeBlocked(): 'conf-change-not-ready' | 'conf-change-pending' | undefined {
    if (!this.committedInCurrentTerm()) return 'conf-change-not-ready';
    if (this.confChangePending()) return 'conf-change-pending';
    return undefined;
  }

  /** An acknowledgement (a vote, an append or snapshot response) vouches for state that must be durable first. */
  protected waitsForPersist(m: Message): boolean {
    return sentAfterPersist(m.type);
  }

  private softChanged(): boolean {
    return this.prevSoft.leader !== this.leader || this.prevSoft.role !== this.role;
  }

  private hardChanged(): boolean {
    const p = this.prevHard;
    return p.term !== this.term || p.vote !== this.vote || p.commit !== this.log.committed;
  }
}

/** The entry data an App carries, as maxMsgBytes and maxInflightBytes count it. */
function dataBytes(entries: readonly Entry[]): number {
  let n = 0;
  for (const e of entries) n += entryBytes(e);
  return n;
}

function sameMeta(a: SnapshotMeta, b: SnapshotMeta): boolean {
  return a.index === b.index && a.term === b.term;
}

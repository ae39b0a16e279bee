// Shared vocabulary of the Raft core. Everything here is plain data: it crosses the storage,
// transport and simulator boundaries, so it holds no behaviour.
//
// Log indexes and terms are plain numbers; they travel as uint64 on the wire, capped at RAFT_NUMBER_LIMIT.

export type NodeId = string;

/**
 * Every term, index, commit, hint and offset is below this limit (2^48, far below 2^53 where numbers stop
 * being exact). The codec refuses larger values on the wire and on disk, and the core drops a message
 * carrying one. A term is adopted only if it can still be incremented (term + 1 < limit), so a forged
 * huge term cannot leave the cluster unable to ever elect a leader again. 2^48 terms or entries are
 * beyond any real cluster's life (a million elections or entries per second for 8 years).
 */
export const RAFT_NUMBER_LIMIT = 2 ** 48;

/** No node: used for "no vote" and "no known leader". */
export const NONE: NodeId = '';

export enum EntryType {
  /** Application data; an empty `data` is the leader's no-op at the start of its term. */
  Normal = 0,
  /**
   * A membership change: its data is the whole configuration that results (src/raft/confChange.ts). It takes
   * effect on every node as soon as it is in the node's log, committed or not (dissertation §4.1).
   */
  ConfChange = 1,
}

export interface Entry {
  term: number;
  index: number;
  type: EntryType;
  data: Uint8Array;
}

/** What must be durable before a vote is granted or an append acknowledged. */
export interface HardState {
  term: number;
  vote: NodeId;
  commit: number;
}

/** Where a member is reached: carried in configurations for the application; the core never reads it. */
export interface MemberAddress {
  client: string;
  peer: string;
}

/** A cluster configuration: who votes, who only follows the log (learners), and where each is reached. */
export interface ClusterConfig {
  voters: NodeId[];
  /** Non-voting members: they receive the log but neither vote nor count towards any quorum. */
  learners?: NodeId[];
  addresses?: Record<NodeId, MemberAddress>;
  /** Members removed so far (confChange.ts FullConfig.removed). */
  removed?: NodeId[];
}

export interface SnapshotMeta {
  index: number;
  term: number;
  /**
   * The configuration at `index` (the last ConfChange entry at or before it, else the bootstrap one). A node
   * that restarts from, or installs, this snapshot runs with it until a later ConfChange entry.
   */
  config: ClusterConfig;
  /**
   * CRC-32 (RaftConfig.checksum) of `data`. Set by compact(); a received snapshot without it, or whose
   * data does not match it, is refused. Absent only in snapshots stored before it existed.
   */
  crc32?: number;
}

export interface Snapshot {
  meta: SnapshotMeta;
  data: Uint8Array;
}

export enum Role {
  Follower = 'follower',
  PreCandidate = 'pre-candidate',
  Candidate = 'candidate',
  Leader = 'leader',
}

export enum MessageType {
  /** Pre-vote request: would you vote for me at term+1? Changes no state at the receiver. */
  PreVote = 1,
  PreVoteResp = 2,
  Vote = 3,
  VoteResp = 4,
  /** AppendEntries. */
  App = 5,
  AppResp = 6,
  Heartbeat = 7,
  HeartbeatResp = 8,
  /** One chunk of an InstallSnapshot. */
  Snap = 9,
  SnapResp = 10,
  /** Leadership transfer: the receiver campaigns at once, skipping pre-vote (see VoteRequest.transfer). */
  TimeoutNow = 11,
  /** A follower forwards a ReadIndex request to the leader. */
  ReadIndex = 12,
  ReadIndexResp = 13,
}

// ---- peer messages: one shape per type ------------------------------------------------------------
// The codec (src/codec/raftCodec.ts) decodes the flat wire record (WireMessage) into these and drops
// anything malformed, so the core reads only fields that its message type really has.

interface Envelope<T extends MessageType> {
  type: T;
  from: NodeId;
  to: NodeId;
  term: number;
}

/** PreVote / Vote. A pre-vote's `term` is the one the pre-candidate would campaign at. */
export interface VoteRequest extends Envelope<MessageType.PreVote | MessageType.Vote> {
  lastLogIndex: number;
  lastLogTerm: number;
  /**
   * The candidate campaigns because of TimeoutNow (leadership transfer): voters grant it even while they
   * still hear from the old leader (leader lease). On the wire: `context` = TRANSFER_CONTEXT.
   */
  transfer: boolean;
}

export interface VoteResponse extends Envelope<MessageType.PreVoteResp | MessageType.VoteResp> {
  reject: boolean;
}

export interface AppendRequest extends Envelope<MessageType.App> {
  /** The entry preceding `entries`, which the follower must hold for the append to match. */
  prevLogIndex: number;
  prevLogTerm: number;
  entries: Entry[];
  /** The leader's commit index. */
  commit: number;
}

/** Accepted: the follower holds the leader's log up to `matchIndex`. */
export interface AppendAccepted extends Envelope<MessageType.AppResp> {
  reject: false;
  matchIndex: number;
}

/**
 * Rejected: the append at `rejectedIndex` did not match. The follower's last entry whose term is at most
 * the leader's term there is at `hintIndex` (term `hintTerm`): the leader can skip a whole term at once.
 */
export interface AppendRejected extends Envelope<MessageType.AppResp> {
  reject: true;
  rejectedIndex: number;
  hintIndex: number;
  hintTerm: number;
}

export type AppendResponse = AppendAccepted | AppendRejected;

export interface HeartbeatRequest extends Envelope<MessageType.Heartbeat> {
  /** min(leader commit, follower match): never more than the follower is known to hold. */
  commit: number;
  /** The leader's tick count when sent, echoed in the answer: how recently the follower heard from it. */
  sentAtTick: number;
  /** The newest ReadIndex context waiting for confirmation, or empty. */
  context: Uint8Array;
}

export interface HeartbeatResponse extends Envelope<MessageType.HeartbeatResp> {
  sentAtTick: number;
  context: Uint8Array;
  /**
   * The follower could not commit what the heartbeat said, for want of an append of this leader that
   * matched in this term (it restarted, say): it needs an append even when it holds everything.
   */
  needsAppend: boolean;
}

/** One chunk of an InstallSnapshot; every chunk carries the snapshot's meta. */
export interface SnapshotChunk extends Envelope<MessageType.Snap> {
  meta: SnapshotMeta;
  /** Byte offset of `data` in the snapshot's data. */
  offset: number;
  data: Uint8Array;
  /** The last chunk. */
  done: boolean;
  /** The leader's commit index (unused by the receiver; on the wire as before). */
  commit: number;
}

/** Reply to a chunk that is not the last, or that arrived out of order. */
export interface SnapshotProgress extends Envelope<MessageType.SnapResp> {
  /** Echoes the chunk's meta: which transfer this answers. */
  meta: SnapshotMeta;
  done: false;
  /** Bytes the follower holds of that snapshot: the offset the leader continues from. */
  received: number;
  /** A chunk arrived ahead of `received` (a gap): the leader goes back to `received`. */
  gap: boolean;
}

/** The snapshot was installed, or found unnecessary. */
export interface SnapshotInstalled extends Envelope<MessageType.SnapResp> {
  meta: SnapshotMeta;
  done: true;
  /** The follower now matches the leader's log up to here (the snapshot index, or its newer commit). */
  matchIndex: number;
}

export type SnapshotResponse = SnapshotProgress | SnapshotInstalled;

export type TimeoutNow = Envelope<MessageType.TimeoutNow>;

export interface ReadIndexRequest extends Envelope<MessageType.ReadIndex> {
  context: Uint8Array;
}

export interface ReadIndexResponse extends Envelope<MessageType.ReadIndexResp> {
  /** The read may be served once the applied index reaches it. */
  index: number;
  context: Uint8Array;
}

export type Message =
  | VoteRequest
  | VoteResponse
  | AppendRequest
  | AppendResponse
  | HeartbeatRequest
  | HeartbeatResponse
  | SnapshotChunk
  | SnapshotResponse
  | TimeoutNow
  | ReadIndexRequest
  | ReadIndexResponse;

/**
 * A Message as it travels (proto/fencelock/v1/raft.proto): one flat record whose fields mean different
 * things per type. Only the codec and tests that look at the wire use it; see narrowMessage and
 * flattenMessage in messages.ts for the mapping.
 */
export interface WireMessage {
  type: MessageType;
  from: NodeId;
  to: NodeId;
  term: number;
  logTerm: number;
  index: number;
  entries: Entry[];
  commit: number;
  reject: boolean;
  rejectHint: number;
  context: Uint8Array;
  snapshotMeta?: SnapshotMeta;
  snapshotOffset?: number;
  snapshotData?: Uint8Array;
  snapshotDone?: boolean;
}

/** A linearizable read may be served once the applied index reaches `index`. */
export interface ReadState {
  index: number;
  context: Uint8Array;
}

export interface SoftState {
  leader: NodeId;
  role: Role;
}

/**
 * One batch of work for the caller of the core, in this order:
 * 1. send `messages` (safe at once: they depend on nothing that is not yet durable),
 * 2. persist `snapshot`, `entries` and `hardState` in one synced write,
 * 3. send `messagesAfterPersist` (votes and acknowledgements: only once step 2 is durable),
 * 4. install `snapshot` into the state machine and apply `committedEntries`,
 * 5. call `advance(ready)`.
 */
export interface Ready {
  softState?: SoftState;
  hardState?: HardState;
  /** Entries to append; any stored entry at or above entries[0].index must be deleted in the same write. */
  entries: Entry[];
  /**
   * A snapshot received from the leader. When present, the stored log is replaced in the same write:
   * store the snapshot, delete every stored entry, then store `entries` (which then start right after
   * the snapshot: the entries the core kept, per the paper, plus any new ones).
   */
  snapshot?: Snapshot;
  committedEntries: Entry[];
  messages: Message[];
  messagesAfterPersist: Message[];
  readStates: ReadState[];
  /**
   * The write must be synced before messagesAfterPersist leave: it holds entries, a snapshot, or a new term
   * or vote. A hard state whose only change is the commit index need not be (a restarted node learns the
   * commit index again from the leader).
   */
  mustSync: boolean;
}

/** What a restarted node hands back to the core, as it was last persisted. */
export interface PersistedState {
  hardState: HardState;
  snapshot?: Snapshot;
  /** Entries after the snapshot, contiguous. */
  entries: Entry[];
}

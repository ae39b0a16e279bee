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
  /** Reserved for membership changes (the configuration lives in the core's state). */
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

export interface ClusterConfig {
  voters: NodeId[];
}

export interface SnapshotMeta {
  index: number;
  term: number;
  /**
   * The voters when the snapshot was taken. Informational: a node's voters come from its configuration
   * only (and, later, committed configuration entries), never from a snapshot or a message.
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
  /** AppendEntries: `index`/`logTerm` name the entry preceding `entries`. */
  App = 5,
  /** Reply to App. On reject, `rejectHint` is the follower's hint index and `logTerm` the term at it. */
  AppResp = 6,
  /** `commit` = min(leader commit, follower match). `index` = the leader's tick count when sent, echoed by HeartbeatResp. */
  Heartbeat = 7,
  HeartbeatResp = 8,
  /** One chunk of an InstallSnapshot: `snapshotMeta` on every chunk, `snapshotOffset`, `snapshotDone`. */
  Snap = 9,
  /**
   * Reply to a Snap chunk, echoing its `snapshotMeta`. Not done: `index` (= `snapshotOffset`) = bytes the
   * follower holds of that snapshot, the offset the leader continues from; `reject` marks a gap (a chunk
   * arrived ahead of that offset). Done (`snapshotDone`): `index` = the index up to which the follower now
   * matches the leader's log (the snapshot index, or its commit if that was newer).
   */
  SnapResp = 10,
  /**
   * Leadership transfer: the receiver campaigns at once, skipping pre-vote. Its Vote requests then carry
   * `context` = the ASCII bytes "transfer" (TRANSFER_CONTEXT in messages.ts), which voters honour even
   * while they still hear from the old leader (leader lease).
   */
  TimeoutNow = 11,
  /** A follower forwards a ReadIndex request to the leader. */
  ReadIndex = 12,
  ReadIndexResp = 13,
}

export interface Message {
  type: MessageType;
  from: NodeId;
  to: NodeId;
  term: number;
  /** App: term of the entry at `index`. Vote/PreVote: candidate's last log term. AppResp reject: term at hint. */
  logTerm: number;
  /** App: index preceding `entries`. Vote/PreVote: candidate's last index. AppResp: last matched index. */
  index: number;
  entries: Entry[];
  commit: number;
  reject: boolean;
  rejectHint: number;
  /** Heartbeat/HeartbeatResp/ReadIndex(Resp): opaque ReadIndex context. Vote: "transfer" (see TimeoutNow). Empty otherwise. */
  context: Uint8Array;
  /** Snap only. */
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

/** Deliberate bugs, switched on only by the simulator's self-test to prove that it catches them. */
export interface TestOnlyBugs {
  /** Commit an entry of a previous term by counting replicas (violates the paper's Figure 8 rule). */
  commitPreviousTermByCounting?: boolean;
  /** Grant votes without checking that the candidate's log is at least as up to date. */
  voteWithoutLogCheck?: boolean;
  /** Send acknowledgements (votes, append responses) before the state they depend on is durable. */
  ackBeforeSync?: boolean;
}

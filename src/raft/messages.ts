// Building, classifying and validating peer messages.

import { EntryType, MessageType, RAFT_NUMBER_LIMIT, type Entry, type Message, type NodeId, type SnapshotMeta, type VoteRequest, type WireMessage } from './types';

export const EMPTY_BYTES: Uint8Array = new Uint8Array(0);

/**
 * `context` of a Vote sent by a node campaigning because of TimeoutNow (leadership transfer): voters
 * grant it even while they still hear from the old leader (the leader lease would otherwise refuse it).
 * The ASCII bytes of "transfer", as in etcd's campaignTransfer.
 */
export const TRANSFER_CONTEXT: Uint8Array = new Uint8Array([0x74, 0x72, 0x61, 0x6e, 0x73, 0x66, 0x65, 0x72]);

export function isTransferContext(context: Uint8Array): boolean {
  if (context.length !== TRANSFER_CONTEXT.length) return false;
  return TRANSFER_CONTEXT.every((b, i) => context[i] === b);
}

// ---- the wire record <-> the union ----------------------------------------------------------------

/** A wire record's fields as `makeMessage` takes them: the envelope, the rest defaulting to zero/empty. */
export type WireFields = Pick<WireMessage, 'type' | 'from' | 'to' | 'term'> & Partial<WireMessage>;

/** Builds a message from wire fields (as a test or a forging peer would write them). */
export function makeMessage(fields: WireFields): Message {
  return narrowMessage({
    logTerm: 0,
    index: 0,
    entries: [],
    commit: 0,
    reject: false,
    rejectHint: 0,
    context: EMPTY_BYTES,
    ...fields,
  });
}

/**
 * The message a wire record carries: each type keeps the fields it has, under their own names. Only the
 * shape is mapped; whether the values make sense is isWellFormed's question (a Snap without its snapshot
 * fields comes out without them, and isWellFormed refuses it).
 */
export function narrowMessage(w: WireMessage): Message {
  const { type, from, to, term } = w;
  switch (type) {
    case MessageType.PreVote:
    case MessageType.Vote:
      return { type, from, to, term, lastLogIndex: w.index, lastLogTerm: w.logTerm, transfer: isTransferContext(w.context) };
    case MessageType.PreVoteResp:
    case MessageType.VoteResp:
      return { type, from, to, term, reject: w.reject };
    case MessageType.App:
      return { type, from, to, term, prevLogIndex: w.index, prevLogTerm: w.logTerm, entries: w.entries, commit: w.commit };
    case MessageType.AppResp:
      return w.reject === true
        ? { type, from, to, term, reject: true, rejectedIndex: w.index, hintIndex: w.rejectHint, hintTerm: w.logTerm }
        : { type, from, to, term, reject: w.reject, matchIndex: w.index } as Message;
    case MessageType.Heartbeat:
      return { type, from, to, term, commit: w.commit, sentAtTick: w.index, context: w.context };
    case MessageType.HeartbeatResp:
      return { type, from, to, term, sentAtTick: w.index, context: w.context, needsAppend: w.reject };
    case MessageType.Snap:
      return {
        type, from, to, term, meta: w.snapshotMeta, offset: w.snapshotOffset, data: w.snapshotData, done: w.snapshotDone, commit: w.commit,
      } as Message;
    case MessageType.SnapResp:
      return w.snapshotDone === true
        ? { type, from, to, term, meta: w.snapshotMeta, done: true, matchIndex: w.index } as Message
        : { type, from, to, term, meta: w.snapshotMeta, done: false, received: w.index, gap: w.reject } as Message;
    case MessageType.TimeoutNow:
      return { type, from, to, term };
    case MessageType.ReadIndex:
      return { type, from, to, term, context: w.context };
    case MessageType.ReadIndexResp:
      return { type, from, to, term, index: w.index, context: w.context };
    default:
      return { type, from, to, term } as unknown as Message; // an unknown type: isWellFormed refuses it
  }
}

/** The wire record of a message: exactly the fields (and so the bytes) this format has always carried. */
export function flattenMessage(m: Message): WireMessage {
  const w: WireMessage = {
    type: m.type, from: m.from, to: m.to, term: m.term,
    logTerm: 0, index: 0, entries: [], commit: 0, reject: false, rejectHint: 0, context: EMPTY_BYTES,
  };
  switch (m.type) {
    case MessageType.PreVote:
    case MessageType.Vote:
      return { ...w, index: m.lastLogIndex, logTerm: m.lastLogTerm, context: m.transfer ? TRANSFER_CONTEXT : EMPTY_BYTES };
    case MessageType.PreVoteResp:
    case MessageType.VoteResp:
      return { ...w, reject: m.reject };
    case MessageType.App:
      return { ...w, index: m.prevLogIndex, logTerm: m.prevLogTerm, entries: m.entries, commit: m.commit };
    case MessageType.AppResp:
      return m.reject
        ? { ...w, reject: true, index: m.rejectedIndex, rejectHint: m.hintIndex, logTerm: m.hintTerm }
        : { ...w, index: m.matchIndex };
    case MessageType.Heartbeat:
      return { ...w, commit: m.commit, index: m.sentAtTick, context: m.context };
    case MessageType.HeartbeatResp:
      return { ...w, index: m.sentAtTick, context: m.context, reject: m.needsAppend };
    case MessageType.Snap:
      // index/logTerm repeat the meta's, as every chunk always has.
      return {
        ...w, index: m.meta.index, logTerm: m.meta.term, commit: m.commit,
        snapshotMeta: m.meta, snapshotOffset: m.offset, snapshotData: m.data, snapshotDone: m.done,
      };
    case MessageType.SnapResp:
      return m.done
        ? { ...w, snapshotMeta: m.meta, index: m.matchIndex, snapshotDone: true }
        : { ...w, snapshotMeta: m.meta, index: m.received, snapshotOffset: m.received, snapshotDone: false, reject: m.gap };
    case MessageType.TimeoutNow:
      return w;
    case MessageType.ReadIndex:
      return { ...w, context: m.context };
    case MessageType.ReadIndexResp:
      return { ...w, index: m.index, context: m.context };
  }
}

/**
 * Messages that acknowledge or depend on durable state (a vote, a term, appended entries) leave only
 * after the Ready that made that state durable is persisted. Vote requests qualify: they carry the
 * candidate's new term and self-vote.
 */
const AFTER_PERSIST: ReadonlySet<MessageType> = new Set([
  MessageType.PreVote,
  MessageType.PreVoteResp,
  MessageType.Vote,
  MessageType.VoteResp,
  MessageType.AppResp,
  MessageType.HeartbeatResp,
  MessageType.SnapResp,
]);

export function sentAfterPersist(type: MessageType): boolean {
  return AFTER_PERSIST.has(type);
}

export function isVoteRequest(m: Message): m is VoteRequest {
  return m.type === MessageType.Vote || m.type === MessageType.PreVote;
}

export function voteResponseType(type: MessageType.Vote | MessageType.PreVote): MessageType.VoteResp | MessageType.PreVoteResp {
  return type === MessageType.Vote ? MessageType.VoteResp : MessageType.PreVoteResp;
}

// ---- validation: step() drops anything malformed instead of throwing --------------------------------

/** A term, index, commit, hint or offset: an integer in [0, RAFT_NUMBER_LIMIT). */
function isCount(x: unknown): x is number {
  return typeof x === 'number' && Number.isSafeInteger(x) && x >= 0 && x < RAFT_NUMBER_LIMIT;
}

/**
 * A term this node may adopt: one it can still increment (campaign at term + 1) and that its peers can
 * in turn adopt. A forged term at the limit would otherwise leave every node unable to elect anyone.
 */
export function isAdoptableTerm(term: number): boolean {
  return term + 2 < RAFT_NUMBER_LIMIT;
}

function isBytes(x: unknown): x is Uint8Array {
  return x instanceof Uint8Array;
}

function isNodeId(x: unknown): x is NodeId {
  return typeof x === 'string';
}

function isSnapshotMeta(x: unknown): x is SnapshotMeta {
  if (typeof x !== 'object' || x === null) return false;
  const m = x as Partial<SnapshotMeta>;
  if (m.crc32 !== undefined && !(Number.isInteger(m.crc32) && m.crc32 >= 0 && m.crc32 <= 0xffffffff)) return false;
  return (
    isCount(m.index) &&
    isCount(m.term) &&
    typeof m.config === 'object' &&
    m.config !== null &&
    Array.isArray(m.config.voters) &&
    m.config.voters.length > 0 &&
    m.config.voters.every(isNodeId) &&
    (m.config.learners === undefined || (Array.isArray(m.config.learners) && m.config.learners.every(isNodeId))) &&
    (m.config.removed === undefined || (Array.isArray(m.config.removed) && m.config.removed.every(isNodeId))) &&
    (m.config.addresses === undefined || (typeof m.config.addresses === 'object' && m.config.addresses !== null))
  );
}

const MESSAGE_TYPES: ReadonlySet<unknown> = new Set(
  Object.values(MessageType).filter((v) => typeof v === 'number'),
);

/**
 * Whether `x` is a message of a known type with every field its type has, in range, and the
 * protocol-level shape of that type. step() drops anything else; so does the codec at decode.
 */
export function isWellFormed(x: unknown): x is Message {
  if (typeof x !== 'object' || x === null) return false;
  const m = x as Record<string, unknown>;
  if (!MESSAGE_TYPES.has(m.type) || !isNodeId(m.from) || !isNodeId(m.to) || !isCount(m.term)) return false;
  const term = m.term;
  switch (m.type as MessageType) {
    case MessageType.PreVote:
    case MessageType.Vote:
      return isCount(m.lastLogIndex) && isCount(m.lastLogTerm) && m.lastLogTerm <= term && typeof m.transfer === 'boolean';
    case MessageType.PreVoteResp:
    case MessageType.VoteResp:
      return typeof m.reject === 'boolean';
    case MessageType.App:
      return isCount(m.prevLogIndex) && isCount(m.prevLogTerm) && m.prevLogTerm <= term && isCount(m.commit) &&
        areAppendedEntries(m.entries, m.prevLogIndex, m.prevLogTerm, term);
    case MessageType.AppResp:
      if (m.reject === true) return isCount(m.rejectedIndex) && isCount(m.hintIndex) && isCount(m.hintTerm);
      return m.reject === false && isCount(m.matchIndex);
    case MessageType.Heartbeat:
      return isCount(m.commit) && isCount(m.sentAtTick) && isBytes(m.context);
    case MessageType.HeartbeatResp:
      return isCount(m.sentAtTick) && isBytes(m.context) && typeof m.needsAppend === 'boolean';
    case MessageType.Snap:
      return (
        isSnapshotMeta(m.meta) && m.meta.index > 0 && m.meta.term > 0 && m.meta.term <= term &&
        isCount(m.offset) && isBytes(m.data) && typeof m.done === 'boolean' && isCount(m.commit)
      );
    case MessageType.SnapResp:
      if (!isSnapshotMeta(m.meta)) return false;
      if (m.done === true) return isCount(m.matchIndex);
      return m.done === false && isCount(m.received) && typeof m.gap === 'boolean';
    case MessageType.TimeoutNow:
      return true;
    case MessageType.ReadIndex:
      return isBytes(m.context);
    case MessageType.ReadIndexResp:
      return isCount(m.index) && isBytes(m.context);
  }
}

/** Entries follow `prevIndex` contiguously, with terms that never go back and never exceed the sender's. */
function areAppendedEntries(x: unknown, prevIndex: number, prevTerm: number, term: number): x is Entry[] {
  if (!Array.isArray(x)) return false;
  let lastTerm = prevTerm;
  for (let i = 0; i < x.length; i++) {
    const e = x[i] as unknown;
    if (typeof e !== 'object' || e === null) return false;
    const en = e as Partial<Entry>;
    if (en.index !== prevIndex + 1 + i || !isCount(en.term) || en.term < 1) return false;
    if (en.term < lastTerm || en.term > term || !isBytes(en.data)) return false;
    if (en.type !== EntryType.Normal && en.type !== EntryType.ConfChange) return false;
    lastTerm = en.term;
  }
  return true;
}

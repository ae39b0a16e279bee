// Building, classifying and validating peer messages.

import { EntryType, MessageType, RAFT_NUMBER_LIMIT, type Message, type NodeId, type SnapshotMeta } from './types';

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

type Required4 = Pick<Message, 'type' | 'from' | 'to' | 'term'>;

export function makeMessage(fields: Required4 & Partial<Message>): Message {
  return {
    logTerm: 0,
    index: 0,
    entries: [],
    commit: 0,
    reject: false,
    rejectHint: 0,
    context: EMPTY_BYTES,
    ...fields,
  };
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

export function isVoteRequest(type: MessageType): boolean {
  return type === MessageType.Vote || type === MessageType.PreVote;
}

export function voteResponseType(type: MessageType.Vote | MessageType.PreVote): MessageType {
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
    m.config.voters.every(isNodeId)
  );
}

const MESSAGE_TYPES: ReadonlySet<unknown> = new Set(
  Object.values(MessageType).filter((v) => typeof v === 'number'),
);

/** Structural checks plus the protocol-level shape of each message type. */
export function isWellFormed(x: unknown): x is Message {
  if (typeof x !== 'object' || x === null) return false;
  const m = x as Partial<Message>;
  if (!MESSAGE_TYPES.has(m.type) || !isNodeId(m.from) || !isNodeId(m.to)) return false;
  if (!isCount(m.term) || !isCount(m.logTerm) || !isCount(m.index) || !isCount(m.commit)) return false;
  if (!isCount(m.rejectHint) || typeof m.reject !== 'boolean' || !isBytes(m.context)) return false;
  if (!Array.isArray(m.entries)) return false;
  switch (m.type) {
    case MessageType.App: {
      if (m.logTerm > m.term) return false;
      // Entries follow `index` contiguously, with terms that never go back and never exceed the sender's.
      let prevTerm = m.logTerm;
      for (let i = 0; i < m.entries.length; i++) {
        const e = m.entries[i] as unknown;
        if (typeof e !== 'object' || e === null) return false;
        const en = e as Partial<Message['entries'][number]>;
        if (en.index !== m.index + 1 + i || !isCount(en.term) || en.term < 1) return false;
        if (en.term < prevTerm || en.term > m.term || !isBytes(en.data)) return false;
        if (en.type !== EntryType.Normal && en.type !== EntryType.ConfChange) return false;
        prevTerm = en.term;
      }
      return true;
    }
    case MessageType.Vote:
    case MessageType.PreVote:
      return m.logTerm <= m.term;
    case MessageType.Snap:
      return (
        isSnapshotMeta(m.snapshotMeta) &&
        m.snapshotMeta.index > 0 &&
        m.snapshotMeta.term > 0 &&
        m.snapshotMeta.term <= m.term &&
        isCount(m.snapshotOffset) &&
        isBytes(m.snapshotData) &&
        typeof m.snapshotDone === 'boolean'
      );
    case MessageType.SnapResp:
      return isSnapshotMeta(m.snapshotMeta) && (m.snapshotDone === undefined || typeof m.snapshotDone === 'boolean');
    default:
      return true;
  }
}

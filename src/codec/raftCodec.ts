/**
 * Binary codec for Raft log records and peer messages (proto/fencelock/v1/raft.proto), on protobufjs.
 *
 * - Hot path: protobufjs' generated Type.encode/Type.decode with plain objects and direct field access; no
 *   JSON, no toObject().
 * - uint64 <-> number: every index/term/offset is checked to be a non-negative integer below RAFT_NUMBER_LIMIT
 *   (2^48, see src/raft/types.ts) on encode and on decode; anything else is refused with a CodecError (never
 *   rounded). A peer's batch carrying such a value is dropped whole at this boundary.
 * - Missing bytes fields decode to an empty Uint8Array, missing strings to '', missing bools to false.
 * - Decoded bytes fields (entry data, context, snapshot data) are zero-copy Uint8Array VIEWS into the input
 *   buffer: do not reuse or overwrite a buffer after decoding it. (A small view keeps its whole input buffer
 *   alive; copy with `.slice()` if that matters.)
 * - Unknown enum values (e.g. a MessageType this version does not know) are refused on decode.
 */
import * as protobuf from 'protobufjs';
import {
  EntryType,
  MessageType,
  RAFT_NUMBER_LIMIT,
  type ClusterConfig,
  type Entry,
  type HardState,
  type Message,
  type Snapshot,
  type SnapshotMeta,
  type WireMessage,
} from '../raft/types';
import { storedConfig } from '../raft/confChange';
import { flattenMessage, isWellFormed, narrowMessage } from '../raft/messages';
import { protoFile } from './protoPath';

/** A value could not be encoded or a buffer could not be decoded. */
export class CodecError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'CodecError';
  }
}

/** The loaded protobufjs root of proto/fencelock/v1/raft.proto (for colleagues that need the reflection). */
export const raftProtoRoot: protobuf.Root = protobuf.loadSync(protoFile('fencelock/v1/raft.proto'));

const EntryProto = raftProtoRoot.lookupType('fencelock.v1.Entry');
const HardStateProto = raftProtoRoot.lookupType('fencelock.v1.HardState');
const SnapshotMetaProto = raftProtoRoot.lookupType('fencelock.v1.SnapshotMeta');
const StoredSnapshotProto = raftProtoRoot.lookupType('fencelock.v1.StoredSnapshot');
const SnapshotManifestProto = raftProtoRoot.lookupType('fencelock.v1.SnapshotManifest');
const LogSegmentProto = raftProtoRoot.lookupType('fencelock.v1.LogSegment');
const MessageProto = raftProtoRoot.lookupType('fencelock.v1.Message');
const MessageBatchProto = raftProtoRoot.lookupType('fencelock.v1.MessageBatch');

// ---------------------------------------------------------------------------------------------------------
// Scalars

const TWO_POW_32 = 2 ** 32;
/** Values must be below RAFT_NUMBER_LIMIT = 2^48: the high 32 bits of a uint64 must then be below 2^16. */
const LIMIT_HIGH = RAFT_NUMBER_LIMIT / TWO_POW_32;

/** Checks a number about to be written as uint64. */
function u64In(value: number, field: string): number {
  if (!Number.isSafeInteger(value) || value < 0 || value >= RAFT_NUMBER_LIMIT) {
    throw new CodecError(`${field} must be a non-negative integer below 2^48, got ${String(value)}`);
  }
  return value;
}

/** Converts a decoded uint64 (a Long, or a number when long.js is absent) to a number below 2^48. */
function u64Out(value: unknown, field: string): number {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value) || value < 0 || value >= RAFT_NUMBER_LIMIT) {
      throw new CodecError(`${field} = ${value} is not a non-negative integer below 2^48`);
    }
    return value;
  }
  if (value === null || value === undefined) return 0;
  const long = value as { low: number; high: number; toString(): string };
  const high = long.high >>> 0;
  if (high >= LIMIT_HIGH) {
    throw new CodecError(`${field} = ${long.toString()} exceeds the limit 2^48 - 1`);
  }
  return high * TWO_POW_32 + (long.low >>> 0);
}

function bytesIn(value: Uint8Array, field: string): Uint8Array {
  if (!(value instanceof Uint8Array)) {
    throw new CodecError(`${field} must be a Uint8Array, got ${typeof value}`);
  }
  return value;
}

/** Decoded bytes: protobufjs gives a Buffer view (or [] as the proto3 default); we hand out a plain Uint8Array. */
function bytesOut(value: unknown): Uint8Array {
  if (value instanceof Uint8Array) {
    return value.constructor === Uint8Array ? value : new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  }
  return new Uint8Array(0);
}

function stringIn(value: string, field: string): string {
  if (typeof value !== 'string') throw new CodecError(`${field} must be a string, got ${typeof value}`);
  return value;
}

function stringOut(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function entryTypeIn(value: EntryType, field: string): number {
  if (value !== EntryType.Normal && value !== EntryType.ConfChange) {
    throw new CodecError(`${field} is not a known EntryType: ${String(value)}`);
  }
  return value;
}

function entryTypeOut(value: unknown, field: string): EntryType {
  if (value === undefined || value === null) return EntryType.Normal;
  if (value !== EntryType.Normal && value !== EntryType.ConfChange) {
    throw new CodecError(`${field} is not a known EntryType: ${String(value)}`);
  }
  return value;
}

function isMessageType(value: unknown): value is MessageType {
  return typeof value === 'number' && Number.isInteger(value) && value >= MessageType.PreVote &&
    value <= MessageType.ReadIndexResp;
}

function messageTypeIn(value: MessageType): number {
  if (!isMessageType(value)) throw new CodecError(`message type is not a known MessageType: ${String(value)}`);
  return value;
}

function messageTypeOut(value: unknown): MessageType {
  if (!isMessageType(value)) throw new CodecError(`message type is not a known MessageType: ${String(value)}`);
  return value;
}

// ---------------------------------------------------------------------------------------------------------
// Records: TS object <-> plain protobufjs object

/** The decoded shape protobufjs hands out (fields may be absent or defaults). */
type Decoded = Record<string, unknown>;

function has(obj: Decoded, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(obj, key);
}

function entryToProto(e: Entry, field: string): Decoded {
  return {
    term: u64In(e.term, `${field}.term`),
    index: u64In(e.index, `${field}.index`),
    type: entryTypeIn(e.type, `${field}.type`),
    data: bytesIn(e.data, `${field}.data`),
  };
}

function entryFromProto(m: Decoded, field: string): Entry {
  return {
    term: u64Out(m.term, `${field}.term`),
    index: u64Out(m.index, `${field}.index`),
    type: entryTypeOut(m.type, `${field}.type`),
    data: bytesOut(m.data),
  };
}

function configToProto(c: ClusterConfig, field: string): Decoded {
  if (!c || !Array.isArray(c.voters)) throw new CodecError(`${field}.voters must be an array`);
  for (const v of c.voters) stringIn(v, `${field}.voters[]`);
  const learners = c.learners ?? [];
  if (!Array.isArray(learners)) throw new CodecError(`${field}.learners must be an array`);
  for (const v of learners) stringIn(v, `${field}.learners[]`);
  const addresses = Object.entries(c.addresses ?? {}).map(([id, a]) => ({
    id: stringIn(id, `${field}.addresses`),
    client: stringIn(a?.client, `${field}.addresses.${id}.client`),
    peer: stringIn(a?.peer, `${field}.addresses.${id}.peer`),
  }));
  const removed = c.removed ?? [];
  if (!Array.isArray(removed)) throw new CodecError(`${field}.removed must be an array`);
  for (const v of removed) stringIn(v, `${field}.removed[]`);
  return { voters: c.voters, learners, addresses, removed };
}

function configFromProto(m: unknown): ClusterConfig {
  const d = (m ?? {}) as Decoded;
  const list = (v: unknown): string[] => (Array.isArray(v) ? (v as unknown[]).map(stringOut) : []);
  const addresses: ClusterConfig['addresses'] = {};
  for (const a of Array.isArray(d.addresses) ? (d.addresses as Decoded[]) : []) {
    addresses[stringOut(a.id)] = { client: stringOut(a.client), peer: stringOut(a.peer) };
  }
  return storedConfig({ voters: list(d.voters), learners: list(d.learners), addresses, removed: list(d.removed) });
}

function metaToProto(meta: SnapshotMeta, field: string): Decoded {
  if (!meta) throw new CodecError(`${field} is missing`);
  const o: Decoded = {
    index: u64In(meta.index, `${field}.index`),
    term: u64In(meta.term, `${field}.term`),
    config: configToProto(meta.config, `${field}.config`),
  };
  if (meta.crc32 !== undefined) {
    if (!Number.isInteger(meta.crc32) || meta.crc32 < 0 || meta.crc32 > 0xffffffff) {
      throw new CodecError(`${field}.crc32 must be a uint32, got ${String(meta.crc32)}`);
    }
    o.crc32 = meta.crc32;
  }
  return o;
}

function metaFromProto(m: unknown, field: string): SnapshotMeta {
  if (m === null || m === undefined) throw new CodecError(`${field} is missing`);
  const d = m as Decoded;
  const meta: SnapshotMeta = {
    index: u64Out(d.index, `${field}.index`),
    term: u64Out(d.term, `${field}.term`),
    config: configFromProto(d.config),
  };
  // Present on the TS side exactly when present on the wire (proto3 optional).
  if (has(d, 'crc32')) meta.crc32 = typeof d.crc32 === 'number' ? d.crc32 >>> 0 : 0;
  return meta;
}

/**
 * Every field of the flat WireMessage, mapped below. `satisfies` makes tsc fail here when someone adds a
 * field to WireMessage in src/raft/types.ts without teaching the codec (and the .proto) about it. The
 * typed messages the core reads (Message) are mapped to and from it by src/raft/messages.ts.
 */
export const MESSAGE_FIELDS = {
  type: 1, from: 2, to: 3, term: 4, logTerm: 5, index: 6, entries: 7, commit: 8, reject: 9, rejectHint: 10,
  context: 11, snapshotMeta: 12, snapshotOffset: 13, snapshotData: 14, snapshotDone: 15,
} as const satisfies Record<keyof WireMessage, number>;

function messageToProto(m: WireMessage): Decoded {
  const o: Decoded = {
    type: messageTypeIn(m.type),
    from: stringIn(m.from, 'message.from'),
    to: stringIn(m.to, 'message.to'),
  };
  // Zero/empty scalars are left out (proto3 defaults): smaller heartbeats, same decode result.
  if (m.term !== 0) o.term = u64In(m.term, 'message.term');
  if (m.logTerm !== 0) o.logTerm = u64In(m.logTerm, 'message.logTerm');
  if (m.index !== 0) o.index = u64In(m.index, 'message.index');
  if (m.commit !== 0) o.commit = u64In(m.commit, 'message.commit');
  if (m.rejectHint !== 0) o.rejectHint = u64In(m.rejectHint, 'message.rejectHint');
  if (m.reject) o.reject = true;
  if (!Array.isArray(m.entries)) throw new CodecError('message.entries must be an array');
  if (m.entries.length > 0) {
    o.entries = m.entries.map((e, i) => entryToProto(e, `message.entries[${i}]`));
  }
  if (bytesIn(m.context, 'message.context').length > 0) o.context = m.context;
  if (m.snapshotMeta !== undefined) o.snapshotMeta = metaToProto(m.snapshotMeta, 'message.snapshotMeta');
  if (m.snapshotOffset !== undefined) o.snapshotOffset = u64In(m.snapshotOffset, 'message.snapshotOffset');
  if (m.snapshotData !== undefined) o.snapshotData = bytesIn(m.snapshotData, 'message.snapshotData');
  if (m.snapshotDone !== undefined) o.snapshotDone = m.snapshotDone === true;
  return o;
}

function messageFromProto(d: Decoded): WireMessage {
  const rawEntries = d.entries as Decoded[] | undefined;
  const entries: Entry[] = (rawEntries ?? []).map((e, i) => entryFromProto(e, `message.entries[${i}]`));
  const m: WireMessage = {
    type: messageTypeOut(d.type),
    from: stringOut(d.from),
    to: stringOut(d.to),
    term: u64Out(d.term, 'message.term'),
    logTerm: u64Out(d.logTerm, 'message.logTerm'),
    index: u64Out(d.index, 'message.index'),
    entries,
    commit: u64Out(d.commit, 'message.commit'),
    reject: d.reject === true,
    rejectHint: u64Out(d.rejectHint, 'message.rejectHint'),
    context: bytesOut(d.context),
  };
  // Optional fields: present on the TS side exactly when present on the wire.
  if (d.snapshotMeta !== null && d.snapshotMeta !== undefined) {
    m.snapshotMeta = metaFromProto(d.snapshotMeta, 'message.snapshotMeta');
  }
  if (has(d, 'snapshotOffset')) m.snapshotOffset = u64Out(d.snapshotOffset, 'message.snapshotOffset');
  if (has(d, 'snapshotData')) m.snapshotData = bytesOut(d.snapshotData);
  if (has(d, 'snapshotDone')) m.snapshotDone = d.snapshotDone === true;
  return m;
}

// ---------------------------------------------------------------------------------------------------------
// encode/decode helpers

function encode(type: protobuf.Type, obj: Decoded): Uint8Array {
  return type.encode(obj).finish();
}

function decode(type: protobuf.Type, bytes: Uint8Array, what: string): Decoded {
  if (!(bytes instanceof Uint8Array)) throw new CodecError(`cannot decode ${what}: input is not a Uint8Array`);
  try {
    return type.decode(bytes) as unknown as Decoded;
  } catch (err) {
    throw new CodecError(`cannot decode ${what} (${bytes.length} bytes): ${(err as Error).message}`, { cause: err });
  }
}

// ---------------------------------------------------------------------------------------------------------
// Public API

export function encodeEntry(entry: Entry): Uint8Array {
  return encode(EntryProto, entryToProto(entry, 'entry'));
}

export function decodeEntry(bytes: Uint8Array): Entry {
  return entryFromProto(decode(EntryProto, bytes, 'Entry'), 'entry');
}

/** Consecutive entries as one record (LevelStorage's value for one persisted batch). */
export function encodeLogSegment(entries: readonly Entry[]): Uint8Array {
  return encode(LogSegmentProto, { entries: entries.map((e, i) => entryToProto(e, `entries[${i}]`)) });
}

export function decodeLogSegment(bytes: Uint8Array): Entry[] {
  const m = decode(LogSegmentProto, bytes, 'LogSegment');
  const list = Array.isArray(m.entries) ? (m.entries as Decoded[]) : [];
  return list.map((e, i) => entryFromProto(e, `entries[${i}]`));
}

export function encodeHardState(hs: HardState): Uint8Array {
  return encode(HardStateProto, {
    term: u64In(hs.term, 'hardState.term'),
    vote: stringIn(hs.vote, 'hardState.vote'),
    commit: u64In(hs.commit, 'hardState.commit'),
  });
}

export function decodeHardState(bytes: Uint8Array): HardState {
  const d = decode(HardStateProto, bytes, 'HardState');
  return {
    term: u64Out(d.term, 'hardState.term'),
    vote: stringOut(d.vote),
    commit: u64Out(d.commit, 'hardState.commit'),
  };
}

export function encodeSnapshotMeta(meta: SnapshotMeta): Uint8Array {
  return encode(SnapshotMetaProto, metaToProto(meta, 'snapshotMeta'));
}

export function decodeSnapshotMeta(bytes: Uint8Array): SnapshotMeta {
  return metaFromProto(decode(SnapshotMetaProto, bytes, 'SnapshotMeta'), 'snapshotMeta');
}

/** A whole snapshot (meta + data) as one StoredSnapshot record. */
export function encodeStoredSnapshot(snapshot: Snapshot): Uint8Array {
  return encode(StoredSnapshotProto, {
    meta: metaToProto(snapshot.meta, 'snapshot.meta'),
    data: bytesIn(snapshot.data, 'snapshot.data'),
  });
}

export function decodeStoredSnapshot(bytes: Uint8Array): Snapshot {
  const d = decode(StoredSnapshotProto, bytes, 'StoredSnapshot');
  return { meta: metaFromProto(d.meta, 'snapshot.meta'), data: bytesOut(d.data) };
}

/** Storage-internal description of a chunked snapshot. */
export interface SnapshotManifest {
  meta: SnapshotMeta;
  dataLength: number;
  chunkCount: number;
}

export function encodeSnapshotManifest(manifest: SnapshotManifest): Uint8Array {
  const chunkCount = manifest.chunkCount;
  if (!Number.isInteger(chunkCount) || chunkCount < 0 || chunkCount > 0xffffffff) {
    throw new CodecError(`manifest.chunkCount must be a uint32, got ${chunkCount}`);
  }
  return encode(SnapshotManifestProto, {
    meta: metaToProto(manifest.meta, 'manifest.meta'),
    dataLength: u64In(manifest.dataLength, 'manifest.dataLength'),
    chunkCount,
  });
}

export function decodeSnapshotManifest(bytes: Uint8Array): SnapshotManifest {
  const d = decode(SnapshotManifestProto, bytes, 'SnapshotManifest');
  return {
    meta: metaFromProto(d.meta, 'manifest.meta'),
    dataLength: u64Out(d.dataLength, 'manifest.dataLength'),
    chunkCount: typeof d.chunkCount === 'number' ? d.chunkCount >>> 0 : 0,
  };
}

/** One flat wire record, as is (no narrowing): for tools and tests that look at the wire itself. */
export function encodeMessage(message: WireMessage): Uint8Array {
  return encode(MessageProto, messageToProto(message));
}

export function decodeMessage(bytes: Uint8Array): WireMessage {
  return messageFromProto(decode(MessageProto, bytes, 'Message'));
}

export function encodeMessageBatch(messages: readonly Message[]): Uint8Array {
  return encode(MessageBatchProto, { messages: messages.map((m) => messageToProto(flattenMessage(m))) });
}

/**
 * The peer boundary: a batch whose bytes or numbers are malformed is refused whole (CodecError); each
 * record is then narrowed to its type's shape, and one that fails the protocol-level checks
 * (isWellFormed: say an App whose entries are not contiguous) is dropped alone, silently, as the core
 * has always dropped it. What reaches the core is exactly what it accepted before.
 */
export function decodeMessageBatch(bytes: Uint8Array): Message[] {
  const d = decode(MessageBatchProto, bytes, 'MessageBatch');
  const raw = (d.messages as Decoded[] | undefined) ?? [];
  const wire = raw.map(messageFromProto);
  const out: Message[] = [];
  for (const w of wire) {
    const m = narrowMessage(w);
    if (isWellFormed(m)) out.push(m);
  }
  return out;
}

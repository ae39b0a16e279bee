import * as fs from 'fs';
import * as path from 'path';
import { describe, expect, it } from 'vitest';
import {
  CodecError,
  decodeEntry,
  decodeHardState,
  decodeMessage,
  decodeMessageBatch,
  decodeSnapshotManifest,
  decodeSnapshotMeta,
  decodeStoredSnapshot,
  encodeEntry,
  encodeHardState,
  encodeMessage,
  encodeMessageBatch,
  encodeSnapshotManifest,
  encodeSnapshotMeta,
  encodeStoredSnapshot,
  MESSAGE_FIELDS,
  raftProtoRoot,
} from '../../src/codec/raftCodec';
import { protoFile, protoRoot } from '../../src/codec/protoPath';
import { TRANSFER_CONTEXT, flattenMessage, makeMessage, narrowMessage } from '../../src/raft/messages';
import { EntryType, MessageType, RAFT_NUMBER_LIMIT, type WireMessage as Message } from '../../src/raft/types';
import { ent, snap } from './helpers';

/** The largest term/index the codec accepts (RAFT_NUMBER_LIMIT - 1). */
const MAX = RAFT_NUMBER_LIMIT - 1;

function msg(overrides: Partial<Message> = {}): Message {
  return {
    type: MessageType.App, from: 'n1', to: 'n2', term: 0, logTerm: 0, index: 0, entries: [], commit: 0,
    reject: false, rejectHint: 0, context: new Uint8Array(0), ...overrides,
  };
}

/** A message with every field of Message set, including the optional snapshot chunk fields. */
function fullMessage(): Message {
  return {
    type: MessageType.Snap, from: 'node-1', to: 'node-2', term: MAX, logTerm: MAX - 1, index: 2 ** 40 + 3,
    entries: [ent(1, 1), ent(MAX, MAX, new Uint8Array([0, 1, 2]), EntryType.ConfChange), ent(3, 2, '')],
    commit: 12345678901, reject: true, rejectHint: 2 ** 32, context: new Uint8Array([9, 8, 7]),
    snapshotMeta: { index: MAX, term: 7, config: { voters: ['a', 'b', 'c'] }, crc32: 0xffffffff },
    snapshotOffset: 2 ** 33, snapshotData: new Uint8Array([1, 2, 3, 4]), snapshotDone: true,
  };
}

/** Encodes with the raw protobufjs type, bypassing our checks (to produce what a foreign peer could send). */
function raw(typeName: string, obj: Record<string, unknown>): Uint8Array {
  return raftProtoRoot.lookupType(`fencelock.v1.${typeName}`).encode(obj).finish();
}

describe('proto path', () => {
  it('finds proto/ by walking up from the module, and resolves files in it', () => {
    expect(fs.existsSync(protoFile('fencelock/v1/raft.proto'))).toBe(true);
    expect(path.basename(protoRoot())).toBe('proto');
    expect(() => protoFile('fencelock/v1/nope.proto')).toThrow(/nope\.proto not found/);
  });

  it('the proto declares the peer service', () => {
    const svc = raftProtoRoot.lookupService('fencelock.v1.RaftPeer');
    const stream = svc.methods['Stream']!;
    expect(stream.requestType).toBe('MessageBatch');
    expect(stream.responseType).toBe('PeerAck');
    expect(stream.requestStream).toBe(true);
    expect(stream.responseStream).toBe(true);
  });
});

describe('codec round trips', () => {
  it('Entry, including max safe integers, empty data and every type', () => {
    for (const e of [ent(1, 1), ent(MAX, MAX, new Uint8Array(1000).fill(3)), ent(2, 3, ''), ent(4, 5, 'cc', EntryType.ConfChange)]) {
      const back = decodeEntry(encodeEntry(e));
      expect(back).toEqual(e);
      expect(back.data.constructor).toBe(Uint8Array);
    }
    const empty = decodeEntry(new Uint8Array(0));
    expect(empty).toEqual({ term: 0, index: 0, type: EntryType.Normal, data: new Uint8Array(0) });
  });

  it('HardState', () => {
    for (const hs of [{ term: 0, vote: '', commit: 0 }, { term: MAX, vote: 'n-ü-1', commit: MAX }]) {
      expect(decodeHardState(encodeHardState(hs))).toEqual(hs);
    }
  });

  it('SnapshotMeta, StoredSnapshot and SnapshotManifest', () => {
    const meta = { index: MAX, term: 3, config: { voters: ['n1', 'n2'] } };
    expect(decodeSnapshotMeta(encodeSnapshotMeta(meta))).toEqual(meta);
    const noVoters = { index: 1, term: 1, config: { voters: [] } };
    expect(decodeSnapshotMeta(encodeSnapshotMeta(noVoters))).toEqual(noVoters);
    const s = snap(10, 2, new Uint8Array([5, 6, 7]));
    expect(decodeStoredSnapshot(encodeStoredSnapshot(s))).toEqual(s);
    const m = { meta, dataLength: 2 ** 40, chunkCount: 0xffffffff };
    expect(decodeSnapshotManifest(encodeSnapshotManifest(m))).toEqual(m);
  });

  it('Message with every field set', () => {
    const m = fullMessage();
    const back = decodeMessage(encodeMessage(m));
    expect(back).toEqual(m);
    expect(Object.keys(back).sort()).toEqual(Object.keys(MESSAGE_FIELDS).sort());
    expect(back.context.constructor).toBe(Uint8Array);
    expect(back.snapshotData!.constructor).toBe(Uint8Array);
  });

  it('Message without optional fields keeps them absent; defaults are empty bytes, false, 0', () => {
    const back = decodeMessage(encodeMessage(msg({ type: MessageType.Heartbeat })));
    expect(back).toStrictEqual(msg({ type: MessageType.Heartbeat }));
    expect('snapshotMeta' in back || 'snapshotOffset' in back || 'snapshotData' in back || 'snapshotDone' in back).toBe(false);
    expect(back.context).toBeInstanceOf(Uint8Array);
    expect(back.context).toHaveLength(0);
    expect(back.reject).toBe(false);
  });

  it('optional snapshot fields with zero/false/empty values are kept as present', () => {
    const m = msg({
      type: MessageType.Snap, snapshotMeta: { index: 0, term: 0, config: { voters: [] } }, snapshotOffset: 0,
      snapshotData: new Uint8Array(0), snapshotDone: false,
    });
    expect(decodeMessage(encodeMessage(m))).toStrictEqual(m);
  });

  it('every MessageType value', () => {
    const types = Object.values(MessageType).filter((v): v is MessageType => typeof v === 'number');
    expect(types).toHaveLength(13);
    for (const type of types) {
      const m = msg({ type, term: 3, index: 4, commit: 2, reject: type === MessageType.AppResp, context: new Uint8Array([type]) });
      expect(decodeMessage(encodeMessage(m))).toStrictEqual(m);
    }
  });

  it('MessageBatch: typed messages in, the same typed messages out', () => {
    const batch = [fullMessage(), msg({ type: MessageType.Vote, term: 5, logTerm: 4, index: 99 }), msg({ type: MessageType.AppResp, reject: true, rejectHint: 7 })]
      .map(narrowMessage);
    expect(decodeMessageBatch(encodeMessageBatch(batch))).toEqual(batch);
    expect(decodeMessageBatch(encodeMessageBatch([]))).toEqual([]);
  });

  it('MessageBatch: a record that fails the protocol checks is dropped alone, as the core always dropped it', () => {
    const good = makeMessage({ type: MessageType.Heartbeat, from: 'n1', to: 'n2', term: 3, commit: 1 });
    const batch = raw('MessageBatch', {
      messages: [
        { type: MessageType.Snap, from: 'n1', to: 'n2', term: 3 }, // no snapshot fields
        { type: MessageType.App, from: 'n1', to: 'n2', term: 3, index: 1, logTerm: 1, entries: [{ index: 5, term: 3 }] }, // not contiguous
        { type: MessageType.Heartbeat, from: 'n1', to: 'n2', term: 3, commit: 1 },
      ],
    });
    expect(decodeMessageBatch(batch)).toEqual([good]);
  });

  it('narrowing and flattening again gives the same bytes for the records the core sends', () => {
    const meta = { index: 9, term: 2, config: { voters: ['a', 'b', 'c'] }, crc32: 5 };
    const records = [
      msg({ type: MessageType.SnapResp, from: 'b', to: 'a', term: 2, snapshotMeta: meta, index: 64, snapshotOffset: 64, snapshotDone: false, reject: true }),
      msg({ type: MessageType.SnapResp, from: 'b', to: 'a', term: 2, snapshotMeta: meta, index: 9, snapshotDone: true }),
      msg({ type: MessageType.Snap, from: 'a', to: 'b', term: 2, index: 9, logTerm: 2, commit: 7, snapshotMeta: meta, snapshotOffset: 0, snapshotData: new Uint8Array([1]), snapshotDone: true }),
      msg({ type: MessageType.HeartbeatResp, from: 'b', to: 'a', term: 2, index: 40, context: new Uint8Array([1]), reject: true }),
      msg({ type: MessageType.AppResp, from: 'b', to: 'a', term: 2, index: 5, reject: true, rejectHint: 3, logTerm: 1 }),
      msg({ type: MessageType.Vote, from: 'b', to: 'a', term: 2, index: 5, logTerm: 1, context: TRANSFER_CONTEXT }),
    ];
    for (const r of records) expect(encodeMessage(flattenMessage(narrowMessage(r)))).toEqual(encodeMessage(r));
  });

  it('decoded bytes are views: they survive but alias the input buffer', () => {
    const buf = encodeEntry(ent(1, 1, new Uint8Array([1, 2, 3])));
    const e = decodeEntry(buf);
    expect(e.data.buffer).toBe(buf.buffer);
  });
});

describe('codec limits and errors', () => {
  it('refuses to encode unsafe, negative or fractional integers, and anything at or above 2^48', () => {
    expect(() => encodeEntry(ent(2 ** 53, 1))).toThrow(/entry.index must be a non-negative integer below 2\^48/);
    expect(() => encodeEntry(ent(2 ** 48, 1))).toThrow(/entry.index must be a non-negative integer below 2\^48/);
    expect(() => encodeEntry(ent(1, -1))).toThrow(CodecError);
    expect(() => encodeHardState({ term: 1.5, vote: '', commit: 0 })).toThrow(/hardState.term/);
    expect(() => encodeMessage(msg({ commit: NaN }))).toThrow(/message.commit/);
    expect(() => encodeMessage(msg({ snapshotOffset: 2 ** 60 }))).toThrow(/message.snapshotOffset/);
    expect(() => encodeMessage(msg({ entries: [ent(1, 2 ** 53 + 2)] }))).toThrow(/message.entries\[0\].term/);
  });

  it('refuses to decode a uint64 at or above 2^48 (RAFT_NUMBER_LIMIT)', () => {
    expect(decodeEntry(raw('Entry', { index: String(MAX), term: 1 })).index).toBe(MAX);
    expect(() => decodeEntry(raw('Entry', { index: '281474976710656', term: 1 }))).toThrow(/entry.index = 281474976710656 exceeds the limit 2\^48 - 1/);
    expect(() => decodeEntry(raw('Entry', { index: '9007199254740992', term: 1 }))).toThrow(/entry.index = 9007199254740992 exceeds/);
    expect(() => decodeHardState(raw('HardState', { term: '18446744073709551615' }))).toThrow(/hardState.term = 18446744073709551615 exceeds/);
    expect(() => decodeMessage(raw('Message', { type: 5, entries: [{ index: 1, term: '9007199254740993' }] }))).toThrow(
      /message.entries\[0\].term = 9007199254740993 exceeds/,
    );
    expect(() => decodeMessageBatch(raw('MessageBatch', { messages: [{ type: 9, snapshotOffset: '9007199254740992' }] }))).toThrow(
      /message.snapshotOffset = 9007199254740992 exceeds/,
    );
  });

  it('hardening: a Heartbeat at term 2^53 - 1 is refused at decode, so its batch is dropped', () => {
    const batch = raw('MessageBatch', {
      messages: [
        { type: MessageType.Heartbeat, from: 'n1', to: 'n2', term: 5 },
        { type: MessageType.Heartbeat, from: 'n1', to: 'n2', term: '9007199254740991' },
      ],
    });
    expect(() => decodeMessageBatch(batch)).toThrow(CodecError);
    expect(() => decodeMessage(raw('Message', { type: MessageType.Heartbeat, term: String(2 ** 48) }))).toThrow(/message.term/);
    expect(decodeMessage(raw('Message', { type: MessageType.Heartbeat, term: String(MAX) })).term).toBe(MAX);
  });

  it('refuses unknown enum values', () => {
    expect(() => encodeMessage(msg({ type: 0 as MessageType }))).toThrow(/not a known MessageType/);
    expect(() => encodeEntry(ent(1, 1, 'x', 9 as EntryType))).toThrow(/not a known EntryType/);
    expect(() => decodeMessage(raw('Message', { type: 99 }))).toThrow(/not a known MessageType: 99/);
    expect(() => decodeMessage(raw('Message', {}))).toThrow(/not a known MessageType: 0/);
    expect(() => decodeEntry(raw('Entry', { type: 5 }))).toThrow(/not a known EntryType: 5/);
  });

  it('refuses garbage with a CodecError', () => {
    expect(() => decodeEntry(Uint8Array.of(0x0a, 0xff, 0xff))).toThrow(CodecError);
    expect(() => decodeMessageBatch(Uint8Array.of(0xff, 0xff, 0xff))).toThrow(/cannot decode MessageBatch \(3 bytes\)/);
    expect(() => decodeHardState(Uint8Array.of(0x12, 0x05, 0x61))).toThrow(CodecError);
  });

  it('refuses wrongly typed fields on encode', () => {
    expect(() => encodeEntry({ ...ent(1, 1), data: 'x' as unknown as Uint8Array })).toThrow(/entry.data must be a Uint8Array/);
    expect(() => encodeMessage(msg({ from: 3 as unknown as string }))).toThrow(/message.from must be a string/);
    expect(() => encodeSnapshotMeta({ index: 1, term: 1, config: { voters: [1 as unknown as string] } })).toThrow(/voters/);
  });
});

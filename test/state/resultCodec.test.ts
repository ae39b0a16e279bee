// The stored-result codec (src/state/resultCodec.ts) against state.proto: every Result status has a codec
// whose numbers are the proto's, every result round-trips exactly, and the hand-written bytes are
// protobufjs's bytes of the same message both ways, on samples and on random results.
import type * as protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { RESULT_CODECS, Reason, SnapshotError, decodeResult, encodeResult, type FieldKind, type Result, type ResultStatus } from '../../src/state';
import { readStoredResult } from '../../src/state/resultCodec';
import { Reader } from '../../src/state/snapshotWire';
import { mulberry32 } from '../support/prng';
import { StoredResult, isOptionalField, storedResultBytes } from './snapshotOracle';

type Samples = { readonly [S in ResultStatus]: ReadonlyArray<Extract<Result, { status: S }>> };

const SID = 'a'.repeat(32);

/** Every status, with its optional fields present and absent and its defaults. Missing a status does not compile. */
const SAMPLES: Samples = {
  session_opened: [{ status: 'session_opened', sessionId: SID, ttlMs: 30_000 }],
  session_ended: [
    { status: 'session_ended', sessionId: SID, cause: 'closed', released: [] },
    { status: 'session_ended', sessionId: SID, cause: 'expired', released: ['a', '', 'ü/🔒'] },
    { status: 'session_ended', sessionId: SID, cause: 'revoked', released: ['x'] },
  ],
  sessions_expired: [
    { status: 'sessions_expired', ended: [] },
    { status: 'sessions_expired', ended: [SID, 'b'.repeat(32)] },
  ],
  checkpointed: [
    { status: 'checkpointed', sessions: 0 },
    { status: 'checkpointed', sessions: 12 },
  ],
  granted: [
    { status: 'granted', token: 7, newGrant: true },
    { status: 'granted', token: 2 ** 53 - 1, newGrant: false },
  ],
  waiting: [{ status: 'waiting', holderToken: 2 ** 32 + 1, position: 1 }],
  held: [{ status: 'held', holderToken: 0 }],
  delays_ended: [
    { status: 'delays_ended', ended: [] },
    { status: 'delays_ended', ended: ['a', 'ü/🔒'] },
  ],
  cancelled: [{ status: 'cancelled' }],
  not_waiting: [{ status: 'not_waiting' }],
  released: [
    { status: 'released', token: 3 },
    { status: 'released', token: 3, nextHolder: SID, nextToken: 9 },
    { status: 'released', token: 0, nextHolder: '', nextToken: 0 },
  ],
  written: [
    { status: 'written', token: 4, ops: 2 },
    { status: 'written', token: 4, ops: 2, index: 0 },
    { status: 'written', token: 2 ** 53 - 1, ops: 128, index: 2 ** 53 - 1 },
  ],
  auth_changed: [{ status: 'auth_changed' }, { status: 'auth_changed', tokenId: '0123456789abcdef' }, { status: 'auth_changed', tokenId: '' }],
  keys_moved: [
    { status: 'keys_moved', moved: 0 },
    { status: 'keys_moved', moved: 100_000 },
  ],
  refused: [
    { status: 'refused', reason: Reason.NOT_HOLDER, watermark: 5 },
    { status: 'refused', reason: Reason.STALE_TOKEN, watermark: 0, key: '' },
    { status: 'refused', reason: Reason.WRONG_LOCK, watermark: 8, key: 'k/ẞ', owner: 'orders' },
    { status: 'refused', reason: Reason.PERMISSION_DENIED, watermark: 0, subject: 'lock orders' },
    { status: 'refused', reason: Reason.QUOTA_EXCEEDED, watermark: 0, subject: '' },
  ],
  invalid: [
    { status: 'invalid', message: 'lock name must not be empty' },
    { status: 'invalid', message: '' },
  ],
  permit_granted: [
    { status: 'permit_granted', token: 7, slot: 0, permits: 1, newGrant: true },
    { status: 'permit_granted', token: 2 ** 53 - 1, slot: 1023, permits: 1024, newGrant: false },
  ],
  permit_released: [
    { status: 'permit_released', token: 3, slot: 0 },
    { status: 'permit_released', token: 3, slot: 2, nextHolder: SID, nextToken: 9 },
  ],
  permits_full: [{ status: 'permits_full', permits: 3 }],
};

const camel = (s: string): string => s.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

/** The proto type a field kind must have. */
const PROTO_TYPE: Record<FieldKind, { type: string; repeated: boolean }> = {
  uint: { type: 'uint64', repeated: false },
  bool: { type: 'bool', repeated: false },
  string: { type: 'string', repeated: false },
  reason: { type: 'string', repeated: false },
  strings: { type: 'string', repeated: true },
  cause: { type: 'SessionEndCause', repeated: false },
};

/** What protobufjs reads from `bytes`, as a Result (the oracle's direction reversed). */
function protobufjsDecode(bytes: Uint8Array): Result {
  const o = StoredResult.toObject(StoredResult.decode(bytes), { longs: Number, enums: String, oneofs: true, defaults: true }) as Record<string, unknown>;
  const member = o.result as string;
  const status = Object.keys(RESULT_CODECS).find((s) => camel(s) === member) as ResultStatus;
  const body = o[member] as Record<string, unknown>;
  const type = StoredResult.fields[member]!.resolvedType as protobuf.Type;
  const out: Record<string, unknown> = { status };
  for (const f of RESULT_CODECS[status].fields) {
    const v = body[f.name];
    // protobufjs leaves an absent `optional` out (undefined) and gives a default for every other field.
    if (isOptionalField(type.fields[f.name]!) && !Object.hasOwn(body, f.name)) continue;
    out[f.name] = f.kind === 'cause' ? String(v).toLowerCase() : v;
  }
  return out as unknown as Result;
}

/** Round-trips exactly (equal, and equal as JSON: same field order) and agrees with protobufjs both ways. */
function expectExact(r: Result): void {
  const bytes = encodeResult(r);
  const back = decodeResult(bytes);
  expect(back).toEqual(r);
  expect(JSON.stringify(back)).toBe(JSON.stringify(r));
  expect(Object.isFrozen(back)).toBe(true);
  expect(Buffer.from(bytes).toString('hex'), JSON.stringify(r)).toBe(Buffer.from(storedResultBytes(JSON.stringify(r))).toString('hex'));
  expect(protobufjsDecode(bytes)).toEqual(r);
}

describe('the stored-result codec', () => {
  it('has a codec for every Result status, numbered as state.proto numbers StoredResult', () => {
    expect(Object.keys(RESULT_CODECS).sort()).toEqual(Object.keys(SAMPLES).sort());
    expect(Object.keys(StoredResult.fields).sort()).toEqual(Object.keys(RESULT_CODECS).map(camel).sort());
    for (const [status, c] of Object.entries(RESULT_CODECS)) {
      const member = StoredResult.fields[camel(status)]!;
      expect(member.id, status).toBe(c.no);
      const type = member.resolvedType as protobuf.Type;
      expect(type.fieldsArray.map((f) => f.name).sort(), status).toEqual(c.fields.map((f) => f.name).sort());
      for (const f of c.fields) {
        const pf = type.fields[f.name]!;
        expect([pf.id, pf.type, pf.repeated, isOptionalField(pf)], `${status}.${f.name}`).toEqual([f.no, PROTO_TYPE[f.kind].type, PROTO_TYPE[f.kind].repeated, f.optional === true]);
      }
      // Fields in number order: the encoder writes them in this order.
      expect(c.fields.map((f) => f.no), status).toEqual([...c.fields.map((f) => f.no)].sort((a, b) => a - b));
    }
  });

  it('round-trips every sample of every status exactly, in protobufjs\'s bytes', () => {
    let n = 0;
    for (const samples of Object.values(SAMPLES) as Result[][]) {
      expect(samples.length).toBeGreaterThan(0);
      for (const r of samples) {
        expectExact(r);
        n++;
      }
    }
    expect(n).toBe(39);
  });

  it('round-trips random results exactly, and reads protobufjs\'s encoding of them', () => {
    const rnd = mulberry32(31);
    const int = (): number => {
      const k = rnd();
      return k < 0.2 ? 0 : k < 0.5 ? Math.floor(rnd() * 200) : k < 0.8 ? Math.floor(rnd() * 2 ** 32) : Math.floor(rnd() * 2 ** 53);
    };
    const text = (): string => {
      const parts = ['', 'a', 'ü', '🔒', '\u0000', 'k/', '\uffff', 'x'.repeat(130)];
      let s = '';
      for (let i = Math.floor(rnd() * 4); i > 0; i--) s += parts[Math.floor(rnd() * parts.length)];
      return s;
    };
    const reasons = Object.values(Reason);
    const statuses = Object.keys(RESULT_CODECS) as ResultStatus[];
    const seen = new Set<string>();
    for (let i = 0; i < 3_000; i++) {
      const status = statuses[i % statuses.length]!;
      const o: Record<string, unknown> = { status };
      for (const f of RESULT_CODECS[status].fields) {
        if (f.optional && rnd() < 0.4) continue;
        if (f.kind === 'uint') o[f.name] = int();
        else if (f.kind === 'bool') o[f.name] = rnd() < 0.5;
        else if (f.kind === 'string') o[f.name] = text();
        else if (f.kind === 'strings') o[f.name] = Array.from({ length: Math.floor(rnd() * 4) }, text);
        else if (f.kind === 'cause') o[f.name] = ['closed', 'expired', 'revoked'][Math.floor(rnd() * 3)];
        else o[f.name] = reasons[Math.floor(rnd() * reasons.length)];
      }
      // Keep only results the machine can build (what RESULT_CODECS' checks refuse is tested below).
      if ((status === 'released' || status === 'permit_released') && (o.nextHolder === undefined) !== (o.nextToken === undefined)) {
        delete o.nextHolder;
        delete o.nextToken;
      }
      if (status === 'refused') {
        if (o.owner !== undefined && o.key === undefined) delete o.owner;
        if (o.owner !== undefined) o.reason = Reason.WRONG_LOCK;
        if (o.subject !== undefined && o.key !== undefined) delete o.subject;
      }
      const r = o as unknown as Result;
      expectExact(r);
      seen.add(`${status}: ${Object.keys(o).join(',')}`);
    }
    // Every set of fields the machine can build: one per status without optional fields (14), a handover or
    // none (of a lock or of a permit), an index or none, a token id or none (2 each), and a bare refusal, with
    // a key, a key and its owner, or a subject (4).
    expect(seen.size).toBe(26);
  });

  it('refuses to encode what the machine never stores', () => {
    const cases: Array<[string, unknown, RegExp]> = [
      ['2^53', { status: 'granted', token: 2 ** 53, newGrant: true }, /token is not an integer/],
      ['a negative', { status: 'held', holderToken: -1 }, /not an integer/],
      ['a fraction', { status: 'written', token: 1, ops: 1.5 }, /ops is not an integer/],
      ['a lone surrogate', { status: 'invalid', message: 'x\ud800' }, /not a well-formed string/],
      ['an unknown reason', { status: 'refused', reason: 'NOPE', watermark: 0 }, /unknown refusal reason/],
      ['an empty reason', { status: 'refused', reason: '', watermark: 0 }, /unknown refusal reason/],
      ['no reason', { status: 'refused', watermark: 0 }, /reason is missing/],
      ['an owner without WRONG_LOCK', { status: 'refused', reason: Reason.STALE_TOKEN, watermark: 1, key: 'k', owner: 'o' }, /owner/],
      ['a key and a subject', { status: 'refused', reason: Reason.PERMISSION_DENIED, watermark: 0, key: 'k', subject: 's' }, /both a key and a subject/],
      ['half a handover', { status: 'released', token: 1, nextHolder: SID }, /together/],
      ['an unknown cause', { status: 'session_ended', sessionId: SID, cause: 'lost', released: [] }, /cause/],
      ['an unknown status', { status: 'noop' }, /unknown status/],
    ];
    for (const [what, r, message] of cases) {
      expect(() => encodeResult(r as Result), what).toThrow(SnapshotError);
      expect(() => encodeResult(r as Result), what).toThrow(message);
    }
  });

  it('decodes only canonical bytes: every byte flip and truncation is refused or re-encodes to the same bytes', () => {
    for (const samples of Object.values(SAMPLES) as Result[][]) {
      for (const r of samples) {
        const bytes = encodeResult(r);
        for (let i = 0; i < bytes.length; i++) {
          for (const mask of [0x01, 0x41, 0x80]) {
            const bad = bytes.slice();
            bad[i] = bad[i]! ^ mask;
            expectRefusedOrCanonical(bad);
          }
          expectRefusedOrCanonical(bytes.subarray(0, i));
        }
      }
    }
  });

  it('refuses protobuf the encoder never writes (defaults written, fields out of order or repeated, wrong wire types)', () => {
    const cases: Array<[string, number[], RegExp]> = [
      ['an empty message', [], /truncated/],
      ['bool false written', [0x2a, 0x04, 0x08, 0x01, 0x10, 0x00], /newGrant is not written as true/],
      ['a string default written', [0x7a, 0x02, 0x0a, 0x00], /message '' is written/],
      ['a field twice', [0x3a, 0x04, 0x08, 0x01, 0x08, 0x02], /field 1 unknown, out of order or repeated/],
      ['an unknown field', [0x3a, 0x02, 0x18, 0x01], /field 3 unknown/],
      ['a field again after a repeated one', [0x12, 0x0b, 0x0a, 0x01, 0x61, 0x10, 0x01, 0x1a, 0x00, 0x10, 0x01, 0x1a, 0x00], /field 2 unknown, out of order or repeated/],
      ['a wrong wire type', [0x3a, 0x02, 0x0d, 0x01], /wire type 5/],
      ['a member of the wrong wire type', [0x40, 0x00], /unknown oneof member 8/],
      ['a cause 0', [0x12, 0x02, 0x10, 0x00], /unknown session end cause/],
      ['an owner without a key', [0x72, 0x0f, 0x0a, 0x0a, ...Buffer.from('WRONG_LOCK'), 0x22, 0x01, 0x6f], /owner/],
      ['a non-minimal varint', [0x3a, 0x03, 0x08, 0x81, 0x00], /not minimal/],
      ['invalid UTF-8', [0x7a, 0x03, 0x0a, 0x01, 0xff], /UTF-8/],
      ['a field past its member', [0x7a, 0x02, 0x0a, 0x03, 0x61, 0x62, 0x63], /a field runs past its message/],
      ['a refusal without its reason', [0x72, 0x02, 0x10, 0x01], /reason is missing/],
      ['a session end without its cause', [0x12, 0x00], /cause is missing/],
    ];
    for (const [what, bytes, message] of cases) expect(() => decodeResult(new Uint8Array(bytes)), what).toThrow(message);
    // In a snapshot the message is length-delimited among other bytes: nothing of it may run past its length.
    const framed = new Reader(new Uint8Array([0x02, 0x42, 0x01, 0x00, 0x00]));
    expect(() => readStoredResult(framed)).toThrow(/a member runs past the message/);
    const twice = new Reader(new Uint8Array([0x04, 0x42, 0x00, 0x42, 0x00]));
    expect(() => readStoredResult(twice)).toThrow(/more than one member/);
    const ok = new Reader(new Uint8Array([0x02, 0x42, 0x00, 0x42, 0x00]));
    expect(readStoredResult(ok)).toEqual({ status: 'cancelled' });
    expect(ok.position).toBe(3);
  });
});

function expectRefusedOrCanonical(bytes: Uint8Array): void {
  let r: Result;
  try {
    r = decodeResult(bytes);
  } catch (e) {
    expect(e).toBeInstanceOf(SnapshotError);
    return;
  }
  expect(Buffer.from(encodeResult(r)).equals(Buffer.from(bytes))).toBe(true);
}

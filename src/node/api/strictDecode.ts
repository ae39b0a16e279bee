// Strict decoding of requests from clients: every string field must be well-formed UTF-8, and the message
// must be well-formed protobuf, or the request is refused naming the field.
//
// protobufjs decodes strings leniently: invalid bytes become U+FFFD, so b"a\xff", b"a\xfe" and b"a\xef\xbf\xbd"
// would all name the lock "a\uFFFD". And a string field whose length runs past the end of the message makes
// it throw a RangeError, which grpc-js answers with INTERNAL. So before the lenient decoder runs, the raw
// bytes are walked here with a protobufjs Reader against the message's reflected type (nested messages,
// repeated fields, map entries), and every string field's bytes are checked.
import { isUtf8 } from 'node:buffer';
import * as protobuf from 'protobufjs';

/** Why a request could not be decoded: the field (proto names, e.g. `ops[2].key`) when one is to blame. */
export interface DecodeProblem {
  field?: string;
  why: string;
}

/** The outcome of a walk: a problem, if any, and the top-level `call_id` when one was read before it. */
export interface WalkResult {
  problem?: DecodeProblem;
  callId?: string;
}

const WIRE_TYPE_NAMES = ['varint', '64-bit', 'length-delimited', 'group start', 'group end', '32-bit', 'invalid (6)', 'invalid (7)'];

/** Checks `bytes` as an encoded `type`: well-formed framing, and UTF-8 in every string field. */
export function walkMessage(type: protobuf.Type, bytes: Uint8Array): WalkResult {
  const out: WalkResult = {};
  out.problem = walk(type, bytes, '', out, true);
  return out;
}

function walk(type: protobuf.Type, bytes: Uint8Array, prefix: string, out: WalkResult, top: boolean): DecodeProblem | undefined {
  const r = protobuf.Reader.create(bytes);
  const counts = new Map<number, number>();
  const where = prefix === '' ? undefined : prefix.slice(0, -1);
  while (r.pos < r.len) {
    const tagAt = r.pos;
    let tag: number;
    try {
      tag = r.uint32();
    } catch {
      return { field: where, why: `is truncated: a field tag at byte ${tagAt} runs past the end` };
    }
    const id = tag >>> 3;
    const wireType = tag & 7;
    if (id === 0) return { field: where, why: `has an invalid field tag (field number 0) at byte ${tagAt}; the bytes are not a protobuf message` };
    const field = type.fieldsById[id];
    const kind = field ? fieldKind(field) : 'other';
    if (!field || kind === 'other') {
      if (top && field && field.name === 'callId' && wireType === 0) {
        try {
          out.callId = String(r.uint64());
          continue;
        } catch {
          return { field: 'call_id', why: 'is truncated' };
        }
      }
      try {
        r.skipType(wireType);
      } catch (err) {
        const name = field ? prefix + protoName(field.name) : prefix + `field ${id}`;
        return { field: where, why: `cannot be read at byte ${tagAt} (${name}, wire type ${WIRE_TYPE_NAMES[wireType]}): ${(err as Error).message}; the message is truncated or not protobuf` };
      }
      continue;
    }
    let path = prefix + protoName(field.name);
    if (field.repeated || field.map) {
      const n = counts.get(id) ?? 0;
      counts.set(id, n + 1);
      path += `[${n}]`;
    }
    if (wireType !== 2) return { field: path, why: `has wire type ${WIRE_TYPE_NAMES[wireType]}; a ${kind} field is length-delimited` };
    let len: number;
    try {
      len = r.uint32();
    } catch {
      return { field: path, why: 'is truncated: its length runs past the end of the message' };
    }
    const left = r.len - r.pos;
    if (len > left) return { field: path, why: `is truncated: its length says ${len} bytes but only ${left} remain in the message` };
    const body = r.buf.subarray(r.pos, r.pos + len);
    r.pos += len;
    if (kind === 'string') {
      const bad = stringProblem(body);
      if (bad) return { field: path, why: bad };
    } else if (kind === 'map') {
      const bad = walkMapEntry(field as unknown as protobuf.MapField, body, path);
      if (bad) return bad;
    } else {
      const bad = walk(field.resolvedType as protobuf.Type, body, path + '.', out, false);
      if (bad) return bad;
    }
  }
  return undefined;
}

type Kind = 'string' | 'message' | 'map' | 'other';

function fieldKind(field: protobuf.Field): Kind {
  if (field.map) return 'map';
  if (field.type === 'string') return 'string';
  if (!field.resolvedType && !field.resolved) field.resolve();
  return field.resolvedType instanceof protobuf.Type ? 'message' : 'other';
}

/** A map entry is a message with key = 1 and value = 2; string keys and values, and message values, are checked. */
function walkMapEntry(field: protobuf.MapField, body: Uint8Array, path: string): DecodeProblem | undefined {
  const entry = new protobuf.Type(`${field.name}Entry`).add(new protobuf.Field('key', 1, field.keyType)).add(new protobuf.Field('value', 2, field.type));
  const value = entry.fieldsById[2];
  if (field.resolvedType) value.resolvedType = field.resolvedType;
  return walk(entry, body, path + '.', {}, false);
}

/** undefined when `bytes` is well-formed UTF-8; otherwise what is wrong, with the offending byte. */
function stringProblem(bytes: Uint8Array): string | undefined {
  if (isUtf8(bytes)) return undefined;
  const at = firstInvalidUtf8(bytes);
  return `is not valid UTF-8 (byte ${at} of ${bytes.length}, 0x${bytes[at].toString(16).padStart(2, '0')}, starts no valid character); send the text as UTF-8, invalid bytes are not replaced`;
}

/**
 * Offset of the first byte that does not start a well-formed UTF-8 sequence (bytes.length when there is
 * none): everything before it is valid UTF-8. Only called on text that isUtf8 refused, to say where.
 */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i];
    if (b < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) need = 1;
    else if (b === 0xe0) [need, lo] = [2, 0xa0];
    else if (b >= 0xe1 && b <= 0xec) need = 2;
    else if (b === 0xed) [need, hi] = [2, 0x9f]; // no surrogates
    else if (b >= 0xee && b <= 0xef) need = 2;
    else if (b === 0xf0) [need, lo] = [3, 0x90];
    else if (b >= 0xf1 && b <= 0xf3) need = 3;
    else if (b === 0xf4) [need, hi] = [3, 0x8f]; // nothing above U+10FFFF
    else return i;
    for (let k = 1; k <= need; k++) {
      if (i + k >= bytes.length) return i; // cut inside a character
      const c = bytes[i + k];
      if (k === 1 ? c < lo || c > hi : c < 0x80 || c > 0xbf) return i;
    }
    i += need + 1;
  }
  return bytes.length;
}

/** `sessionId` -> `session_id`: the loader hands out camelCase names; errors use the proto's own names. */
export function protoName(camel: string): string {
  return camel.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase());
}

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

const enum Kind {
  Other,
  String,
  Message,
}

/** What the walk needs of one field, worked out once per type (names already in the proto's snake_case). */
type FieldPlan = FieldCommon &
  (
    | { kind: Kind.Other }
    | { kind: Kind.String }
    /** Message fields and map entries: the plan of the message. */
    | { kind: Kind.Message; plan: Plan }
  );

interface FieldCommon {
  name: string;
  repeated: boolean;
  /** The Pipeline's correlation id: read at the top level so that a refusal can be answered per call. */
  callId: boolean;
  /**
   * The wire type its values must have. protobufjs reads a known field by its declared type whatever its
   * wire type says, so a scalar sent length-delimited would make it parse the payload as more fields, out
   * of this walk's sight: a mismatch is refused.
   */
  wire: number;
  /** Repeated scalars may also come packed (length-delimited). */
  packable: boolean;
}

const SCALAR_WIRE_TYPES: Record<string, number> = {
  double: 1, float: 5, int32: 0, uint32: 0, sint32: 0, fixed32: 5, sfixed32: 5,
  int64: 0, uint64: 0, sint64: 0, fixed64: 1, sfixed64: 1, bool: 0, string: 2, bytes: 2,
};
type Plan = Map<number, FieldPlan>;

const plans = new WeakMap<protobuf.Type, Plan>();

function planOf(type: protobuf.Type): Plan {
  let plan = plans.get(type);
  if (plan) return plan;
  plan = new Map();
  plans.set(type, plan); // before the fields: a type may contain itself
  for (const field of type.fieldsArray) {
    if (!field.resolved) field.resolve();
    const name = protoName(field.name);
    const repeated = field.repeated || field.map;
    if (field.map) {
      // A map entry is a message with key = 1 and value = 2.
      const map = field as unknown as protobuf.MapField;
      const entry: Plan = new Map();
      entry.set(1, valuePlan('key', map.keyType, null));
      entry.set(2, valuePlan('value', map.type, map.resolvedType));
      plan.set(field.id, { name, kind: Kind.Message, repeated, plan: entry, callId: false, wire: 2, packable: false });
      continue;
    }
    const value = valuePlan(name, field.type, field.resolvedType);
    plan.set(field.id, { ...value, repeated, callId: field.name === 'callId', packable: repeated && value.wire !== 2 });
  }
  return plan;
}

function valuePlan(name: string, type: string, resolved: protobuf.Type | protobuf.Enum | null): FieldPlan {
  const base = { name, repeated: false, callId: false, packable: false };
  if (type === 'string') return { ...base, kind: Kind.String, wire: 2 };
  if (resolved instanceof protobuf.Type) return { ...base, kind: Kind.Message, plan: planOf(resolved), wire: 2 };
  if (resolved instanceof protobuf.Enum) return { ...base, kind: Kind.Other, wire: 0 };
  const wire = SCALAR_WIRE_TYPES[type];
  if (wire === undefined) throw new Error(`strictDecode: field ${name} has unknown type ${type}`);
  return { ...base, kind: Kind.Other, wire };
}

/** Checks `bytes` as an encoded `type`: well-formed framing, and UTF-8 in every string field. */
export function walkMessage(type: protobuf.Type, bytes: Uint8Array): WalkResult {
  const r = protobuf.Reader.create(bytes);
  const at: CallIdAt = { pos: -1 };
  const problem = walk(planOf(type), r, [], at, true);
  if (!problem) return {};
  if (at.pos < 0) return { problem };
  // Only now is the call_id worth decoding (a uint64 becomes a Long first).
  r.pos = at.pos;
  r.len = bytes.length;
  return { problem, callId: String(r.uint64()) };
}

/** Where the top-level call_id varint starts, once seen (-1 before). */
interface CallIdAt {
  pos: number;
}

const pathOf = (path: string[]): string | undefined => (path.length === 0 ? undefined : path.join('.'));
const fieldPathOf = (path: string[], name: string, index: number): string => [...path, index < 0 ? name : `${name}[${index}]`].join('.');

/**
 * Walks the fields between r.pos and r.len (a nested message is walked with r.len set to its end).
 * `path` holds the names of the enclosing fields; strings for messages are only built for a problem.
 */
function walk(plan: Plan, r: protobuf.Reader, path: string[], callIdAt: CallIdAt, top: boolean): DecodeProblem | undefined {
  let counts: Map<number, number> | undefined;
  while (r.pos < r.len) {
    const tagAt = r.pos;
    let tag: number;
    try {
      tag = r.uint32();
    } catch {
      return { field: pathOf(path), why: `is truncated: a field tag at byte ${tagAt} runs past the end` };
    }
    const id = tag >>> 3;
    const wireType = tag & 7;
    if (id === 0) return { field: pathOf(path), why: `has an invalid field tag (field number 0) at byte ${tagAt}; the bytes are not a protobuf message` };
    const field = plan.get(id);
    if (field && wireType !== field.wire && !(field.packable && wireType === 2)) {
      return { field: fieldPathOf(path, field.name, -1), why: `has wire type ${WIRE_TYPE_NAMES[wireType]}; its type needs ${WIRE_TYPE_NAMES[field.wire]}` };
    }
    if (!field || field.kind === Kind.Other) {
      try {
        const valueAt = r.pos;
        r.skipType(wireType);
        if (top && field?.callId && wireType === 0) callIdAt.pos = valueAt;
      } catch (err) {
        const name = [...path, field ? field.name : `field ${id}`].join('.');
        return { field: pathOf(path), why: `cannot be read at byte ${tagAt} (${name}, wire type ${WIRE_TYPE_NAMES[wireType]}): ${(err as Error).message}; the message is truncated or not protobuf` };
      }
      continue;
    }
    let index = -1;
    if (field.repeated) {
      counts ??= new Map();
      index = counts.get(id) ?? 0;
      counts.set(id, index + 1);
    }
    let len: number;
    try {
      len = r.uint32();
    } catch {
      return { field: fieldPathOf(path, field.name, index), why: 'is truncated: its length runs past the end of the message' };
    }
    const left = r.len - r.pos;
    if (len > left) return { field: fieldPathOf(path, field.name, index), why: `is truncated: its length says ${len} bytes but only ${left} remain in the message` };
    const start = r.pos;
    const end = start + len;
    if (field.kind === Kind.String) {
      r.pos = end;
      const bad = stringProblem(r.buf, start, end);
      if (bad) return { field: fieldPathOf(path, field.name, index), why: bad };
      continue;
    }
    const outer = r.len;
    r.len = end;
    path.push(index < 0 ? field.name : `${field.name}[${index}]`);
    const bad = walk(field.plan, r, path, callIdAt, false); // a message field: the other kinds went on above
    path.pop();
    r.len = outer;
    if (bad) return bad;
  }
  return undefined;
}

/** undefined when buf[start, end) is well-formed UTF-8; otherwise what is wrong, with the offending byte. */
function stringProblem(buf: Uint8Array, start: number, end: number): string | undefined {
  let i = start;
  // ASCII needs no more (most names and keys). (b is never undefined: i < end <= buf.length.)
  while (i < end) {
    const b = buf[i];
    if (b === undefined || b >= 0x80) break;
    i++;
  }
  if (i === end) return undefined;
  const bytes = buf.subarray(start, end);
  if (isUtf8(bytes)) return undefined;
  const at = firstInvalidUtf8(bytes);
  const bad = bytes[at];
  if (bad === undefined) throw new Error(`strictDecode: isUtf8 refused ${bytes.length} bytes that firstInvalidUtf8 finds valid`);
  return `is not valid UTF-8 (byte ${at} of ${bytes.length}, 0x${bad.toString(16).padStart(2, '0')}, starts no valid character); send the text as UTF-8, invalid bytes are not replaced`;
}

/**
 * Offset of the first byte that does not start a well-formed UTF-8 sequence (bytes.length when there is
 * none): everything before it is valid UTF-8. Only called on text that isUtf8 refused, to say where.
 */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  let i = 0;
  for (;;) {
    const b = bytes[i];
    if (b === undefined) return bytes.length; // past the end: everything was valid
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
      const c = bytes[i + k];
      if (c === undefined) return i; // cut inside a character
      if (k === 1 ? c < lo || c > hi : c < 0x80 || c > 0xbf) return i;
    }
    i += need + 1;
  }
}

/** `sessionId` -> `session_id`: the loader hands out camelCase names; errors use the proto's own names. */
export function protoName(camel: string): string {
  return camel.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase());
}

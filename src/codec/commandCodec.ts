// Lock commands <-> Raft entry bytes (proto/fencelock/v1/state.proto), with protobufjs. What each command's
// body is on the wire is its registry entry's (src/state/registry): here are only the fields every entry
// shares (request ids, caller, clock) and the protobuf library.
import * as protobuf from 'protobufjs';
import { entryOf, decoderOfMember, type BodyReader, type Command, type RequestMeta, type WireBody } from '../state';
import { protoFile } from './protoPath';

const root = protobuf.loadSync(protoFile('fencelock/v1/state.proto'));
const CommandType = root.lookupType('fencelock.v1.state.Command');

/** An entry whose bytes are no command: applying it changes nothing and answers `invalid`. */
export interface UndecodableEntry {
  type: 'Undecodable';
  error: string;
}

/** A uint64 field as a number: protobufjs decodes it to a Long (or a number); beyond 2^53 it is refused. */
function num(v: unknown): number {
  if (v === undefined || v === null) return 0;
  const n = isLong(v) ? (v.high >>> 0) * 0x1_0000_0000 + (v.low >>> 0) : typeof v === 'number' ? v : NaN;
  if (!Number.isSafeInteger(n)) throw new Error(`command field out of range: ${String(v)}`);
  return n;
}

function isLong(v: unknown): v is { low: number; high: number } {
  return typeof v === 'object' && v !== null && typeof (v as { low?: unknown }).low === 'number' && typeof (v as { high?: unknown }).high === 'number';
}

/**
 * A decoded message (not toObject()): unset fields read as their defaults ('', 0, false, []), oneofs name
 * their set member, uint64s are Longs (num() converts them), bytes are views of the entry (unset ones an
 * empty array on the message prototype).
 */
function reader(m: WireBody): BodyReader {
  return {
    str: (f) => (typeof m[f] === 'string' ? (m[f] as string) : ''),
    num: (f) => num(m[f]),
    bool: (f) => m[f] === true,
    bytes: (f) => (m[f] instanceof Uint8Array ? (m[f] as Uint8Array) : new Uint8Array(0)),
    strings: (f) => ((m[f] as string[] | undefined) ?? []).slice(),
    list: (f) => ((m[f] as WireBody[] | undefined) ?? []).map(reader),
    oneof: (name) => (typeof m[name] === 'string' ? (m[name] as string) : undefined),
  };
}

export function encodeCommand(c: Command): Uint8Array {
  const entry = entryOf(c.type);
  const w: WireBody = { now: c.now };
  if (entry.kind === 'request') {
    const r = c as RequestMeta;
    w.clientId = r.clientId;
    w.requestId = r.requestId;
    w.ackedBelow = r.ackedBelow ?? 0;
    // Only when set: an entry without a caller keeps the bytes it had before callers existed.
    if (r.caller !== undefined && r.caller !== '') w.caller = r.caller;
    if (r.callerToken !== undefined && r.callerToken !== '') w.callerToken = r.callerToken;
  }
  w[entry.member] = (entry.encode as (c: Command) => WireBody)(c);
  return CommandType.encode(CommandType.fromObject(w)).finish();
}

/**
 * Decodes an entry's command, unchecked: bytes that are no command are `Undecodable` (never a crash, and the
 * same answer on every replica). What the command says is validated once, by the state machine's apply
 * (validateCommand): a command that fails it is answered `invalid`, and that answer is stored for a retry
 * when its request ids are valid. So the type claims more than the codec checked: apply it, do not trust it.
 */
export function decodeCommand(data: Uint8Array): Command | UndecodableEntry {
  let w: WireBody;
  try {
    w = CommandType.decode(data) as unknown as WireBody;
  } catch (err) {
    return { type: 'Undecodable', error: (err as Error).message };
  }
  try {
    // Every entry's ids and clock are read (and a uint64 beyond 2^53 refused) before its body, as ever.
    const head = reader(w);
    const meta = requestMeta(head);
    const decoder = typeof w.body === 'string' ? decoderOfMember(w.body) : undefined;
    if (decoder === undefined) return { type: 'Undecodable', error: 'entry carries no command' };
    const body = reader((w[w.body as string] ?? {}) as WireBody);
    return decoder.decode(body, decoder.kind === 'request' ? meta : ({ now: meta.now } as RequestMeta));
  } catch (err) {
    return { type: 'Undecodable', error: (err as Error).message };
  }
}

/** Absent or '' decode to undefined, as ackedBelow 0 does: entries written before these fields decode as before. */
function requestMeta(w: BodyReader): RequestMeta {
  const meta: RequestMeta = { clientId: w.str('clientId'), requestId: w.num('requestId'), now: w.num('now') };
  const acked = w.num('ackedBelow');
  if (acked > 0) meta.ackedBelow = acked;
  const caller = w.str('caller');
  if (caller !== '') meta.caller = caller;
  const callerToken = w.str('callerToken');
  if (callerToken !== '') meta.callerToken = callerToken;
  return meta;
}

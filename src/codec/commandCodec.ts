// Lock commands <-> Raft entry bytes (proto/fencelock/v1/state.proto), with protobufjs.
import * as protobuf from 'protobufjs';
import type { AuthChange, Command, WriteOp } from '../state/commands';
import { protoFile } from './protoPath';

const root = protobuf.loadSync(protoFile('fencelock/v1/state.proto'));
const CommandType = root.lookupType('fencelock.v1.state.Command');

type Wire = Record<string, unknown>;

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

/** A decoded bytes field: unset ones are an empty array on protobufjs' message prototype. */
function bytes(v: unknown): Uint8Array {
  return v instanceof Uint8Array ? v : new Uint8Array(0);
}

export function encodeCommand(c: Command): Uint8Array {
  const w: Wire = { now: c.now };
  if (c.type !== 'ExpireSession' && c.type !== 'CheckpointLeases') {
    w.clientId = c.clientId;
    w.requestId = c.requestId;
    w.ackedBelow = c.ackedBelow ?? 0;
    // Only when set: an entry without a caller keeps the bytes it had before callers existed.
    if (c.caller !== undefined && c.caller !== '') w.caller = c.caller;
    if (c.callerToken !== undefined && c.callerToken !== '') w.callerToken = c.callerToken;
  }
  switch (c.type) {
    case 'OpenSession':
      w.openSession = { sessionId: c.sessionId, ttlMs: c.ttlMs, clientName: c.clientName };
      break;
    case 'CloseSession':
      w.closeSession = { sessionId: c.sessionId };
      break;
    case 'RevokeSession':
      w.revokeSession = { sessionId: c.sessionId };
      break;
    case 'ExpireSession':
      w.expireSessions = { sessionIds: c.sessionIds };
      break;
    case 'CheckpointLeases':
      w.checkpointLeases = { leases: c.leases.map((l) => ({ sessionId: l.sessionId, remainingMs: l.remainingMs })) };
      break;
    case 'Acquire':
      w.acquire = { lock: c.lock, sessionId: c.sessionId, tryOnly: c.tryOnly, waitTimeoutMs: c.waitTimeoutMs ?? 0 };
      break;
    case 'CancelWait':
      w.cancelWait = { lock: c.lock, sessionId: c.sessionId };
      break;
    case 'Release':
      w.release = { lock: c.lock, sessionId: c.sessionId, token: c.token };
      break;
    case 'Write':
      w.write = {
        lock: c.lock,
        sessionId: c.sessionId,
        token: c.token,
        ops: c.ops.map((op) => (op.type === 'put' ? { key: op.key, value: op.value } : { delete: true, key: op.key })),
      };
      break;
    case 'AuthChange':
      w.authChange = encodeAuthChange(c.change);
      break;
    case 'MoveKeys':
      // A oneof member is written even when empty: prefix '' (every key) survives.
      w.moveKeys = c.key !== undefined ? { key: c.key, toLock: c.toLock } : { prefix: c.prefix ?? '', toLock: c.toLock };
      break;
  }
  return CommandType.encode(CommandType.fromObject(w)).finish();
}

/** The flat wire form (state.proto AuthChange): every field of the change under its name, the rest empty. */
function encodeAuthChange(c: AuthChange): Wire {
  const f = c as Partial<Record<'user' | 'role' | 'perm' | 'prefix' | 'tokenId' | 'tokenHash' | 'quota', string>> & { value?: number };
  const w: Wire = { op: c.op, user: f.user, role: f.role, perm: f.perm, prefix: f.prefix, tokenId: f.tokenId, tokenHash: f.tokenHash, quota: f.quota };
  if (f.value !== undefined) {
    w.value = f.value;
    w.hasValue = true;
  }
  if (c.version !== undefined && c.version !== 0) w.version = c.version;
  return w;
}

/**
 * The change as the state machine takes it: the fields its op uses ('' for one left empty: validation says
 * what is wrong), `value` only with has_value. An unknown op keeps only `op` (validation refuses it).
 */
function decodeAuthChange(b: Wire): AuthChange {
  const s = (k: string): string => (b[k] as string) ?? '';
  const op = s('op');
  const fields: Record<string, readonly string[]> = {
    enable: ['user'],
    user_add: ['user'],
    user_delete: ['user'],
    user_grant: ['user', 'role'],
    user_revoke: ['user', 'role'],
    role_add: ['role'],
    role_delete: ['role'],
    role_grant: ['role', 'perm', 'prefix'],
    role_revoke: ['role', 'perm', 'prefix'],
    role_quota: ['role', 'quota'],
    token_issue: ['user', 'tokenId', 'tokenHash'],
    token_revoke: ['tokenId'],
  };
  const change: Record<string, unknown> = { op };
  for (const k of Object.hasOwn(fields, op) ? (fields[op] ?? []) : []) change[k] = s(k);
  if (op === 'role_quota' && b.hasValue === true) change.value = num(b.value);
  const version = num(b.version);
  if (version !== 0) change.version = version;
  return change as unknown as AuthChange;
}

/**
 * Decodes an entry's command. Bytes that are not a command decode to a value that the state machine's own
 * validation refuses, so a bad entry yields an `invalid` result on every replica instead of a crash.
 */
export function decodeCommand(data: Uint8Array): Command | { type: 'Undecodable'; error: string } {
  let w: Wire;
  try {
    // The decoded message itself, not toObject(): unset fields read as their defaults ('', 0, false, []),
    // oneofs name their set member, uint64s are Longs (num() converts them), bytes are views of `data`.
    w = CommandType.decode(data) as unknown as Wire;
  } catch (err) {
    return { type: 'Undecodable', error: (err as Error).message };
  }
  try {
    const meta = { clientId: (w.clientId as string) ?? '', requestId: num(w.requestId), now: num(w.now) };
    const acked = num(w.ackedBelow);
    // Absent or '' decode to undefined, as ackedBelow 0 does: entries written before these fields decode as before.
    const withAck = {
      ...meta,
      ...(acked > 0 ? { ackedBelow: acked } : {}),
      ...(typeof w.caller === 'string' && w.caller !== '' ? { caller: w.caller } : {}),
      ...(typeof w.callerToken === 'string' && w.callerToken !== '' ? { callerToken: w.callerToken } : {}),
    };
    const b = (w[w.body as string] ?? {}) as Wire;
    const s = (k: string): string => (b[k] as string) ?? '';
    switch (w.body) {
      case 'openSession':
        return { type: 'OpenSession', ...withAck, sessionId: s('sessionId'), ttlMs: num(b.ttlMs), clientName: s('clientName') };
      case 'closeSession':
        return { type: 'CloseSession', ...withAck, sessionId: s('sessionId') };
      case 'revokeSession':
        return { type: 'RevokeSession', ...withAck, sessionId: s('sessionId') };
      case 'expireSession':
        return { type: 'ExpireSession', now: meta.now, sessionIds: [s('sessionId')] };
      case 'expireSessions':
        return { type: 'ExpireSession', now: meta.now, sessionIds: ((b.sessionIds as string[] | undefined) ?? []).slice() };
      case 'checkpointLeases': {
        const leases = ((b.leases as Wire[] | undefined) ?? []).map((l) => ({ sessionId: (l.sessionId as string) ?? '', remainingMs: num(l.remainingMs) }));
        return { type: 'CheckpointLeases', now: meta.now, leases };
      }
      case 'acquire':
        return {
          type: 'Acquire',
          ...withAck,
          lock: s('lock'),
          sessionId: s('sessionId'),
          tryOnly: b.tryOnly === true,
          waitTimeoutMs: num(b.waitTimeoutMs),
        };
      case 'cancelWait':
        return { type: 'CancelWait', ...withAck, lock: s('lock'), sessionId: s('sessionId') };
      case 'release':
        return { type: 'Release', ...withAck, lock: s('lock'), sessionId: s('sessionId'), token: num(b.token) };
      case 'write': {
        const ops = ((b.ops as Wire[]) ?? []).map(
          (op): WriteOp =>
            op.delete === true
              ? { type: 'delete', key: (op.key as string) ?? '' }
              : { type: 'put', key: (op.key as string) ?? '', value: bytes(op.value) },
        );
        return { type: 'Write', ...withAck, lock: s('lock'), sessionId: s('sessionId'), token: num(b.token), ops };
      }
      case 'authChange':
        return { type: 'AuthChange', ...withAck, change: decodeAuthChange(b) };
      case 'moveKeys': {
        // Neither key nor prefix set: a move of nothing, which validation refuses.
        const what = b.what === 'key' ? { key: s('key') } : b.what === 'prefix' ? { prefix: s('prefix') } : {};
        return { type: 'MoveKeys', ...withAck, ...what, toLock: s('toLock') };
      }
      default:
        return { type: 'Undecodable', error: 'entry carries no command' };
    }
  } catch (err) {
    return { type: 'Undecodable', error: (err as Error).message };
  }
}

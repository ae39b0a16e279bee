// Lock commands <-> Raft entry bytes (proto/fencelock/v1/state.proto), with protobufjs.
import * as protobuf from 'protobufjs';
import type { Command, WriteOp } from '../state/commands';
import { protoFile } from './protoPath';

const root = protobuf.loadSync(protoFile('fencelock/v1/state.proto'));
const CommandType = root.lookupType('fencelock.v1.state.Command');

type Wire = Record<string, unknown>;

function num(v: unknown): number {
  if (v === undefined || v === null) return 0;
  const n = typeof v === 'number' ? v : Number(String(v));
  if (!Number.isSafeInteger(n)) throw new Error(`command field out of range: ${String(v)}`);
  return n;
}

export function encodeCommand(c: Command): Uint8Array {
  const w: Wire = { now: c.now };
  if (c.type !== 'ExpireSession' && c.type !== 'CheckpointLeases') {
    w.clientId = c.clientId;
    w.requestId = c.requestId;
    w.ackedBelow = c.ackedBelow ?? 0;
  }
  switch (c.type) {
    case 'OpenSession':
      w.openSession = { sessionId: c.sessionId, ttlMs: c.ttlMs, clientName: c.clientName };
      break;
    case 'CloseSession':
      w.closeSession = { sessionId: c.sessionId };
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
  }
  return CommandType.encode(CommandType.fromObject(w)).finish();
}

/**
 * Decodes an entry's command. Bytes that are not a command decode to a value that the state machine's own
 * validation refuses, so a bad entry yields an `invalid` result on every replica instead of a crash.
 */
export function decodeCommand(bytes: Uint8Array): Command | { type: 'Undecodable'; error: string } {
  let w: Wire;
  try {
    w = CommandType.toObject(CommandType.decode(bytes), { longs: String, bytes: Uint8Array, defaults: false, oneofs: true }) as Wire;
  } catch (err) {
    return { type: 'Undecodable', error: (err as Error).message };
  }
  try {
    const meta = { clientId: (w.clientId as string) ?? '', requestId: num(w.requestId), now: num(w.now) };
    const acked = num(w.ackedBelow);
    const withAck = acked > 0 ? { ...meta, ackedBelow: acked } : meta;
    const b = (w[w.body as string] ?? {}) as Wire;
    const s = (k: string): string => (b[k] as string) ?? '';
    switch (w.body) {
      case 'openSession':
        return { type: 'OpenSession', ...withAck, sessionId: s('sessionId'), ttlMs: num(b.ttlMs), clientName: s('clientName') };
      case 'closeSession':
        return { type: 'CloseSession', ...withAck, sessionId: s('sessionId') };
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
              : { type: 'put', key: (op.key as string) ?? '', value: (op.value as Uint8Array) ?? new Uint8Array(0) },
        );
        return { type: 'Write', ...withAck, lock: s('lock'), sessionId: s('sessionId'), token: num(b.token), ops };
      }
      default:
        return { type: 'Undecodable', error: 'entry carries no command' };
    }
  } catch (err) {
    return { type: 'Undecodable', error: (err as Error).message };
  }
}

// The log entry codec (src/codec/commandCodec.ts) carries the auth fields: callers, tokens and every auth
// change round-trip; absent or empty ones decode to undefined, as entries written before them do.
import { describe, expect, it } from 'vitest';
import { decodeCommand, encodeCommand } from '../../src/codec/commandCodec';
import { LockStateMachine, validateCommand, type AuthChange, type Command } from '../../src/state';
import { sid } from './harness';

const meta = { clientId: 'c', requestId: 3, now: 7 };

/** The command an entry carries, valid or not: the codec leaves validation to apply (the uint64 edges below are beyond limits). */
function carried(bytes: Uint8Array): unknown {
  return decodeCommand(bytes);
}

describe('command codec', () => {
  it('round-trips caller and callerToken, and leaves them out when absent or empty', () => {
    const close: Command = { type: 'CloseSession', ...meta, sessionId: sid(1) };
    const stamped: Command = { ...close, caller: 'alice', callerToken: '0123456789abcdef' };
    expect(decodeCommand(encodeCommand(stamped))).toEqual(stamped);
    expect(decodeCommand(encodeCommand(close))).toEqual(close);
    // '' is the same entry as none: the bytes of an entry without a caller do not change.
    expect(encodeCommand({ ...close, caller: '', callerToken: '' })).toEqual(encodeCommand(close));
  });

  it('round-trips every auth change, value of role_quota included only when set', () => {
    const changes: AuthChange[] = [
      { op: 'enable', user: 'ops' },
      { op: 'user_add', user: 'a' },
      { op: 'user_delete', user: 'a' },
      { op: 'user_grant', user: 'a', role: 'r' },
      { op: 'user_revoke', user: 'a', role: 'r' },
      { op: 'role_add', role: 'r' },
      { op: 'role_delete', role: 'r' },
      { op: 'role_grant', role: 'r', perm: 'write', prefix: 'orders/' },
      { op: 'role_revoke', role: 'r', perm: 'read', prefix: '' },
      { op: 'role_quota', role: 'r', quota: 'keys', value: 0 },
      { op: 'role_quota', role: 'r', quota: 'store_bytes', value: 2 ** 40 },
      { op: 'role_quota', role: 'r', quota: 'sessions' },
      { op: 'token_issue', user: 'a', tokenId: '0123456789abcdef', tokenHash: 'f'.repeat(64) },
      { op: 'token_revoke', tokenId: '0123456789abcdef' },
    ];
    for (const change of changes) {
      const c: Command = { type: 'AuthChange', ...meta, caller: 'ops', change };
      expect(carried(encodeCommand(c)), change.op).toEqual(c);
    }
  });
});

describe('command codec, key moves', () => {
  it('round-trips a move of one key, of a prefix, and of every key (prefix \'\')', () => {
    for (const what of [{ key: 'k/1' }, { prefix: 'k/' }, { prefix: '' }]) {
      const c: Command = { type: 'MoveKeys', ...meta, caller: 'ops', ...what, toLock: 'L2' };
      expect(decodeCommand(encodeCommand(c)), JSON.stringify(what)).toEqual(c);
    }
  });
});

describe('command codec, every command and the uint64 edges', () => {
  it('round-trips every kind of command, large safe integers included', () => {
    const big = Number.MAX_SAFE_INTEGER;
    const withAck = { ...meta, requestId: big, now: 2 ** 41 + 5, ackedBelow: 2 ** 33 };
    const commands: Command[] = [
      { type: 'OpenSession', ...withAck, sessionId: sid(1), ttlMs: 10_000, clientName: 'app' },
      { type: 'CloseSession', ...withAck, sessionId: sid(1) },
      { type: 'RevokeSession', ...withAck, caller: 'ops', sessionId: sid(2) },
      { type: 'ExpireSession', now: 9, sessionIds: [sid(1), sid(2)] },
      { type: 'CheckpointLeases', now: 9, leases: [{ sessionId: sid(1), remainingMs: 2 ** 35 }] },
      { type: 'Acquire', ...withAck, lock: 'orders', sessionId: sid(1), tryOnly: true, waitTimeoutMs: 0 },
      { type: 'CancelWait', ...withAck, lock: 'orders', sessionId: sid(1) },
      { type: 'Release', ...withAck, lock: 'orders', sessionId: sid(1), token: 2 ** 47 },
      {
        type: 'Write',
        ...withAck,
        lock: 'orders',
        sessionId: sid(1),
        token: 2 ** 47 + 1,
        ops: [
          { type: 'put', key: 'orders/a', value: new TextEncoder().encode('x') },
          { type: 'put', key: 'orders/empty', value: new Uint8Array(0) },
          { type: 'delete', key: 'orders/b' },
        ],
      },
    ];
    for (const c of commands) {
      const decoded = carried(encodeCommand(c)) as Command;
      // Values are Uint8Arrays (views of the entry: a Buffer, or a fresh empty array for an empty value).
      if (decoded.type === 'Write') {
        for (const op of decoded.ops) if (op.type === 'put') expect(op.value).toBeInstanceOf(Uint8Array);
        decoded.ops = decoded.ops.map((op) => (op.type === 'put' ? { ...op, value: new Uint8Array(op.value) } : op));
      }
      expect(decoded, c.type).toEqual(c);
    }
  });

  it('refuses a uint64 beyond 2^53 as undecodable instead of rounding it', () => {
    // Command{ request_id (field 2, varint) = 2^53 + 1 }: nine bytes of varint.
    let v = 2n ** 53n + 1n;
    const varint: number[] = [];
    while (v >= 0x80n) {
      varint.push(Number(v & 0x7fn) | 0x80);
      v >>= 7n;
    }
    varint.push(Number(v));
    const bytes = Uint8Array.from([0x10, ...varint, 0x5a, 0x00]); // request_id, then an empty close_session (field 11)
    const decoded = decodeCommand(bytes);
    expect(decoded.type).toBe('Undecodable');
    expect((decoded as { error: string }).error).toMatch(/out of range: 9007199254740993/);
  });

  it('decodes a command that fails validation as it is, and apply answers the problem (validated once, there)', () => {
    const c: Command = { type: 'Acquire', ...meta, lock: 'x'.repeat(10_000), sessionId: sid(1), tryOnly: true, waitTimeoutMs: 0 };
    const d = decodeCommand(encodeCommand(c));
    expect(d).toEqual(c);
    expect(validateCommand(d)).toMatch(/lock name exceeds/);
    const applied = new LockStateMachine().apply(1, d as Command);
    expect(applied.result).toEqual({ status: 'invalid', message: validateCommand(c) });
    const valid: Command = { ...c, lock: 'x' };
    expect(decodeCommand(encodeCommand(valid))).toEqual(valid);
  });

  it('says so for bytes that are no command', () => {
    expect(decodeCommand(Uint8Array.of(0xff, 0xff, 0xff)).type).toBe('Undecodable');
    expect(decodeCommand(new Uint8Array(0))).toEqual({ type: 'Undecodable', error: 'entry carries no command' });
  });
});

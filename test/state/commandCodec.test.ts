// The log entry codec (src/codec/commandCodec.ts) carries the auth fields: callers, tokens and every auth
// change round-trip; absent or empty ones decode to undefined, as entries written before them do.
import { describe, expect, it } from 'vitest';
import { decodeCommand, encodeCommand } from '../../src/codec/commandCodec';
import type { AuthChange, Command } from '../../src/state';
import { sid } from './harness';

const meta = { clientId: 'c', requestId: 3, now: 7 };

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
      expect(decodeCommand(encodeCommand(c)), change.op).toEqual(c);
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

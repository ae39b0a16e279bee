// RightsWatch (docs/auth.md "Revocation"): what a node tells its open streams and calls in flight at the apply
// of an auth change: a revoked token, a deleted user (UNAUTHENTICATED); nothing for other changes, nothing to
// watch without an identity.
import * as grpc from '@grpc/grpc-js';
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { Access } from '../../src/node/auth/access';
import type { Caller } from '../../src/node/auth/caller';
import { RightsWatch } from '../../src/node/auth/revocation';
import type { ApiError } from '../../src/node/api/errors';
import type { NodeConfig } from '../../src/node/config';
import { LockStateMachine, type AuthChange, type Command } from '../../src/state';

const TOKEN = '0123456789abcdef';

function setup() {
  const m = new LockStateMachine();
  const entries = new EventEmitter();
  let index = 0;
  const apply = (change: AuthChange, caller = 'root'): void => {
    const command: Command = { type: 'AuthChange', clientId: `admin-${index + 1}`, requestId: 1, now: 1, caller, change };
    const outcome = m.apply(++index, command);
    expect(outcome.result, change.op).toMatchObject({ status: 'auth_changed' });
    entries.emit('applied', index, command, outcome);
  };
  apply({ op: 'enable', user: 'root' }, '');
  for (const user of ['tom', 'bea']) apply({ op: 'user_add', user });
  apply({ op: 'token_issue', user: 'tom', tokenId: TOKEN, tokenHash: 'a'.repeat(64) });
  const access = new Access({ auth: { enabled: true, admin: 'root' } } as unknown as NodeConfig, () => m);
  const rights = new RightsWatch(entries, access);
  const lost: Array<[string, number]> = [];
  const watch = (name: string, caller: Caller): (() => void) => rights.watch(caller, (err: ApiError) => lost.push([name, err.code]));
  return { apply, rights, lost, watch };
}

describe('RightsWatch', () => {
  it('tells a token caller at the apply of its revoke, a user at its deletion; others are left alone', () => {
    const { apply, rights, lost, watch } = setup();
    watch('tom by token', { identity: 'tom', via: 'token', tokenId: TOKEN });
    watch('bea by certificate', { identity: 'bea', via: 'certificate' });
    watch('stranger by certificate', { identity: 'stranger', via: 'certificate' });
    expect(rights.size).toBe(3);
    apply({ op: 'role_add', role: 'r' });
    expect(lost).toEqual([]);
    apply({ op: 'token_revoke', tokenId: TOKEN });
    expect(lost).toEqual([['tom by token', grpc.status.UNAUTHENTICATED]]);
    apply({ op: 'user_delete', user: 'bea' });
    expect(lost).toEqual([
      ['tom by token', grpc.status.UNAUTHENTICATED],
      ['bea by certificate', grpc.status.UNAUTHENTICATED],
    ]);
    // A certificate naming no user was never one: deleting users does not end what it may open.
    expect(rights.size).toBe(1);
  });

  it('watches nothing without an identity, and a stopped watch is told nothing', () => {
    const { apply, rights, lost, watch } = setup();
    watch('anonymous', { identity: 'address:127.0.0.1', via: 'address' });
    expect(rights.size).toBe(0);
    const stop = watch('tom', { identity: 'tom', via: 'token', tokenId: TOKEN });
    stop();
    apply({ op: 'token_revoke', tokenId: TOKEN });
    expect(lost).toEqual([]);
  });
});

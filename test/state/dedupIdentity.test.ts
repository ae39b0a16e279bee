// Retry records per identity (docs/auth.md "Retry records per identity"): kept per (caller, client id);
// another identity can never see, replay or evict them; an identity beyond its dedup_clients quota forgets
// its own least recently used client; an unknown client past its first request is REQUEST_TOO_OLD.
import { describe, expect, it } from 'vitest';
import { DEDUP_MAX_RESULTS, DEFAULT_QUOTAS, LockStateMachine, type Command } from '../../src/state';
import { DedupTable } from '../../src/state/dedup';
import { roundTrip, sid } from './harness';

const tooOld = { status: 'refused', reason: 'REQUEST_TOO_OLD', watermark: 0 };

/** A machine with one session opened by `caller` (node-stamped), and a numbering of entries. */
function setup(caller = 'alice') {
  const m = new LockStateMachine();
  let index = 0;
  const apply = (c: Command) => m.apply(++index, c);
  const session = sid(1);
  apply({ type: 'OpenSession', clientId: 'a-client', requestId: 1, now: 1, caller, sessionId: session, ttlMs: 10_000, clientName: '' });
  return { m, apply, session };
}

describe('retry records per identity', () => {
  it('survive another identity flooding the table with 20,000 fresh client ids: a retry gets its stored grant', () => {
    const { m, apply, session } = setup();
    const acquire: Command = { type: 'Acquire', clientId: 'a-client', requestId: 2, now: 2, caller: 'alice', lock: 'L', sessionId: session, tryOnly: false };
    const first = apply(acquire);
    expect(first.result).toMatchObject({ status: 'granted', newGrant: true });
    for (let i = 0; i < 20_000; i++) {
      apply({ type: 'CancelWait', clientId: `flood-${i}`, requestId: 1, now: 3, caller: 'bob', lock: 'L', sessionId: sid(2) });
    }
    expect(m.auth.usage('bob').dedupClients).toBe(DEFAULT_QUOTAS.dedup_clients);
    expect(m.stats().dedupClients).toBe(DEFAULT_QUOTAS.dedup_clients + 1);
    const retry = apply(acquire);
    expect(retry).toEqual({ result: first.result, events: [], duplicate: true });
    expect(m.checkInvariants()).toEqual([]);
  });

  it('are invisible to another identity: the same client and request id from it is its own request', () => {
    const { m, apply, session } = setup();
    const close = (caller: string): Command => ({ type: 'CloseSession', clientId: 'shared', requestId: 1, now: 2, caller, sessionId: session });
    expect(apply(close('alice')).result).toMatchObject({ status: 'session_ended' });
    expect(m.storedResult(close('alice') as never)).toMatchObject({ status: 'session_ended' });
    expect(m.storedResult(close('mallory') as never)).toBeUndefined();
    expect(m.storedResult(close('') as never)).toBeUndefined();
    const other = apply(close('mallory'));
    expect(other).toEqual({ result: { status: 'refused', reason: 'UNKNOWN_SESSION', watermark: 0 }, events: [], duplicate: false });
    expect(apply(close('alice')).duplicate).toBe(true);
  });

  it('refuse a request past the first of a client that has no record (REQUEST_TOO_OLD), but not for caller \'\'', () => {
    const { apply, session } = setup();
    const acquire = (caller: string, requestId: number): Command => ({ type: 'Acquire', clientId: 'new-client', requestId, now: 2, caller, lock: 'L', sessionId: session, tryOnly: false });
    expect(apply(acquire('alice', 5)).result).toEqual(tooOld);
    expect(apply(acquire('alice', 1)).result).toMatchObject({ status: 'granted' });
    expect(apply(acquire('alice', 2)).result).toMatchObject({ status: 'granted', newGrant: false });
    // Logs written before callers were stamped replay as they did.
    expect(apply(acquire('', 5)).result).toMatchObject({ status: 'granted', newGrant: false });
  });

  it('beyond the dedup_clients quota: the identity forgets its own least recently used client, whose next request is REQUEST_TOO_OLD', () => {
    const { m, apply, session } = setup('admin');
    apply({ type: 'AuthChange', clientId: '', requestId: 0, now: 1, change: { op: 'role_add', role: 'small' } });
    apply({ type: 'AuthChange', clientId: '', requestId: 0, now: 1, change: { op: 'role_quota', role: 'small', quota: 'dedup_clients', value: 2 } });
    for (const op of ['user_add', 'user_grant'] as const) apply({ type: 'AuthChange', clientId: '', requestId: 0, now: 1, change: { op, user: 'carol', role: 'small' } as never });
    const cancel = (caller: string, clientId: string, requestId: number): Command => ({ type: 'CancelWait', clientId, requestId, now: 2, caller, lock: 'L', sessionId: session });
    apply(cancel('carol', 'c1', 1));
    apply(cancel('dave', 'd1', 1));
    apply(cancel('carol', 'c2', 1));
    apply(cancel('carol', 'c1', 2)); // c1 is now the most recently used of carol's
    apply(cancel('carol', 'c3', 1)); // forgets c2, not c1, and not dave's
    expect(m.auth.usage('carol').dedupClients).toBe(2);
    expect(apply(cancel('carol', 'c2', 2)).result).toEqual(tooOld);
    expect(apply(cancel('carol', 'c1', 2)).duplicate).toBe(true);
    expect(apply(cancel('dave', 'd1', 1)).duplicate).toBe(true);
    expect(m.checkInvariants()).toEqual([]);
  });

  it('keep each identity’s own order and callers through a snapshot', () => {
    const { m, apply, session } = setup();
    for (const [caller, clientId] of [['bob', 'x'], ['alice', 'x'], ['bob', 'y'], ['', 'x']] as const) {
      apply({ type: 'CancelWait', clientId, requestId: 1, now: 2, caller, lock: 'L', sessionId: session });
    }
    const restored = roundTrip(m);
    expect(restored.writeSnapshot()).toEqual(m.writeSnapshot());
    expect(restored.checkInvariants()).toEqual([]);
    for (const caller of ['alice', 'bob', '']) {
      const retry: Command = { type: 'CancelWait', clientId: 'x', requestId: 1, now: 3, caller, lock: 'L', sessionId: session };
      expect(restored.storedResult(retry as never), caller).toEqual({ status: 'not_waiting' });
    }
    expect(restored.auth.usage('bob').dedupClients).toBe(2);
  });

  it('at the global bound of results, a flooding identity forgets its own clients before another’s', () => {
    const table = new DedupTable();
    const result = Object.freeze({ status: 'cancelled' as const });
    table.record('alice', 'a', 1, 0, 'CancelWait', result, 1_000);
    const perClient = 1_000;
    const clients = Math.ceil(DEDUP_MAX_RESULTS / perClient) + 5;
    for (let c = 0; c < clients; c++) {
      for (let r = 1; r <= perClient; r++) table.record('bob', `b${c}`, r, 0, 'CancelWait', result, 1_000);
    }
    expect(table.resultCount).toBeLessThanOrEqual(DEDUP_MAX_RESULTS);
    expect(table.peek('alice', 'a', 1, 0, 'CancelWait')).toBe(result);
    expect(table.check()).toEqual([]);
  });
});

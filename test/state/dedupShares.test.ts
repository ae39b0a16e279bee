// Retry records in per-identity shares (docs/auth.md "Retry records per identity"), with the bounds shrunk
// (vi.mock) so that they are reached in a unit test: an identity beyond its share forgets only its own
// records; at the global bound a caller makes room from its own records or is refused DEDUP_FULL, unapplied;
// another identity's records are never evicted, so its retry never applies twice.
import { describe, expect, it, vi } from 'vitest';
import { LockStateMachine, Reason, type Command } from '../../src/state';
import { DedupTable } from '../../src/state/dedup';
import { roundTrip, sid } from './harness';

vi.mock('../../src/state/limits', async (importOriginal) => ({
  ...(await importOriginal<typeof import('../../src/state/limits')>()),
  DEDUP_MAX_RESULTS_PER_CLIENT: 5,
  DEDUP_MAX_CLIENTS: 6,
  DEDUP_MAX_RESULTS: 12,
  DEDUP_MAX_RESULTS_PER_IDENTITY: 6,
}));

function machine() {
  const m = new LockStateMachine();
  let index = 0;
  const apply = (c: Command) => m.apply(++index, c);
  const open = (caller: string, clientId: string, requestId: number, n: number): Command => ({
    type: 'OpenSession',
    clientId,
    requestId,
    now: 1,
    caller,
    sessionId: sid(n),
    ttlMs: 10_000,
    clientName: '',
  });
  /** `results` requests of `caller` from client ids `prefix0..`, each up to the per-client bound. */
  const flood = (caller: string, prefix: string, results: number): void => {
    for (let i = 0; i < results; i++) {
      apply({ type: 'CancelWait', clientId: `${prefix}${Math.floor(i / 5)}`, requestId: (i % 5) + 1, now: 2, caller, lock: 'L', sessionId: sid(999) });
    }
  };
  return { m, apply, open, flood };
}

describe('retry records in per-identity shares', () => {
  it('an identity flooding the table holds at most its share and forgets only its own records', () => {
    const { m, apply, open, flood } = machine();
    const first = apply(open('carol', 'carol-1', 1, 1));
    flood('mallory', 'm', 40);
    expect(m.auth.usage('mallory').dedupResults).toBeLessThanOrEqual(6);
    expect(m.auth.usage('carol').dedupResults).toBe(1);
    const retry = apply(open('carol', 'carol-1', 1, 2));
    expect(retry).toEqual({ result: first.result, events: [], duplicate: true });
    expect(m.stats().sessions).toBe(1);
    expect(m.checkInvariants()).toEqual([]);
  });

  it('at the global bound, a caller with no record of its own is refused DEDUP_FULL, unapplied, and evicts nobody', () => {
    const { m, apply, open, flood } = machine();
    const first = apply(open('carol', 'carol-1', 1, 1)); // tenant 3's first request
    flood('mallory', 'm', 6); // tenant 1 fills its share
    flood('oscar', 'o', 5); // another identity fills the rest of the table
    expect(m.stats().dedupResults).toBe(12);
    const before = m.writeSnapshot();
    // Tenant 2's first request: no room of its own to give up.
    const refused = apply(open('trent', 'trent-1', 1, 2));
    expect(refused).toEqual({ result: { status: 'refused', reason: Reason.DEDUP_FULL, watermark: 0 }, events: [], duplicate: false });
    expect(m.stats().sessions).toBe(1); // not applied
    expect(m.storedResult(open('trent', 'trent-1', 1, 2) as never)).toBeUndefined(); // not recorded either
    // Nothing of anyone changed but the entry index: the refusal is neither applied nor recorded.
    const after = LockStateMachine.readSnapshot(m.writeSnapshot());
    expect(after.stats()).toEqual({ ...LockStateMachine.readSnapshot(before).stats(), lastApplied: m.lastApplied });
    // Tenant 3's retry of its OpenSession gets the same session.
    expect(apply(open('carol', 'carol-1', 1, 3))).toEqual({ result: first.result, events: [], duplicate: true });
    expect(m.stats().sessions).toBe(1);
    // A caller that holds records makes room from its own: a new client of mallory's evicts mallory's oldest.
    expect(apply(open('mallory', 'm-new', 1, 4)).result).toMatchObject({ status: 'session_opened' });
    expect(m.auth.usage('carol').dedupResults).toBe(1);
    expect(m.auth.usage('oscar').dedupResults).toBe(5);
    expect(m.checkInvariants()).toEqual([]);
  });

  it('at the bound of clients, the same: own clients go, others stay, an identity with none is refused', () => {
    const { m, apply, open } = machine();
    apply(open('carol', 'carol-1', 1, 1));
    for (let i = 0; i < 5; i++) apply(open('mallory', `m${i}`, 1, 10 + i)); // 6 clients: the bound
    expect(m.stats().dedupClients).toBe(6);
    expect(apply(open('trent', 'trent-1', 1, 20)).result).toMatchObject({ reason: Reason.DEDUP_FULL });
    expect(apply(open('mallory', 'm9', 1, 21)).result).toMatchObject({ status: 'session_opened' });
    expect(m.auth.usage('mallory').dedupClients).toBe(5);
    expect(apply(open('carol', 'carol-1', 1, 22)).duplicate).toBe(true);
    expect(m.checkInvariants()).toEqual([]);
  });

  it('a client alone over the share gives up its own oldest results: their retries are REQUEST_TOO_OLD, never applied again', () => {
    const table = new DedupTable();
    const result = Object.freeze({ status: 'cancelled' as const });
    // Shares of 6 results, 5 per client: client a (5) and b: b's records push a out first.
    for (let r = 1; r <= 5; r++) table.record('alice', 'a', r, 0, 'CancelWait', result, 10);
    for (let r = 1; r <= 3; r++) table.record('alice', 'b', r, 0, 'CancelWait', result, 10);
    expect(table.resultsOf('alice')).toBe(3);
    expect(table.clientsOf('alice')).toBe(1);
    expect(table.begin('alice', 'a', 2, 0, 'CancelWait')).toEqual({ kind: 'too_old' });
    expect(table.check()).toEqual([]);
  });

  it('caller \'\' (old logs) shares the table as before: its own least recently used client goes first', () => {
    const table = new DedupTable();
    const result = Object.freeze({ status: 'cancelled' as const });
    for (let c = 0; c < 4; c++) for (let r = 1; r <= 4; r++) table.record('', `c${c}`, r, 0, 'CancelWait', result, 0);
    // 16 results over a bound of 12: c0 went, then... the three most recent clients remain, whole.
    expect(table.resultCount).toBe(12);
    expect(table.peek('', 'c0', 1, 0, 'CancelWait')).toBeUndefined();
    expect(table.peek('', 'c1', 1, 0, 'CancelWait')).toBe(result);
    expect(table.check()).toEqual([]);
  });

  it('shares survive a snapshot: the counts per identity are derived again', () => {
    const { m, apply, open, flood } = machine();
    apply(open('carol', 'carol-1', 1, 1));
    flood('mallory', 'm', 9);
    const restored = roundTrip(m);
    expect(restored.checkInvariants()).toEqual([]);
    expect(restored.auth.usage('mallory').dedupResults).toBe(m.auth.usage('mallory').dedupResults);
    expect(restored.auth.usage('carol').dedupResults).toBe(1);
    expect(restored.writeSnapshot()).toEqual(m.writeSnapshot());
  });
});

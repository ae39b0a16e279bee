// Retries (docs/architecture.md#promises, promise 4): the same (clientId, requestId) returns the stored result and never applies twice.
import { describe, expect, it } from 'vitest';
import { DEDUP_MAX_CLIENTS, DEDUP_MAX_RESULTS_PER_CLIENT, Reason, type Command } from '../../src/state';
import { Harness, put, referenceSnapshot, roundTrip, sid } from './harness';
import { encodePlainSnapshot } from './snapshotOracle';

/** Applies `command` again at a later index: a retry that got committed twice. */
function retry(h: Harness, command: Command) {
  return h.apply(command);
}

describe('retries of accepted requests', () => {
  it('a retried Acquire returns the original grant and does not re-grant after a release', () => {
    const h = new Harness();
    const [a, b] = [h.open(), h.open()];
    const acquire = h.req('Acquire', { lock: 'L', sessionId: a, tryOnly: false });
    const first = h.apply(acquire);
    const t = h.index;
    expect(first.result).toEqual({ status: 'granted', token: t, newGrant: true });
    h.release(a, 'L', t);
    const again = retry(h, acquire);
    expect(again).toEqual({ result: first.result, events: [], duplicate: true });
    expect(h.m.describeLock('L')).toBeUndefined(); // still free: nothing re-granted
    expect(h.grant(b, 'L')).toBeGreaterThan(t);
  });

  it('a retried Write applies once: a later write is not overwritten by the retry', () => {
    const h = new Harness();
    const a = h.open();
    const t = h.grant(a, 'L');
    const w1 = h.req('Write', { lock: 'L', sessionId: a, token: t, ops: [put('k', 'one')] });
    const first = h.apply(w1);
    h.write(a, 'L', t, [put('k', 'two')]);
    expect(retry(h, w1)).toEqual({ result: first.result, events: [], duplicate: true });
    expect(h.value('k')).toBe('two');
  });

  it('a retried Release does not release the next grant', () => {
    const h = new Harness();
    const [a, b] = [h.open(), h.open()];
    const t = h.grant(a, 'L');
    h.acquire(b, 'L');
    const rel = h.req('Release', { lock: 'L', sessionId: a, token: t });
    const first = h.apply(rel);
    const tb = h.index;
    expect(retry(h, rel)).toEqual({ result: first.result, events: [], duplicate: true });
    expect(h.m.describeLock('L')?.holder).toMatchObject({ sessionId: b, token: tb });
  });

  it('a retried OpenSession and CloseSession return their first results', () => {
    const h = new Harness();
    const open = h.req('OpenSession', { sessionId: sid(9), ttlMs: 5_000, clientName: 'n' });
    const first = h.apply(open);
    expect(retry(h, open)).toEqual({ result: first.result, events: [], duplicate: true });
    const close = h.req('CloseSession', { sessionId: sid(9) });
    const closed = h.apply(close);
    expect(closed.result).toMatchObject({ status: 'session_ended' });
    expect(retry(h, close)).toEqual({ result: closed.result, events: [], duplicate: true });
    expect(h.m.sessionIds()).toEqual([]);
  });
});

describe('retries of refused and invalid requests', () => {
  it('a retried refusal stays refused even when the request would succeed now', () => {
    const h = new Harness();
    const [a, b] = [h.open(), h.open()];
    const t = h.grant(a, 'L');
    const tryLock = h.req('Acquire', { lock: 'L', sessionId: b, tryOnly: true });
    const first = h.apply(tryLock);
    expect(first.result).toEqual({ status: 'held', holderToken: t });
    h.release(a, 'L', t);
    expect(retry(h, tryLock)).toEqual({ result: first.result, events: [], duplicate: true });
    expect(h.m.describeLock('L')).toBeUndefined();
  });

  it('a retried refused write stays refused and writes nothing', () => {
    const h = new Harness();
    const [a, b] = [h.open(), h.open()];
    const t = h.grant(a, 'L');
    const w = h.req('Write', { lock: 'L', sessionId: b, token: t, ops: [put('k', 'b')] });
    const first = h.apply(w);
    expect(first.result).toMatchObject({ status: 'refused', reason: Reason.NOT_HOLDER });
    h.release(a, 'L', t);
    expect(retry(h, w).result).toBe(first.result);
    expect(h.m.get('k')).toBeUndefined();
  });

  it('an invalid command with valid ids is stored too', () => {
    const h = new Harness();
    const bad = h.req('Acquire', { lock: '', sessionId: sid(1), tryOnly: false });
    const first = h.apply(bad);
    expect(first.result).toEqual({ status: 'invalid', message: 'lock name must not be empty' });
    expect(retry(h, bad)).toEqual({ result: first.result, events: [], duplicate: true });
  });
});

describe('dedup table rules', () => {
  it('keys by (clientId, requestId): another client with the same requestId is a new request', () => {
    const h = new Harness();
    const a = h.open();
    const t = h.grant(a, 'L');
    const release = h.req('Release', { lock: 'L', sessionId: a, token: t, requestId: 500 });
    h.apply(release);
    h.grant(a, 'L');
    const other = { ...release, clientId: 'client-2' } as Command;
    expect(h.apply(other)).toMatchObject({ duplicate: false, result: { reason: Reason.WRONG_TOKEN } });
  });

  it('refuses a reused requestId for another kind of command without applying it', () => {
    const h = new Harness();
    const a = h.open();
    const acquire = h.req('Acquire', { lock: 'L', sessionId: a, tryOnly: false, requestId: 77 });
    h.apply(acquire);
    const clash = h.req('Write', { lock: 'L', sessionId: a, token: h.index, ops: [put('k', 'v')], requestId: 77 });
    expect(h.apply(clash)).toEqual({
      result: { status: 'refused', reason: Reason.REQUEST_ID_REUSED, watermark: 0 },
      events: [],
      duplicate: false,
    });
    expect(h.m.get('k')).toBeUndefined();
  });

  it('ackedBelow drops results; an unknown request below it is refused, never applied', () => {
    const h = new Harness();
    const a = h.open(); // request 1
    const acquire = h.req('Acquire', { lock: 'L', sessionId: a, tryOnly: false }); // request 2
    h.apply(acquire);
    const t = h.index;
    h.apply(h.req('Release', { lock: 'L', sessionId: a, token: t, ackedBelow: 3 })); // request 3 acks 1 and 2
    expect(h.m.stats().dedupResults).toBe(1);
    expect(retry(h, acquire)).toEqual({
      result: { status: 'refused', reason: Reason.REQUEST_TOO_OLD, watermark: 0 },
      events: [],
      duplicate: false,
    });
    expect(h.m.describeLock('L')).toBeUndefined();
    // ackedBelow may not exceed the request's own id
    expect(h.apply(h.req('CancelWait', { lock: 'L', sessionId: a, requestId: 10, ackedBelow: 11 })).result).toMatchObject({
      status: 'invalid',
    });
  });

  it('ackedBelow drops every result below it, whatever order the requests were applied in', () => {
    const h = new Harness();
    const a = h.open(); // request 1
    // Concurrent calls of one client may apply out of id order: the results below the floor are not a prefix.
    const applied = [50, 20, 70, 30].map((requestId) => {
      const cmd = h.req('CancelWait', { lock: 'L', sessionId: a, requestId });
      h.apply(cmd);
      return cmd;
    });
    h.apply(h.req('CancelWait', { lock: 'L', sessionId: a, requestId: 80, ackedBelow: 60 }));
    expect(h.m.stats().dedupResults).toBe(2); // 70 and 80
    const [r50, r20, r70, r30] = applied as [Command, Command, Command, Command];
    for (const dropped of [r50, r20, r30]) expect(retry(h, dropped).result).toMatchObject({ reason: Reason.REQUEST_TOO_OLD });
    expect(retry(h, r70).duplicate).toBe(true);
  });

  it(`keeps the last ${DEDUP_MAX_RESULTS_PER_CLIENT} results per client; older ones are refused as too old`, () => {
    const h = new Harness();
    h.checkEachStep = false;
    const a = h.open(); // request 1
    const first = h.req('CancelWait', { lock: 'L', sessionId: a }); // request 2
    h.apply(first);
    for (let i = 0; i < DEDUP_MAX_RESULTS_PER_CLIENT; i++) h.apply(h.req('CancelWait', { lock: 'L', sessionId: a }));
    expect(h.m.stats().dedupResults).toBe(DEDUP_MAX_RESULTS_PER_CLIENT);
    expect(retry(h, first).result).toMatchObject({ reason: Reason.REQUEST_TOO_OLD });
    expect(h.m.checkInvariants()).toEqual([]);
  });

  it(`remembers at most ${DEDUP_MAX_CLIENTS} clients, forgetting the least recently used`, () => {
    const h = new Harness();
    h.checkEachStep = false;
    const a = h.open();
    const tryFor = (client: number) =>
      h.req('Acquire', { lock: 'L', sessionId: a, tryOnly: true, clientId: `c${client}`, requestId: 1 });
    const first = tryFor(0);
    const firstOut = h.apply(first);
    const kept = tryFor(1);
    h.apply(kept);
    for (let c = 2; c < DEDUP_MAX_CLIENTS; c++) h.apply(tryFor(c));
    expect(retry(h, first).duplicate).toBe(true); // c0 used again: now the most recent
    h.apply(tryFor(DEDUP_MAX_CLIENTS)); // one client too many: c1 is the least recently used
    expect(h.m.stats().dedupClients).toBe(DEDUP_MAX_CLIENTS);
    expect(retry(h, first)).toEqual({ result: firstOut.result, events: [], duplicate: true });
    expect(retry(h, kept).duplicate).toBe(false); // forgotten: the documented caveat
    expect(h.m.checkInvariants()).toEqual([]);
  });

  it("clientId '' is not de-duplicated (the node's own proposals)", () => {
    const h = new Harness();
    const [a, b] = [h.open(), h.open()];
    h.grant(a, 'L');
    h.acquire(b, 'L');
    const cancel = h.req('CancelWait', { lock: 'L', sessionId: b, clientId: '', requestId: 0 });
    expect(h.apply(cancel).result).toEqual({ status: 'cancelled' });
    expect(h.apply(cancel)).toEqual({ result: { status: 'not_waiting' }, events: [], duplicate: false });
    expect(h.m.stats().dedupClients).toBe(1);
  });

  it('stored results survive a snapshot round trip', () => {
    const h = new Harness();
    const a = h.open();
    const acquire = h.req('Acquire', { lock: 'L', sessionId: a, tryOnly: false });
    const first = h.apply(acquire);
    h.release(a, 'L', h.index);
    h.m = roundTrip(h.m);
    const again = retry(h, acquire);
    expect(again).toEqual({ result: first.result, events: [], duplicate: true });
    expect(Object.isFrozen(again.result)).toBe(true);
    expect(h.m.describeLock('L')).toBeUndefined();
  });
});

describe('stored results carry the original answer (issue 17)', () => {
  it('a Write result carries the index of the entry that applied it; a retry gets that index, also after a snapshot round-trip', () => {
    const h = new Harness();
    const a = h.open();
    const t = h.grant(a, 'L');
    const w = h.req('Write', { lock: 'L', sessionId: a, token: t, ops: [put('k', 'one')] });
    const first = h.apply(w);
    const index = h.index;
    expect(first.result).toEqual({ status: 'written', token: t, ops: 1, index });
    h.write(a, 'L', t, [put('k', 'two')]);
    expect(retry(h, w).result).toEqual({ status: 'written', token: t, ops: 1, index });
    h.m = roundTrip(h.m);
    const again = retry(h, w);
    expect(again).toEqual({ result: { status: 'written', token: t, ops: 1, index }, events: [], duplicate: true });
    expect(h.value('k')).toBe('two');
  });

  it('a Release result carries the handover (next holder, next token); a retry gets it, also after a snapshot round-trip', () => {
    const h = new Harness();
    const [a, b] = [h.open(), h.open()];
    const t = h.grant(a, 'L');
    h.acquire(b, 'L');
    const rel = h.req('Release', { lock: 'L', sessionId: a, token: t });
    const first = h.apply(rel);
    const tb = h.index;
    const handover = { status: 'released', token: t, nextHolder: b, nextToken: tb };
    expect(first.result).toEqual(handover);
    expect(first.events).toContainEqual({ type: 'granted', lock: 'L', sessionId: b, token: tb, cause: 'released' });
    h.m = roundTrip(h.m);
    expect(retry(h, rel)).toEqual({ result: handover, events: [], duplicate: true });
    expect(h.m.describeLock('L')?.holder).toMatchObject({ sessionId: b, token: tb });
  });

  it('a Release with nobody waiting stores no handover', () => {
    const h = new Harness();
    const a = h.open();
    const t = h.grant(a, 'L');
    const rel = h.req('Release', { lock: 'L', sessionId: a, token: t });
    expect(h.apply(rel).result).toEqual({ status: 'released', token: t });
    h.m = roundTrip(h.m);
    expect(retry(h, rel).result).toEqual({ status: 'released', token: t });
  });

  it('the snapshot bytes of stored results with the new fields round-trip exactly', () => {
    const h = new Harness();
    const [a, b] = [h.open(), h.open()];
    const t = h.grant(a, 'L');
    h.write(a, 'L', t, [put('k', 'v')]);
    h.acquire(b, 'L');
    h.release(a, 'L', t);
    const bytes = h.m.writeSnapshot();
    const back = roundTrip(h.m);
    expect(back.writeSnapshot()).toEqual(bytes);
    // The restored machine's stored results carry the fields too.
    const results = referenceSnapshot(back).dedup.flatMap((c) => c.entries.map((e) => JSON.parse(e.result) as Record<string, unknown>));
    expect(results).toContainEqual({ status: 'written', token: t, ops: 1, index: t + 1 });
    expect(results).toContainEqual({ status: 'released', token: t, nextHolder: b, nextToken: h.index });
    expect(encodePlainSnapshot(referenceSnapshot(back))).toEqual(bytes);
  });

  it('storedResult answers only for the very request: same client, id and command type, not below ackedBelow; and changes nothing', () => {
    const h = new Harness();
    const a = h.open();
    const t = h.grant(a, 'L');
    const w = h.req('Write', { lock: 'L', sessionId: a, token: t, ops: [put('k', 'one')] });
    expect(h.m.storedResult(w as never)).toBeUndefined(); // not applied yet
    const first = h.apply(w);
    const before = h.m.writeSnapshot();
    expect(h.m.storedResult(w as never)).toBe(first.result);
    const fields = w as unknown as Record<string, unknown>;
    expect(h.m.storedResult({ ...fields, requestId: 999 } as never)).toBeUndefined();
    expect(h.m.storedResult({ ...fields, clientId: 'other' } as never)).toBeUndefined();
    expect(h.m.storedResult({ ...fields, clientId: '' } as never)).toBeUndefined();
    expect(h.m.storedResult({ ...fields, ackedBelow: (fields.requestId as number) + 1 } as never)).toBeUndefined();
    // Another command type under the same id: the machine refuses it (REQUEST_ID_REUSED); storedResult leaves it to the machine.
    const reuse = { ...fields, type: 'Release' } as unknown as Command;
    expect(h.m.storedResult(reuse as never)).toBeUndefined();
    expect(h.m.writeSnapshot()).toEqual(before);
    expect(h.apply(reuse).result).toEqual({ status: 'refused', reason: Reason.REQUEST_ID_REUSED, watermark: 0 });
  });
});

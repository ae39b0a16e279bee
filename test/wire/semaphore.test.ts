// Semaphore over the wire (Acquire, Release, Describe, and Acquire/Release on the Pipeline stream) against a
// real TLS node with auth on: each permit a slot and a token of its own, tokens only going up, a freed slot
// handed to the first waiter under a new token, bad values refused naming their field, never a server fault.
import { createHash } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_PERMITS } from '../../src/protocol/limits';
import {
  asDecoded, checkShape, expectAlive, expectOk, expectRefused, generator, header, intValid, MAX_SAFE, printSeedOnFailure, reasonOf, sendable,
  startCluster, wireInt, type Gen, type Obj, type WireCluster,
} from './wireKit';

printSeedOnFailure();

let w: WireCluster;
let highestToken = 0;

beforeAll(async () => {
  w = await startCluster(1);
});
afterAll(async () => {
  await w?.stop();
});

const handleOf = (sessionId: string): string => createHash('sha256').update(sessionId).digest('hex').slice(0, 16);

async function openSession(gen: Gen): Promise<string> {
  return expectOk(await w.leader.unary('Session', 'Open', { header: header(gen), ttlMs: '60000' }), 'open', 'Session', 'Open').sessionId as string;
}

function acquire(gen: Gen, name: string, sessionId: string, permits: unknown, waitTimeoutMs: string | number = '0'): ReturnType<typeof w.leader.unary> {
  return w.leader.unary('Semaphore', 'Acquire', { header: header(gen), name, sessionId, permits, waitTimeoutMs });
}

/** A granted permit: its slot within 0..permits-1 and a token above every one before it. */
function granted(res: Obj, what: string, permits: number): { slot: number; token: number } {
  expect(res.acquired, `${what}: acquired`).toBe(true);
  expect(res.permits, `${what}: permits in force`).toBe(permits);
  const token = wireInt(`${what}: token`, res.token, { min: highestToken + 1, max: MAX_SAFE });
  highestToken = token;
  expect(res.slot, `${what}: slot`).toBeLessThan(permits);
  return { slot: res.slot as number, token };
}

describe('Semaphore.Acquire', () => {
  it('takes permits in 1..MAX_PERMITS and refuses the rest naming permits', async () => {
    const gen = generator('semaphore permits');
    const sessionId = await openSession(gen);
    for (const permits of gen.intEdges({ min: 1, max: MAX_PERMITS })) {
      const req = { header: header(gen), name: gen.name('permits'), sessionId, permits, waitTimeoutMs: '0' };
      if (!sendable('Semaphore', 'Acquire', req)) continue;
      const decoded = asDecoded('Semaphore', 'Acquire', req).permits as number;
      const what = `permits ${JSON.stringify(permits)} (on the wire ${decoded})`;
      const out = await w.leader.unary('Semaphore', 'Acquire', req);
      if (!intValid(String(decoded), { min: 1, max: MAX_PERMITS })) expectRefused(out, what, [grpc.status.INVALID_ARGUMENT], 'permits');
      else granted(expectOk(out, what, 'Semaphore', 'Acquire'), what, decoded);
    }
    await expectAlive(w);
  });

  it('gives each holder its own slot and token, answers acquired false when all are taken, and refuses another number of permits', async () => {
    const gen = generator('semaphore slots');
    const name = gen.name('pool');
    const sessions = [await openSession(gen), await openSession(gen), await openSession(gen), await openSession(gen)];
    const grants = [];
    for (const [i, s] of sessions.slice(0, 3).entries()) grants.push(granted(expectOk(await acquire(gen, name, s, 3), `holder ${i}`, 'Semaphore', 'Acquire'), `holder ${i}`, 3));
    expect(grants.map((g) => g.slot)).toEqual([0, 1, 2]);

    // Re-entrant: the holder's own slot and token again.
    expect(expectOk(await acquire(gen, name, sessions[1]!, 3), 'again', 'Semaphore', 'Acquire')).toMatchObject({ acquired: true, slot: 1, token: String(grants[1]!.token) });
    const full = expectOk(await acquire(gen, name, sessions[3]!, 3), 'a fourth', 'Semaphore', 'Acquire');
    expect(full).toMatchObject({ acquired: false, token: '0', permits: 3 });

    const mismatch = await acquire(gen, name, sessions[3]!, 4);
    expectRefused(mismatch, 'another number of permits', [grpc.status.FAILED_PRECONDITION]);
    expect(reasonOf(mismatch)).toBe('PERMITS_MISMATCH');
    expect(mismatch.ok ? '' : mismatch.details).toContain('permits 3');

    const d = expectOk(await w.leader.unary('Semaphore', 'Describe', { name }), 'describe', 'Semaphore', 'Describe');
    expect(d.permits).toBe(3);
    expect(d.holders.map((h: Obj) => [h.slot, h.token, h.session.handle])).toEqual(grants.map((g, i) => [g.slot, String(g.token), handleOf(sessions[i]!)]));
    expect(d.slotTokens).toEqual(grants.map((g) => String(g.token)));
    expect(d.waiters).toEqual([]);
  });

  it('queues a blocking Acquire FIFO and hands a released slot to it under a new token; the other slots keep theirs', async () => {
    const gen = generator('semaphore handover');
    const name = gen.name('pool');
    const [a, b, c] = [await openSession(gen), await openSession(gen), await openSession(gen)];
    const ga = granted(expectOk(await acquire(gen, name, a, 2), 'a', 'Semaphore', 'Acquire'), 'a', 2);
    const gb = granted(expectOk(await acquire(gen, name, b, 2), 'b', 'Semaphore', 'Acquire'), 'b', 2);
    const waiting = acquire(gen, name, c, 2, '30000');
    const queued = async (): Promise<Obj> => expectOk(await w.leader.unary('Semaphore', 'Describe', { name }), 'describe', 'Semaphore', 'Describe');
    for (let d = await queued(); d.waiters.length === 0; d = await queued()) await new Promise((r) => setTimeout(r, 20));
    expect((await queued()).waiters.map((x: Obj) => x.handle)).toEqual([handleOf(c)]);

    const wrong = await w.leader.unary('Semaphore', 'Release', { header: header(gen), name, sessionId: b, token: String(ga.token) });
    expectRefused(wrong, 'release under another token', [grpc.status.FAILED_PRECONDITION]);
    expect(reasonOf(wrong)).toBe('WRONG_TOKEN');

    const released = expectOk(await w.leader.unary('Semaphore', 'Release', { header: header(gen), name, sessionId: b, token: String(gb.token) }), 'release b', 'Semaphore', 'Release');
    expect(released.slot).toBe(gb.slot);
    expect(released.nextHolderSession).toBe(handleOf(c));
    const gc = granted(expectOk(await waiting, 'c granted', 'Semaphore', 'Acquire'), 'c granted', 2);
    expect(gc).toEqual({ slot: gb.slot, token: wireInt('next_token', released.nextToken) });

    const d = await queued();
    expect(d.holders.map((h: Obj) => [h.slot, h.token])).toEqual([[ga.slot, String(ga.token)], [gc.slot, String(gc.token)]]);
  });

  it('answers DEADLINE_EXCEEDED when the wait runs out, and the waiter is gone', async () => {
    const gen = generator('semaphore timeout');
    const name = gen.name('pool');
    const [a, b] = [await openSession(gen), await openSession(gen)];
    granted(expectOk(await acquire(gen, name, a, 1), 'a', 'Semaphore', 'Acquire'), 'a', 1);
    expectRefused(await acquire(gen, name, b, 1, '200'), 'a wait of 200 ms', [grpc.status.DEADLINE_EXCEEDED]);
    expect(expectOk(await w.leader.unary('Semaphore', 'Describe', { name }), 'describe', 'Semaphore', 'Describe').waiters).toEqual([]);
  });

  it('answers Describe of an unknown semaphore with permits 0 and nothing else', async () => {
    const d = expectOk(await w.leader.unary('Semaphore', 'Describe', { name: 'never-used' }), 'describe', 'Semaphore', 'Describe');
    expect(d).toMatchObject({ permits: 0, holders: [], waiters: [], slotTokens: [] });
  });
});

describe('Semaphore on the Pipeline stream', () => {
  it('acquires and releases as the unary calls do, with slot and token', async () => {
    const gen = generator('semaphore pipeline');
    const name = gen.name('pool');
    const sessionId = await openSession(gen);
    const stream = w.leader.duplex('Pipeline', 'Calls');
    const answers: Obj[] = [];
    stream.on('data', (res: Obj) => answers.push(res));
    stream.on('error', () => undefined);
    const answer = async (callId: string): Promise<Obj> => {
      for (;;) {
        const res = answers.find((a) => a.callId === callId);
        if (res !== undefined) return res;
        await new Promise((r) => setTimeout(r, 10));
      }
    };
    try {
      stream.write({ callId: '1', semaphoreAcquire: { header: header(gen), name, sessionId, permits: 2, waitTimeoutMs: '0' } });
      const acq = await answer('1');
      checkShape('fencelock.v1.CallResponse', acq, 'CallResponse 1', ['callId']);
      expect(acq.code, acq.message).toBe(grpc.status.OK);
      expect(acq.result).toBe('semaphoreAcquire');
      const g = granted(acq.semaphoreAcquire, 'pipeline acquire', 2);
      stream.write({ callId: '2', semaphoreRelease: { header: header(gen), name, sessionId, token: String(g.token) } });
      const rel = await answer('2');
      expect(rel.code, rel.message).toBe(grpc.status.OK);
      expect(rel.semaphoreRelease).toMatchObject({ slot: g.slot, nextHolderSession: '', nextToken: '0' });
      stream.write({ callId: '3', semaphoreAcquire: { header: header(gen), name, sessionId, permits: 0, waitTimeoutMs: '0' } });
      const bad = await answer('3');
      expect(bad.code).toBe(grpc.status.INVALID_ARGUMENT);
      expect(bad.message).toContain('permits');
    } finally {
      stream.end();
      stream.cancel();
    }
  });
});

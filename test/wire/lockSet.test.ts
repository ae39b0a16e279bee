// Lock.AcquireAll over the wire (issue 33, docs/architecture.md#atomic-multi-lock) against a real TLS node with
// auth on: one token for the whole set, the index of the one entry that granted it; a try on a busy set takes
// nothing; a blocked set waits in every queue and is granted whole; bad lists refused naming `locks`.
import { createHash } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_LOCKS_PER_ACQUIRE_ALL } from '../../src/protocol/limits';
import { expectAlive, expectOk, expectRefused, generator, header, MAX_SAFE, printSeedOnFailure, reasonOf, startCluster, wireInt, type Gen, type Obj, type WireCluster } from './wireKit';

printSeedOnFailure();

let w: WireCluster;

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

function acquireAll(gen: Gen, locks: string[], sessionId: string, waitTimeoutMs: string | number = '0', timeoutMs = 10_000): ReturnType<typeof w.leader.unary> {
  return w.leader.unary('Lock', 'AcquireAll', { header: header(gen), locks, sessionId, waitTimeoutMs }, timeoutMs);
}

async function describeLock(lock: string): Promise<Obj> {
  return expectOk(await w.leader.unary('Lock', 'Describe', { lock }), `describe ${lock}`, 'Lock', 'Describe');
}

/** A granted set: one token for every lock, the grants in the request's order. */
function checkSetGranted(res: Obj, locks: string[], what: string): string {
  expect(res.acquired, `${what}: acquired`).toBe(true);
  const token = String(wireInt(`${what}: token`, res.token, { min: 1, max: MAX_SAFE }));
  expect(res.grants, `${what}: grants`).toEqual(locks.map((lock) => ({ lock, token })));
  expect(res.busyLock, `${what}: busy_lock only when not acquired`).toBe('');
  return token;
}

describe('Lock.AcquireAll', () => {
  it('grants a free set in one entry: one token for every lock, each held under it', async () => {
    const gen = generator('set free');
    const sessionId = await openSession(gen);
    const locks = [gen.name('c'), gen.name('a'), gen.name('b')];
    const token = checkSetGranted(expectOk(await acquireAll(gen, locks, sessionId), 'set', 'Lock', 'AcquireAll'), locks, 'set');
    for (const lock of locks) expect(await describeLock(lock), lock).toMatchObject({ held: true, token, holderSession: handleOf(sessionId) });
    // Each lock is released on its own, with the set's token.
    expectOk(await w.leader.unary('Lock', 'Release', { header: header(gen), lock: locks[1], sessionId, token }), 'release one', 'Lock', 'Release');
    expect(await describeLock(locks[1])).toMatchObject({ held: false });
    expect(await describeLock(locks[0])).toMatchObject({ held: true, token });
  });

  it('a try on a set with one busy lock answers not acquired, naming it, and takes nothing', async () => {
    const gen = generator('set try');
    const [holder, other] = [await openSession(gen), await openSession(gen)];
    const [free, busy] = [gen.name('free'), gen.name('busy')];
    checkSetGranted(expectOk(await acquireAll(gen, [busy], holder), 'holder', 'Lock', 'AcquireAll'), [busy], 'holder');
    const res = expectOk(await acquireAll(gen, [free, busy], other), 'try', 'Lock', 'AcquireAll');
    expect(res).toMatchObject({ acquired: false, token: '0', grants: [], busyLock: busy });
    expect(await describeLock(free)).toMatchObject({ held: false, waiters: [] });
  });

  it('a blocked set waits in every queue, holds none of them, and is granted whole when the last lock frees', async () => {
    const gen = generator('set blocked');
    const [holder, other] = [await openSession(gen), await openSession(gen)];
    const [x, y] = [gen.name('x'), gen.name('y')];
    const held = checkSetGranted(expectOk(await acquireAll(gen, [x], holder), 'holder', 'Lock', 'AcquireAll'), [x], 'holder');
    const waiting = acquireAll(gen, [y, x], other, 20_000, 30_000);
    // Wait for the set to be queued in both queues (not for a duration).
    await expect.poll(async () => (await describeLock(y)).waiters, { timeout: 10_000 }).toEqual([handleOf(other)]);
    expect(await describeLock(y), 'y is free, held back for the set').toMatchObject({ held: false });
    expect((await describeLock(x)).waiters).toEqual([handleOf(other)]);
    const released = expectOk(await w.leader.unary('Lock', 'Release', { header: header(gen), lock: x, sessionId: holder, token: held }), 'release', 'Lock', 'Release');
    const token = checkSetGranted(expectOk(await waiting, 'set', 'Lock', 'AcquireAll'), [y, x], 'set');
    expect(released).toMatchObject({ nextHolderSession: handleOf(other), nextToken: token });
    for (const lock of [x, y]) expect(await describeLock(lock), lock).toMatchObject({ held: true, token, waiters: [] });
  });

  it('a set that waits out its timeout ends DEADLINE_EXCEEDED and leaves every queue', async () => {
    const gen = generator('set timeout');
    const [holder, other] = [await openSession(gen), await openSession(gen)];
    const [x, y] = [gen.name('x'), gen.name('y')];
    checkSetGranted(expectOk(await acquireAll(gen, [x], holder), 'holder', 'Lock', 'AcquireAll'), [x], 'holder');
    expectRefused(await acquireAll(gen, [x, y], other, 200), 'short wait', [grpc.status.DEADLINE_EXCEEDED]);
    expect((await describeLock(x)).waiters).toEqual([]);
    expect(await describeLock(y)).toMatchObject({ held: false, waiters: [] });
  });

  it('refuses an empty list, more than MAX_LOCKS_PER_ACQUIRE_ALL names and a name twice, naming locks; an overlap with what the session holds is SET_OVERLAP', async () => {
    const gen = generator('set bad');
    const sessionId = await openSession(gen);
    expectRefused(await acquireAll(gen, [], sessionId), 'empty', [grpc.status.INVALID_ARGUMENT], 'locks');
    const many = Array.from({ length: MAX_LOCKS_PER_ACQUIRE_ALL + 1 }, (_, i) => `many-${i}`);
    expectRefused(await acquireAll(gen, many, sessionId), 'too many', [grpc.status.INVALID_ARGUMENT], 'locks');
    expectRefused(await acquireAll(gen, ['twice', 'other', 'twice'], sessionId), 'twice', [grpc.status.INVALID_ARGUMENT], 'locks');
    expectRefused(await acquireAll(gen, ['ok', ''], sessionId), 'empty name', [grpc.status.INVALID_ARGUMENT], 'lock');
    const a = gen.name('a');
    checkSetGranted(expectOk(await acquireAll(gen, [a], sessionId), 'a', 'Lock', 'AcquireAll'), [a], 'a');
    const overlap = await acquireAll(gen, [a, gen.name('b')], sessionId);
    expectRefused(overlap, 'overlap', [grpc.status.FAILED_PRECONDITION]);
    expect(reasonOf(overlap)).toBe('SET_OVERLAP');
    await expectAlive(w);
  });
});

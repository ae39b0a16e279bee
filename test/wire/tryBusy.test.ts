// Why a try-lock was not granted (issue 33), over the wire against a real TLS node with auth on: a FREE lock
// that an AcquireAll set at the head of its queue keeps for itself answers BUSY_SET_WAITING naming the set's
// session (it answered "held" with no holder and no reason before), a held lock BUSY_HELD naming its holder,
// shared holders BUSY_SHARED, a waiter ahead BUSY_QUEUED.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkShape, expectOk, generator, header, printSeedOnFailure, startCluster, type Gen, type Obj, type WireCluster } from './wireKit';

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

function acquire(gen: Gen, lock: string, sessionId: string, opts: { wait?: string; mode?: string } = {}): Promise<Obj> {
  const req = { header: header(gen), lock, sessionId, waitTimeoutMs: opts.wait ?? '0', mode: opts.mode ?? 'LOCK_MODE_EXCLUSIVE' };
  return w.leader.unary('Lock', 'Acquire', req, 60_000).then((o) => expectOk(o, `acquire ${lock}`, 'Lock', 'Acquire'));
}

async function waitForWaiters(lock: string, n: number): Promise<void> {
  for (;;) {
    const d = expectOk(await w.leader.unary('Lock', 'Describe', { lock }), 'describe', 'Lock', 'Describe');
    if (d.waiters.length >= n) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A try's refusal: not acquired, token 0, and the fields that say why. */
function busy(res: Obj, what: string): [string, string, string] {
  checkShape('fencelock.v1.AcquireResponse', res, what);
  expect(res.acquired, `${what}: acquired`).toBe(false);
  expect(res.token, `${what}: token`).toBe('0');
  return [res.busy, res.holderSession, res.firstWaiterSession];
}

describe('a try-lock that is not granted says why', () => {
  it('regression "free lock answers held": a free lock kept for a waiting AcquireAll set answers BUSY_SET_WAITING naming the set', async () => {
    const gen = generator('try busy set');
    const [x, y] = [gen.name('x'), gen.name('y')];
    const [a, b, c] = [await openSession(gen), await openSession(gen), await openSession(gen)];
    const held = await acquire(gen, y, a);
    expect(held.acquired).toBe(true);
    const set = w.leader.unary('Lock', 'AcquireAll', { header: header(gen), locks: [x, y], sessionId: b, waitTimeoutMs: '60000' }, 60_000);
    await waitForWaiters(x, 1);
    const d = expectOk(await w.leader.unary('Lock', 'Describe', { lock: x }), 'describe x', 'Lock', 'Describe');
    expect(d.held, 'x is free').toBe(false);

    expect(busy(await acquire(gen, x, c), 'try x')).toEqual(['BUSY_SET_WAITING', '', handleOf(b)]);
    expect(busy(await acquire(gen, x, c, { mode: 'LOCK_MODE_SHARED' }), 'try x shared')).toEqual(['BUSY_SET_WAITING', '', handleOf(b)]);
    expect(busy(await acquire(gen, y, c), 'try y')).toEqual(['BUSY_HELD', handleOf(a), '']);

    // a's release of y grants the set; a try of x is then refused by its new holder.
    expectOk(await w.leader.unary('Lock', 'Release', { header: header(gen), lock: y, sessionId: a, token: held.token }), 'release y', 'Lock', 'Release');
    expect(expectOk(await set, 'the set', 'Lock', 'AcquireAll').acquired).toBe(true);
    expect(busy(await acquire(gen, x, c), 'try x after')).toEqual(['BUSY_HELD', handleOf(b), '']);
  });

  it('shared holders answer an exclusive try BUSY_SHARED; an exclusive waiter ahead answers a shared try BUSY_QUEUED', async () => {
    const gen = generator('try busy shared');
    const r = gen.name('r');
    const [reader, writer, c] = [await openSession(gen), await openSession(gen), await openSession(gen)];
    expect((await acquire(gen, r, reader, { mode: 'LOCK_MODE_SHARED' })).acquired).toBe(true);
    expect(busy(await acquire(gen, r, c), 'exclusive try')).toEqual(['BUSY_SHARED', '', '']);
    const waiting = acquire(gen, r, writer, { wait: '60000' });
    await waitForWaiters(r, 1);
    expect(busy(await acquire(gen, r, c, { mode: 'LOCK_MODE_SHARED' }), 'shared try')).toEqual(['BUSY_QUEUED', '', handleOf(writer)]);
    const held = await acquire(gen, r, reader, { mode: 'LOCK_MODE_SHARED' });
    expectOk(await w.leader.unary('Lock', 'Release', { header: header(gen), lock: r, sessionId: reader, token: held.token }), 'release', 'Lock', 'Release');
    expect((await waiting).acquired).toBe(true);
  });
});

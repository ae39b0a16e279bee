// Lock.Watch of semaphores, AcquireAll sets and shared grants over the wire, against a real TLS node with auth
// on (issue 33): a watch of a semaphore (WatchRequest.semaphore) sends each permit granted, released or
// expired with its slot and token, and nothing of the lock of the same name; an AcquireAll grant is one GRANTED
// per lock under the set's one token; a shared grant's events say so.
import { createHash } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkShape, expectAlive, expectOk, expectRefused, generator, header, printSeedOnFailure, reasonOf, startCluster, wireInt, type Gen, type Obj, type WireCluster } from './wireKit';

printSeedOnFailure();

let w: WireCluster;

beforeAll(async () => {
  w = await startCluster(1);
});
afterAll(async () => {
  await w?.stop();
});

const handleOf = (sessionId: string): string => createHash('sha256').update(sessionId).digest('hex').slice(0, 16);

async function openSession(gen: Gen, ttlMs = 60_000): Promise<string> {
  return expectOk(await w.leader.unary('Session', 'Open', { header: header(gen), ttlMs: String(ttlMs) }), 'open', 'Session', 'Open').sessionId as string;
}

async function until(what: string, done: () => boolean, timeoutMs = 30_000): Promise<void> {
  for (const end = Date.now() + timeoutMs; !done(); ) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

interface Watch {
  events: Obj[];
  stop(): void;
}

/**
 * A watch known to be in place: `poke` (a grant and a release of the watched resource) is repeated until its
 * RELEASED arrives, so no later event can be missed; the probe's events are then dropped.
 */
async function watchInPlace(req: Obj, poke: () => Promise<void>): Promise<Watch> {
  const stream = w.leader.serverStream('Lock', 'Watch', req, 120_000);
  const events: Obj[] = [];
  stream.on('data', (e: Obj) => events.push(e));
  stream.on('error', () => undefined);
  for (;;) {
    await poke();
    const released = (): boolean => events.some((e) => e.kind === 'RELEASED');
    try {
      await until('the probe event', released, 500);
      break;
    } catch {
      // not in place yet: poke again
    }
  }
  events.length = 0;
  return { events, stop: () => stream.cancel() };
}

const semaphoreAcquire = (gen: Gen, name: string, sessionId: string, permits: number, waitTimeoutMs = '0') =>
  w.leader.unary('Semaphore', 'Acquire', { header: header(gen), name, sessionId, permits, waitTimeoutMs }, 60_000);

async function permitProbe(gen: Gen, name: string, permits: number): Promise<() => Promise<void>> {
  const probe = await openSession(gen);
  return async () => {
    const got = expectOk(await semaphoreAcquire(gen, name, probe, permits), 'probe permit', 'Semaphore', 'Acquire');
    expectOk(await w.leader.unary('Semaphore', 'Release', { header: header(gen), name, sessionId: probe, token: got.token }), 'probe release', 'Semaphore', 'Release');
  };
}

async function lockProbe(gen: Gen, lock: string): Promise<() => Promise<void>> {
  const probe = await openSession(gen);
  return async () => {
    const got = expectOk(await w.leader.unary('Lock', 'Acquire', { header: header(gen), lock, sessionId: probe, waitTimeoutMs: '0' }), 'probe lock', 'Lock', 'Acquire');
    expectOk(await w.leader.unary('Lock', 'Release', { header: header(gen), lock, sessionId: probe, token: got.token }), 'probe release', 'Lock', 'Release');
  };
}

const summary = (e: Obj): unknown[] => [e.kind, e.semaphore, e.slot, e.token, e.sessionId];

describe('Lock.Watch of a semaphore', () => {
  it('sends each permit granted, handed over, released and expired with its slot and token, and none of the lock of the same name', async () => {
    const gen = generator('watch permits');
    const name = gen.name('pool');
    const permits = await watchInPlace({ semaphore: name }, await permitProbe(gen, name, 2));
    const lock = await watchInPlace({ lock: name }, await lockProbe(gen, name));

    const [a, b, c] = [await openSession(gen), await openSession(gen), await openSession(gen)];
    const ga = expectOk(await semaphoreAcquire(gen, name, a, 2), 'a', 'Semaphore', 'Acquire');
    const gb = expectOk(await semaphoreAcquire(gen, name, b, 2), 'b', 'Semaphore', 'Acquire');
    const waiting = semaphoreAcquire(gen, name, c, 2, '60000');
    for (;;) {
      const d = expectOk(await w.leader.unary('Semaphore', 'Describe', { name }), 'describe', 'Semaphore', 'Describe');
      if (d.waiters.length > 0) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const released = expectOk(await w.leader.unary('Semaphore', 'Release', { header: header(gen), name, sessionId: b, token: gb.token }), 'release b', 'Semaphore', 'Release');
    const gc = expectOk(await waiting, 'c', 'Semaphore', 'Acquire');
    expect(gc.token).toBe(released.nextToken);
    expectOk(await w.leader.unary('Semaphore', 'Release', { header: header(gen), name, sessionId: a, token: ga.token }), 'release a', 'Semaphore', 'Release');
    // d's session (the shortest lease) is never renewed: its permit ends EXPIRED. A session that expired before
    // its Acquire applied (a slow machine) is refused and replaced.
    let d = '';
    let gd: Obj | undefined;
    while (gd === undefined) {
      d = await openSession(gen, 3_000);
      const out = await semaphoreAcquire(gen, name, d, 2);
      if (out.ok) gd = out.res;
      else expect(reasonOf(out), 'only an expired session is replaced').toBe('UNKNOWN_SESSION');
    }
    await until('the expiry of d', () => permits.events.length >= 7);

    expect(permits.events.map(summary)).toEqual([
      ['GRANTED', name, ga.slot, ga.token, handleOf(a)],
      ['GRANTED', name, gb.slot, gb.token, handleOf(b)],
      ['RELEASED', name, gb.slot, gb.token, handleOf(b)],
      ['GRANTED', name, gb.slot, gc.token, handleOf(c)],
      ['RELEASED', name, ga.slot, ga.token, handleOf(a)],
      ['GRANTED', name, ga.slot, gd.token, handleOf(d)],
      ['EXPIRED', name, ga.slot, gd.token, handleOf(d)],
    ]);
    let lastIndex = 0;
    for (const [i, e] of permits.events.entries()) {
      checkShape('fencelock.v1.LockEvent', e, `event ${i}`);
      expect(e.lock, 'a permit is no lock').toBe('');
      expect(e.shared).toBe(false);
      lastIndex = wireInt(`event ${i} index`, e.index, { min: lastIndex, max: Number.MAX_SAFE_INTEGER });
      if (e.kind === 'GRANTED') {
        expect(e.index, 'a token is the index of the entry that granted it').toBe(e.token);
        expect(e.holder?.handle).toBe(e.sessionId);
      } else expect(e.holder).toBeNull();
    }

    // The lock of the same name is another resource: its watch saw none of the permits, only its own grant.
    await (await lockProbe(gen, name))();
    await until('the lock event', () => lock.events.length >= 2);
    expect(lock.events.map((e) => [e.kind, e.lock, e.semaphore])).toEqual([['GRANTED', name, ''], ['RELEASED', name, '']]);
    permits.stop();
    lock.stop();
    await expectAlive(w);
  });

  it('refuses a watch naming both a lock and a semaphore, and a bad semaphore name naming semaphore', async () => {
    for (const [req, field] of [[{ lock: 'a', semaphore: 'b' }, 'semaphore'], [{ semaphore: 'x'.repeat(257) }, 'semaphore']] as const) {
      const s = w.leader.serverStream('Lock', 'Watch', req);
      const err = await new Promise<grpc.ServiceError>((resolve) => s.on('error', resolve));
      expectRefused({ ok: false, code: err.code, details: err.details, metadata: err.metadata }, JSON.stringify(req).slice(0, 40), [grpc.status.INVALID_ARGUMENT], field);
    }
  });
});

describe('Lock.Watch of AcquireAll and shared grants', () => {
  it('sends one GRANTED per lock of an AcquireAll set, all under the set token', async () => {
    const gen = generator('watch acquire all');
    const [x, y] = [gen.name('x'), gen.name('y')];
    const wx = await watchInPlace({ lock: x }, await lockProbe(gen, x));
    const wy = await watchInPlace({ lock: y }, await lockProbe(gen, y));
    const s = await openSession(gen);
    const all = expectOk(await w.leader.unary('Lock', 'AcquireAll', { header: header(gen), locks: [x, y], sessionId: s, waitTimeoutMs: '0' }), 'acquire all', 'Lock', 'AcquireAll');
    expect(all.acquired).toBe(true);
    await until('both grants', () => wx.events.length >= 1 && wy.events.length >= 1);
    for (const [watch, lock] of [[wx, x], [wy, y]] as const) {
      expect(watch.events.map((e) => [e.kind, e.lock, e.token, e.index, e.sessionId])).toEqual([['GRANTED', lock, all.token, all.token, handleOf(s)]]);
    }
    wx.stop();
    wy.stop();
  });

  it('marks the events of shared grants shared, and those of an exclusive grant not', async () => {
    const gen = generator('watch shared');
    const lock = gen.name('rw');
    const watch = await watchInPlace({ lock }, await lockProbe(gen, lock));
    const [r1, r2, wr] = [await openSession(gen), await openSession(gen), await openSession(gen)];
    const acquire = (sessionId: string, mode: string) =>
      w.leader.unary('Lock', 'Acquire', { header: header(gen), lock, sessionId, waitTimeoutMs: '0', mode }).then((o) => expectOk(o, `${mode} acquire`, 'Lock', 'Acquire'));
    const release = (sessionId: string, token: string) =>
      w.leader.unary('Lock', 'Release', { header: header(gen), lock, sessionId, token }).then((o) => expectOk(o, 'release', 'Lock', 'Release'));
    const g1 = await acquire(r1, 'LOCK_MODE_SHARED');
    const g2 = await acquire(r2, 'LOCK_MODE_SHARED');
    await release(r1, g1.token);
    await release(r2, g2.token);
    const gw = await acquire(wr, 'LOCK_MODE_EXCLUSIVE');
    await until('five events', () => watch.events.length >= 5);
    expect(watch.events.map((e) => [e.kind, e.token, e.sessionId, e.shared])).toEqual([
      ['GRANTED', g1.token, handleOf(r1), true],
      ['GRANTED', g2.token, handleOf(r2), true],
      ['RELEASED', g1.token, handleOf(r1), true],
      ['RELEASED', g2.token, handleOf(r2), true],
      ['GRANTED', gw.token, handleOf(wr), false],
    ]);
    watch.stop();
  });
});

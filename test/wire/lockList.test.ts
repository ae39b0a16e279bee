// Lock.List over real gRPC against a real TLS node with auth on: pages that are complete and stable, the
// prefix, the limits (0 = 100, 1..1000, beyond refused), hostile text refused naming the field, and the
// filter by the caller's permissions (a user with `lock` on a/ sees a/* and nothing of b/*, not even counts),
// and the holder's client name and labels shown exactly where Describe would show them.
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_LOCK_NAME_BYTES } from '../../src/protocol/limits';
import { eventually } from '../integration/harness';
import { expectAlive, expectOk, expectRefused, generator, header, printSeedOnFailure, startCluster, WireClient, type Gen, type Obj, type Outcome, type WireCluster } from './wireKit';

printSeedOnFailure();

let w: WireCluster;
let alice: WireClient;
/** An admin session that holds every lock the tests make. */
let holder = '';
const gen: Gen = generator('lock list');

beforeAll(async () => {
  w = await startCluster(1);
  const change = async (method: string, req: Obj): Promise<Obj> => expectOk(await w.leader.unary('Auth', method, { header: header(gen), ...req }), method, 'Auth', method);
  await change('RoleAdd', { role: 'a-locker' });
  await change('RoleGrantPermission', { role: 'a-locker', rule: { permission: 'LOCK', prefix: 'a/' } });
  await change('UserAdd', { user: 'alice' });
  await change('UserGrantRole', { user: 'alice', role: 'a-locker' });
  const token = (await change('TokenIssue', { user: 'alice' })).token as string;
  alice = new WireClient(w.leader.address, undefined, token);
  holder = await openSession();
}, 120_000);

afterAll(async () => {
  alice?.close();
  await w?.stop();
});

async function openSession(facts: Obj = {}): Promise<string> {
  return expectOk(await w.leader.unary('Session', 'Open', { header: header(gen), ttlMs: '60000', ...facts }), 'open', 'Session', 'Open').sessionId as string;
}

async function hold(lock: string, sessionId = holder): Promise<string> {
  const res = expectOk(await w.leader.unary('Lock', 'Acquire', { header: header(gen), lock, sessionId, waitTimeoutMs: '0' }), `acquire ${lock}`, 'Lock', 'Acquire');
  expect(res.acquired, lock).toBe(true);
  return res.token as string;
}

async function list(c: WireClient, req: Obj): Promise<Obj> {
  return expectOk(await c.unary('Lock', 'List', req), `list ${JSON.stringify(req).slice(0, 80)}`, 'Lock', 'List');
}

/** Every page of `prefix` at `limit` per page; checks that only the last says there is more to none. */
async function allPages(c: WireClient, prefix: string, limit: number): Promise<Obj[]> {
  const out: Obj[] = [];
  for (let startAfter = '', pages = 0; ; pages++) {
    expect(pages, 'pages end').toBeLessThan(100);
    const res = await list(c, { prefix, startAfter, limit });
    expect(res.locks.length, 'a page is never longer than its limit').toBeLessThanOrEqual(limit);
    out.push(...res.locks);
    if (!res.more) return out;
    expect(res.locks.length, 'a page that says more is full').toBe(limit);
    startAfter = res.locks[res.locks.length - 1].name;
  }
}

describe('Lock.List', () => {
  it('pages through every lock under the prefix, in name order, each once, and none outside it', async () => {
    const prefix = gen.name('paged') + '/';
    const names = Array.from({ length: 23 }, (_, i) => `${prefix}${String(i).padStart(2, '0')}`);
    const tokens = new Map<string, string>();
    for (const name of [...names].reverse()) tokens.set(name, await hold(name));
    await hold(`${prefix.slice(0, -1)}-outside`); // shares the prefix's stem, not the prefix
    for (const limit of [1, 7, 23, 1000, 0]) {
      const locks = await allPages(w.leader, prefix, limit === 0 ? 100 : limit);
      expect(locks.map((l) => l.name), `limit ${limit}`).toEqual(names);
    }
    const first = (await list(w.leader, { prefix, limit: 0 })).locks as Obj[];
    expect(first).toHaveLength(23); // 0 = 100 per page
    const now = Date.now();
    for (const l of first) {
      expect(l.held).toBe(true);
      expect(l.holderSession).toMatch(/^[0-9a-f]{16}$/);
      expect(l.holderSession).not.toBe(holder.slice(0, 16)); // the public handle, never the secret id
      expect(l.token).toBe(tokens.get(l.name));
      expect(l.latestToken).toBe(l.token);
      expect(Number(l.grantedAtMs)).toBeGreaterThanOrEqual(w.startedAt);
      expect(Number(l.grantedAtMs)).toBeLessThanOrEqual(now);
      expect(Number(l.heldForMs)).toBeLessThanOrEqual(now - w.startedAt);
      expect([l.waiters, l.waiterCount]).toEqual([[], 0]);
    }
  });

  it('shows the FIFO queue with each waiter’s wait so far, and idle locks only with include_idle', async () => {
    const lock = gen.name('queued');
    const token = await hold(lock);
    const [s1, s2] = [await openSession(), await openSession()];
    const waits: Array<Promise<Outcome>> = [];
    for (const [i, sessionId] of [s1, s2].entries()) {
      waits.push(w.leader.unary('Lock', 'Acquire', { header: header(gen), lock, sessionId, waitTimeoutMs: '60000' }, 60_000));
      await eventually(async () => ((await list(w.leader, { prefix: lock })).locks[0]?.waiterCount === i + 1 ? true : undefined), 10_000, `waiter ${i + 1} queued`);
    }
    const before = (await list(w.leader, { prefix: lock })).locks[0] as Obj;
    await new Promise((r) => setTimeout(r, 300));
    const after = (await list(w.leader, { prefix: lock })).locks[0] as Obj;
    expect(after.waiters.map((x: Obj) => x.session)).toEqual(before.waiters.map((x: Obj) => x.session));
    expect(after.waiters).toHaveLength(2);
    for (const [i, x] of (after.waiters as Obj[]).entries()) {
      expect(x.session).toMatch(/^[0-9a-f]{16}$/);
      expect(Number(x.waitingMs), 'the wait grows with time').toBeGreaterThanOrEqual(Number(before.waiters[i].waitingMs) + 250);
    }
    // FIFO: the first queued has waited at least as long as the second.
    expect(Number(after.waiters[0].waitingMs)).toBeGreaterThanOrEqual(Number(after.waiters[1].waitingMs));
    // Releasing hands the lock to the head of the queue, which the list then shows as the holder.
    const released = expectOk(await w.leader.unary('Lock', 'Release', { header: header(gen), lock, sessionId: holder, token }), 'release', 'Lock', 'Release');
    const next = (await list(w.leader, { prefix: lock })).locks[0] as Obj;
    expect([next.holderSession, next.token, next.waiterCount]).toEqual([after.waiters[0].session, released.nextToken, 1]);
    expect((await waits[0]!).ok, 'the head of the queue is granted').toBe(true);
    for (const sessionId of [s1, s2]) expectOk(await w.leader.unary('Session', 'Close', { header: header(gen), sessionId }), 'close', 'Session', 'Close');
    await Promise.all(waits);
    // A free lock nobody waits for but that owns a key is kept: listed only with include_idle.
    const kept = gen.name('kept');
    const keptToken = await hold(kept);
    expectOk(await w.leader.unary('KV', 'Write', { header: header(gen), lock: kept, sessionId: holder, token: keptToken, ops: [{ type: 'PUT', key: `${kept}/k`, value: Buffer.from('v') }] }), 'write', 'KV', 'Write');
    expectOk(await w.leader.unary('Lock', 'Release', { header: header(gen), lock: kept, sessionId: holder, token: keptToken }), 'release', 'Lock', 'Release');
    expect((await list(w.leader, { prefix: kept })).locks).toEqual([]);
    const idle = (await list(w.leader, { prefix: kept, includeIdle: true })).locks as Obj[];
    expect(idle.map((l) => [l.name, l.held, l.holderSession, l.token, l.latestToken])).toEqual([[kept, false, '', '0', keptToken]]);
  });

  it('refuses limit 1001 and more, prefixes and start_after past 256 bytes, and text that is not UTF-8, naming the field', async () => {
    expectOk(await w.leader.unary('Lock', 'List', { limit: 1000 }), 'limit 1000', 'Lock', 'List');
    for (const limit of [1001, 4096, 0xffffffff]) expectRefused(await w.leader.unary('Lock', 'List', { limit }), `limit ${limit}`, [grpc.status.INVALID_ARGUMENT], 'limit');
    const long = 'p'.repeat(MAX_LOCK_NAME_BYTES + 1);
    expectOk(await w.leader.unary('Lock', 'List', { prefix: long.slice(1), startAfter: long.slice(1) }), '256 bytes', 'Lock', 'List');
    for (const field of ['prefix', 'startAfter'] as const) {
      const name = field === 'prefix' ? 'prefix' : 'start_after';
      expectRefused(await w.leader.unary('Lock', 'List', { [field]: long }), `${name} of 257 bytes`, [grpc.status.INVALID_ARGUMENT], name);
      expectRefused(await w.leader.unary('Lock', 'List', { [field]: 'a\ud800' }), `${name} with a lone surrogate`, [grpc.status.INVALID_ARGUMENT], name);
    }
    await expectAlive(w);
  });

  it('shows a user only the locks it may lock: a/* and nothing of b/*, not even a count', async () => {
    const seen = ['a/1', 'a/2', 'a/3'];
    for (const name of [...seen, 'b/1', 'b/2', 'ab', 'c']) await hold(name);
    expect((await allPages(alice, '', 1)).map((l) => l.name)).toEqual(seen);
    expect((await allPages(alice, 'a/', 2)).map((l) => l.name)).toEqual(seen);
    // b/ looks exactly like a prefix where no lock exists.
    const hidden = await list(alice, { prefix: 'b/', limit: 1 });
    const empty = await list(alice, { prefix: 'a/none/', limit: 1 });
    expect(hidden).toEqual(empty);
    expect(hidden).toEqual({ locks: [], more: false });
    // Neither does starting after a hidden name reveal anything past it.
    expect((await list(alice, { startAfter: 'b/1', limit: 5 })).locks).toEqual([]);
    // The admin sees them all.
    expect((await allPages(w.leader, 'b/', 1)).map((l) => l.name)).toEqual(['b/1', 'b/2']);
  });

  it('shows the holder’s handle, client name and labels to a caller that may describe the lock, and to no other', async () => {
    const facts = { clientName: 'billing worker', labels: { team: 'payments', secret: 'b-only-label' } };
    const labelled = await openSession(facts);
    await hold('a/labelled', labelled);
    await hold('b/labelled', labelled);
    const described = expectOk(await w.leader.unary('Lock', 'Describe', { lock: 'a/labelled' }), 'describe', 'Lock', 'Describe');
    const shown = { handle: described.holderSession, ...facts };
    for (const lock of ['a/labelled', 'b/labelled']) {
      const [listed] = (await list(w.leader, { prefix: lock })).locks as Obj[];
      expect(listed.holder, `admin lists ${lock}`).toEqual(shown);
    }
    const [mine] = (await list(alice, { prefix: 'a/labelled' })).locks as Obj[];
    expect(mine.holder, 'alice may describe a/*').toEqual(shown);
    expect(expectOk(await alice.unary('Lock', 'Describe', { lock: 'a/labelled' }), 'alice describes a/', 'Lock', 'Describe').holder).toEqual(shown);
    // b/labelled: Describe refuses alice, and no listing of hers shows that lock or its holder.
    expectRefused(await alice.unary('Lock', 'Describe', { lock: 'b/labelled' }), 'alice describes b/', [grpc.status.PERMISSION_DENIED]);
    const everything = await allPages(alice, '', 1000);
    expect(everything.map((l) => l.name)).not.toContain('b/labelled');
    expect(JSON.stringify(await list(alice, { prefix: 'b/' }))).toBe(JSON.stringify({ locks: [], more: false }));
    // A free lock has no holder to show.
    const freed = gen.name('freed');
    const token = await hold(freed, labelled);
    expectOk(await w.leader.unary('KV', 'Write', { header: header(gen), lock: freed, sessionId: labelled, token, ops: [{ type: 'PUT', key: `${freed}/k`, value: Buffer.from('v') }] }), 'write', 'KV', 'Write');
    expectOk(await w.leader.unary('Lock', 'Release', { header: header(gen), lock: freed, sessionId: labelled, token }), 'release', 'Lock', 'Release');
    const [idle] = (await list(w.leader, { prefix: freed, includeIdle: true })).locks as Obj[];
    expect([idle.held, idle.holder]).toEqual([false, null]);
  });
});

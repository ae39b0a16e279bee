import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { FenceLockClient, FenceLockError, silentLogger, type LockEvent } from '../../src/client';
import { monotonicNow } from '../../src/client/clock';
import { deadAddress, failure, FakeNode, FakeState, startFakeCluster } from './fakeServer';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function cluster(n: number, state = new FakeState()): Promise<{ state: FakeState; nodes: FakeNode[] }> {
  const c = await startFakeCluster(n, state);
  cleanups.push(c.stop);
  return c;
}

function client(endpoints: string[], opts: Partial<ConstructorParameters<typeof FenceLockClient>[0]> = {}): FenceLockClient {
  const c = new FenceLockClient({ endpoints, requestTimeoutMs: 500, totalTimeoutMs: 3_000, insecure: true, ...opts });
  cleanups.push(() => c.close());
  return c;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function until(cond: () => boolean, timeoutMs = 5_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await sleep(10);
  }
}

async function rejection(p: Promise<unknown>): Promise<FenceLockError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(FenceLockError);
    return err as FenceLockError;
  }
  throw new Error('expected a rejection');
}

/** A watch of `lock` on a one-node fake cluster, its onMissed and onError calls recorded, open on the node. */
async function recordedWatch(lock: string, onEvent: (ev: LockEvent) => void = () => undefined) {
  const { state, nodes } = await cluster(1);
  const c = client([nodes[0]!.address]);
  const missed: FenceLockError[] = [];
  const errors: FenceLockError[] = [];
  const w = c.watch(lock, onEvent, { onMissed: (err) => missed.push(err), onError: (err) => errors.push(err) });
  await until(() => state.callsOf('Watch').length === 1);
  return { state, node: nodes[0]!, c, w, missed, errors };
}

describe('FenceLockClient against a fake cluster', () => {
  it('acquires, writes, reads and releases with tokens beyond 2^53 kept exact as bigint', async () => {
    const first = (1n << 60n) + 7n;
    const { state, nodes } = await cluster(1, new FakeState(first));
    const c = client([nodes[0]!.address]);
    const s = await c.openSession({ ttlMs: 5_000, name: 'test' });
    expect(s.id).toMatch(/^[0-9a-f]{32}$/);
    const lock = await s.acquire('orders');
    expect(typeof lock.token).toBe('bigint');
    expect(lock.token).toBe(first + 1n);
    expect(lock.token > 1n << 32n).toBe(true);

    const w = await lock.write([{ put: 'orders/1', value: 'hello' }, { put: 'orders/2', value: new Uint8Array([0, 255]) }]);
    expect(w.index).toBe(lock.token + 1n);
    const got = await c.get('orders/1');
    expect(got.found).toBe(true);
    expect(Buffer.from(got.value).toString()).toBe('hello');
    expect(got.token).toBe(lock.token);
    expect(got.lock).toBe('orders');
    expect([...(await c.get('orders/2')).value]).toEqual([0, 255]);
    expect((await c.get('nope', { staleOk: true })).found).toBe(false);

    const page = await c.list('orders/', { limit: 1 });
    expect(page.items.map((i) => i.key)).toEqual(['orders/1']);
    expect(page.more).toBe(true);
    const rest = await c.list('orders/', { startAfter: 'orders/1' });
    expect(rest.items.map((i) => i.key)).toEqual(['orders/2']);

    const d = await c.describe('orders');
    expect(d).toMatchObject({ held: true, holderSession: s.publicId, token: lock.token, latestToken: lock.token });
    expect(s.publicId).toMatch(/^[0-9a-f]{16}$/);

    await lock.release();
    await lock.release(); // idempotent
    expect(state.callsOf('Release')).toHaveLength(1);
    expect(state.locks.get('orders')!.holder).toBeUndefined();
    await s.close();
    expect(state.sessions.size).toBe(0);
  });

  it('follows the fencelock-leader hint from a follower to a configured endpoint', async () => {
    const { state, nodes } = await cluster(3);
    const c = client([nodes[1]!.address, nodes[2]!.address, nodes[0]!.address]);
    const s = await c.openSession();
    const lock = await s.acquire('a');
    expect(lock.token).toBeGreaterThan(0n);
    expect(c.currentEndpoint()).toBe(nodes[0]!.address);
    // The follower was asked once, then everything went straight to the hinted leader (n3 never asked).
    expect(state.callsOf('Open').map((x) => x.node)).toEqual(['n2', 'n1']);
    expect(state.callsOf('Acquire').map((x) => x.node)).toEqual(['n1']);
  });

  it('regression: a hostile/forged leader hint to an unconfigured address is not followed (no call, no session id goes there)', async () => {
    const { state, nodes } = await cluster(2);
    // A server that would gladly play leader, at an address only the forged hint names.
    const rogueState = new FakeState();
    const rogue = await FakeNode.start(rogueState, { id: 'rogue', role: 'leader' });
    cleanups.push(() => {
      rogue.stop();
      rogueState.dispose();
    });
    nodes[1]!.leaderHint = () => rogue.address;
    const warnings: Array<{ obj: object; msg?: string }> = [];
    const logger = { ...silentLogger, warn: (obj: object, msg?: string) => void warnings.push({ obj, msg }) };
    const c = client([nodes[1]!.address, nodes[0]!.address], { logger });

    const s = await c.openSession({ ttlMs: 3_000 });
    await s.acquire('a');
    const w: LockEvent[] = [];
    const watch = c.watch('a', (ev) => w.push(ev));
    // The leader's streams break with the forged hint too: keepalive and watch must not follow it either.
    await sleep(100);
    nodes[0]!.breakStreams(failure(grpc.status.UNAVAILABLE, 'not leader', { 'fencelock-leader': rogue.address }));
    await sleep(600);
    await s.tryAcquire('b');
    watch.cancel();

    expect(rogueState.calls).toEqual([]);
    expect(c.endpoints()).toEqual([nodes[1]!.address, nodes[0]!.address]);
    expect(c.currentEndpoint()).toBe(nodes[0]!.address);
    expect(s.isLost()).toBe(false);
    expect(state.callsOf('KeepAliveRenewal').length).toBeGreaterThan(0);
    // One warning for the address, however often it is hinted.
    const about = warnings.filter((x) => JSON.stringify(x.obj).includes(rogue.address));
    expect(about).toHaveLength(1);
    expect(about[0]!.msg).toMatch(/not a configured endpoint/);
  });

  it('rotates past a dead endpoint and reports it per node in statusAll', async () => {
    const { nodes } = await cluster(1);
    const dead = await deadAddress();
    const c = client([dead, nodes[0]!.address]);
    const s = await c.openSession();
    await s.acquire('x');
    const all = await c.statusAll();
    expect(all).toHaveLength(2);
    const bad = all.find((r) => r.endpoint === dead)!;
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.error.code).toBe('UNAVAILABLE');
    const good = all.find((r) => r.endpoint === nodes[0]!.address)!;
    expect(good.ok).toBe(true);
    if (good.ok) expect(good.status).toMatchObject({ id: 'n1', role: 'leader', term: 3n });
    expect((await c.status(nodes[0]!.address)).id).toBe('n1');
  });

  it('retries an Acquire whose reply was lost with the SAME request id and gets the same token', async () => {
    const { state, nodes } = await cluster(1);
    const leader = nodes[0]!;
    // The leader applies the first attempt, then the reply is "lost".
    leader.fail('Acquire', failure(grpc.status.UNAVAILABLE, 'connection reset after apply'), { after: true });
    const c = client([leader.address]);
    const s = await c.openSession();
    const before = state.nextIndex;
    const lock = await s.acquire('job');
    const calls = state.callsOf('Acquire');
    expect(calls).toHaveLength(2);
    expect(calls[0]!.header!.requestId).toBe(calls[1]!.header!.requestId);
    expect(calls[0]!.header!.clientId).toBe(c.clientId);
    expect(lock.token).toBe(before); // the one and only grant
    expect(state.nextIndex).toBe(before + 1n); // applied once
    expect(state.locks.get('job')!.token).toBe(lock.token);
  });

  it('retries a Write after a leader change with the same request id (applied once)', async () => {
    const { state, nodes } = await cluster(2);
    const c = client([nodes[0]!.address, nodes[1]!.address]);
    const s = await c.openSession();
    const lock = await s.acquire('k');
    nodes[0]!.fail('Write', failure(grpc.status.UNAVAILABLE, 'stepped down after apply'), { after: true });
    nodes[0]!.fail('Write', failure(grpc.status.UNAVAILABLE, 'stepping down'), { after: false });
    // After the first failure the roles swap; the old leader hints the new one.
    const swap = (): void => {
      nodes[0]!.role = 'follower';
      nodes[1]!.role = 'leader';
    };
    const p = lock.write([{ put: 'k/1', value: 'v' }]);
    await until(() => state.callsOf('Write').length >= 1);
    swap();
    const res = await p;
    const writes = state.callsOf('Write');
    expect(new Set(writes.map((w) => w.header!.requestId)).size).toBe(1);
    expect(writes.some((w) => w.node === 'n2')).toBe(true);
    expect(res.index).toBe(lock.token + 1n);
    expect(state.kv.get('k/1')!.token).toBe(lock.token);
  });

  it('numbers requests increasingly and reports acked_below as the lowest id still in flight', async () => {
    const { state, nodes } = await cluster(1);
    const c = client([nodes[0]!.address]);
    const s1 = await c.openSession();
    const s2 = await c.openSession();
    const a = s1.acquire('held');
    await a;
    // Blocking acquire in flight while other requests go by.
    const waiting = s2.acquire('held', { waitTimeoutMs: 2_000 });
    await until(() => state.callsOf('Acquire').length === 2);
    const l3 = await s1.acquire('other');
    await l3.release();
    await (await a).release();
    await waiting;
    const headers = state.calls.filter((x) => x.header).map((x) => x.header!);
    const ids = headers.map((h) => BigInt(h.requestId));
    for (let i = 1; i < ids.length; i++) expect(ids[i]! > ids[i - 1]!).toBe(true);
    for (const h of headers) expect(BigInt(h.ackedBelow) <= BigInt(h.requestId)).toBe(true);
    const waitId = state.callsOf('Acquire')[1]!.header!.requestId;
    // Requests issued while the blocking acquire was in flight may not let the server forget it.
    const during = state.callsOf('Acquire')[2]!.header!;
    expect(during.ackedBelow).toBe(waitId);
  });

  it('maps FAILED_PRECONDITION metadata to FenceLockError.reason and .watermark', async () => {
    const { nodes } = await cluster(1, new FakeState(1n << 40n));
    const c = client([nodes[0]!.address]);
    const a = await c.openSession();
    const b = await c.openSession();
    const la = await a.acquire('acct');
    await la.write([{ put: 'acct/balance', value: '10' }]);
    await la.release();
    const lb = await b.acquire('acct');
    await lb.write([{ put: 'acct/balance', value: '20' }]);
    // A stale holder writes with its old token (as a paused process would).
    const err = await rejection(c.write({ lock: 'acct', token: la.token, sessionId: a.id, ops: [{ put: 'acct/balance', value: '99' }] }));
    expect(err.code).toBe('FAILED_PRECONDITION');
    expect(err.reason).toBe('STALE_TOKEN');
    expect(err.watermark).toBe(lb.token);
    expect(err.indeterminate).toBe(false);
    expect(err.message).toContain('STALE_TOKEN');
    expect(err.message).toContain(String(lb.token));
    // A released handle refuses locally.
    const local = await rejection(la.write([{ delete: 'acct/balance' }]));
    expect(local.reason).toBe('LOCK_NOT_HELD');
  });

  it('a release by the holder aborts the signal with reason RELEASED, never PRESUMED_LOST or LOCK_NOT_HELD (not a loss)', async () => {
    const { nodes } = await cluster(1);
    const c = client([nodes[0]!.address]);
    let seen: unknown;
    let inside: AbortSignal | undefined;
    await c.withLock('rel', async (_token, _lock, signal) => {
      inside = signal;
      signal.addEventListener('abort', () => (seen = signal.reason), { once: true });
      expect(signal.aborted).toBe(false);
    });
    expect(inside?.aborted).toBe(true);
    expect(seen).toBeInstanceOf(FenceLockError);
    expect((seen as FenceLockError).reason).toBe('RELEASED');
    // A signal read after the release is born aborted with the same reason; a write still gets the server's word.
    const s = await c.openSession();
    const l = await s.acquire('rel2');
    await l.release();
    expect((l.signal.reason as FenceLockError).reason).toBe('RELEASED');
    expect((await rejection(l.write([{ put: 'rel2/k', value: 'v' }]))).reason).toBe('LOCK_NOT_HELD');
  });

  it('regression: closing the session aborts its held locks\' signals with RELEASED, not SESSION_CLOSED (LockHandle.signal\'s promise)', async () => {
    const { nodes } = await cluster(1);
    const c = client([nodes[0]!.address]);
    const s = await c.openSession();
    const l = await s.acquire('closing');
    const signal = l.signal;
    let seen: unknown;
    signal.addEventListener('abort', () => (seen = signal.reason), { once: true });
    await s.close();
    expect(signal.aborted).toBe(true);
    expect((seen as FenceLockError).reason).toBe('RELEASED');
  });

  it('WRONG_LOCK names the key and the lock it belongs to (FenceLockError.key, .keyLock, decoded from their metadata)', async () => {
    const { nodes } = await cluster(1);
    const c = client([nodes[0]!.address]);
    const s = await c.openSession();
    const owner = await s.acquire('commandes/été');
    await owner.write([{ put: 'clé/1', value: 'v' }]);
    const other = await s.acquire('billing');
    const err = await rejection(other.write([{ put: 'free', value: 'x' }, { put: 'clé/1', value: 'x' }]));
    expect(err).toMatchObject({ code: 'FAILED_PRECONDITION', reason: 'WRONG_LOCK', key: 'clé/1', keyLock: 'commandes/été', watermark: owner.token });
    const stale = await rejection(c.write({ lock: 'billing', token: other.token - 1n, sessionId: s.id, ops: [{ put: 'b', value: 'x' }] }));
    expect([stale.reason, stale.key, stale.keyLock]).toEqual(['STALE_TOKEN', undefined, undefined]);
  });

  it('get and list show a deleted key with its lock and watermark; list includes deleted keys only when asked', async () => {
    const { nodes } = await cluster(1);
    const c = client([nodes[0]!.address]);
    const s = await c.openSession();
    const lock = await s.acquire('orders');
    await lock.write([{ put: 'orders/1', value: 'one' }, { put: 'orders/2', value: 'two' }]);
    await lock.write([{ delete: 'orders/1' }]);
    expect(await c.get('orders/1')).toEqual({ found: false, deleted: true, value: new Uint8Array(0), token: lock.token, lock: 'orders' });
    expect(await c.get('orders/2')).toMatchObject({ found: true, deleted: false, lock: 'orders' });
    expect(await c.get('never')).toEqual({ found: false, deleted: false, value: new Uint8Array(0), token: 0n, lock: '' });
    expect((await c.list('orders/')).items.map((i) => i.key)).toEqual(['orders/2']);
    const all = await c.list('orders/', { includeDeleted: true });
    expect(all.items.map((i) => [i.key, i.deleted, i.lock, i.token])).toEqual([
      ['orders/1', true, 'orders', lock.token],
      ['orders/2', false, 'orders', lock.token],
    ]);
  });

  it('throws non-retryable codes at once', async () => {
    const { state, nodes } = await cluster(1);
    const c = client([nodes[0]!.address]);
    const s = await c.openSession();
    nodes[0]!.fail('Acquire', failure(grpc.status.INVALID_ARGUMENT, 'lock: must be 1..256 bytes'));
    const err = await rejection(s.acquire(''));
    expect(err.code).toBe('INVALID_ARGUMENT');
    expect(err.message).toContain('lock: must be 1..256 bytes');
    expect(state.callsOf('Acquire')).toHaveLength(1);
    nodes[0]!.fail('Get', failure(grpc.status.RESOURCE_EXHAUSTED, 'too many'));
    expect((await rejection(c.get('x'))).code).toBe('RESOURCE_EXHAUSTED');
    expect(state.callsOf('Get')).toHaveLength(1);
  });

  it('gives up after totalTimeoutMs when every node refuses the connection: not indeterminate, the request never left', async () => {
    const c = client([await deadAddress(), await deadAddress()], { totalTimeoutMs: 600, requestTimeoutMs: 200 });
    const t0 = monotonicNow();
    const err = await rejection(c.openSession());
    const took = monotonicNow() - t0;
    expect(err.code).toBe('UNAVAILABLE');
    expect(err.indeterminate).toBe(false);
    expect(err.endpointErrors?.map((e) => e.error.details)).toEqual([expect.stringMatching(/ECONNREFUSED|No connection established/), expect.stringMatching(/ECONNREFUSED|No connection established/)]);
    expect(err.message).toMatch(/gave up after \d+ attempt/);
    expect(took).toBeGreaterThanOrEqual(550);
    expect(took).toBeLessThan(2_000);
  });

  it('gives up indeterminate when a request may have reached a node (its reply was lost)', async () => {
    const { state, nodes } = await cluster(1);
    nodes[0]!.fail('Open', failure(grpc.status.UNAVAILABLE, 'reply lost'), { after: true, times: 1_000 });
    const c = client([nodes[0]!.address, await deadAddress()], { totalTimeoutMs: 600, requestTimeoutMs: 200 });
    const err = await rejection(c.openSession());
    expect(err.code).toBe('UNAVAILABLE');
    expect(err.indeterminate).toBe(true);
    expect(state.callsOf('Open').length).toBeGreaterThanOrEqual(1);
  });

  it('after an acquire that timed out indeterminately, finds and releases the orphan grant', async () => {
    const { state, nodes } = await cluster(1);
    // Every reply to Acquire is lost, although the first attempt was applied.
    nodes[0]!.fail('Acquire', failure(grpc.status.UNAVAILABLE, 'reply lost'), { after: true, times: 1_000 });
    const c = client([nodes[0]!.address], { requestTimeoutMs: 100, totalTimeoutMs: 300 });
    const s = await c.openSession();
    const err = await rejection(s.tryAcquire('orphan'));
    expect(err.indeterminate).toBe(true);
    expect(state.locks.get('orphan')!.holder).toBe(s.id);
    await until(() => state.locks.get('orphan')!.holder === undefined, 3_000);
    expect(state.callsOf('Describe').length).toBeGreaterThanOrEqual(1);
    expect(state.callsOf('Release')).toHaveLength(1);
  });

  it('tryAcquire returns null when held; a blocking acquire times out with DEADLINE_EXCEEDED without retrying', async () => {
    const { state, nodes } = await cluster(1);
    const c = client([nodes[0]!.address]);
    const a = await c.openSession();
    const b = await c.openSession();
    const held = await a.acquire('m');
    expect(await b.tryAcquire('m')).toBeNull();
    expect(state.callsOf('Acquire').at(-1)!.req).toMatchObject({ waitTimeoutMs: '0' });
    const t0 = monotonicNow();
    const err = await rejection(b.acquire('m', { waitTimeoutMs: 200 }));
    expect(err.code).toBe('DEADLINE_EXCEEDED');
    expect(err.indeterminate).toBe(false);
    expect(monotonicNow() - t0).toBeLessThan(1_000);
    expect(state.callsOf('Acquire')).toHaveLength(3);
    // Same session acquiring again gets the same token.
    expect((await a.acquire('m')).token).toBe(held.token);
  });

  it('a blocking acquire is granted when the holder releases, with a higher token', async () => {
    const { nodes } = await cluster(1);
    const c = client([nodes[0]!.address]);
    const a = await c.openSession();
    const b = await c.openSession();
    const la = await a.acquire('q');
    const pb = b.acquire('q', { waitTimeoutMs: 5_000 });
    await sleep(50);
    expect((await c.describe('q')).waiters).toEqual([b.publicId]);
    await la.release();
    const lb = await pb;
    expect(lb.token > la.token).toBe(true);
    expect(lb.session).toBe(b);
  });

  it('renews every session over ONE stream, keeping the lease estimate moving', async () => {
    const { state, nodes } = await cluster(1);
    const c = client([nodes[0]!.address]);
    // TTLs long enough that a stall of the test process under CI's load is not a (rightly) presumed loss.
    const s1 = await c.openSession({ ttlMs: 1_500 });
    const s2 = await c.openSession({ ttlMs: 2_250 });
    const l1 = await s1.acquire('r');
    const firstEstimate = l1.presumedLostAt();
    const renewalsOf = (id: string): number => state.callsOf('KeepAliveRenewal').filter((r) => (r.req as { sessionId: string }).sessionId === id).length;
    await until(() => renewalsOf(s1.id) >= 5 && renewalsOf(s2.id) >= 3, 20_000);
    expect(s1.isLost()).toBe(false);
    expect(s2.isLost()).toBe(false);
    expect(l1.isPresumedLost()).toBe(false);
    expect(l1.presumedLostAt()).toBeGreaterThan(firstEstimate + 1_000);
    // One stream at a time for all sessions (it is ended whenever every renewal is answered, so that it does not
    // keep the process alive, and reopened for the next renewal): never one per session.
    expect(nodes[0]!.maxOpenKeepAlives).toBe(1);
  });

  it('when keepalives stop being answered: presumed lost before the TTL ends, then onLost once', async () => {
    const { nodes } = await cluster(1);
    const c = client([nodes[0]!.address], { requestTimeoutMs: 300 });
    const ttl = 1_200;
    const t0 = monotonicNow();
    const s = await c.openSession({ ttlMs: ttl });
    const lock = await s.acquire('p');
    nodes[0]!.keepAliveMode = 'silent';
    const lost: Array<{ err: FenceLockError; at: number }> = [];
    s.onLost((err) => lost.push({ err, at: monotonicNow() }));
    expect(lock.presumedLostAt()).toBeLessThan(t0 + ttl);
    await until(() => lock.isPresumedLost());
    const presumedAt = monotonicNow();
    expect(lost).toHaveLength(0);
    await until(() => lost.length > 0);
    expect(presumedAt).toBeLessThan(lost[0]!.at);
    expect(lost[0]!.err.reason).toBe('KEEPALIVE_TIMEOUT');
    expect(s.isLost()).toBe(true);
    await sleep(200);
    expect(lost).toHaveLength(1);
    // A late subscriber hears about it too.
    const late = await new Promise<FenceLockError>((resolve) => s.onLost(resolve));
    expect(late.reason).toBe('KEEPALIVE_TIMEOUT');
  });

  it('alive=false from the leader ends the session at once', async () => {
    const { state, nodes } = await cluster(1);
    const c = client([nodes[0]!.address]);
    const s = await c.openSession({ ttlMs: 600 });
    const lost = new Promise<FenceLockError>((resolve) => s.onLost(resolve));
    state.endSession(s.id);
    const err = await lost;
    expect(err.code).toBe('NOT_FOUND');
    expect(err.reason).toBe('SESSION_EXPIRED');
    expect(s.isPresumedLost()).toBe(true);
    const renewalsAtLoss = state.callsOf('KeepAliveRenewal').length;
    await sleep(400);
    expect(state.callsOf('KeepAliveRenewal').length).toBe(renewalsAtLoss); // stopped renewing
  });

  it('a keepalive stream refused UNAUTHENTICATED (a revoked token) loses every session at once and renews no more', async () => {
    const { state, nodes } = await cluster(1);
    const c = client([nodes[0]!.address]);
    const a = await c.openSession({ ttlMs: 3_000 });
    const b = await c.openSession({ ttlMs: 3_000 });
    const lost = Promise.all([a, b].map((s) => new Promise<FenceLockError>((resolve) => s.onLost(resolve))));
    await sleep(200);
    const revoked = failure(grpc.status.UNAUTHENTICATED, 'token 0123456789abcdef is unknown or revoked');
    nodes[0]!.keepAliveRefusal = revoked;
    nodes[0]!.breakStreams(revoked);
    const errors = await lost;
    expect(errors.map((e) => e.code)).toEqual(['UNAUTHENTICATED', 'UNAUTHENTICATED']);
    expect(a.isLost() && b.isLost()).toBe(true);
    const streamsAtLoss = state.callsOf('KeepAlive').length;
    await sleep(600);
    expect(state.callsOf('KeepAlive').length).toBe(streamsAtLoss); // not reopened
  });

  it('reopens the keepalive stream on the new leader after a leader change', async () => {
    const { state, nodes } = await cluster(2);
    const c = client([nodes[0]!.address, nodes[1]!.address]);
    const s = await c.openSession({ ttlMs: 900 });
    await sleep(400);
    nodes[0]!.role = 'follower';
    nodes[1]!.role = 'leader';
    nodes[0]!.breakStreams(failure(grpc.status.UNAVAILABLE, 'not leader', { 'fencelock-leader': nodes[1]!.address }));
    await sleep(1_500);
    expect(s.isLost()).toBe(false);
    expect(state.callsOf('KeepAliveRenewal').filter((r) => r.node === 'n2').length).toBeGreaterThanOrEqual(3);
  });

  it('withLock runs fn with the token, releases after, and releases when fn throws', async () => {
    const { state, nodes } = await cluster(1);
    const c = client([nodes[0]!.address]);
    const out = await c.withLock('w', async (token, lock) => {
      expect(token).toBe(lock.token);
      await lock.write([{ put: 'w/x', value: '1' }]);
      return 'done';
    });
    expect(out).toBe('done');
    expect(state.locks.get('w')!.holder).toBeUndefined();
    const boom = new Error('boom');
    await expect(c.withLock('w', async () => Promise.reject(boom))).rejects.toBe(boom);
    expect(state.locks.get('w')!.holder).toBeUndefined();
    expect(state.callsOf('Release')).toHaveLength(2);
    expect(state.callsOf('Open')).toHaveLength(1); // the session is reused
  });

  it('withLock opens a fresh session when the shared one has expired on the server', async () => {
    const { state, nodes } = await cluster(1);
    const c = client([nodes[0]!.address]);
    await c.withLock('e', async () => undefined);
    const [old] = [...state.sessions.keys()];
    // Forget the session silently (no keepalive answer will say so before the next call).
    state.sessions.delete(old!);
    const token = await c.withLock('e', async (t) => t);
    expect(token).toBeGreaterThan(0n);
    expect(state.callsOf('Open')).toHaveLength(2);
  });

  it('watch delivers grants and releases', async () => {
    const { nodes } = await cluster(1);
    const c = client([nodes[0]!.address]);
    const events: LockEvent[] = [];
    const w = c.watch('z', (ev) => events.push(ev));
    await sleep(100);
    const s = await c.openSession();
    const l = await s.acquire('z');
    await l.release();
    await until(() => events.length >= 2);
    w.cancel();
    expect(events.map((e) => e.kind)).toEqual(['GRANTED', 'RELEASED']);
    expect(events[0]!.token).toBe(l.token);
    expect(events[0]!.sessionId).toBe(s.publicId);
  });

  it('watch delivers every event of one entry: a release and the handover grant share a log index (regression: the grant was dropped)', async () => {
    const { nodes } = await cluster(1);
    const c = client([nodes[0]!.address]);
    const events: LockEvent[] = [];
    const w = c.watch('handover', (ev) => events.push(ev));
    await sleep(100);
    const [s1, s2] = [await c.openSession(), await c.openSession()];
    const first = await s1.acquire('handover');
    const waiting = s2.acquire('handover', { waitTimeoutMs: 5_000 });
    await sleep(100);
    await first.release();
    const second = await waiting;
    await until(() => events.length >= 3);
    w.cancel();
    expect(events.map((e) => [e.kind, e.sessionId])).toEqual([
      ['GRANTED', s1.publicId],
      ['RELEASED', s1.publicId],
      ['GRANTED', s2.publicId],
    ]);
    expect(events[2]!.index).toBe(events[1]!.index);
    expect(events[2]!.token).toBe(second.token);
  });

  it('watch: a stream ended ABORTED EVENTS_MISSED (the node installed a snapshot) is reported to onMissed, and the watch goes on', async () => {
    const events: LockEvent[] = [];
    const { state, node, c, w, missed, errors } = await recordedWatch('m', (ev) => events.push(ev));
    const detail = 'lock events up to log index 42 were not sent: this node replaced its state by a snapshot from the leader';
    node.breakStreams(failure(grpc.status.ABORTED, detail, { 'fencelock-reason': 'EVENTS_MISSED' }));
    await until(() => missed.length === 1 && state.callsOf('Watch').length === 2);
    expect(missed[0]!.code).toBe('ABORTED');
    expect(missed[0]!.reason).toBe('EVENTS_MISSED');
    expect(missed[0]!.message).toContain('log index 42');
    const s = await c.openSession();
    const l = await s.acquire('m');
    await until(() => events.length >= 1);
    expect(events[0]!.token).toBe(l.token);
    expect(errors).toEqual([]);
    w.cancel();
  });

  it('watch: a stream ended RESOURCE_EXHAUSTED WATCH_BEHIND (this client read too slowly) is reported to onMissed, and the watch goes on', async () => {
    const { state, node, w, missed, errors } = await recordedWatch('wb');
    const detail = 'this watch fell 512 events behind (a node keeps at most 512 unsent events per watch); events from log index 7 on were not sent';
    node.breakStreams(failure(grpc.status.RESOURCE_EXHAUSTED, detail, { 'fencelock-reason': 'WATCH_BEHIND' }));
    await until(() => missed.length === 1 && state.callsOf('Watch').length === 2);
    expect(missed[0]).toMatchObject({ code: 'RESOURCE_EXHAUSTED', reason: 'WATCH_BEHIND' });
    expect(errors).toEqual([]);
    w.cancel();
  });

  it('watch: RESOURCE_EXHAUSTED for any other reason (too many streams on the connection) stops the watch with onError', async () => {
    const { state, node, missed, errors } = await recordedWatch('ts');
    const detail = 'this connection already has 256 Watch streams, the most one connection may have; end a watch first';
    node.breakStreams(failure(grpc.status.RESOURCE_EXHAUSTED, detail, { 'fencelock-reason': 'TOO_MANY_STREAMS' }));
    await until(() => errors.length === 1);
    expect(errors[0]).toMatchObject({ code: 'RESOURCE_EXHAUSTED', reason: 'TOO_MANY_STREAMS' });
    expect(missed).toEqual([]);
    await sleep(100);
    expect(state.callsOf('Watch')).toHaveLength(1); // not reopened
  });

  it('close() closes its sessions (freeing their locks) and refuses further calls', async () => {
    const { state, nodes } = await cluster(1);
    const c = new FenceLockClient({ endpoints: [nodes[0]!.address], insecure: true });
    const s = await c.openSession();
    await s.acquire('c');
    await c.close();
    expect(state.callsOf('Close')).toHaveLength(1);
    expect(state.locks.get('c')!.holder).toBeUndefined();
    expect(s.isClosed()).toBe(true);
    await expect(c.openSession()).rejects.toMatchObject({ code: 'CANCELLED' });
  });

  it('logs and reports a session by its public handle, never by its id', async () => {
    const { state, nodes } = await cluster(1);
    const lines: string[] = [];
    const capture = (level: string) => (obj: object, msg?: string) => {
      // Errors by message, stack and own fields, as pino's err serializer would show them.
      const text = JSON.stringify(obj, (_k, v: unknown) => (v instanceof Error ? { ...v, message: v.message, stack: v.stack } : typeof v === 'bigint' ? v.toString() : v));
      lines.push(`${level} ${text} ${msg ?? ''}`);
    };
    const logger = { debug: capture('debug'), info: capture('info'), warn: capture('warn'), error: capture('error') };
    const c = client([nodes[0]!.address], { logger });
    const errors: string[] = [];

    // Lost by the leader's word, with a throwing onLost callback.
    const s1 = await c.openSession({ ttlMs: 3_000 });
    const lock = await s1.acquire('logged');
    s1.onLost((err) => {
      errors.push(err.message);
      throw new Error('callback trouble');
    });
    state.endSession(s1.id);
    await until(() => s1.isLost());
    errors.push((await rejection(s1.acquire('again'))).message);
    lines.push(`json ${JSON.stringify({ s1, lock })}`);

    // Lost by silence, then abandoned, then closed.
    const s2 = await c.openSession({ ttlMs: 600 });
    nodes[0]!.keepAliveMode = 'silent';
    await until(() => s2.isLost(), 3_000);
    nodes[0]!.keepAliveMode = 'answer';
    const s3 = await c.openSession({ ttlMs: 3_000 });
    s3.abandon('testing');
    await s3.close();
    errors.push((await rejection(s3.acquire('x'))).message);

    const all = [...lines, ...errors].join('\n');
    for (const s of [s1, s2, s3]) {
      expect(all).not.toContain(s.id);
      expect(all).toContain(s.publicId);
    }
    expect(lines.some((l) => l.startsWith('warn') && l.includes(s1.publicId) && l.includes('session lost'))).toBe(true);
    expect(lines.some((l) => l.startsWith('error') && l.includes('onLost callback threw'))).toBe(true);
  });

  it('validates options and write arguments locally', async () => {
    expect(() => new FenceLockClient({ endpoints: [] })).toThrow(FenceLockError);
    expect(() => new FenceLockClient({ endpoints: ['nohost'] })).toThrow(/host:port/);
    expect(() => new FenceLockClient({ endpoints: ['a:1'], clientId: 'x'.repeat(129), insecure: true })).toThrow(/clientId must be 1..128 bytes/);
    await new FenceLockClient({ endpoints: ['a:1'], clientId: 'x'.repeat(128), insecure: true }).close(); // the server's bound
    const c = client(['127.0.0.1:1']);
    await expect(c.write({ lock: 'l', token: -1n, sessionId: 's', ops: [{ put: 'k', value: 'v' }] })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(c.write({ lock: 'l', token: 1n << 64n, sessionId: 's', ops: [{ put: 'k', value: 'v' }] })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(c.write({ lock: 'l', token: 1n, sessionId: 's', ops: [] })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });

  // Issue 31: a number the wire cannot carry exactly (String(1e21) is '1e+21', which protobufjs reads as
  // something else) is refused here, before any call, never sent.
  it('refuses a TTL or wait the wire cannot carry exactly, and sends nothing', async () => {
    const { state, nodes } = await cluster(1);
    const c = client([nodes[0]!.address]);
    for (const ttlMs of [1e21, 2 ** 53, 1.5]) {
      expect(await rejection(c.openSession({ ttlMs }))).toMatchObject({ code: 'INVALID_ARGUMENT' });
    }
    expect(state.callsOf('Open')).toHaveLength(0);
    const s = await c.openSession({ ttlMs: 5_000 });
    for (const waitTimeoutMs of [1e21, 2 ** 53, 0.5, -1]) {
      expect(await rejection(s.acquire('l', { waitTimeoutMs }))).toMatchObject({ code: 'INVALID_ARGUMENT' });
    }
    expect(state.callsOf('Acquire')).toHaveLength(0);
    const lock = await s.acquire('l', { waitTimeoutMs: 1_234 });
    expect(state.callsOf('Acquire').map((x) => (x.req as { waitTimeoutMs: string }).waitTimeoutMs)).toEqual(['1234']);
    await lock.release();
  });
});

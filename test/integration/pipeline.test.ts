// Pipeline.Calls end to end over real processes: the same semantics as the unary calls (results, status codes,
// reasons, watermarks, leader hints), the stream's own rules (call ids, deadlines, answers out of order), and
// retries across a leader change that apply each write once.
import * as grpc from '@grpc/grpc-js';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { FenceLockClient, FenceLockError, type NodeStatus } from '../../src/client';
import { PipelineLink } from '../../src/client/pipeline';
import { eventually, LocalCluster } from './harness';
import { header, rawClient, type RawNodeClient } from './rawClient';

type Obj = Record<string, unknown>;

let cluster: LocalCluster;
let piped: FenceLockClient;
let unary: FenceLockClient;
let raw: RawNodeClient[] = [];
const cleanups: Array<() => unknown> = [];

beforeAll(async () => {
  cluster = await LocalCluster.create();
  cluster.startAll();
  piped = new FenceLockClient({ endpoints: cluster.endpoints, pipeline: true });
  unary = new FenceLockClient({ endpoints: cluster.endpoints, pipeline: false });
  raw = cluster.endpoints.map((e) => rawClient(e));
  await leaderStatus();
  await piped.get('warm-up'); // finds the leader (and opens its stream) before the tests look at paths
});

afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
  vi.restoreAllMocks();
});

afterAll(async () => {
  await piped?.close().catch(() => undefined);
  await unary?.close().catch(() => undefined);
  for (const r of raw) r.close();
  await cluster?.destroy();
});

async function leaderStatus(exclude?: string): Promise<NodeStatus> {
  return eventually(
    async () => {
      const all = await unary.statusAll();
      const leaders = all.flatMap((s) => (s.ok && s.status.role === 'leader' && s.status.id !== exclude ? [s.status] : []));
      return leaders.length === 1 ? leaders[0] : undefined;
    },
    15_000,
    'a leader',
  );
}

function rawFor(address: string): RawNodeClient {
  return raw.find((r) => r.address === address)!;
}

async function rawLeader(): Promise<RawNodeClient> {
  return rawFor((await leaderStatus()).address);
}

async function openRawSession(r: RawNodeClient, ttlMs = 10_000): Promise<string> {
  const res = await r.call('Session', 'Open', { header: header(), ttlMs: String(ttlMs), clientName: 'raw' });
  return res.sessionId as string;
}

/** A raw session holding `lock` (for tests that need a blocked waiter). */
async function holder(r: RawNodeClient, lock: string): Promise<{ sessionId: string; token: string; release: () => Promise<Obj> }> {
  const sessionId = await openRawSession(r);
  const res = await r.call('Lock', 'Acquire', { header: header(), lock, sessionId, waitTimeoutMs: '0' });
  expect(res.acquired).toBe(true);
  const token = res.token as string;
  return { sessionId, token, release: () => r.call('Lock', 'Release', { header: header(), lock, sessionId, token }) };
}

async function waiters(r: RawNodeClient, lock: string): Promise<number> {
  return ((await r.call('Lock', 'Describe', { lock })).waiters as string[]).length;
}

/** One raw Pipeline.Calls stream to one node; every response is kept, in arrival order. */
class RawPipe {
  readonly responses: Obj[] = [];
  private readonly stream: grpc.ClientDuplexStream<Obj, Obj>;

  constructor(node: RawNodeClient) {
    this.stream = node.pipelineStream();
    this.stream.on('data', (res: Obj) => this.responses.push(res));
    this.stream.on('error', () => undefined); // cancel() at the end of each test
    cleanups.push(() => this.stream.cancel());
  }

  send(req: Obj): void {
    this.stream.write(req);
  }

  /** The first response (or the n-th, counting from 0) with this call id. */
  answer(callId: string, nth = 0, timeoutMs = 15_000): Promise<Obj> {
    return eventually(() => this.responses.filter((r) => r.callId === callId)[nth], timeoutMs, `the answer to call ${callId}`);
  }

  /** Sends one call and waits for its answer. */
  async call(callId: string, req: Obj): Promise<Obj> {
    this.send({ callId, ...req });
    return this.answer(callId);
  }
}

function fencelockMetadata(md: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(Object.entries(md).filter(([k]) => k.startsWith('fencelock-')).map(([k, v]) => [k, String(v)]));
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

/** What two errors must share to be "the same answer" from both paths. */
const essence = (e: FenceLockError): Obj => ({ code: e.code, reason: e.reason, watermark: e.watermark, details: e.details, indeterminate: e.indeterminate });

const text = (v: Uint8Array): string => Buffer.from(v).toString();

/** The distinct names in a list of calls, sorted (an attempt retried after a leader change counts once). */
const kinds = (calls: string[]): string[] => [...new Set(calls)].sort();

/** Which calls of `fn` went on a Pipeline stream (by kind), and which hot calls went as unary calls (by path). */
async function paths<T>(fn: () => Promise<T>): Promise<{ result: T; pipelined: string[]; unaryHot: string[] }> {
  const link = vi.spyOn(PipelineLink.prototype, 'call');
  const unaryCalls = vi.spyOn(grpc.Client.prototype, 'makeUnaryRequest');
  try {
    const result = await fn();
    const hot = /\.(Lock\/Acquire|Lock\/Release|KV\/Write|KV\/Get)$/; // /fencelock.v1.Lock/Acquire
    return {
      result,
      pipelined: link.mock.calls.map((c) => c[0].kind),
      unaryHot: unaryCalls.mock.calls.map((c) => c[0]).filter((p) => hot.test(p)),
    };
  } finally {
    link.mockRestore();
    unaryCalls.mockRestore();
  }
}

describe('a pipelined client and a unary client', () => {
  async function cycle(c: FenceLockClient, tag: string): Promise<Obj & { token: bigint }> {
    const s = await c.openSession({ ttlMs: 10_000 });
    const lock = await s.acquire('cycle', { waitTimeoutMs: 10_000 });
    const w = await lock.write([{ put: `cycle/${tag}`, value: `written by ${tag}` }]);
    const got = await c.get(`cycle/${tag}`);
    const missing = await c.get(`cycle/${tag}/nothing`);
    await lock.release();
    const after = await c.describe('cycle');
    await s.close();
    return {
      token: lock.token,
      writeAfterGrant: w.index > lock.token,
      got: { found: got.found, value: text(got.value), token: got.token === lock.token, lock: got.lock },
      missing: { found: missing.found, value: missing.value.length, token: missing.token },
      heldAfterRelease: after.held,
    };
  }

  it('do the same acquire / fenced write / get / release cycle with the same results, and tokens keep increasing across both', async () => {
    const rounds: Array<Obj & { token: bigint }> = [];
    for (let round = 0; round < 2; round++) {
      const p = await paths(() => cycle(piped, `piped-${round}`));
      expect(kinds(p.pipelined)).toEqual(['acquire', 'get', 'release', 'write']);
      expect(p.pipelined.length).toBeGreaterThanOrEqual(5);
      expect(p.unaryHot).toEqual([]);
      rounds.push(p.result);
      const u = await paths(() => cycle(unary, `unary-${round}`));
      expect(u.pipelined).toEqual([]);
      expect(kinds(u.unaryHot.map((x) => x.split('/').pop()!))).toEqual(['Acquire', 'Get', 'Release', 'Write']);
      expect(u.unaryHot.length).toBeGreaterThanOrEqual(5);
      rounds.push(u.result);
    }
    for (let i = 1; i < rounds.length; i++) expect(rounds[i]!.token).toBeGreaterThan(rounds[i - 1]!.token);
    rounds.forEach((r, i) => {
      const tag = `${i % 2 === 0 ? 'piped' : 'unary'}-${Math.floor(i / 2)}`;
      expect({ ...r, token: undefined }).toEqual({
        token: undefined,
        writeAfterGrant: true,
        got: { found: true, value: `written by ${tag}`, token: true, lock: 'cycle' },
        missing: { found: false, value: 0, token: 0n },
        heldAfterRelease: false,
      });
    });
  });

  it('see a held lock alike: tryAcquire gives null, a blocking acquire times out DEADLINE_EXCEEDED, a release hands over', async () => {
    const holderSession = await unary.openSession({ ttlMs: 10_000 });
    const held = await holderSession.acquire('busy');
    const ps = await piped.openSession({ ttlMs: 10_000 });
    const us = await unary.openSession({ ttlMs: 10_000 });
    cleanups.push(() => Promise.all([holderSession.close(), ps.close(), us.close()]));

    const tries = await paths(async () => [await ps.tryAcquire('busy'), await us.tryAcquire('busy')]);
    expect(tries.result).toEqual([null, null]);
    expect(kinds(tries.pipelined)).toEqual(['acquire']);

    const started = Date.now();
    const [viaPipe, viaUnary] = await Promise.all([rejection(ps.acquire('busy', { waitTimeoutMs: 300 })), rejection(us.acquire('busy', { waitTimeoutMs: 300 }))]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(280); // a timer may fire a few ms early by the wall clock
    expect(viaPipe).toMatchObject({ code: 'DEADLINE_EXCEEDED', indeterminate: false });
    expect(essence(viaUnary)).toEqual(essence(viaPipe));

    // The pipelined session waits; the holder's release hands the lock over to it.
    const waiting = ps.acquire('busy', { waitTimeoutMs: 15_000 });
    await eventually(async () => ((await unary.describe('busy')).waiters.length === 1 ? true : undefined), 10_000, 'the pipelined waiter to queue');
    await held.release();
    const granted = await waiting;
    expect(granted.token).toBeGreaterThan(held.token);
    expect(await unary.describe('busy')).toMatchObject({ held: true, holderSession: ps.publicId, token: granted.token });
    await granted.release();
  });

  it('a stale-token write fails FAILED_PRECONDITION / STALE_TOKEN with the same watermark and words on both paths', async () => {
    const a = await piped.openSession({ ttlMs: 10_000 });
    const b = await unary.openSession({ ttlMs: 10_000 });
    cleanups.push(() => Promise.all([a.close(), b.close()]));
    const la = await a.acquire('stale');
    await la.write([{ put: 'stale/k', value: 'A' }]);
    await la.release();
    const lb = await b.acquire('stale');
    await lb.write([{ put: 'stale/k', value: 'B' }]);

    // A paused holder wakes up and writes under its old token.
    const args = { lock: 'stale', token: la.token, sessionId: a.id, ops: [{ put: 'stale/k', value: 'A again' }] };
    const p = await paths(() => rejection(piped.write(args)));
    expect(kinds(p.pipelined)).toEqual(['write']);
    const viaPipe = p.result;
    const viaUnary = await rejection(unary.write(args));
    expect(viaPipe).toMatchObject({ code: 'FAILED_PRECONDITION', reason: 'STALE_TOKEN', watermark: lb.token, indeterminate: false });
    expect(essence(viaUnary)).toEqual(essence(viaPipe));
    const value = await piped.get('stale/k');
    expect(text(value.value)).toBe('B');
    expect(value.token).toBe(lb.token);
    await lb.release();
  });

  it('invalid lock names and keys give INVALID_ARGUMENT with the same message; an unknown session gives NOT_FOUND', async () => {
    const ps = await piped.openSession({ ttlMs: 10_000 });
    const us = await unary.openSession({ ttlMs: 10_000 });
    cleanups.push(() => Promise.all([ps.close(), us.close()]));
    for (const name of ['', 'x'.repeat(300)]) {
      const viaPipe = await rejection(ps.tryAcquire(name));
      const viaUnary = await rejection(us.tryAcquire(name));
      expect(viaPipe.code).toBe('INVALID_ARGUMENT');
      expect(viaPipe.details).toMatch(/^lock: /);
      expect(essence(viaUnary)).toEqual(essence(viaPipe));
    }
    const badGet = [await rejection(piped.get('')), await rejection(unary.get(''))];
    expect(badGet[0]!.code).toBe('INVALID_ARGUMENT');
    expect(essence(badGet[1]!)).toEqual(essence(badGet[0]!));

    const lock = await us.acquire('strangers');
    cleanups.push(() => lock.release());
    const args = { lock: 'strangers', token: lock.token, sessionId: 'f'.repeat(32), ops: [{ put: 'strangers/k', value: 'x' }] };
    const viaPipe = await rejection(piped.write(args));
    const viaUnary = await rejection(unary.write(args));
    expect(viaPipe).toMatchObject({ code: 'NOT_FOUND', reason: 'UNKNOWN_SESSION' });
    expect(essence(viaUnary)).toEqual(essence(viaPipe));
  });
});

describe('the raw Pipeline stream', () => {
  const s = 'ffffffffffffffffffffffffffffffff';
  // The same request on the stream and as a unary call must get the same status, message and metadata.
  const cases: Array<[string, 'acquire' | 'release' | 'write' | 'get', string, () => Obj]> = [
    ['empty lock name', 'acquire', 'Lock/Acquire', () => ({ header: header(), lock: '', sessionId: s, waitTimeoutMs: '0' })],
    ['negative wait timeout', 'acquire', 'Lock/Acquire', () => ({ header: header(), lock: 'l', sessionId: s, waitTimeoutMs: '-1' })],
    ['missing header', 'acquire', 'Lock/Acquire', () => ({ lock: 'l', sessionId: s, waitTimeoutMs: '0' })],
    ['unknown session', 'acquire', 'Lock/Acquire', () => ({ header: header(), lock: 'nobody', sessionId: s, waitTimeoutMs: '0' })],
    ['zero token on release', 'release', 'Lock/Release', () => ({ header: header(), lock: 'l', sessionId: s, token: '0' })],
    ['release by an unknown session', 'release', 'Lock/Release', () => ({ header: header(), lock: 'nobody', sessionId: s, token: '5' })],
    ['no ops', 'write', 'KV/Write', () => ({ header: header(), lock: 'l', token: '5', sessionId: s, ops: [] })],
    ['empty key on get', 'get', 'KV/Get', () => ({ key: '' })],
  ];
  it.each(cases)('%s: the same status, message and metadata as the unary call', async (_name, kind, unaryMethod, req) => {
    const leader = await rawLeader();
    const pipe = new RawPipe(leader);
    const res = await pipe.call('1', { [kind]: req() });
    const [service, method] = unaryMethod.split('/') as ['Lock' | 'KV', string];
    const err = await leader.call(service, method, req()).then(
      () => {
        throw new Error('the unary call succeeded');
      },
      (e: grpc.ServiceError) => e,
    );
    expect(res.code).not.toBe(grpc.status.OK);
    expect({ code: grpc.status[res.code as number], message: res.message, metadata: fencelockMetadata(res.metadata as Obj) }).toEqual({
      code: grpc.status[err.code],
      message: err.details,
      metadata: fencelockMetadata(err.metadata.getMap()),
    });
  });

  it('answers a CallRequest without a call INVALID_ARGUMENT under its call_id, and keeps serving', async () => {
    const pipe = new RawPipe(await rawLeader());
    const res = await pipe.call('41', {});
    expect(res).toMatchObject({ callId: '41', code: grpc.status.INVALID_ARGUMENT });
    expect(res.message).toContain('call');
    const next = await pipe.call('42', { get: { key: 'nothing-here', staleOk: false } });
    expect(next).toMatchObject({ callId: '42', code: grpc.status.OK, result: 'get', get: { found: false } });
  });

  it('answers a second call under a call_id still in flight INVALID_ARGUMENT, and the first one still completes', async () => {
    const leader = await rawLeader();
    const held = await holder(leader, 'dup');
    const waiter = await openRawSession(leader);
    const pipe = new RawPipe(leader);
    pipe.send({ callId: '1', acquire: { header: header(), lock: 'dup', sessionId: waiter, waitTimeoutMs: '15000' } });
    await eventually(async () => ((await waiters(leader, 'dup')) === 1 ? true : undefined), 10_000, 'the waiter to queue');
    pipe.send({ callId: '1', get: { key: 'dup/k' } });
    const dup = await pipe.answer('1');
    expect(dup).toMatchObject({ callId: '1', code: grpc.status.INVALID_ARGUMENT });
    expect(dup.message).toContain('already in flight');
    await held.release();
    const granted = await pipe.answer('1', 1);
    expect(granted).toMatchObject({ code: grpc.status.OK, result: 'acquire', acquire: { acquired: true } });
    expect(BigInt((granted.acquire as Obj).token as string)).toBeGreaterThan(BigInt(held.token));
    expect(pipe.responses.filter((r) => r.callId === '1')).toHaveLength(2);
  });

  it('a follower answers UNAVAILABLE with fencelock-leader in the response metadata', async () => {
    const leader = await leaderStatus();
    const follower = raw.find((r) => r.address !== leader.address)!;
    await eventually(async () => ((await unary.status(follower.address)).leader === leader.id ? true : undefined), 10_000, 'the follower to know the leader');
    const pipe = new RawPipe(follower);
    const get = await pipe.call('1', { get: { key: 'k' } });
    const acquire = await pipe.call('2', { acquire: { header: header(), lock: 'l', sessionId: s, waitTimeoutMs: '0' } });
    for (const res of [get, acquire]) {
      expect(res.code).toBe(grpc.status.UNAVAILABLE);
      expect((res.metadata as Obj)['fencelock-leader']).toBe(leader.address);
    }
    // A stale read is the follower's to serve.
    expect(await pipe.call('3', { get: { key: 'k', staleOk: true } })).toMatchObject({ code: grpc.status.OK, result: 'get' });
  });

  it("a blocking acquire is answered DEADLINE_EXCEEDED at the call's timeout_ms or at its wait timeout, and both waits are withdrawn", async () => {
    const leader = await rawLeader();
    const held = await holder(leader, 'deadline');
    const [w1, w2] = [await openRawSession(leader), await openRawSession(leader)];
    const pipe = new RawPipe(leader);
    const started = Date.now();
    // w1 would wait a minute, but the call's own deadline is 300 ms; w2 waits 300 ms.
    pipe.send({ callId: '1', timeoutMs: 300, acquire: { header: header(), lock: 'deadline', sessionId: w1, waitTimeoutMs: '60000' } });
    pipe.send({ callId: '2', acquire: { header: header(), lock: 'deadline', sessionId: w2, waitTimeoutMs: '300' } });
    const [r1, r2] = [await pipe.answer('1'), await pipe.answer('2')];
    expect(Date.now() - started).toBeGreaterThanOrEqual(280); // a timer may fire a few ms early by the wall clock
    expect(r1).toMatchObject({ code: grpc.status.DEADLINE_EXCEEDED });
    expect(r1.message).toContain('300 ms');
    expect(r2).toMatchObject({ code: grpc.status.DEADLINE_EXCEEDED });
    expect(r2.message).toContain('not granted within 300 ms');
    // w1's call went away: its wait is withdrawn after the grace period (5 s), long before its minute is up.
    await eventually(async () => ((await waiters(leader, 'deadline')) === 0 ? true : undefined), 15_000, 'both waits withdrawn');
    await held.release();
    const d = await leader.call('Lock', 'Describe', { lock: 'deadline' });
    expect(d.held).toBe(false);
  });

  it('a blocked acquire is answered with the grant when the holder releases (the handover)', async () => {
    const leader = await rawLeader();
    const held = await holder(leader, 'handover');
    const waiter = await openRawSession(leader);
    const pipe = new RawPipe(leader);
    pipe.send({ callId: '7', timeoutMs: 20_000, acquire: { header: header(), lock: 'handover', sessionId: waiter, waitTimeoutMs: '15000' } });
    await eventually(async () => ((await waiters(leader, 'handover')) === 1 ? true : undefined), 10_000, 'the waiter to queue');
    expect(pipe.responses).toEqual([]);
    const released = await held.release();
    const res = await pipe.answer('7');
    expect(res).toMatchObject({ callId: '7', code: grpc.status.OK, result: 'acquire', acquire: { acquired: true, holderSession: '' } });
    const token = BigInt((res.acquire as Obj).token as string);
    expect(token).toBeGreaterThan(BigInt(held.token));
    expect(String(token)).toBe(released.nextToken);
    const d = await leader.call('Lock', 'Describe', { lock: 'handover' });
    expect(d).toMatchObject({ held: true, token: String(token) });
  });

  it('answers out of order, matched by call_id: a get sent after a blocked acquire answers first', async () => {
    const leader = await rawLeader();
    const held = await holder(leader, 'ooo');
    const waiter = await openRawSession(leader);
    await leader.call('KV', 'Write', {
      header: header(),
      lock: 'ooo',
      token: held.token,
      sessionId: held.sessionId,
      ops: [{ type: 'PUT', key: 'ooo/k', value: Buffer.from('v1') }],
    });
    const pipe = new RawPipe(leader);
    pipe.send({ callId: '100', acquire: { header: header(), lock: 'ooo', sessionId: waiter, waitTimeoutMs: '15000' } });
    pipe.send({ callId: '101', get: { key: 'ooo/k' } });
    const get = await pipe.answer('101');
    expect(get).toMatchObject({ code: grpc.status.OK, result: 'get', get: { found: true, token: held.token, lock: 'ooo' } });
    expect(Buffer.from((get.get as Obj).value as Buffer).toString()).toBe('v1');
    await held.release();
    const acq = await pipe.answer('100');
    expect(acq).toMatchObject({ code: grpc.status.OK, result: 'acquire', acquire: { acquired: true } });
    expect(pipe.responses.map((r) => r.callId)).toEqual(['101', '100']);
  });
});

describe('retries over the pipeline across a leader change', () => {
  it.each(['kill', 'stop'] as const)('leader %s: fenced writes in flight complete on the new leader, each applied once, none lost', async (how) => {
    const before = await leaderStatus();
    const c = new FenceLockClient({ endpoints: cluster.endpoints, requestTimeoutMs: 1_000, totalTimeoutMs: 20_000 });
    cleanups.push(() => c.close());
    const session = await c.openSession({ ttlMs: 15_000 });
    const lockName = `failover-${how}`;
    const lock = await session.acquire(lockName);
    const linkCalls = vi.spyOn(PipelineLink.prototype, 'call');

    const acked = new Map<string, string>();
    const lastOf = new Map<number, string>();
    let stopWriting = false;
    // Four writers keep several calls in flight on the stream at once; each write touches its own key and
    // its writer's "last" key.
    const writer = async (w: number): Promise<void> => {
      for (let i = 0; !stopWriting; i++) {
        const key = `${lockName}/data/${w}/${i}`;
        const value = `${w}:${i}:${Math.random().toString(36).slice(2)}`;
        await lock.write([
          { put: key, value },
          { put: `${lockName}/last/${w}`, value },
        ]);
        acked.set(key, value);
        lastOf.set(w, value);
      }
    };
    const writers = Promise.all([0, 1, 2, 3].map(writer));
    writers.catch(() => undefined); // awaited below; meanwhile a failure must not go unhandled
    cleanups.push(() => {
      if (!cluster.isRunning(before.id)) cluster.start(before.id);
    });
    cleanups.push(() => {
      stopWriting = true;
      return writers.catch(() => undefined);
    });

    await eventually(() => acked.size >= 40, 20_000, '40 writes before the leader change');
    if (how === 'kill') await cluster.kill(before.id);
    else await cluster.stop(before.id);
    const ackedAtStop = acked.size;
    const after = await leaderStatus(before.id);
    expect(after.id).not.toBe(before.id);
    await eventually(() => acked.size >= ackedAtStop + 40, 30_000, '40 more writes on the new leader');
    stopWriting = true;
    await writers; // every write of every writer was acknowledged: none failed

    expect(c.currentEndpoint()).toBe(after.address);
    // Every write went on the pipeline under one request id for all its attempts: the writes in flight at the
    // change failed there and were retried with the same id (which the server answers from its dedup table).
    const attempts = linkCalls.mock.calls
      .map((args, i) => ({ kind: args[0].kind, id: (args[1] as { header: { requestId: string } }).header.requestId, outcome: linkCalls.mock.settledResults[i]!.type }))
      .filter((a) => a.kind === 'write');
    const succeeded = new Set(attempts.filter((a) => a.outcome === 'fulfilled').map((a) => a.id));
    const failed = attempts.filter((a) => a.outcome === 'rejected');
    expect(attempts.filter((a) => a.outcome === 'fulfilled')).toHaveLength(acked.size);
    expect(succeeded.size).toBe(acked.size);
    expect(new Set(attempts.map((a) => a.id)).size).toBe(acked.size);
    expect(failed.length).toBeGreaterThan(0);
    for (const f of failed) expect(succeeded.has(f.id)).toBe(true);

    // The store holds exactly the acknowledged writes: none lost, none extra, and each writer's "last" key
    // holds its last acknowledged value (no write applied again after a later one).
    const stored = new Map<string, string>();
    for (let startAfter = ''; ; ) {
      // Pages of 500: a page of exactly MAX_LIST_LIMIT (1000) says more=false even when more keys follow.
      const page = await c.list(`${lockName}/data/`, { limit: 500, startAfter });
      for (const item of page.items) {
        stored.set(item.key, text(item.value));
        expect(item.token).toBe(lock.token);
      }
      if (!page.more) break;
      startAfter = page.items.at(-1)!.key;
    }
    expect(stored.size).toBe(acked.size);
    expect(stored).toEqual(acked);
    for (const [w, value] of lastOf) expect(text((await c.get(`${lockName}/last/${w}`)).value)).toBe(value);

    // The session and its grant survived the change of leader.
    expect(await c.describe(lockName)).toMatchObject({ held: true, holderSession: session.publicId, token: lock.token });
    expect(session.isLost()).toBe(false);
    await lock.release();
    await session.close();

    cluster.start(before.id);
    await eventually(
      async () => {
        const st = await c.status(before.address);
        return st.role === 'follower' && st.leader === after.id ? true : undefined;
      },
      20_000,
      `${before.id} back as a follower`,
    );
  });
});

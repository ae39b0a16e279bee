// Issue 3 end to end over real processes and gRPC.
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FenceLockClient, type NodeStatus } from '../../src/client';
import { eventually, LocalCluster } from './harness';
import { header, rawClient, type RawNodeClient } from './rawClient';

let cluster: LocalCluster;
let client: FenceLockClient;
let raw: RawNodeClient[] = [];

async function leaderStatus(exclude?: string): Promise<NodeStatus> {
  return eventually(
    async () => {
      const all = await client.statusAll();
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

async function rawLeader(exclude?: string): Promise<RawNodeClient> {
  return rawFor((await leaderStatus(exclude)).address);
}

async function openRawSession(r: RawNodeClient, ttlMs = 3_000): Promise<string> {
  const res = await r.call('Session', 'Open', { header: header(), ttlMs: String(ttlMs), clientName: 'raw' });
  return res.sessionId as string;
}

function expectCode(p: Promise<unknown>, code: grpc.status): Promise<grpc.ServiceError> {
  return p.then(
    () => {
      throw new Error(`expected status ${grpc.status[code]}, got success`);
    },
    (err: grpc.ServiceError) => {
      expect(grpc.status[err.code], err.details).toBe(grpc.status[code]);
      return err;
    },
  );
}

beforeAll(async () => {
  cluster = await LocalCluster.create();
  cluster.startAll();
  client = new FenceLockClient({ endpoints: cluster.endpoints });
  raw = cluster.endpoints.map((e) => rawClient(e));
  await leaderStatus();
});

afterAll(async () => {
  await cluster?.destroy();
  for (const r of raw) r.close();
  await client?.close().catch(() => undefined);
});

describe('the fencing timeline', () => {
  it('refuses the write of a holder whose session expired while another took the lock, and keeps the new value', async () => {
    const leader = await rawLeader();
    // A opens a session and never renews it: a frozen process.
    const sessionA = await openRawSession(leader, 3_000);
    const acqA = await leader.call('Lock', 'Acquire', { header: header('client-a'), lock: 'timeline', sessionId: sessionA, waitTimeoutMs: '0' });
    expect(acqA.acquired).toBe(true);
    const tokenA = BigInt(acqA.token as string);
    await leader.call('KV', 'Write', {
      header: header('client-a'),
      lock: 'timeline',
      token: String(tokenA),
      sessionId: sessionA,
      ops: [{ type: 'PUT', key: 'timeline/data', value: Buffer.from('A') }],
    });

    const sessionB = await client.openSession({ ttlMs: 10_000 });
    const lockB = await sessionB.acquire('timeline', { waitTimeoutMs: 15_000 });
    expect(lockB.token).toBeGreaterThan(tokenA);
    await lockB.write([{ put: 'timeline/data', value: 'B' }]);

    const current = await rawLeader();
    const err = await expectCode(
      current.call('KV', 'Write', {
        header: header('client-a'),
        lock: 'timeline',
        token: String(tokenA),
        sessionId: sessionA,
        ops: [{ type: 'PUT', key: 'timeline/data', value: Buffer.from('A again') }],
      }),
      grpc.status.FAILED_PRECONDITION,
    );
    expect(err.metadata.get('fencelock-reason')).toEqual(['STALE_TOKEN']);
    expect(BigInt(err.metadata.get('fencelock-watermark')[0] as string)).toBe(lockB.token);
    const value = await client.get('timeline/data');
    expect(new TextDecoder().decode(value.value)).toBe('B');
    expect(value.token).toBe(lockB.token);
    await lockB.release();
    await sessionB.close();
  });
});

describe('retries and failover', () => {
  it('a retried acquire with the same request id gets the same token, even through a new leader', async () => {
    const leader = await rawLeader();
    const session = await openRawSession(leader, 10_000);
    const h = header('retry-client');
    const first = await leader.call('Lock', 'Acquire', { header: h, lock: 'retried', sessionId: session, waitTimeoutMs: '0' });
    // The reply was "dropped": the client sends the very same request again.
    const again = await leader.call('Lock', 'Acquire', { header: h, lock: 'retried', sessionId: session, waitTimeoutMs: '0' });
    expect(again.token).toBe(first.token);
    const before = await leaderStatus();
    await cluster.kill(before.id);
    const next = await rawLeader(before.id);
    const afterFailover = await next.call('Lock', 'Acquire', { header: h, lock: 'retried', sessionId: session, waitTimeoutMs: '0' }, 10_000);
    expect(afterFailover.token).toBe(first.token);
    cluster.start(before.id);
  });

  it('tokens keep increasing across a leader kill', async () => {
    const tokens: bigint[] = [];
    const session = await client.openSession({ ttlMs: 10_000 });
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 3; i++) {
        const lock = await session.acquire('increasing', { waitTimeoutMs: 10_000 });
        tokens.push(lock.token);
        await lock.release();
      }
      const leader = await leaderStatus();
      await cluster.kill(leader.id);
      await leaderStatus(leader.id);
      cluster.start(leader.id);
    }
    for (let i = 1; i < tokens.length; i++) expect(tokens[i]).toBeGreaterThan(tokens[i - 1]);
    await session.close();
  });
});

describe('blocking acquire', () => {
  it('answers DEADLINE_EXCEEDED when the wait timeout passes, and the waiter is withdrawn', async () => {
    const holder = await client.openSession({ ttlMs: 10_000 });
    const held = await holder.acquire('blocked');
    const leader = await rawLeader();
    const waiter = await openRawSession(leader, 10_000);
    const started = Date.now();
    await expectCode(
      leader.call('Lock', 'Acquire', { header: header(), lock: 'blocked', sessionId: waiter, waitTimeoutMs: '800' }, 5_000),
      grpc.status.DEADLINE_EXCEEDED,
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(800);
    expect((await client.describe('blocked')).waiters).toEqual([]);
    // The holder's release hands the lock to nobody: the withdrawn waiter is not granted.
    await held.release();
    expect((await client.describe('blocked')).held).toBe(false);
    await holder.close();
  });

  it('is granted in FIFO order when the holder releases', async () => {
    const s1 = await client.openSession({ ttlMs: 10_000 });
    const s2 = await client.openSession({ ttlMs: 10_000 });
    const s3 = await client.openSession({ ttlMs: 10_000 });
    const first = await s1.acquire('fifo');
    const order: string[] = [];
    const second = s2.acquire('fifo', { waitTimeoutMs: 10_000 }).then((l) => (order.push('s2'), l));
    await eventually(async () => ((await client.describe('fifo')).waiters.length === 1 ? true : undefined), 5_000, 's2 queued');
    const third = s3.acquire('fifo', { waitTimeoutMs: 10_000 }).then((l) => (order.push('s3'), l));
    await eventually(async () => ((await client.describe('fifo')).waiters.length === 2 ? true : undefined), 5_000, 's3 queued');
    await first.release();
    const l2 = await second;
    expect(l2.token).toBeGreaterThan(first.token);
    await l2.release();
    const l3 = await third;
    expect(l3.token).toBeGreaterThan(l2.token);
    expect(order).toEqual(['s2', 's3']);
    await l3.release();
    await Promise.all([s1.close(), s2.close(), s3.close()]);
  });
});

describe('watch', () => {
  it('streams grants, releases and expiries of one lock', async () => {
    const events: string[] = [];
    const watch = client.watch('watched', (e) => events.push(`${e.kind}:${e.token}`));
    await new Promise((r) => setTimeout(r, 300)); // let the stream open
    const session = await client.openSession({ ttlMs: 10_000 });
    const first = await session.acquire('watched');
    await first.release();
    const leader = await rawLeader();
    const shortLived = await openRawSession(leader, 3_000); // never renewed: it expires
    const held = await leader.call('Lock', 'Acquire', { header: header(), lock: 'watched', sessionId: shortLived, waitTimeoutMs: '0' });
    await eventually(() => (events.length >= 4 ? true : undefined), 15_000, 'four events');
    watch.cancel();
    expect(events).toEqual([`GRANTED:${first.token}`, `RELEASED:${first.token}`, `GRANTED:${held.token}`, `EXPIRED:${held.token}`]);
    await session.close();
  });
});

describe('bad input', () => {
  const s = '0123456789abcdef0123456789abcdef';
  const cases: Array<[string, 'Session' | 'Lock' | 'KV', string, Record<string, unknown>]> = [
    ['ttl below the minimum', 'Session', 'Open', { header: header(), ttlMs: '10' }],
    ['negative ttl', 'Session', 'Open', { header: header(), ttlMs: '-5000' }],
    ['missing header', 'Session', 'Open', { ttlMs: '5000' }],
    ['malformed session id on close', 'Session', 'Close', { header: header(), sessionId: 'nope' }],
    ['empty lock name', 'Lock', 'Acquire', { header: header(), lock: '', sessionId: s, waitTimeoutMs: '0' }],
    ['over-long lock name', 'Lock', 'Acquire', { header: header(), lock: 'x'.repeat(300), sessionId: s, waitTimeoutMs: '0' }],
    ['negative wait timeout', 'Lock', 'Acquire', { header: header(), lock: 'l', sessionId: s, waitTimeoutMs: '-1' }],
    ['zero token on release', 'Lock', 'Release', { header: header(), lock: 'l', sessionId: s, token: '0' }],
    ['token beyond 2^53', 'Lock', 'Release', { header: header(), lock: 'l', sessionId: s, token: '18446744073709551615' }],
    ['empty lock on describe', 'Lock', 'Describe', { lock: '' }],
    ['no ops', 'KV', 'Write', { header: header(), lock: 'l', token: '5', sessionId: s, ops: [] }],
    ['too many ops', 'KV', 'Write', { header: header(), lock: 'l', token: '5', sessionId: s, ops: Array.from({ length: 65 }, (_, i) => ({ type: 'PUT', key: `k${i}`, value: Buffer.from('v') })) }],
    ['value over the limit', 'KV', 'Write', { header: header(), lock: 'l', token: '5', sessionId: s, ops: [{ type: 'PUT', key: 'k', value: Buffer.alloc(65 * 1024) }] }],
    ['empty key', 'KV', 'Write', { header: header(), lock: 'l', token: '5', sessionId: s, ops: [{ type: 'PUT', key: '', value: Buffer.from('v') }] }],
    ['op without type', 'KV', 'Write', { header: header(), lock: 'l', token: '5', sessionId: s, ops: [{ key: 'k' }] }],
    ['empty key on get', 'KV', 'Get', { key: '' }],
    ['list limit too large', 'KV', 'List', { prefix: '', limit: 5000 }],
  ];
  it.each(cases)('%s -> INVALID_ARGUMENT naming the field, and the node keeps serving', async (_name, service, method, req) => {
    const leader = await rawLeader();
    const err = await expectCode(leader.call(service, method, req), grpc.status.INVALID_ARGUMENT);
    expect(err.details.length).toBeGreaterThan(5);
    await leader.call('Cluster', 'Status', {});
  });

  it('an unknown session gets NOT_FOUND', async () => {
    const leader = await rawLeader();
    await expectCode(
      leader.call('Lock', 'Acquire', { header: header(), lock: 'nobody', sessionId: 'ffffffffffffffffffffffffffffffff', waitTimeoutMs: '0' }),
      grpc.status.NOT_FOUND,
    );
  });

  it('a follower answers UNAVAILABLE with the leader address in metadata', async () => {
    const leader = await leaderStatus();
    const follower = raw.find((r) => r.address !== leader.address)!;
    // A node restarted by an earlier test may not have heard from the leader yet.
    await eventually(async () => ((await client.status(follower.address)).leader === leader.id ? true : undefined), 10_000, 'the follower to know the leader');
    const err = await expectCode(follower.call('Session', 'Open', { header: header(), ttlMs: '5000' }), grpc.status.UNAVAILABLE);
    expect(err.metadata.get('fencelock-leader')).toEqual([leader.address]);
  });
});

describe('a minority', () => {
  it('grants nothing and answers UNAVAILABLE within the request deadline', async () => {
    const leader = await leaderStatus();
    const others = cluster.nodes.filter((n) => n.address !== leader.address);
    await Promise.all(others.map((n) => cluster.stop(n.id)));
    const lonely = rawFor(leader.address);
    const session = '0123456789abcdef0123456789abcdef';
    const started = Date.now();
    await expectCode(
      lonely.call('Lock', 'Acquire', { header: header(), lock: 'minority', sessionId: session, waitTimeoutMs: '0' }, 5_000),
      grpc.status.UNAVAILABLE,
    );
    expect(Date.now() - started).toBeLessThan(5_000);
    await eventually(async () => ((await client.status(leader.address)).role !== 'leader' ? true : undefined), 5_000, 'the cut-off leader to step down');
    await expectCode(lonely.call('KV', 'Get', { key: 'timeline/data' }, 5_000), grpc.status.UNAVAILABLE);
    for (const n of others) cluster.start(n.id);
    await leaderStatus();
  });
});

// "No client can starve the others" (issue 10), attacked the way it was observed, over real connections to
// real node processes: a Pipeline client that never reads its answers, Watch streams that never read, more
// streams on one connection than any client needs, and 60 MiB requests. Memory is the node's resident set,
// read from /proc/<pid>/status while the attack runs; each test prints its figures.
import * as grpc from '@grpc/grpc-js';
import type * as http2 from 'node:http2';
import { setTimeout as sleep } from 'node:timers/promises';
import * as protobuf from 'protobufjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FenceLockClient } from '../../src/client';
import { protoFile } from '../../src/codec/protoPath';
import { MAX_CLIENT_MESSAGE_BYTES } from '../../src/node/api/serverOptions';
import {
  MAX_CONCURRENT_STREAMS_PER_CONNECTION,
  MAX_KEEPALIVES_PER_CONNECTION,
  MAX_PIPELINES_PER_CONNECTION,
  MAX_WATCH_BACKLOG_EVENTS,
  MAX_WATCHES_PER_CONNECTION,
} from '../../src/node/api/streamLimits';
import { eventually } from '../integration/harness';
import { expectLeaderKept, stableCluster, startAttackCluster, stopAttackCluster, underWorkload, type AttackCluster } from './attackKit';
import { ending, ownConnection, type OwnConnection } from './ownConnection';
import { formatRss, watchRss } from './processMemory';
import { connectHttp2, RawGrpcCall } from '../support/rawHttp2';

type Ending = Awaited<ReturnType<typeof ending>>;

const proto = protobuf.loadSync(protoFile('fencelock/v1/lock.proto'));
const CallRequest = proto.lookupType('fencelock.v1.CallRequest');
const CallResponse = proto.lookupType('fencelock.v1.CallResponse');
const WatchRequest = proto.lookupType('fencelock.v1.WatchRequest');
const KeepAliveRequest = proto.lookupType('fencelock.v1.KeepAliveRequest');

/** The value of `read` once it has not changed for `quietMs` (or `timeoutMs` passed). */
async function settled(read: () => number, quietMs = 2_000, timeoutMs = 60_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  let value = read();
  let since = Date.now();
  while (Date.now() < deadline && Date.now() - since < quietMs) {
    await sleep(100);
    const now = read();
    if (now !== value) [value, since] = [now, Date.now()];
  }
  return value;
}

/** How a call ended, or undefined when it is still open after `ms`. */
function endingWithin<T>(ended: Promise<T>, ms: number): Promise<T | undefined> {
  return Promise.race([ended, sleep(ms).then(() => undefined)]);
}

/** `cycles` acquire/release pairs of `lock` by one session: 2 * cycles lock events (GRANTED, RELEASED). */
async function churn(client: FenceLockClient, lock: string, cycles: number): Promise<number> {
  const session = await client.openSession({ ttlMs: 60_000 });
  for (let i = 0; i < cycles; i++) await (await session.acquire(lock)).release();
  await session.close();
  return 2 * cycles;
}

/**
 * Sends `requests` on a new stream of `grpcPath` to `pid`'s node and reads nothing; returns once the node has
 * stopped taking them (or took them all), with how many it took and its memory meanwhile.
 */
async function sendUnread(h2: http2.ClientHttp2Session, grpcPath: string, requests: Uint8Array[], pid: number) {
  const call = new RawGrpcCall(h2, grpcPath);
  const rss = watchRss(pid);
  const sending = call.sendPaced(requests, 500);
  const taken = await settled(() => sending.taken());
  return { call, sending, taken, report: rss.stop() };
}

/** Reads `call` until `count` answers passed `accept`; then ends it, which the node answers OK. */
async function readAll(call: RawGrpcCall, count: number, accept: (bytes: Buffer) => boolean): Promise<void> {
  let answered = 0;
  call.read((bytes) => {
    if (accept(bytes)) answered++;
  });
  await eventually(() => answered === count, 120_000, `all ${count} requests answered once the client reads (${answered} so far)`);
  call.finish();
  expect((await call.ended).status).toBe(grpc.status.OK);
}

describe('slow Pipeline (and KeepAlive) reader: a client that never reads its answers', () => {
  let k: AttackCluster;
  let h2: http2.ClientHttp2Session | undefined;
  beforeAll(async () => {
    k = await startAttackCluster();
  });
  afterAll(async () => {
    h2?.destroy();
    await stopAttackCluster(k);
  });

  it('stops being read from once its answers back up, so the node holds few of them; once it reads, every call is answered', async () => {
    const CALLS = 60_000;
    const view = await stableCluster(k);
    const leader = k.cluster.node(view.leader.id);
    // Each answer carries a copy of a 2 KiB value, as a Get of a real key does.
    const session = await k.client.openSession({ ttlMs: 60_000 });
    const held = await session.acquire('sp-lock');
    await held.write([{ put: 'sp-key', value: Buffer.alloc(2_048, 0x76) }]);
    h2 = await connectHttp2(leader.address, k.certsDir);
    const requests = Array.from({ length: CALLS }, (_, i) =>
      CallRequest.encode(CallRequest.fromObject({ callId: i + 1, get: { key: 'sp-key', staleOk: true } })).finish(),
    );
    const { call, sending, taken, report } = await sendUnread(h2, '/fencelock.v1.Pipeline/Calls', requests, leader.process!.pid!);
    console.info(`${formatRss('slow Pipeline reader', report)}; the node took ${taken} of ${CALLS} calls off the connection`);

    expect(taken, 'the node stopped reading calls from a client that reads no answers').toBeLessThan(CALLS / 2);
    expect(report.growthMiB, formatRss('slow Pipeline reader', report)).toBeLessThan(48);

    await readAll(call, CALLS, (bytes) => {
      const res = CallResponse.toObject(CallResponse.decode(bytes)) as { code?: number; get?: { value?: Uint8Array } };
      return !res.code && res.get?.value?.length === 2_048;
    });
    expect(sending.taken()).toBe(CALLS);
    await held.release();
    await session.close();
  });

  it('a KeepAlive client that never reads its acknowledgements is not read from either', async () => {
    const RENEWALS = 40_000;
    const view = await stableCluster(k);
    const leader = k.cluster.node(view.leader.id);
    h2 ??= await connectHttp2(leader.address, k.certsDir);
    // An unknown session: the leader answers each renewal alive=false, without a log entry.
    const renewals = Array.from({ length: RENEWALS }, (_, i) => KeepAliveRequest.encode({ sessionId: 'e'.repeat(32), renewalId: i + 1 }).finish());
    const { call, taken, report } = await sendUnread(h2, '/fencelock.v1.Session/KeepAlive', renewals, leader.process!.pid!);
    console.info(`${formatRss('KeepAlive reader that never reads', report)}; the node took ${taken} of ${RENEWALS} renewals off the connection`);
    expect(taken, 'the node stopped reading renewals from a client that reads no answers').toBeLessThan(RENEWALS / 2);
    expect(report.growthMiB, formatRss('KeepAlive reader', report)).toBeLessThan(48);
    await readAll(call, RENEWALS, () => true);
  });
});

describe('slow Watch readers: 300 Watch streams that never read', () => {
  let k: AttackCluster;
  const sessions: http2.ClientHttp2Session[] = [];
  beforeAll(async () => {
    k = await startAttackCluster();
  });
  afterAll(async () => {
    for (const s of sessions) s.destroy();
    await stopAttackCluster(k);
  });

  it(`are ended with RESOURCE_EXHAUSTED (WATCH_BEHIND) once ${MAX_WATCH_BACKLOG_EVENTS} events behind; the node holds no more for them, a reader that reads gets every event`, async () => {
    const view = await stableCluster(k);
    const target = k.cluster.node(view.followers[0]!);
    const watch = (session: http2.ClientHttp2Session): RawGrpcCall => {
      const call = new RawGrpcCall(session, '/fencelock.v1.Lock/Watch');
      call.send(WatchRequest.encode({ lock: 'sw-lock' }).finish());
      call.finish();
      return call;
    };
    // 3 connections of 100 streams: the per-connection cap is not what this test is about.
    for (let i = 0; i < 4; i++) sessions.push(await connectHttp2(target.address, k.certsDir));
    const slow = sessions.slice(0, 3).flatMap((s) => Array.from({ length: 100 }, () => watch(s)));
    let seen = 0;
    watch(sessions[3]!).read(() => seen++);
    await sleep(1_000); // every stream is open on the node

    const rss = watchRss(target.process!.pid!);
    const events = await churn(k.client, 'sw-lock', 1_500);
    await eventually(() => seen === events, 30_000, `the reading watcher to see all ${events} events (${seen} so far)`);
    await sleep(500);
    const report = rss.stop();
    console.info(formatRss(`300 Watch streams that never read, ${events} events`, report));

    // Now they read: what was queued for them arrives, then the status.
    const received = slow.map((call) => {
      let n = 0;
      call.read(() => n++);
      return () => n;
    });
    const outcomes = await Promise.all(slow.map((call) => endingWithin(call.ended, 20_000)));
    const stillOpen = outcomes.filter((o) => o === undefined).length;
    console.info(`slow watchers: ${stillOpen} of 300 still open; events received by the first: ${received[0]!()} of ${events}`);
    expect(stillOpen, 'every slow watcher was ended').toBe(0);
    for (const [i, o] of outcomes.entries()) {
      expect(grpc.status[o!.status], o!.details).toBe('RESOURCE_EXHAUSTED');
      expect(o!.details).toMatch(/this watch fell \d+ events behind/);
      expect(o!.details).toMatch(/call Describe .* and Watch again/);
      expect(o!.reason).toBe('WATCH_BEHIND');
      expect(received[i]!(), 'it was ended before it got every event').toBeLessThan(events);
    }
    expect(report.growthMiB, formatRss('slow watchers', report)).toBeLessThan(64);
  });
});

describe('too many streams on one connection', () => {
  let k: AttackCluster;
  const conns: OwnConnection[] = [];
  beforeAll(async () => {
    k = await startAttackCluster();
  });
  afterAll(async () => {
    for (const c of conns) c.close();
    await stopAttackCluster(k);
  });

  it(`the client listener advertises SETTINGS_MAX_CONCURRENT_STREAMS ${MAX_CONCURRENT_STREAMS_PER_CONNECTION}`, async () => {
    const session = await connectHttp2(k.cluster.nodes[0]!.address, k.certsDir);
    try {
      expect(session.remoteSettings.maxConcurrentStreams).toBe(MAX_CONCURRENT_STREAMS_PER_CONNECTION);
    } finally {
      session.close();
    }
  });

  it(`10,000 Watch streams on one connection: ${MAX_WATCHES_PER_CONNECTION} are served, the rest RESOURCE_EXHAUSTED naming the cap; other connections still watch`, async () => {
    const ATTEMPTS = 10_000;
    const view = await stableCluster(k);
    const target = k.cluster.node(view.followers[0]!);
    const conn = ownConnection(target.address);
    const other = ownConnection(target.address);
    conns.push(conn, other);
    const rss = watchRss(target.process!.pid!);
    const got = new Set<number>();
    const streams = Array.from({ length: ATTEMPTS }, (_, i) => {
      const s = conn.watch('ms-lock');
      s.on('data', () => got.add(i));
      return s;
    });
    const refusals: Ending[] = [];
    for (const s of streams) void ending(s).then((e) => refusals.push(e));
    // The refusals come as fast as the node answers 10,000 new streams: wait for them, then for quiet.
    await eventually(() => refusals.length >= ATTEMPTS - MAX_WATCHES_PER_CONNECTION, 60_000, 'the refusals').catch(() => undefined);
    const refused = await settled(() => refusals.length, 1_000);
    let otherSaw = 0;
    other.watch('ms-lock').on('data', () => otherSaw++);
    await sleep(500);
    const started = Date.now();
    const events = await churn(k.client, 'ms-lock', 1);
    const otherServed = await eventually(() => otherSaw === events, 30_000, 'the watcher on another connection to see the events').then(
      () => `after ${Date.now() - started} ms`,
      () => 'not within 30 s',
    );
    await settled(() => got.size, 1_000);
    const report = rss.stop();
    console.info(`${formatRss(`${ATTEMPTS} Watch streams on one connection`, report)}; ${got.size} served, ${refused} refused; a watcher on another connection saw the events ${otherServed}`);
    expect(otherServed, 'a watcher on another connection is served').toMatch(/^after/);

    expect(got.size, 'streams served').toBe(MAX_WATCHES_PER_CONNECTION);
    expect(refused).toBe(ATTEMPTS - MAX_WATCHES_PER_CONNECTION);
    for (const r of refusals) {
      expect(r.code, r.details).toBe('RESOURCE_EXHAUSTED');
      expect(r.details).toContain(`${MAX_WATCHES_PER_CONNECTION} Watch streams`);
    }
    expect(report.growthMiB, formatRss('10,000 watches', report)).toBeLessThan(80);

    // The cap counts open streams: once they end, the connection may watch again.
    for (const s of streams) s.cancel();
    await sleep(500);
    let again = 0;
    conn.watch('ms-lock').on('data', () => again++);
    await sleep(500);
    await churn(k.client, 'ms-lock', 1);
    await eventually(() => again === 2, 10_000, 'a new watch on the same connection, once the others ended');
  });

  it(`Pipeline and KeepAlive streams: ${MAX_PIPELINES_PER_CONNECTION} and ${MAX_KEEPALIVES_PER_CONNECTION} per connection, one more is RESOURCE_EXHAUSTED; another connection has its own`, async () => {
    const view = await stableCluster(k);
    const leader = k.cluster.node(view.leader.id);
    const conn = ownConnection(leader.address);
    const other = ownConnection(leader.address);
    conns.push(conn, other);
    /** Opens a stream and sends one message; resolves with the first answer or the stream's end. */
    const probe = (s: grpc.ClientDuplexStream<Record<string, unknown>, Record<string, unknown>>, msg: Record<string, unknown>): Promise<'answered' | Ending> => {
      const ended = ending(s);
      const answered = new Promise<'answered'>((resolve) => s.once('data', () => resolve('answered')));
      s.write(msg);
      return Promise.race([answered, ended]);
    };
    type Open = () => grpc.ClientDuplexStream<Record<string, unknown>, Record<string, unknown>>;
    /** `cap` streams of a kind are served on one connection, one more is refused naming the cap, another connection is served. */
    const expectCapped = async (open: Open, openElsewhere: Open, msg: Record<string, unknown>, cap: number, name: string): Promise<void> => {
      const streams = Array.from({ length: cap }, open);
      for (const s of streams) expect(await probe(s, msg)).toBe('answered');
      const extra = await probe(open(), msg);
      expect(extra).toMatchObject({ code: 'RESOURCE_EXHAUSTED' });
      expect((extra as Ending).details).toContain(`${cap} ${name}`);
      expect(await probe(openElsewhere(), msg)).toBe('answered');
    };
    await expectCapped(conn.pipeline, other.pipeline, { callId: '1', get: { key: 'mp-key', staleOk: true } }, MAX_PIPELINES_PER_CONNECTION, 'Pipeline streams');
    await expectCapped(conn.keepAlive, other.keepAlive, { sessionId: 'f'.repeat(32), renewalId: '1' }, MAX_KEEPALIVES_PER_CONNECTION, 'KeepAlive streams');
  });
});

describe('huge requests: 8 concurrent 60 MiB requests to the leader of a 3-node cluster', () => {
  let k: AttackCluster;
  beforeAll(async () => {
    k = await startAttackCluster();
  });
  afterAll(async () => {
    await stopAttackCluster(k);
  });

  it('are refused RESOURCE_EXHAUSTED from their 5-byte prefix, before decoding; the leader keeps leadership and its memory', async () => {
    const BYTES = 60 * 1024 * 1024;
    const { before, value } = await underWorkload(k, 'huge-requests', async (view) => {
      const leader = k.cluster.node(view.leader.id);
      const session = await connectHttp2(leader.address, k.certsDir);
      const rss = watchRss(leader.process!.pid!);
      try {
        const outcomes = await Promise.all(Array.from({ length: 8 }, () => new RawGrpcCall(session, '/fencelock.v1.KV/Write').sendAnnounced(BYTES)));
        return { outcomes, report: rss.stop() };
      } finally {
        session.close();
      }
    });
    console.info(`${formatRss('8 concurrent 60 MiB requests', value.report)}; body bytes written per request: ${value.outcomes.map((o) => (o.sentBytes / 2 ** 20).toFixed(0)).join(', ')} MiB`);
    for (const o of value.outcomes) {
      expect(grpc.status[o.status], o.details).toBe('RESOURCE_EXHAUSTED');
      expect(o.details).toContain(`larger than max (${BYTES} vs ${MAX_CLIENT_MESSAGE_BYTES})`);
    }
    await expectLeaderKept(k, before);
    expect(value.report.growthMiB, formatRss('huge requests', value.report)).toBeLessThan(64);
  });
});

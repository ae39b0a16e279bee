// Issue 17 (item 1), end to end over real processes: a retried Write or Release gets the original answer
// (README guarantee 4), and the leader gives it from its dedup table without appending a log entry.
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FenceLockClient, type NodeStatus } from '../../src/client';
import { eventually, LocalCluster } from '../integration/harness';
import { header, rawClient, type RawNodeClient } from '../integration/rawClient';

type Obj = Record<string, unknown>;

let cluster: LocalCluster;
let client: FenceLockClient;
let raw: RawNodeClient[] = [];

async function leaderStatus(): Promise<NodeStatus> {
  return eventually(
    async () => {
      const all = await client.statusAll();
      const leaders = all.flatMap((s) => (s.ok && s.status.role === 'leader' ? [s.status] : []));
      return leaders.length === 1 ? leaders[0] : undefined;
    },
    20_000,
    'a leader',
  );
}

/** The leader once it has applied everything in its log (its own term's no-op included). */
async function settledLeader(): Promise<{ node: RawNodeClient; status: NodeStatus }> {
  const status = await eventually(
    async () => {
      const s = await leaderStatus();
      return s.commit === s.lastIndex && s.applied === s.lastIndex ? s : undefined;
    },
    20_000,
    'a leader that has applied its log',
  );
  return { node: raw.find((r) => r.address === status.address)!, status };
}

/** Log position of the leader, straight from Cluster/Status. */
async function position(node: RawNodeClient): Promise<{ lastIndex: string; commit: string }> {
  const s = await node.call('Cluster', 'Status', {});
  return { lastIndex: String(s.lastIndex), commit: String(s.commit) };
}

async function openSession(r: RawNodeClient): Promise<string> {
  // Long enough that no session expires (an ExpireSession entry) while a test compares log positions.
  const res = await r.call('Session', 'Open', { header: header(), ttlMs: '120000', clientName: 'retries' });
  return res.sessionId as string;
}

async function acquireNow(r: RawNodeClient, lock: string, sessionId: string): Promise<string> {
  const res = await r.call('Lock', 'Acquire', { header: header(), lock, sessionId, waitTimeoutMs: '0' });
  expect(res.acquired).toBe(true);
  return res.token as string;
}

function writeReq(lock: string, sessionId: string, token: string, key: string, value: string): Obj {
  return { header: header('retry-client'), lock, sessionId, token, ops: [{ type: 'PUT', key, value: Buffer.from(value) }] };
}

/** A holder of `lock` with a second session blocked behind it; returns the Release request and the waiter's grant. */
async function handoverSetup(r: RawNodeClient, lock: string): Promise<{ release: Obj; waiterGrant: Promise<Obj>; waiter: string }> {
  const a = await openSession(r);
  const b = await openSession(r);
  const token = await acquireNow(r, lock, a);
  const waiterGrant = r.call('Lock', 'Acquire', { header: header(), lock, sessionId: b, waitTimeoutMs: '20000' }, 25_000);
  await eventually(async () => (((await r.call('Lock', 'Describe', { lock })).waiters as string[]).length === 1 ? true : undefined), 10_000, 'the waiter to queue');
  return { release: { header: header('retry-client'), lock, sessionId: a, token }, waiterGrant, waiter: b };
}

beforeAll(async () => {
  // Snapshots every few entries, so that a restart restores the dedup table from a snapshot.
  cluster = await LocalCluster.create({ snapshotEveryEntries: 8 });
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

describe('retried writes', () => {
  it('a retried Write returns the original index and appends nothing', async () => {
    const { node } = await settledLeader();
    const s = await openSession(node);
    const token = await acquireNow(node, 'retry-w', s);
    const req = writeReq('retry-w', s, token, 'retry-w/k', 'one');
    const first = await node.call('KV', 'Write', req);
    const index = first.index as string;
    expect(BigInt(index)).toBeGreaterThan(0n);
    const before = await position(node);
    for (let i = 0; i < 3; i++) expect(await node.call('KV', 'Write', req)).toEqual({ index });
    expect(await position(node)).toEqual(before);
    const got = await node.call('KV', 'Get', { key: 'retry-w/k' });
    expect(got).toMatchObject({ found: true, token });
    expect(Buffer.from(got.value as Buffer).toString()).toBe('one');
  });

  it('a retried Session.Open and Session.Close return the original answers and append nothing', async () => {
    const { node } = await settledLeader();
    const open = { header: header('retry-client'), ttlMs: '120000', clientName: 'retries' };
    const opened = await node.call('Session', 'Open', open);
    const close = { header: header('retry-client'), sessionId: opened.sessionId };
    const closed = await node.call('Session', 'Close', close);
    const before = await position(node);
    for (let i = 0; i < 3; i++) {
      expect(await node.call('Session', 'Open', open)).toEqual(opened);
      expect(await node.call('Session', 'Close', close)).toEqual(closed);
    }
    expect(await position(node)).toEqual(before);
  });

  it('a request id reused for another kind of request is still refused (REQUEST_ID_REUSED)', async () => {
    const { node } = await settledLeader();
    const s = await openSession(node);
    const token = await acquireNow(node, 'retry-reuse', s);
    const req = writeReq('retry-reuse', s, token, 'retry-reuse/k', 'v');
    await node.call('KV', 'Write', req);
    const err = await node.call('Lock', 'Release', { header: req.header, lock: 'retry-reuse', sessionId: s, token }).then(
      () => undefined,
      (e: grpc.ServiceError) => e,
    );
    expect(err?.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(err?.metadata.get('fencelock-reason')).toEqual(['REQUEST_ID_REUSED']);
  });
});

describe('retried releases', () => {
  it('a retried Release returns the original handover', async () => {
    const { node } = await settledLeader();
    const { release, waiterGrant } = await handoverSetup(node, 'retry-r');
    const first = await node.call('Lock', 'Release', release);
    const grant = await waiterGrant;
    expect(grant.acquired).toBe(true);
    expect(first.nextToken).toBe(grant.token);
    expect(first.nextHolderSession).not.toBe('');
    const before = await position(node);
    expect(await node.call('Lock', 'Release', release)).toEqual(first);
    expect(await node.call('Lock', 'Release', release)).toEqual(first);
    expect(await position(node)).toEqual(before);
  });
});

describe('retries through the Pipeline stream', () => {
  it('a retried Write and Release on the stream get the original answers and append nothing', async () => {
    const { node } = await settledLeader();
    const stream = node.pipelineStream();
    const responses: Obj[] = [];
    stream.on('data', (r: Obj) => responses.push(r));
    stream.on('error', () => undefined);
    try {
      const call = async (callId: string, kind: 'write' | 'release', req: Obj): Promise<Obj> => {
        stream.write({ callId, call: kind, [kind]: req });
        const res = await eventually(() => responses.find((r) => r.callId === callId), 15_000, `the answer to ${callId}`);
        expect(res.code, String(res.message)).toBe(grpc.status.OK);
        return res[kind] as Obj;
      };
      const s = await openSession(node);
      const token = await acquireNow(node, 'retry-p', s);
      const req = writeReq('retry-p', s, token, 'retry-p/k', 'p');
      const first = await call('1', 'write', req);
      const before = await position(node);
      expect(await call('2', 'write', req)).toEqual(first);
      expect(await position(node)).toEqual(before);

      const { release, waiterGrant } = await handoverSetup(node, 'retry-p2');
      const rel = await call('3', 'release', release);
      expect(rel.nextToken).toBe((await waiterGrant).token);
      const before2 = await position(node);
      expect(await call('4', 'release', release)).toEqual(rel);
      expect(await position(node)).toEqual(before2);
    } finally {
      stream.cancel();
    }
  });
});

describe('retries across a restart of every node', () => {
  it('a retried Write and Release return the original answers after every node restarted, and append nothing', async () => {
    const { node } = await settledLeader();
    const s = await openSession(node);
    const token = await acquireNow(node, 'retry-x', s);
    const write = writeReq('retry-x', s, token, 'retry-x/k', 'x');
    const written = await node.call('KV', 'Write', write);
    const { release, waiterGrant } = await handoverSetup(node, 'retry-x2');
    const released = await node.call('Lock', 'Release', release);
    expect(released.nextToken).toBe((await waiterGrant).token);
    // Enough entries after these for a snapshot to cover them.
    for (let i = 0; i < 10; i++) await node.call('KV', 'Write', writeReq('retry-x', s, token, `retry-x/f${i}`, 'f'));

    for (const n of cluster.nodes) await cluster.kill(n.id);
    cluster.startAll();
    const { node: leader } = await settledLeader();
    const before = await position(leader);
    expect(await leader.call('KV', 'Write', write)).toEqual(written);
    expect(await leader.call('Lock', 'Release', release)).toEqual(released);
    expect(await position(leader)).toEqual(before);
  });
});

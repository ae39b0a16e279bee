// Which calls a follower serves itself, and which it answers UNAVAILABLE with the leader's client address
// (README, "gRPC"): checked through generated stubs on a real follower.
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, LocalCluster, testCredentials } from '../integration/harness';
import { listServices } from '../integration/reflection';
import { header, rawClient, type RawNodeClient } from '../integration/rawClient';

let cluster: LocalCluster;
let leader: RawNodeClient;
let follower: RawNodeClient;
let leaderAddress: string;
let sessionId: string;

beforeAll(async () => {
  cluster = await LocalCluster.create();
  cluster.startAll();
  const clients = cluster.nodes.map((n) => rawClient(n.address));
  const roles = await eventually(async () => {
    const st = await Promise.all(clients.map((c) => c.call('Cluster', 'Status', {}).catch(() => undefined)));
    const leaderAt = st.findIndex((s) => s?.role === 'leader');
    const agreed = leaderAt >= 0 && st.every((s) => s?.leader === st[leaderAt]!.id);
    return agreed ? leaderAt : undefined;
  }, 30_000, 'a leader all nodes know');
  leader = clients[roles]!;
  leaderAddress = cluster.nodes[roles]!.address;
  follower = clients[(roles + 1) % clients.length]!;
  for (const c of clients) if (c !== leader && c !== follower) c.close();
  sessionId = (await leader.call('Session', 'Open', { header: header('contract-follower'), ttlMs: '60000' })).sessionId as string;
  const { token } = await leader.call('Lock', 'Acquire', { header: header('contract-follower'), lock: 'contract/f', sessionId, waitTimeoutMs: '0' });
  await leader.call('KV', 'Write', { header: header('contract-follower'), lock: 'contract/f', token, sessionId, ops: [{ type: 'PUT', key: 'contract/f/k', value: Buffer.from('v') }] });
});

afterAll(async () => {
  leader?.close();
  follower?.close();
  await cluster?.destroy();
});

async function notLeader(p: Promise<unknown>): Promise<void> {
  try {
    await p;
  } catch (err) {
    const e = err as grpc.ServiceError;
    expect(e.code).toBe(grpc.status.UNAVAILABLE);
    expect(e.metadata.get('fencelock-leader')).toEqual([leaderAddress]);
    return;
  }
  throw new Error('the follower served the call');
}

describe('a follower', () => {
  it('serves Cluster/Status, health and reflection itself', async () => {
    const st = await follower.call('Cluster', 'Status', {});
    expect(st.role).toBe('follower');
    expect(st.leaderAddress).toBe(leaderAddress);
    expect(await listServices(follower.address)).toContain('fencelock.v1.Lock');
  });

  it('serves KV/Get with stale_ok from its own state', async () => {
    await eventually(async () => (await follower.call('KV', 'Get', { key: 'contract/f/k', staleOk: true })).found === true, 10_000, 'the write applied on the follower');
  });

  it('serves Lock/Watch itself', async () => {
    const client = new grpc.Client(follower.address, testCredentials());
    const stream = client.makeServerStreamRequest(
      '/fencelock.v1.Lock/Watch', (b: Buffer) => b, (b: Buffer) => b, Buffer.from([0x0a, 0x01, 0x78]), // { lock: "x" }
    );
    const first = await new Promise<string>((resolve) => {
      stream.on('data', () => resolve('data'));
      stream.on('error', (e: grpc.ServiceError) => resolve(`error ${e.code}`));
      setTimeout(() => resolve('open'), 1_000);
    });
    stream.cancel();
    client.close();
    expect(first).not.toMatch(/^error/);
  });

  it('answers every other call UNAVAILABLE with the leader\'s client address', async () => {
    const h = (): object => header('contract-follower');
    await notLeader(follower.call('Session', 'Open', { header: h(), ttlMs: '60000' }));
    await notLeader(follower.call('Session', 'Close', { header: h(), sessionId }));
    await notLeader(follower.call('Lock', 'Acquire', { header: h(), lock: 'contract/g', sessionId, waitTimeoutMs: '0' }));
    await notLeader(follower.call('Lock', 'Release', { header: h(), lock: 'contract/f', sessionId, token: '1' }));
    await notLeader(follower.call('Lock', 'Describe', { lock: 'contract/f' }));
    await notLeader(follower.call('KV', 'Write', { header: h(), lock: 'contract/f', token: '1', sessionId, ops: [{ type: 'PUT', key: 'contract/f/k', value: Buffer.from('w') }] }));
    await notLeader(follower.call('KV', 'Get', { key: 'contract/f/k' }));
    await notLeader(follower.call('KV', 'List', { prefix: 'contract/' }));
  });
});

// The TLS framing carrier (peerCarrier: "tls") end to end: three real node processes whose Raft traffic runs
// as length-prefixed frames over mutual TLS, electing a leader, committing fenced writes, failing over when
// the leader is SIGKILLed and catching the restarted node up. The gRPC carrier is covered by every other
// integration test.
import { afterEach, describe, expect, it } from 'vitest';
import { FenceLockClient, type NodeStatus } from '../../src/client';
import { eventually, LocalCluster } from './harness';

let cluster: LocalCluster | undefined;
let client: FenceLockClient | undefined;

afterEach(async () => {
  await client?.close().catch(() => undefined);
  await cluster?.destroy();
  client = undefined;
  cluster = undefined;
});

async function agreedLeader(c: FenceLockClient, among: string[]): Promise<NodeStatus> {
  return eventually(
    async () => {
      const st = (await c.statusAll()).flatMap((s) => (s.ok && among.includes(s.status.id) ? [s.status] : []));
      const leaders = st.filter((s) => s.role === 'leader');
      if (st.length !== among.length || leaders.length !== 1) return undefined;
      return st.every((s) => s.leader === leaders[0].id) ? leaders[0] : undefined;
    },
    20_000,
    'one agreed leader',
  );
}

describe('three nodes on the TLS framing carrier', () => {
  it('commit fenced writes, fail over after a SIGKILL of the leader, and catch the restarted node up', async () => {
    cluster = await LocalCluster.create({ peerCarrier: 'tls' });
    cluster.startAll();
    client = new FenceLockClient({ endpoints: cluster.endpoints });
    const ids = cluster.nodes.map((n) => n.id);
    const first = await agreedLeader(client, ids);
    await client.withLock('carrier-lock', async (_token, lock) => {
      for (let i = 0; i < 10; i++) await lock.write([{ put: `carrier/${i}`, value: `v${i}` }]);
    }, { ttlMs: 10_000 });

    await cluster.kill(first.id);
    const survivors = ids.filter((id) => id !== first.id);
    const second = await agreedLeader(client, survivors);
    expect(second.id).not.toBe(first.id);
    await client.withLock('carrier-lock', async (_token, lock) => lock.write([{ put: 'carrier/after', value: 'x' }]), { ttlMs: 10_000 });

    cluster.start(first.id);
    const back = await eventually(async () => {
      const st = (await client!.statusAll()).flatMap((s) => (s.ok ? [s.status] : []));
      const restarted = st.find((s) => s.id === first.id);
      const leader = st.find((s) => s.role === 'leader');
      return restarted && leader && restarted.commit >= leader.commit && restarted.leader === leader.id ? restarted : undefined;
    }, 20_000, 'the restarted node follows and has caught up');
    expect(back.role).toBe('follower');
    for (let i = 0; i < 10; i++) expect(new TextDecoder().decode((await client.get(`carrier/${i}`)).value)).toBe(`v${i}`);
  });
});

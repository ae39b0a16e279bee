// Each peer carrier end to end: three real node processes electing a leader, committing fenced writes,
// failing over when the leader is SIGKILLed and catching the restarted node up. The TLS framing carrier
// (the default; every other integration test runs it too) over mutual TLS and, without certificates, over
// plain TCP on loopback; the gRPC carrier, still selectable. And that the default peer listener does speak
// frames.
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import * as tls from 'node:tls';
import { afterEach, describe, expect, it } from 'vitest';
import { FenceLockClient, type NodeStatus } from '../../src/client';
import { deriveClusterId } from '../../src/node/config';
import { encodeFrame, FrameKind, FrameReader, MAX_CONTROL_FRAME_BYTES, type Frame } from '../../src/transport/frames';
import { eventually, LocalCluster, type ClusterOptions } from './harness';

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

/** The first frame a node's peer listener answers a member's HELLO with. */
async function answerToHello(c: LocalCluster, as: string): Promise<Frame> {
  const dir = c.certsDir!;
  const [host, port] = c.nodes[0]!.peerAddress.split(':');
  const file = (name: string): Buffer => readFileSync(path.join(dir, name));
  const clusterId = deriveClusterId(Object.fromEntries(c.nodes.map((n) => [n.id, { client: n.address, peer: n.peerAddress }])));
  const socket = tls.connect({ host, port: Number(port), ca: file('ca.pem'), cert: file(`${as}.pem`), key: file(`${as}-key.pem`) });
  socket.write(encodeFrame(FrameKind.Hello, Buffer.from(JSON.stringify({ clusterId, nodeId: as, address: '' }))));
  const reader = new FrameReader(MAX_CONTROL_FRAME_BYTES);
  try {
    return await new Promise<Frame>((resolve, reject) => {
      socket.on('data', (chunk: Buffer) => {
        const first = reader.push(chunk)[0];
        if (first) resolve(first);
      });
      socket.once('error', reject);
      socket.once('close', () => reject(new Error('closed without an answer')));
    });
  } finally {
    socket.destroy();
  }
}

describe('the default peer carrier', () => {
  it('is the TLS framing carrier: a member\'s HELLO on the peer listener is answered with ACCEPT', async () => {
    cluster = await LocalCluster.create();
    cluster.startAll();
    // The node may not listen yet: asked again until it answers at all.
    const answer = await eventually(() => answerToHello(cluster!, 'n2').catch(() => undefined), 20_000, 'an answer on n1\'s peer listener');
    expect(answer.kind).toBe(FrameKind.Accept);
  });
});

const carriers: Array<{ name: string; opts: ClusterOptions }> = [
  { name: 'the TLS framing carrier over mutual TLS', opts: { peerCarrier: 'tls' } },
  { name: 'the TLS framing carrier over plain TCP (insecure, loopback)', opts: { peerCarrier: 'tls', tls: false } },
  { name: 'the gRPC carrier', opts: { peerCarrier: 'grpc' } },
];

describe.each(carriers)('three nodes on $name', ({ opts }) => {
  it('commit fenced writes, fail over after a SIGKILL of the leader, and catch the restarted node up', async () => {
    cluster = await LocalCluster.create(opts);
    cluster.startAll();
    client = new FenceLockClient({ endpoints: cluster.endpoints, insecure: opts.tls === false });
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

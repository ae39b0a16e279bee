// A removed member attacks with its own, still valid certificate (docs/membership.md, rule 4): it dials every
// remaining node's peer listener in the carrier the cluster runs, claiming itself and sending a heartbeat at
// a far higher term. Each node refuses the stream with the removal notice before reading a frame, no term
// moves, and the remaining members keep granting locks.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FenceLockClient } from '../../src/client';
import { deriveClusterId } from '../../src/node/config';
import { MessageType } from '../../src/raft/types';
import { eventually, LocalCluster } from '../integration/harness';
import { credentialsFrom, msg, PEER_CARRIERS, sendForged } from './forge';

describe.each(PEER_CARRIERS)('peerCarrier "%s": a removed member dials in', (carrier) => {
  let cluster: LocalCluster;
  let client: FenceLockClient;

  beforeAll(async () => {
    cluster = await LocalCluster.create({ peerCarrier: carrier });
    cluster.startAll();
    client = new FenceLockClient({ endpoints: cluster.endpoints.slice(0, 2), requestTimeoutMs: 2_000, totalTimeoutMs: 15_000 });
  }, 60_000);

  afterAll(async () => {
    await client?.close().catch(() => undefined);
    await cluster?.destroy();
  });

  it('with its own certificate: refused with the removal notice, its forged term moves nothing, the rest grant locks', async () => {
    await cluster.kill('n3');
    await eventually(async () => {
      const leader = (await client.status().catch(() => undefined))?.leader;
      return leader === 'n1' || leader === 'n2' ? true : undefined;
    }, 30_000, 'a leader among n1 and n2');
    await eventually(async () => ((await client.members.remove('n3').catch(() => undefined)) ? true : undefined), 30_000, 'n3 removed');
    // The cluster id is fixed at creation, from the first members (n3 among them).
    const clusterId = deriveClusterId(Object.fromEntries(cluster.nodes.map((n) => [n.id, { client: n.address, peer: n.peerAddress }])));
    // The removal is committed on the leader; each target refuses n3 once it has applied it too.
    const removedAt = (await client.status()).commit;
    await eventually(async () => {
      const all = await client.statusAll();
      return all.every((s) => s.ok && s.status.applied >= removedAt) ? true : undefined;
    }, 30_000, 'n1 and n2 applied the removal');
    const termBefore = (await client.status()).term;
    for (const target of ['n1', 'n2']) {
      const node = cluster.node(target);
      const forged = [[msg({ type: MessageType.Heartbeat, from: 'n3', to: target, term: Number(termBefore) + 1_000 })]];
      const r = await sendForged(carrier, node.peerAddress, credentialsFrom(cluster.certsDir!, 'n3'), clusterId, forged, { claimedId: 'n3' });
      expect(r.admitted, `${target}: ${r.details}`).toBe(false);
      expect(r.outcome, `${target}: ${r.details}`).toBe('removed');
    }
    const holder = await client.openSession({ ttlMs: 10_000 });
    expect((await holder.acquire('after-removed-member')).token).toBeGreaterThan(0n);
    await holder.close();
    for (const s of await client.statusAll()) {
      expect(s.ok && s.status.term, 'no term moved').toBe(termBefore);
    }
  }, 90_000);
});

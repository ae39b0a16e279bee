// A node binds one address and is reached by another (members[id].client): Status and the leader hints of
// followers give the advertised one. Here nodes bind 127.0.0.1 and advertise localhost, a second spelling
// of the same address, as a real deployment binds 0.0.0.0 and advertises its host name.
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import type * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, LocalCluster, PROJECT_ROOT, runNode } from './harness';
import { header, rawClient, type RawNodeClient } from './rawClient';

const CLI_MAIN = path.join(PROJECT_ROOT, 'dist/src/cli/main.js');

/** localhost:PORT for 127.0.0.1:PORT. */
const advertised = (bind: string): string => bind.replace(/^127\.0\.0\.1:/, 'localhost:');

describe('advertised addresses', () => {
  let cluster: LocalCluster;
  const clients: RawNodeClient[] = [];

  beforeAll(async () => {
    cluster = await LocalCluster.create({ size: 3 });
    // Every config keeps binding 127.0.0.1 (`listen`) and advertises localhost to clients.
    for (const n of cluster.nodes) {
      const config = JSON.parse(readFileSync(n.configFile, 'utf8')) as { listen: string; members: Record<string, { client: string }> };
      for (const m of Object.values(config.members)) m.client = advertised(m.client);
      expect(config.listen).toBe(n.address);
      writeFileSync(n.configFile, JSON.stringify(config, null, 2));
    }
    cluster.startAll();
    for (const n of cluster.nodes) clients.push(rawClient(n.address));
  });

  afterAll(async () => {
    for (const c of clients) c.close();
    await cluster?.destroy();
  });

  const status = (c: RawNodeClient): Promise<Record<string, unknown>> => c.call('Cluster', 'Status', {});

  it('Status reports the advertised address of the node, its peers and its leader', async () => {
    const leaderId = await eventually(async () => {
      const all = await Promise.all(clients.map(status));
      const leaders = new Set(all.map((s) => s.leader));
      return leaders.size === 1 && all[0]!.leader ? (all[0]!.leader as string) : undefined;
    }, 30_000, 'every node to know one leader');
    const leaderAdvertised = advertised(cluster.node(leaderId).address);
    for (const [i, c] of clients.entries()) {
      const s = await status(c);
      const self = cluster.nodes[i]!;
      expect(s.id).toBe(self.id);
      expect(s.address).toBe(advertised(self.address));
      expect(s.address).not.toBe(self.address);
      expect(s.leaderAddress).toBe(leaderAdvertised);
      for (const p of s.peers as Array<{ id: string; address: string }>) expect(p.address).toBe(advertised(cluster.node(p.id).address));
    }
  });

  it('a follower refuses a mutation with the leader hint at its advertised address', async () => {
    const all = await Promise.all(clients.map(status));
    const follower = clients[all.findIndex((s) => s.role !== 'leader')]!;
    const leaderAdvertised = advertised(cluster.node(all[0]!.leader as string).address);
    const err = (await follower.call('Session', 'Open', { header: header(), ttlMs: 10_000, clientName: 'it' }).then(
      () => undefined,
      (e: grpc.ServiceError) => e,
    ))!;
    expect(err, 'a follower answered Session.Open').toBeDefined();
    expect(err.metadata.get('fencelock-leader')).toEqual([leaderAdvertised]);
    expect(err.message).toContain(`retry at ${leaderAdvertised}`);
  });

  it('`fencelock status` dialled at the bind address shows the advertised one', async () => {
    const endpoints = cluster.endpoints.join(',');
    const r = await runNode([CLI_MAIN, '--endpoints', endpoints, '--json', 'status'], { timeoutMs: 30_000 });
    expect(r.code, r.stderr).toBe(0);
    const rows = JSON.parse(r.stdout) as Array<{ endpoint: string; address: string; ok: boolean }>;
    expect(rows.map((row) => [row.endpoint, row.address])).toEqual(cluster.nodes.map((n) => [n.address, advertised(n.address)]));
  });
});

// Session ids are bearer secrets and the Raft log holds them: a node's data folder is its own user's alone.
import { readdirSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, LocalCluster } from '../integration/harness';
import { rawClient } from '../integration/rawClient';

describe('secrets at rest', () => {
  let cluster: LocalCluster;
  beforeAll(async () => {
    cluster = await LocalCluster.create({ size: 1 });
    cluster.startAll();
    const raw = rawClient(cluster.endpoints[0]);
    try {
      await eventually(async () => (await raw.call('Cluster', 'Status', {})).role === 'leader', 30_000, 'a leader');
      await raw.call('Session', 'Open', { header: { clientId: 'rest', requestId: '1' }, ttlMs: '60000' });
    } finally {
      raw.close();
    }
  });
  afterAll(async () => cluster?.destroy());

  it('the data folder is 0700 and every file the node wrote is 0600', () => {
    const dataDir = path.join(cluster.dir, 'data', 'n1');
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    const files = readdirSync(dataDir);
    expect(files).toContain('CURRENT');
    for (const f of files) expect(`${f} ${(statSync(path.join(dataDir, f)).mode & 0o777).toString(8)}`).toBe(`${f} 600`);
  });
});

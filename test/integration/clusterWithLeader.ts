// The set-up most integration files share: a started cluster and a client, once some node says it leads.
import { FenceLockClient } from '../../src/client';
import { eventually, LocalCluster, type ClusterOptions } from './harness';

export interface ClusterWithClient {
  cluster: LocalCluster;
  client: FenceLockClient;
}

/** Creates and starts a cluster, and resolves once a client sees a leader (within `leaderWithinMs`). */
export async function clusterWithLeader(opts: ClusterOptions = {}, leaderWithinMs = 30_000): Promise<ClusterWithClient> {
  const cluster = await LocalCluster.create(opts);
  cluster.startAll();
  const client = new FenceLockClient({ endpoints: cluster.endpoints });
  await eventually(async () => ((await client.statusAll()).some((s) => s.ok && s.status.role === 'leader') ? true : undefined), leaderWithinMs, 'a leader');
  return { cluster, client };
}

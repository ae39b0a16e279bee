// Membership changes a real leader must refuse, over a real TLS connection to a node process: nothing is
// proposed (the commit index stays) and the member list is as before.
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { META_REASON } from '../../src/protocol/metadata';
import { eventually, freePorts, LocalCluster } from './harness';
import { rawClient, type RawNodeClient } from './rawClient';

let cluster: LocalCluster;
let leader: RawNodeClient;

beforeAll(async () => {
  cluster = await LocalCluster.create({ size: 1 });
  cluster.startAll();
  leader = rawClient(cluster.endpoints[0]);
  // A change is refused until the leader has committed an entry of its own term: wait for that first.
  await eventually(async () => (await leader.call('Cluster', 'MemberList', {})).commit !== '0' || undefined, 30_000, 'a commit');
}, 60_000);

afterAll(async () => {
  leader?.close();
  await cluster?.destroy();
});

async function membersNow(): Promise<{ commit: string; members: string }> {
  const list = await leader.call('Cluster', 'MemberList', {});
  return { commit: String(list.commit), members: JSON.stringify(list.members) };
}

async function refusal(p: Promise<unknown>): Promise<grpc.ServiceError> {
  try {
    await p;
  } catch (err) {
    return err as grpc.ServiceError;
  }
  throw new Error('the change was made');
}

describe('MemberPromote', () => {
  // Regression: the leader promoted a learner whose node never started (it holds nothing), because the log
  // was shorter than the 1,000 entries a learner may lag; as a voter it would count towards every quorum.
  it('refuses a learner whose node never started: FAILED_PRECONDITION LEARNER_BEHIND naming its peer address', async () => {
    const [clientPort, peerPort] = await freePorts(2);
    const peer = `127.0.0.1:${peerPort}`;
    await leader.call('Cluster', 'MemberAdd', { id: 'ghost', clientAddress: `127.0.0.1:${clientPort}`, peerAddress: peer });
    const before = await membersNow();
    expect(Number(before.commit)).toBeLessThan(1_000);
    const err = await refusal(leader.call('Cluster', 'MemberPromote', { id: 'ghost' }));
    expect(err.code).toBe(grpc.status.FAILED_PRECONDITION);
    expect(err.metadata.get(META_REASON)).toEqual(['LEARNER_BEHIND']);
    expect(err.details).toBe(
      `learner ghost has not answered this leader within an election timeout (it holds 0 of ${before.commit} committed entries): ` +
        `is its node running, and can the leader reach its peer address ${peer}? Promote it once it has caught up`,
    );
    expect(await membersNow()).toEqual(before);
    await leader.call('Cluster', 'MemberRemove', { id: 'ghost' });
  });
});

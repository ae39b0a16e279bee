// Membership changes a real leader must refuse, over a real TLS connection to a node process: nothing is
// proposed (the commit index stays) and the member list is as before.
import * as grpc from '@grpc/grpc-js';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { META_REASON } from '../../src/protocol/metadata';
import { eventually, freePorts, LocalCluster, runNode } from './harness';
import { membershipNow, rawClient, type RawNodeClient } from './rawClient';

const CLI = path.join(__dirname, '../../dist/src/cli/main.js');

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
    const before = await membershipNow(leader);
    expect(Number(before.commit)).toBeLessThan(1_000);
    const err = await refusal(leader.call('Cluster', 'MemberPromote', { id: 'ghost' }));
    expect(err.code).toBe(grpc.status.FAILED_PRECONDITION);
    expect(err.metadata.get(META_REASON)).toEqual(['LEARNER_BEHIND']);
    expect(err.details).toBe(
      `learner ghost has not answered this leader within an election timeout (it holds 0 of ${before.commit} committed entries): ` +
        `is its node running, and can the leader reach its peer address ${peer}? Promote it once it has caught up`,
    );
    expect(await membershipNow(leader)).toEqual(before);
    await leader.call('Cluster', 'MemberRemove', { id: 'ghost' });
  });
});

describe('MemberAdd of an address a member already has, spelt another way', () => {
  const port = (hostPort: string): string => hostPort.slice(hostPort.lastIndexOf(':') + 1);

  // Regression: only the case of a host name was ignored, so n1 at 127.0.0.1 could be added again as
  // localhost or [::1]: one machine with two votes.
  it('fencelock member add refuses localhost for a member at 127.0.0.1, naming it; nothing changes', async () => {
    const n1 = cluster.node('n1');
    const [freePort] = await freePorts(1);
    const before = await membershipNow(leader);
    const res = await runNode([CLI, '--endpoints', cluster.endpoints.join(','), 'member', 'add', 'twin', '--client', `localhost:${port(n1.address)}`, '--peer', `127.0.0.1:${freePort}`]);
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain(`client_address: localhost:${port(n1.address)} is the client address of member n1 (given as ${n1.address}); a new member needs addresses of its own`);
    expect(await membershipNow(leader)).toEqual(before);
  });

  it('refuses [::1] and 127.1 for a member at 127.0.0.1 with FAILED_PRECONDITION MEMBERSHIP_REFUSED', async () => {
    const n1 = cluster.node('n1');
    const [a, b] = await freePorts(2);
    const before = await membershipNow(leader);
    for (const [field, req] of [
      ['peer_address', { id: 'twin', clientAddress: `127.0.0.1:${a}`, peerAddress: `[::1]:${port(n1.peerAddress)}` }],
      ['client_address', { id: 'twin', clientAddress: `127.1:${port(n1.address)}`, peerAddress: `127.0.0.1:${b}` }],
    ] as const) {
      const err = await refusal(leader.call('Cluster', 'MemberAdd', req));
      expect(err.code).toBe(grpc.status.FAILED_PRECONDITION);
      expect(err.metadata.get(META_REASON)).toEqual(['MEMBERSHIP_REFUSED']);
      expect(err.details).toMatch(new RegExp(`^${field}: .* is the (peer|client) address of member n1 \\(given as 127\\.0\\.0\\.1:\\d+\\)`));
    }
    expect(await membershipNow(leader)).toEqual(before);
  });

  it('refuses a client address that is the peer address, spelt another way, as INVALID_ARGUMENT', async () => {
    const [a] = await freePorts(1);
    const err = await refusal(leader.call('Cluster', 'MemberAdd', { id: 'twin', clientAddress: `localhost:${a}`, peerAddress: `127.0.0.1:${a}` }));
    expect(err.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(err.details).toMatch(/^peer_address: is the client address too/);
  });
});

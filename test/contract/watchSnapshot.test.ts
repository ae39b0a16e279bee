// A Watch stream never goes quiet over events it cannot send (README, "gRPC": Lock/Watch on a follower). A
// follower that fell behind the leader's compacted log installs a snapshot: the entries it covers are never
// applied there, so their lock events cannot reach its watchers. Their streams end with ABORTED, reason
// EVENTS_MISSED, naming the log index, instead of staying open and silent. Over real node processes.
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { methods } from '../../src/client/proto';
import type { LockEvent__Output } from '../../src/protocol/generated/fencelock/v1/LockEvent';
import { eventually, LocalCluster, testCredentials } from '../integration/harness';
import { header, rawClient, type RawNodeClient } from '../integration/rawClient';

const LOCK = 'contract/watch-snapshot';

let cluster: LocalCluster;
let clients: RawNodeClient[] = [];
let watchClient: grpc.Client | undefined;

beforeAll(async () => {
  // A snapshot (and a compacted log) every 8 applied entries: a follower paused for a few grants falls
  // behind the leader's first log index and can only catch up from a snapshot.
  cluster = await LocalCluster.create({ snapshotEveryEntries: 8 });
  cluster.startAll();
  clients = cluster.nodes.map((n) => rawClient(n.address));
});

afterAll(async () => {
  watchClient?.close();
  for (const c of clients) c.close();
  await cluster?.destroy();
});

/** The leader, once every node names it and it has applied its log. */
async function settledLeader(): Promise<number> {
  return eventually(
    async () => {
      const st = await Promise.all(clients.map((c) => c.call('Cluster', 'Status', {}).catch(() => undefined)));
      const at = st.findIndex((s) => s?.role === 'leader');
      if (at < 0 || !st.every((s) => s?.leader === st[at]!.id)) return undefined;
      const l = st[at]!;
      return l.commit === l.lastIndex && l.applied === l.lastIndex ? at : undefined;
    },
    30_000,
    'a settled leader all nodes know',
  );
}

/** A raw Watch stream on one node, recording what it delivers and how it ends. */
function watch(address: string): { events: LockEvent__Output[]; ended: Promise<grpc.ServiceError | 'end'>; cancel: () => void } {
  watchClient ??= new grpc.Client(address, testCredentials());
  const m = methods().Lock.Watch;
  const call = watchClient.makeServerStreamRequest(m.path, m.serialize, m.deserialize, { lock: LOCK }, new grpc.Metadata(), {});
  const events: LockEvent__Output[] = [];
  call.on('data', (ev: LockEvent__Output) => events.push(ev));
  const ended = new Promise<grpc.ServiceError | 'end'>((resolve) => {
    call.on('error', (err: grpc.ServiceError) => resolve(err));
    call.on('end', () => resolve('end'));
  });
  return { events, ended, cancel: () => call.cancel() };
}

/** One grant and release of LOCK on the leader; returns the grant's token. */
async function grantAndRelease(leader: RawNodeClient, sessionId: string): Promise<string> {
  const { acquired, token } = await leader.call('Lock', 'Acquire', { header: header('watch-snapshot'), lock: LOCK, sessionId, waitTimeoutMs: '0' });
  expect(acquired).toBe(true);
  await leader.call('Lock', 'Release', { header: header('watch-snapshot'), lock: LOCK, sessionId, token });
  return token as string;
}

describe('Watch on a follower that installs a snapshot', () => {
  it('ends with ABORTED EVENTS_MISSED naming the log index, rather than staying open and silent', async () => {
    const leaderAt = await settledLeader();
    const leader = clients[leaderAt]!;
    const followerAt = (leaderAt + 1) % clients.length;
    const follower = cluster.nodes[followerAt]!;
    const sessionId = (await leader.call('Session', 'Open', { header: header('watch-snapshot'), ttlMs: '120000' })).sessionId as string;

    // The follower's stream works: it delivers a grant made on the leader.
    const w = watch(follower.address);
    await new Promise((r) => setTimeout(r, 300)); // the stream is registered on the node
    const before = await grantAndRelease(leader, sessionId);
    await eventually(() => w.events.some((e) => e.kind === 'GRANTED' && e.token === before), 10_000, 'the follower to deliver the first grant');
    const seenUpTo = Math.max(...w.events.map((e) => Number(e.index)));

    // Paused, the follower misses grants until the leader's log starts after the last entry it sent there
    // (it pipelines appends into the paused node's socket up to a window): it can only catch up from a snapshot.
    cluster.pause(follower.id);
    const missed: string[] = [];
    try {
      for (let i = 0; ; i++) {
        expect(i, 'grants before the leader compacted past the paused follower').toBeLessThan(500);
        missed.push(await grantAndRelease(leader, sessionId));
        const st = await leader.call('Cluster', 'Status', {});
        const peer = (st.peers as Array<{ id: string; next: string }>).find((p) => p.id === follower.id)!;
        if (Number(st.snapshotIndex) >= Number(peer.next)) break;
      }
    } finally {
      cluster.resume(follower.id);
    }

    // Resumed, it catches up from a snapshot; the stream must say it lost events.
    const timeout = new Promise<'still open'>((r) => setTimeout(() => r('still open'), 30_000));
    const outcome = await Promise.race([w.ended, timeout]);
    expect(outcome).not.toBe('still open');
    expect(outcome).not.toBe('end');
    const err = outcome as grpc.ServiceError;
    expect(grpc.status[err.code]).toBe('ABORTED');
    expect(err.metadata.get('fencelock-reason')).toEqual(['EVENTS_MISSED']);
    expect(err.details).toMatch(/snapshot from the leader/);
    expect(err.details).toMatch(/call Describe/);
    const upTo = Number(/up to log index (\d+)/.exec(err.details)?.[1]);
    expect(upTo).toBeGreaterThan(seenUpTo);
    // Grants made while it was paused, up to the index the error names, that never came through: the snapshot
    // really swallowed events, and the stream said so. (Later ones come after the stream's end.)
    const lost = missed.map(Number).filter((t) => t <= upTo && !w.events.some((e) => e.kind === 'GRANTED' && Number(e.token) === t));
    expect(lost.length).toBeGreaterThan(0);
    const fst = await clients[followerAt]!.call('Cluster', 'Status', {});
    expect(Number(fst.snapshotIndex)).toBeGreaterThanOrEqual(upTo);

    // Watching again on the same follower serves what follows.
    const again = watch(follower.address);
    await new Promise((r) => setTimeout(r, 300));
    const after = await grantAndRelease(leader, sessionId);
    await eventually(() => again.events.some((e) => e.kind === 'GRANTED' && e.token === after), 10_000, 'the new stream to deliver the next grant');
    again.cancel();
  });
});

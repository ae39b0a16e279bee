// Issue 2 end to end: real node processes, real gRPC, real LevelDB with fsync.
import { afterEach, describe, expect, it } from 'vitest';
import { FenceLockClient, type NodeStatus } from '../../src/client';
import { CONFIG_DEFAULTS } from '../../src/node/config';
import { eventually, LocalCluster } from './harness';

// The harness leaves both knobs at the node's defaults.
const ELECTION_TIMEOUT_MS = CONFIG_DEFAULTS.tickMs * CONFIG_DEFAULTS.electionTicks;

let cluster: LocalCluster | undefined;
let client: FenceLockClient | undefined;

afterEach(async () => {
  await client?.close().catch(() => undefined);
  await cluster?.destroy();
  client = undefined;
  cluster = undefined;
});

async function statuses(c: FenceLockClient, ids?: string[]): Promise<NodeStatus[]> {
  const all = await c.statusAll();
  return all.flatMap((s) => (s.ok && (!ids || ids.includes(s.status.id)) ? [s.status] : []));
}

async function waitLeader(c: FenceLockClient, among?: string[]): Promise<NodeStatus> {
  return eventually(
    async () => {
      const st = await statuses(c, among);
      if (st.length !== (among?.length ?? cluster!.nodes.length)) return undefined;
      const leaders = st.filter((s) => s.role === 'leader');
      // Every reachable node of the group must agree on the leader, at the leader's term.
      if (leaders.length !== 1) return undefined;
      return st.every((s) => s.leader === leaders[0].id) ? leaders[0] : undefined;
    },
    15_000,
    'one agreed leader',
  );
}

/** Commits `count` entries: fenced writes under one lock. */
async function commitWrites(c: FenceLockClient, prefix: string, count: number): Promise<void> {
  await c.withLock(`${prefix}-lock`, async (_token, lock) => {
    for (let i = 0; i < count; i++) await lock.write([{ put: `${prefix}/${i}`, value: `v${i}` }]);
  }, { ttlMs: 10_000 });
}

describe('three real nodes', () => {
  it('elect exactly one leader that all nodes agree on', async () => {
    cluster = await LocalCluster.create();
    cluster.startAll();
    client = new FenceLockClient({ endpoints: cluster.endpoints });
    const leader = await waitLeader(client);
    const st = await statuses(client);
    expect(st).toHaveLength(3);
    expect(st.filter((s) => s.role === 'leader').map((s) => s.id)).toEqual([leader.id]);
    expect(new Set(st.map((s) => String(s.term)))).toEqual(new Set([String(leader.term)]));
  });

  it('elect a new leader within a few election timeouts after the leader is SIGKILLed, keeping committed entries', async () => {
    cluster = await LocalCluster.create();
    cluster.startAll();
    client = new FenceLockClient({ endpoints: cluster.endpoints });
    const first = await waitLeader(client);
    await commitWrites(client, 'before-kill', 20);
    await cluster.kill(first.id);
    const killedAt = Date.now();
    const survivors = cluster.nodes.map((n) => n.id).filter((id) => id !== first.id);
    const second = await waitLeader(client, survivors);
    const failoverMs = Date.now() - killedAt;
    expect(second.id).not.toBe(first.id);
    expect(second.term).toBeGreaterThan(first.term);
    expect(failoverMs).toBeLessThan(8 * ELECTION_TIMEOUT_MS);
    for (let i = 0; i < 20; i++) expect(new TextDecoder().decode((await client.get(`before-kill/${i}`)).value)).toBe(`v${i}`);
  });

  it('keep every committed entry across a SIGKILL of all three nodes and a restart', async () => {
    cluster = await LocalCluster.create();
    cluster.startAll();
    client = new FenceLockClient({ endpoints: cluster.endpoints });
    await waitLeader(client);
    await commitWrites(client, 'durable', 50);
    const before = await statuses(client);
    const commitBefore = before.reduce((m, s) => (s.commit > m ? s.commit : m), 0n);
    await Promise.all(cluster.nodes.map((n) => cluster!.kill(n.id)));
    cluster.startAll();
    await waitLeader(client);
    for (let i = 0; i < 50; i++) expect(new TextDecoder().decode((await client.get(`durable/${i}`)).value)).toBe(`v${i}`);
    const after = await statuses(client);
    for (const s of after) expect(s.commit).toBeGreaterThanOrEqual(commitBefore);
  });

  it('replace a SIGSTOPped leader; once resumed it steps down, loses nothing and catches up', async () => {
    cluster = await LocalCluster.create();
    cluster.startAll();
    client = new FenceLockClient({ endpoints: cluster.endpoints });
    const first = await waitLeader(client);
    await commitWrites(client, 'paused', 10);
    cluster.pause(first.id);
    const survivors = cluster.nodes.map((n) => n.id).filter((id) => id !== first.id);
    const second = await waitLeader(client, survivors);
    expect(second.id).not.toBe(first.id);
    await commitWrites(client, 'while-paused', 10);
    cluster.resume(first.id);
    await eventually(
      async () => {
        const st = await statuses(client!);
        const old = st.find((s) => s.id === first.id);
        const lead = st.find((s) => s.role === 'leader');
        return old && lead && old.role === 'follower' && old.leader === lead.id && old.applied >= lead.commit ? true : undefined;
      },
      15_000,
      'the old leader to follow and catch up',
    );
    for (let i = 0; i < 10; i++) {
      expect(new TextDecoder().decode((await client.get(`paused/${i}`)).value)).toBe(`v${i}`);
      expect(new TextDecoder().decode((await client.get(`while-paused/${i}`)).value)).toBe(`v${i}`);
    }
  });
});

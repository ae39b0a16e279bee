// Smoke test of the container harness: real nodes in containers, real (iptables) partitions, kills and
// freezes, driven from the host through the public client library. Prints the measured failover times.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { FenceLockClient } from '../../src/client';
import { dropOneWay, isolate, partition } from '../support/links';
import { ContainerCluster } from './containerCluster';

const timings: [string, number][] = [];
function report(what: string, ms: number): void {
  timings.push([what, ms]);
  process.stdout.write(`[chaos] ${what}: ${ms} ms\n`);
}

/** Takes the lock `name`, writes key=value under its token, releases it; returns the token. */
async function lockedWrite(client: FenceLockClient, name: string, key: string, value: string): Promise<bigint> {
  return client.withLock(name, async (token, lock) => {
    await lock.write([{ put: key, value }]);
    return token;
  });
}

async function readKey(client: FenceLockClient, key: string): Promise<string | undefined> {
  const got = await client.get(key);
  return got.found ? Buffer.from(got.value).toString('utf8') : undefined;
}

async function dumpOnFailure(cluster: ContainerCluster | undefined, ctx: { task: { name: string; result?: { state?: string } } }): Promise<void> {
  if (!cluster || ctx.task.result?.state !== 'fail') return;
  process.stderr.write(`[chaos] "${ctx.task.name}" failed; faults: ${cluster.faults().join(' ') || 'none'}\n`);
  for (const n of cluster.nodes) {
    const tail = await cluster.tail(n.id, 15).catch((e: Error) => `cannot read logs: ${e.message}`);
    process.stderr.write(`----- ${n.id} (${n.state}, ${n.endpoint}, ${n.ips.join(',')}) -----\n${tail}\n`);
  }
}

describe('container cluster, 3 nodes', () => {
  let cluster: ContainerCluster;

  beforeAll(async () => {
    cluster = await ContainerCluster.start({ size: 3 });
    report('3-node cluster start (network + containers up, nodes started)', cluster.startMs);
  });

  afterEach(async (ctx) => dumpOnFailure(cluster, ctx));

  afterAll(async () => {
    await cluster?.destroy();
    process.stdout.write(`[chaos] timings:\n${timings.map(([k, v]) => `  ${k}: ${v} ms`).join('\n')}\n`);
  });

  it('elects a leader that host clients reach through leader hints', async () => {
    const leader = await cluster.waitForLeader();
    report('first leader elected (after start)', leader.waitedMs);
    // Every node agrees, and hands out the leader's host address (its `members` entry) as the hint.
    await cluster.waitUntil('every node knows the leader and its host address', async () => {
      const st = await cluster.statuses();
      return st.size === 3 && [...st.values()].every((s) => s.leader === leader.id && s.leaderAddress === leader.endpoint);
    });
    // A client that asks a follower first must go straight to the leader through the hint. Hints are followed
    // only to configured endpoints, so the client knows every node, the follower first.
    const follower = cluster.ids.find((id) => id !== leader.id)!;
    const order = [follower, ...cluster.ids.filter((id) => id !== follower)];
    const client = cluster.newClient({ endpoints: order.map((id) => cluster.node(id).endpoint) });
    try {
      const token = await lockedWrite(client, 'smoke', 'smoke/k', 'v1');
      expect(token).toBeGreaterThan(0n);
      expect(client.currentEndpoint()).toBe(leader.endpoint);
      expect(await readKey(client, 'smoke/k')).toBe('v1');
    } finally {
      await client.close();
    }
    // Replication works, so peers dial each other by alias (inside a container, the `members` address
    // 127.0.0.1:<host port> is its own loopback, where nothing listens on that port).
    await cluster.waitUntil('the leader replicates to both followers', async () => {
      const st = await cluster.status(leader.id);
      return st.peers.length === 2 && st.peers.every((p) => p.match > 0n && p.match === st.lastIndex);
    });
  });

  it('an isolated leader steps down (still answering the host) and the majority elects a new one', async () => {
    const old = await cluster.waitForLeader();
    const others = cluster.ids.filter((id) => id !== old.id);
    const t0 = Date.now();
    await isolate(cluster, old.id);
    expect(await cluster.rules(old.id)).toMatch(/-A INPUT -s \S+ -j DROP/);
    const [fresh, stepDownMs] = await Promise.all([
      cluster.waitForLeader({ among: others, minTerm: old.term + 1n, timeoutMs: 15_000 }).then((l) => ({ ...l, at: Date.now() - t0 })),
      // Cluster.Status through the isolated node's host port: host traffic comes from the network's
      // gateway, which the partition does not drop.
      cluster.waitUntil(`isolated ${old.id} steps down`, async () => (await cluster.status(old.id)).role !== 'leader', 15_000).then(() => Date.now() - t0),
    ]);
    report('isolated leader steps down (check-quorum), from isolation', stepDownMs);
    report('new leader among the majority, from isolation', fresh.at);
    expect(others).toContain(fresh.id);
    expect(await cluster.logs(old.id)).toContain('role changed');

    // The majority serves writes while the old leader is cut off.
    const client = cluster.newClient({ endpoints: others.map((id) => cluster.node(id).endpoint) });
    try {
      await lockedWrite(client, 'smoke', 'smoke/during-isolation', 'yes');
    } finally {
      await client.close();
    }

    const h0 = Date.now();
    await cluster.heal();
    expect(await cluster.rules(old.id)).not.toMatch(/DROP/);
    await cluster.waitUntil(`${old.id} follows ${fresh.id} again`, async () => {
      const s = await cluster.status(old.id);
      return s.role === 'follower' && s.leader === fresh.id && s.term >= fresh.term;
    });
    report('healed node rejoins as follower', Date.now() - h0);
  });

  it('a killed leader is replaced, and restarts on its data with the same host port', async () => {
    const old = await cluster.waitForLeader();
    const others = cluster.ids.filter((id) => id !== old.id);
    const before = await cluster.status(old.id);
    const t0 = Date.now();
    await cluster.kill(old.id);
    const fresh = await cluster.waitForLeader({ among: others, minTerm: old.term + 1n, timeoutMs: 15_000 });
    report('new leader after SIGKILL of the leader', Date.now() - t0);
    expect(others).toContain(fresh.id);

    const client = cluster.newClient();
    try {
      await lockedWrite(client, 'smoke', 'smoke/while-down', 'yes');
    } finally {
      await client.close();
    }

    const r0 = Date.now();
    await cluster.start(old.id);
    report('killed node restarted (container start to "fencelock node started")', Date.now() - r0);
    const after = await cluster.status(old.id); // same fixed host port
    expect(after.term).toBeGreaterThanOrEqual(before.term);
    await cluster.waitUntil(`${old.id} catches up with ${fresh.id}`, async () => {
      const [s, l] = await Promise.all([cluster.status(old.id), cluster.status(fresh.id)]);
      return s.role === 'follower' && s.leader === fresh.id && s.applied >= l.commit && s.lastIndex >= before.lastIndex;
    });
    report('restarted node caught up', Date.now() - r0);
  });

  it('a paused leader is replaced and steps down when unpaused; a one-way drop from the leader also moves leadership', async () => {
    const old = await cluster.waitForLeader();
    const others = cluster.ids.filter((id) => id !== old.id);
    const t0 = Date.now();
    await cluster.pause(old.id);
    const fresh = await cluster.waitForLeader({ among: others, minTerm: old.term + 1n, timeoutMs: 15_000 });
    report('new leader after pausing the leader', Date.now() - t0);
    await cluster.resume(old.id);
    await cluster.waitUntil(`unpaused ${old.id} follows ${fresh.id}`, async () => {
      const s = await cluster.status(old.id);
      return s.role === 'follower' && s.leader === fresh.id;
    });

    // The leader's packets to the others vanish; theirs still reach it.
    const w0 = Date.now();
    await dropOneWay(cluster, fresh.id, cluster.ids.filter((id) => id !== fresh.id));
    expect(cluster.faults()).toHaveLength(2);
    const third = await cluster.waitForLeader({ among: cluster.ids.filter((id) => id !== fresh.id), minTerm: fresh.term + 1n, timeoutMs: 15_000 });
    report('new leader after a one-way drop from the leader', Date.now() - w0);
    await cluster.heal();
    await cluster.waitUntil('one leader, known to all, after healing', async () => {
      const st = await cluster.statuses();
      return st.size === 3 && [...st.values()].every((s) => s.leader === third.id);
    });
  });

  it('killAll + startAll: the cluster comes back on its data', async () => {
    const client0 = cluster.newClient();
    let tokenBefore: bigint;
    try {
      tokenBefore = await lockedWrite(client0, 'smoke', 'smoke/k', 'v2');
    } finally {
      await client0.close();
    }
    await cluster.killAll();
    const t0 = Date.now();
    await cluster.startAll();
    const leader = await cluster.waitForLeader({ timeoutMs: 20_000 });
    report('leader after killAll + startAll (from start)', Date.now() - t0);
    const client = cluster.newClient();
    try {
      expect(await readKey(client, 'smoke/k')).toBe('v2');
      expect(await readKey(client, 'smoke/during-isolation')).toBe('yes');
      expect(await readKey(client, 'smoke/while-down')).toBe('yes');
      const tokenAfter = await lockedWrite(client, 'smoke', 'smoke/k', 'v3');
      expect(tokenAfter).toBeGreaterThan(tokenBefore);
    } finally {
      await client.close();
    }
    expect(leader.term).toBeGreaterThan(0n);
  });
});

describe('container cluster, 5 nodes', () => {
  let cluster: ContainerCluster;

  beforeAll(async () => {
    cluster = await ContainerCluster.start({ size: 5 });
    report('5-node cluster start', cluster.startMs);
  });

  afterEach(async (ctx) => dumpOnFailure(cluster, ctx));

  afterAll(async () => {
    await cluster?.destroy();
  });

  it('a 2/3 partition: the majority side has the only leader; healing reunites', async () => {
    const old = await cluster.waitForLeader();
    // Put the current leader on the minority side.
    const minority = [old.id, cluster.ids.find((id) => id !== old.id)!];
    const majority = cluster.ids.filter((id) => !minority.includes(id));
    const t0 = Date.now();
    await partition(cluster, [minority, majority]);
    const fresh = await cluster.waitForLeader({ among: majority, minTerm: old.term + 1n, timeoutMs: 15_000 });
    report('5 nodes: new leader on the majority side of a 2/3 partition', Date.now() - t0);
    await cluster.waitUntil('no leader on the minority side', async () => {
      const st = await cluster.statuses(minority);
      return st.size === 2 && [...st.values()].every((s) => s.role !== 'leader');
    });
    await cluster.heal();
    await cluster.waitUntil('all five follow one leader after healing', async () => {
      const st = await cluster.statuses();
      const leaders = new Set([...st.values()].map((s) => s.leader));
      return st.size === 5 && leaders.size === 1 && !leaders.has('');
    });
    expect(majority).toContain(fresh.id);
  });
});

// Issue 12, metrics: each node's Prometheus endpoint scraped while a real client runs a workload against
// real node processes; the counters must move exactly as the workload says.
import * as grpc from '@grpc/grpc-js';
import * as http from 'node:http';
import * as path from 'node:path';
import { readFileSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FenceLockClient, type NodeStatus, type Session } from '../../src/client';
import { exposedNames, scrape, sumOf, sumOver, valueOf, type Scrape } from '../support/prometheusText';
import { eventually, freePorts, LocalCluster, NODE_MAIN, PROJECT_ROOT, runNode, testCredentials, type NodeHandle } from './harness';
import { header, rawClient, v1 } from './rawClient';

const CLI = path.join(PROJECT_ROOT, 'dist/src/cli/main.js');
const DASHBOARD = path.join(PROJECT_ROOT, 'docs/grafana/fencelock.json');

let cluster: LocalCluster;
let client: FenceLockClient;

function metricsOf(n: NodeHandle): string {
  if (!n.metricsAddress) throw new Error(`${n.id} has no metrics listener`);
  return n.metricsAddress;
}

async function leader(): Promise<{ node: NodeHandle; status: NodeStatus }> {
  return eventually(
    async () => {
      const rows = await client.statusAll();
      const leaders = rows.flatMap((r) => (r.ok && r.status.role === 'leader' ? [r.status] : []));
      return leaders.length === 1 ? { node: cluster.node(leaders[0]!.id), status: leaders[0]! } : undefined;
    },
    20_000,
    'one leader',
  );
}

/** Scrapes every node, in node order. */
function scrapeAll(): Promise<Scrape[]> {
  return Promise.all(cluster.nodes.map((n) => scrape(metricsOf(n))));
}


/** How much a counter moved between two scrapes of one node. */
function delta(after: Scrape, before: Scrape, name: string, labels: Record<string, string> = {}): number {
  return sumOf(after, name, labels) - sumOf(before, name, labels);
}

/**
 * The first test's workload, by two sessions of a real client: nine grants (one a handover to a waiter),
 * two releases, five fenced writes and one stale one.
 */
async function runWorkload(lead: NodeHandle, s1: Session, s2: Session): Promise<void> {
  // Five grants of free locks, each with one accepted fenced write.
  for (let i = 0; i < 5; i++) {
    const lock = await s1.acquire(`m/lock-${i}`);
    await lock.write([{ put: `m/lock-${i}/k`, value: 'v' }]);
  }
  // A stale write: s1's grant of m/x is over, s2 holds m/x under a newer token.
  const old = await s1.acquire('m/x');
  await old.release();
  const newer = await s2.acquire('m/x');
  expect(newer.token).toBeGreaterThan(old.token);
  const raw = rawClient(lead.address);
  try {
    const refused = await raw
      .call('KV', 'Write', { header: header(), lock: 'm/x', token: String(old.token), sessionId: s1.id, ops: [{ type: 'PUT', key: 'm/x/k', value: Buffer.from('late') }] })
      .then(() => undefined, (err: grpc.ServiceError) => err);
    expect(refused?.metadata.get('fencelock-reason')).toEqual(['STALE_TOKEN']);
  } finally {
    raw.close();
  }
  // A waiter: s2 queues for m/w while s1 holds it, then gets it by handover.
  const held = await s1.acquire('m/w');
  const waiting = s2.acquire('m/w', { waitTimeoutMs: 20_000 });
  const queued = await eventually(async () => {
    const [m, st] = [await scrape(metricsOf(lead)), await client.status(lead.address)];
    return valueOf(m, 'fencelock_lock_waiters') === 1 ? { m, st } : undefined;
  }, 10_000, 'one waiter in the leader\'s metrics');
  expect(queued.st.waiters).toBe(1n);
  await held.release();
  const handedOver = await waiting;
  expect(handedOver.token).toBeGreaterThan(held.token);
}

/** Every member applies the same log, so each counts the same grants, releases and refusals. */
function expectStateCounts(before: Scrape[], after: Scrape[]): void {
  for (const [i, s] of after.entries()) {
    const moved = (name: string, labels: Record<string, string> = {}): number => delta(s, before[i]!, name, labels);
    expect(moved('fencelock_lock_grants_total', { cause: 'acquired' })).toBe(8);
    expect(moved('fencelock_lock_grants_total', { cause: 'released' })).toBe(1);
    expect(moved('fencelock_lock_releases_total', { cause: 'released' })).toBe(2);
    expect(moved('fencelock_fenced_writes_total')).toBe(5);
    expect(moved('fencelock_fenced_write_refusals_total', { reason: 'STALE_TOKEN' })).toBe(1);
    expect(moved('fencelock_fenced_write_refusals_total')).toBe(1);
    expect(moved('fencelock_sessions_opened_total')).toBe(2);
    expect(moved('fencelock_refusals_total', { command: 'Write', reason: 'STALE_TOKEN' })).toBe(1);
    expect(moved('fencelock_refusals_total')).toBe(1);
    // Wait times: eight immediate grants observed as 0, one handover after a queued wait of some time.
    expect(moved('fencelock_lock_wait_seconds_count', { cause: 'acquired' })).toBe(8);
    expect(moved('fencelock_lock_wait_seconds_sum', { cause: 'acquired' })).toBe(0);
    expect(moved('fencelock_lock_wait_seconds_count', { cause: 'released' })).toBe(1);
    expect(moved('fencelock_lock_wait_seconds_sum', { cause: 'released' })).toBeGreaterThan(0);
    // Hold times: the two released grants (m/x by s1, m/w by s1); no lock label by default.
    expect(moved('fencelock_lock_hold_seconds_count', { cause: 'released' })).toBe(2);
    expect(moved('fencelock_lock_hold_seconds_count')).toBe(2);
    expect(s.samples.some((x) => x.name.startsWith('fencelock_lock_hold_seconds') && 'lock' in x.labels)).toBe(false);
    expect(valueOf(s, 'fencelock_sessions')).toBe(2);
    expect(valueOf(s, 'fencelock_locks_held')).toBe(7); // m/lock-0..4 (s1), m/x and m/w (s2)
    expect(valueOf(s, 'fencelock_lock_waiters')).toBe(0);
  }
}

/** The API counts each call once, where it was answered: nine acquires, two releases, five writes OK. */
function expectApiCounts(before: Scrape[], after: Scrape[], leaderIndex: number): void {
  const moved = (name: string, labels: Record<string, string>): number => sumOver(after, name, labels) - sumOver(before, name, labels);
  const calls = (method: string, code: string): number => moved('fencelock_api_calls_total', { method, code });
  expect(calls('Lock.Acquire', 'OK')).toBe(9);
  expect(calls('Lock.Release', 'OK')).toBe(2);
  expect(calls('KV.Write', 'OK')).toBe(5);
  expect(calls('KV.Write', 'FAILED_PRECONDITION')).toBe(1);
  expect(calls('Session.Open', 'OK')).toBe(2);
  expect(moved('fencelock_api_call_duration_seconds_count', { method: 'Lock.Acquire' })).toBe(9);
  expect(delta(after[leaderIndex]!, before[leaderIndex]!, 'fencelock_api_refusals_total', { method: 'KV.Write', reason: 'STALE_TOKEN' })).toBe(1);
}

/** Raft: every mutation was a proposal on the leader and a persisted entry; appends were timed per peer. */
function expectRaftCounts(before: Scrape[], after: Scrape[], lead: NodeHandle): void {
  const i = cluster.nodes.indexOf(lead);
  const moved = (name: string, labels: Record<string, string> = {}): number => delta(after[i]!, before[i]!, name, labels);
  expect(moved('fencelock_raft_proposals_total')).toBeGreaterThanOrEqual(9 + 2 + 6 + 2);
  expect(moved('fencelock_raft_persisted_entries_total')).toBeGreaterThanOrEqual(19);
  expect(moved('fencelock_raft_persist_duration_seconds_count')).toBeGreaterThan(0);
  for (const peer of cluster.ids.filter((id) => id !== lead.id)) {
    expect(moved('fencelock_raft_append_rtt_seconds_count', { peer })).toBeGreaterThan(0);
    expect(valueOf(after[i]!, 'fencelock_raft_peer_match_index', { peer })).toBeGreaterThan(0);
  }
  // More than 10 entries were applied: each node took a snapshot of its own.
  for (const [n, s] of after.entries()) {
    const taken = delta(s, before[n]!, 'fencelock_raft_snapshots_total', { origin: 'local' });
    expect(taken).toBeGreaterThanOrEqual(1);
    expect(delta(s, before[n]!, 'fencelock_raft_snapshot_duration_seconds_count')).toBe(taken);
    expect(valueOf(s, 'fencelock_raft_snapshot_size_bytes')).toBeGreaterThan(0);
  }
}

beforeAll(async () => {
  cluster = await LocalCluster.create({ metrics: true, snapshotEveryEntries: 10 });
  cluster.startAll();
  client = new FenceLockClient({ endpoints: cluster.endpoints });
  await leader();
});

afterAll(async () => {
  await client?.close();
  await cluster?.destroy();
});

describe('metrics during a workload', () => {
  it('counts grants, releases, writes, refusals, sessions and waiters as the workload did them', async () => {
    const { node: lead } = await leader();
    const before = await scrapeAll();

    const s1 = await client.openSession({ ttlMs: 30_000 });
    const s2 = await client.openSession({ ttlMs: 30_000 });
    try {
      await runWorkload(lead, s1, s2);
      const { status: st } = await leader();
      const after = await eventually(async () => {
        const all = await scrapeAll();
        return all.every((s) => valueOf(s, 'fencelock_raft_applied_index')! >= Number(st.commit)) ? all : undefined;
      }, 10_000, 'every node applied the workload');
      expectStateCounts(before, after);
      expectApiCounts(before, after, cluster.nodes.indexOf(lead));
      expectRaftCounts(before, after, lead);
    } finally {
      await s1.close();
      await s2.close();
    }
  });

  it('agrees with Cluster.Status: role, term, applied index, sessions, locks', async () => {
    const s = await client.openSession({ ttlMs: 30_000 });
    await s.acquire('m/status');
    try {
      const { node: lead, status: leaderStatus } = await leader();
      const acquiredAt = leaderStatus.commit;
      for (const n of cluster.nodes) {
        // Entries (lease checkpoints) may apply between a scrape and a status: take a status between two
        // scrapes that agree.
        const { m, st } = await eventually(async () => {
          const m1 = await scrape(metricsOf(n));
          const status = await client.status(n.address);
          const m2 = await scrape(metricsOf(n));
          const same = valueOf(m1, 'fencelock_raft_applied_index') === valueOf(m2, 'fencelock_raft_applied_index') && valueOf(m1, 'fencelock_raft_term') === valueOf(m2, 'fencelock_raft_term');
          // A follower learns of the commit with the next heartbeat: wait until it applied the acquire.
          const caughtUp = status.applied >= acquiredAt;
          return caughtUp && same && status.applied === BigInt(valueOf(m2, 'fencelock_raft_applied_index')!) ? { m: m2, st: status } : undefined;
        }, 10_000, `${n.id}: a status between two scrapes that agree`);
        expect(valueOf(m, 'fencelock_raft_term')).toBe(Number(st.term));
        expect(valueOf(m, 'fencelock_raft_role', { role: st.role })).toBe(1);
        expect(valueOf(m, 'fencelock_raft_role', { role: n.id === lead.id ? 'leader' : 'follower' })).toBe(1);
        expect(valueOf(m, 'fencelock_raft_role', { role: 'leader' })).toBe(n.id === lead.id ? 1 : 0);
        expect(valueOf(m, 'fencelock_raft_has_leader')).toBe(1);
        expect(valueOf(m, 'fencelock_sessions')).toBe(Number(st.sessions));
        expect(valueOf(m, 'fencelock_locks_held')).toBe(Number(st.locksHeld));
        expect(st.sessions).toBe(1n);
        expect(st.locksHeld).toBe(1n);
        expect(valueOf(m, 'fencelock_raft_pending_read_indexes')).toBe(0);
        expect(sumOf(m, 'fencelock_raft_leader_changes_total')).toBeGreaterThanOrEqual(1);
        // The process's own metrics are there too.
        expect(valueOf(m, 'process_resident_memory_bytes')).toBeGreaterThan(0);
        expect(m.samples.every((x) => x.labels.node === n.id)).toBe(true);
      }
    } finally {
      await s.close();
    }
  });

  it('counts an expired session', async () => {
    const { node: lead } = await leader();
    const before = await scrape(metricsOf(lead));
    const raw = rawClient(lead.address);
    try {
      // A raw session has no keepalive: it expires after its TTL.
      await raw.call('Session', 'Open', { header: header(), ttlMs: '3000', clientName: 'expires' });
    } finally {
      raw.close();
    }
    const opened = await scrape(metricsOf(lead));
    expect(valueOf(opened, 'fencelock_sessions')).toBe(valueOf(before, 'fencelock_sessions')! + 1);
    const after = await eventually(async () => {
      const m = await scrape(metricsOf(lead));
      return sumOf(m, 'fencelock_sessions_ended_total', { cause: 'expired' }) > sumOf(before, 'fencelock_sessions_ended_total', { cause: 'expired' }) ? m : undefined;
    }, 20_000, 'the session to expire');
    expect(sumOf(after, 'fencelock_sessions_ended_total', { cause: 'expired' }) - sumOf(before, 'fencelock_sessions_ended_total', { cause: 'expired' })).toBe(1);
    expect(valueOf(after, 'fencelock_sessions')).toBe(valueOf(before, 'fencelock_sessions'));
  });

  it('fencelock status prints every node with lag, sessions and locks; --json keeps them', async () => {
    const s = await client.openSession({ ttlMs: 30_000 });
    await s.acquire('m/cli');
    try {
      await eventually(async () => (await client.statusAll()).every((r) => r.ok && r.status.locksHeld === 1n), 10_000, 'every node applied the acquire');
      const text = await runNode([CLI, '--endpoints', cluster.endpoints.join(','), 'status']);
      expect(text.code).toBe(0);
      const lines = text.stdout.trim().split('\n');
      expect(lines[0]).toMatch(/^ID\s+ADDRESS\s+ROLE\s+TERM\s+LEADER\s+COMMIT\s+APPLIED\s+LAG\s+SESSIONS\s+LOCKS\s+WAITERS$/);
      expect(lines).toHaveLength(1 + cluster.nodes.length);
      for (const n of cluster.nodes) {
        const row = lines.find((l) => l.startsWith(`${n.id} `))!.split(/\s+/);
        // SESSIONS LOCKS WAITERS: one session holding one lock, on every node once applied.
        expect(row.slice(8)).toEqual(['1', '1', '0']);
        expect(Number(row[7])).toBeGreaterThanOrEqual(0);
      }
      const json = await runNode([CLI, '--endpoints', cluster.endpoints.join(','), '--json', 'status']);
      const rows = JSON.parse(json.stdout) as Array<{ role: string; commit: string; applied: string; lag: string; sessions: string; locksHeld: string; waiters: string }>;
      const leaderRow = rows.find((r) => r.role === 'leader')!;
      for (const r of rows) {
        expect(r).toMatchObject({ sessions: '1', locksHeld: '1', waiters: '0' });
        expect(BigInt(r.lag)).toBe(BigInt(leaderRow.commit) - BigInt(r.applied) > 0n ? BigInt(leaderRow.commit) - BigInt(r.applied) : 0n);
      }
    } finally {
      await s.close();
    }
  });
});

describe('the metrics listener', () => {
  it('is its own port: the client port serves no /metrics, the metrics port speaks no gRPC', async () => {
    const n = cluster.nodes[0]!;
    const onClientPort = await new Promise<string>((resolve) => {
      const req = http.get(`http://${n.address}/metrics`, (res) => {
        res.resume();
        resolve(`status ${res.statusCode}`);
      });
      req.on('error', (err) => resolve(`error ${err.message}`));
      req.setTimeout(5_000, () => req.destroy(new Error('timeout')));
    });
    expect(onClientPort).not.toBe('status 200');
    const grpcClient = new v1.Cluster!(metricsOf(n), testCredentials());
    try {
      const err = await new Promise<grpc.ServiceError | null>((resolve) =>
        (grpcClient as unknown as { Status: (r: object, o: object, cb: (e: grpc.ServiceError | null) => void) => void }).Status({}, { deadline: Date.now() + 5_000 }, resolve),
      );
      expect(err?.code).toBe(grpc.status.UNAVAILABLE);
    } finally {
      grpcClient.close();
    }
    const other = await fetch(`http://${metricsOf(n)}/`);
    expect(other.status).toBe(404);
    await other.text();
    const post = await fetch(`http://${metricsOf(n)}/metrics`, { method: 'POST' });
    expect(post.status).toBe(405);
    await post.text();
  });

  it('names every metric the Grafana dashboard queries', async () => {
    const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { title: string; schemaVersion: number; panels: Array<{ type: string; title: string; gridPos: object; targets?: Array<{ expr: string }> }> };
    expect(typeof dashboard.title).toBe('string');
    expect(dashboard.schemaVersion).toBeGreaterThan(0);
    const exprs = dashboard.panels.flatMap((p) => {
      expect(p).toMatchObject({ type: expect.any(String), title: expect.any(String), gridPos: expect.any(Object) });
      return (p.targets ?? []).map((t) => t.expr);
    });
    expect(exprs.length).toBeGreaterThan(10);
    // Scrape the leader: only it has per-peer series; histogram series need an observation to appear.
    const { node: lead } = await leader();
    const names = exposedNames(await scrape(metricsOf(lead)));
    const queried = new Set(exprs.flatMap((e) => e.match(/\b(?:fencelock|process|nodejs)_[a-z0-9_]+/g) ?? []));
    expect(queried.size).toBeGreaterThan(15);
    const missing = [...queried].filter((name) => !names.has(name));
    expect(missing).toEqual([]);
  });

  it('docs/metrics.md lists every fencelock metric a node declares, and no other', async () => {
    const doc = readFileSync(path.join(PROJECT_ROOT, 'docs/metrics.md'), 'utf8');
    const listed = new Set([...doc.matchAll(/^\| `(fencelock_[a-z0-9_]+)` \|/gm)].map((m) => m[1]!));
    const { node: lead } = await leader();
    const declared = [...(await scrape(metricsOf(lead))).types.keys()].filter((n) => n.startsWith('fencelock_'));
    expect(declared.length).toBeGreaterThan(30);
    expect([...listed].sort()).toEqual(declared.sort());
  });
});

describe('metricsListen in the config', () => {
  async function startOne(metricsListen: string): Promise<{ code: number | null; stderr: string }> {
    const [client, peer] = await freePorts(2);
    const dir = path.join(cluster.dir, `bad-${client}`);
    const config = {
      id: 'solo',
      listen: `127.0.0.1:${client}`,
      peerListen: `127.0.0.1:${peer}`,
      metricsListen,
      members: { solo: { client: `127.0.0.1:${client}`, peer: `127.0.0.1:${peer}` } },
      insecure: true,
      auth: { enabled: false },
      dataDir: path.join(dir, 'data'),
    };
    const file = `${dir}.json`;
    writeFileSync(file, JSON.stringify(config));
    const r = await runNode([NODE_MAIN, '--config', file], { timeoutMs: 30_000 });
    return { code: r.code, stderr: r.stderr };
  }

  it('a malformed address stops the node with a message naming the field', async () => {
    const r = await startOne('metrics-here');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/field "metricsListen" must be host:port/);
  });

  it('an address already in use stops the node with a message naming the field', async () => {
    const r = await startOne(metricsOf(cluster.nodes[0]!));
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/metricsListen: cannot listen on 127\.0\.0\.1:\d+: .*EADDRINUSE/);
  });
});

// Backup and restore (docs/backup.md) against real node processes: `fencelock snapshot save` through the
// leader, `snapshot status` finding damage, and a cluster destroyed and restored from an old backup whose
// tokens all stay above every token the old cluster issued, before or after the backup.
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FenceLockClient, FenceLockError, type SnapshotInfo } from '../../src/client';
import { DEFAULT_BUMP } from '../../src/codec/backupFile';
import { eventually, LocalCluster, PROJECT_ROOT, runNode, testCredentials } from './harness';
import { out } from './chaos/checked';
import { v1 } from './rawClient';

const CLI = path.join(PROJECT_ROOT, 'dist/src/cli/main.js');

async function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runNode([CLI, ...args], { env });
}

async function leaderOf(client: FenceLockClient): Promise<string> {
  return eventually(
    async () => {
      const rows = await client.statusAll();
      const leader = rows.find((r) => r.ok && r.status.role === 'leader');
      return leader?.endpoint;
    },
    20_000,
    'a leader',
  );
}

/** A write's refusal reason (it must be refused). */
async function refusal(p: Promise<unknown>): Promise<string> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(FenceLockError);
  expect((err as FenceLockError).code).toBe('FAILED_PRECONDITION');
  return (err as FenceLockError).reason ?? '';
}

const text = (b: Uint8Array): string => Buffer.from(b).toString('utf8');

/** A started cluster and a client of it; stop() ends both. */
interface Started {
  cluster: LocalCluster;
  client: FenceLockClient;
  stop(): Promise<void>;
}

async function startCluster(opts: Parameters<typeof LocalCluster.create>[0] = {}): Promise<Started> {
  const cluster = await LocalCluster.create(opts);
  cluster.startAll();
  const client = new FenceLockClient({ endpoints: cluster.endpoints });
  return {
    cluster,
    client,
    async stop() {
      await client.close();
      await cluster.destroy();
    },
  };
}

describe('backup and restore', () => {
  let started: Started | undefined;
  let cluster: LocalCluster;
  let client: FenceLockClient;
  let ep: string;
  let backup: string;

  beforeAll(async () => {
    started = await startCluster();
    ({ cluster, client } = started);
    ep = cluster.endpoints.join(',');
    backup = path.join(cluster.dir, 'backup.flb');
    await leaderOf(client);
  });

  afterAll(() => started?.stop());

  it('a follower asked for a snapshot answers with the leader hint, and the client follows it to the leader', async () => {
    const leader = await leaderOf(client);
    const follower = cluster.endpoints.find((e) => e !== leader)!;
    const stub = new v1.Cluster!(follower, testCredentials());
    const refusedWith = await new Promise<grpc.ServiceError>((resolve, reject) => {
      const call = (stub as unknown as { Snapshot: (req: object) => grpc.ClientReadableStream<unknown> }).Snapshot({});
      call.on('data', () => reject(new Error('a follower streamed a snapshot')));
      call.on('error', (err: grpc.ServiceError) => resolve(err));
    });
    stub.close();
    expect(refusedWith.code).toBe(grpc.status.UNAVAILABLE);
    expect(refusedWith.metadata.get('fencelock-leader')).toEqual([leader]);

    // The follower first: the library goes where the hint says.
    const viaFollower = new FenceLockClient({ endpoints: [follower, ...cluster.endpoints.filter((e) => e !== follower)] });
    try {
      const chunks: Buffer[] = [];
      let info: SnapshotInfo | undefined;
      const got = await viaFollower.snapshot({ header: (h) => void (info = h), data: (c) => void chunks.push(Buffer.from(c)) });
      expect(got).toEqual(info);
      expect(Buffer.concat(chunks).length).toBe(got.size);
      expect(got.voters).toEqual(['n1', 'n2', 'n3']);
      expect(got.index).toBeGreaterThan(0n);
    } finally {
      await viaFollower.close();
    }
  });

  it('snapshot status prints a backup and finds a flipped byte in its data or its header', async () => {
    const file = path.join(cluster.dir, 'status.flb');
    const saved = await cli(['--endpoints', ep, '--json', 'snapshot', 'save', file]);
    expect(saved.code, saved.stderr).toBe(0);
    expect(existsSync(`${file}.tmp`)).toBe(false);
    const status = await cli(['--json', 'snapshot', 'status', file]);
    expect(status.code, status.stderr).toBe(0);
    const info = JSON.parse(status.stdout) as { index: number; term: number; size: number; format: number; checksum: string };
    expect(info).toMatchObject({ format: 1, checksum: 'ok' });
    expect(info).toEqual({ ...JSON.parse(saved.stdout), checksum: 'ok' });
    const human = await cli(['snapshot', 'status', file]);
    expect(human.stdout).toMatch(new RegExp(`index +${info.index}\\n`));

    const bytes = readFileSync(file);
    for (const [what, at] of [
      ['the data', bytes.length - 1 - Math.floor(info.size / 2)],
      ['the index in the header', 8 + 4 + 7],
    ] as const) {
      const damaged = Buffer.from(bytes);
      damaged[at]! ^= 0x01;
      const bad = path.join(cluster.dir, 'damaged.flb');
      writeFileSync(bad, damaged);
      const res = await cli(['snapshot', 'status', bad]);
      expect(res.code, what).toBe(1);
      expect(res.stderr, what).toMatch(/checksum mismatch: the file is damaged/);
      const asJson = await cli(['--json', 'snapshot', 'status', bad]);
      expect(asJson.code).toBe(1);
      expect(JSON.parse(asJson.stdout).error.message).toMatch(/checksum mismatch/);
    }
    const truncated = path.join(cluster.dir, 'truncated.flb');
    writeFileSync(truncated, bytes.subarray(0, bytes.length - 10));
    const cut = await cli(['snapshot', 'status', truncated]);
    expect(cut.code).toBe(1);
    expect(cut.stderr).toMatch(/truncated or damaged/);
  });

  it('a cluster destroyed and restored from an old backup issues only tokens above every old one, refuses old tokens, keeps keys and drops sessions', async () => {
    const seen: bigint[] = [];
    const s1 = await client.openSession({ ttlMs: 60_000 });
    const waiter = await client.openSession({ ttlMs: 60_000 });
    const orders = await s1.acquire('orders');
    seen.push(orders.token);
    await orders.write([{ put: 'orders/a', value: 'before' }]);
    await orders.release();
    const held = await s1.acquire('held');
    seen.push(held.token);
    await held.write([{ put: 'held/k', value: 'v1' }]);
    // A waiter at the time of the backup: it must not be handed the lock by the restore.
    // Its call fails once the cluster is gone (the client library gives up on its own).
    void waiter.acquire('held', { waitTimeoutMs: 60_000 }).catch(() => undefined);
    await eventually(async () => ((await client.describe('held')).waiters.length === 1 ? true : undefined), 10_000, 'the waiter queued');

    const saved = await cli(['--endpoints', ep, 'snapshot', 'save', backup]);
    expect(saved.code, saved.stderr).toBe(0);
    const backupIndex = Number(/index (\d+)/.exec(saved.stdout)![1]);
    // The backup is linearizable: it includes the last acknowledged write.
    expect(BigInt(backupIndex)).toBeGreaterThanOrEqual(held.token);

    // Life goes on after the backup: more grants and writes, all lost in the disaster.
    const s2 = await client.openSession({ ttlMs: 60_000 });
    const ordersAfter = await s2.acquire('orders');
    seen.push(ordersAfter.token);
    await ordersAfter.write([{ put: 'orders/a', value: 'after' }]);
    const later = await s2.acquire('later');
    seen.push(later.token);
    await later.write([{ put: 'later/k', value: 'lost' }]);
    for (let i = 0; i < 20; i++) {
      const l = await s2.acquire(`churn-${i}`);
      seen.push(l.token);
      await l.release();
    }
    const maxSeen = seen.reduce((a, b) => (a > b ? a : b));

    // The disaster: every node gone with its data.
    for (const id of cluster.ids) await cluster.kill(id);
    rmSync(path.join(cluster.dir, 'data'), { recursive: true, force: true });

    // The restore refuses to guess the bump, and then writes nothing.
    const n1 = cluster.node('n1');
    const noBump = await cli(['snapshot', 'restore', backup, '--config', n1.configFile]);
    expect(noBump.code).toBe(1);
    expect(noBump.stderr).toMatch(/--bump/);
    expect(existsSync(path.join(cluster.dir, 'data', 'n1'))).toBe(false);
    // Members that differ from the node configs' are refused.
    const wrongMembers = await cli(['snapshot', 'restore', backup, '--config', n1.configFile, '--member', 'n1', '--member', 'n2', '--bump']);
    expect(wrongMembers.code).toBe(1);
    expect(wrongMembers.stderr).toMatch(/differs from the members/);

    for (const n of cluster.nodes) {
      const res = await cli(['--json', 'snapshot', 'restore', backup, '--config', n.configFile, '--bump']);
      expect(res.code, res.stderr).toBe(0);
      const report = JSON.parse(res.stdout) as { index: number; backupIndex: number; sessionsDropped: number; voters: string[] };
      expect(report).toMatchObject({ backupIndex, index: backupIndex + DEFAULT_BUMP, sessionsDropped: 2, voters: ['n1', 'n2', 'n3'] });
    }
    // A second restore into a member's folder, now holding data, is refused and changes nothing.
    const before = readdirSync(path.join(cluster.dir, 'data', 'n1')).sort();
    const again = await cli(['snapshot', 'restore', backup, '--config', n1.configFile, '--bump']);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/is not empty/);
    expect(readdirSync(path.join(cluster.dir, 'data', 'n1')).sort()).toEqual(before);

    cluster.startAll();
    const fresh = new FenceLockClient({ endpoints: cluster.endpoints });
    try {
      await leaderOf(fresh);
      // Keys written before the backup keep their values and watermarks; what came after is gone.
      const a = await eventually(() => fresh.get('orders/a').catch(() => undefined), 20_000, 'a linearizable read');
      expect(text(a.value)).toBe('before');
      expect(a.token).toBe(orders.token);
      const k = await fresh.get('held/k');
      expect(text(k.value)).toBe('v1');
      expect(k.token).toBe(held.token);
      expect((await fresh.get('later/k')).found).toBe(false);

      // Sessions from before are gone: the held lock is free and its waiter dropped.
      const heldNow = await fresh.describe('held');
      expect(heldNow.held).toBe(false);
      expect(heldNow.waiters).toEqual([]);
      expect(heldNow.latestToken).toBe(held.token);

      // Old tokens are refused: the holder's own token from before the backup (its grant ended), and
      // a token issued after the backup (above anything the restored lock issued).
      const write = (lock: string, token: bigint, sessionId: string): Promise<unknown> => fresh.write({ lock, token, sessionId, ops: [{ put: `${lock}/k`, value: 'stale' }] });
      expect(await refusal(write('held', held.token, s1.id))).toBe('LOCK_NOT_HELD');
      expect(await refusal(write('orders', ordersAfter.token, s2.id))).toBe('WRONG_LOCK');

      // Every new token is above every token seen before the disaster.
      const s3 = await fresh.openSession({ ttlMs: 60_000 });
      const newOrders = await s3.acquire('orders');
      const newHeld = await s3.acquire('held');
      for (const t of [newOrders.token, newHeld.token]) {
        expect(t).toBeGreaterThan(maxSeen);
        expect(t).toBeGreaterThan(BigInt(backupIndex + DEFAULT_BUMP));
      }
      out(
        `[restore] backup at index ${backupIndex}; ${seen.length} tokens seen before the disaster, the highest ${maxSeen} ` +
          `(${seen.filter((t) => t > BigInt(backupIndex)).length} issued after the backup); restored with bump ${DEFAULT_BUMP}: ` +
          `first new tokens ${newOrders.token} and ${newHeld.token}`,
      );
      await newOrders.write([{ put: 'orders/a', value: 'restored' }]);
      expect(text((await fresh.get('orders/a')).value)).toBe('restored');
      // And now the old holder's token is below the new grant: STALE_TOKEN.
      expect(await refusal(write('held', held.token, s1.id))).toBe('STALE_TOKEN');
      expect(await refusal(write('orders', ordersAfter.token, s2.id))).toBe('STALE_TOKEN');
      await s3.close();

      // A restart of every restored node loads the stored restored snapshot and the log after it.
      for (const id of cluster.ids) await cluster.stop(id);
      cluster.startAll();
      await leaderOf(fresh);
      const afterRestart = await eventually(() => fresh.get('orders/a').catch(() => undefined), 20_000, 'a read after the restart');
      expect(text(afterRestart.value)).toBe('restored');
      expect(afterRestart.token).toBe(newOrders.token);
    } finally {
      await fresh.close();
    }
  });

  it('restore refuses a non-empty data folder and a damaged file before writing anything', async () => {
    const saved = await cli(['--endpoints', ep, 'snapshot', 'save', backup]);
    expect(saved.code, saved.stderr).toBe(0);
    const dir = path.join(cluster.dir, 'occupied');
    mkdirSync(dir);
    writeFileSync(path.join(dir, 'something'), 'x');
    const res = await cli(['snapshot', 'restore', backup, '--data-dir', dir, '--member', 'n1', '--bump', '5']);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/is not empty/);
    expect(readdirSync(dir)).toEqual(['something']);

    const damaged = path.join(cluster.dir, 'damaged-restore.flb');
    copyFileSync(backup, damaged);
    const bytes = readFileSync(damaged);
    bytes[bytes.length - 3]! ^= 0x80;
    writeFileSync(damaged, bytes);
    const target = path.join(cluster.dir, 'never-written');
    const bad = await cli(['snapshot', 'restore', damaged, '--data-dir', target, '--member', 'n1', '--bump', '5']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/checksum mismatch/);
    expect(existsSync(target)).toBe(false);
  });
});

describe('backup with auth on', () => {
  let started: Started | undefined;
  let cluster: LocalCluster;
  let ep: string;

  beforeAll(async () => {
    started = await startCluster({ authAdmin: 'test' });
    cluster = started.cluster;
    ep = cluster.endpoints.join(',');
  });

  afterAll(() => started?.stop());

  it('only an admin may save a backup; the restored cluster keeps users and tokens', async () => {
    // The harness's client certificate is the admin `test`.
    await eventually(async () => ((await cli(['--endpoints', ep, 'auth', 'user', 'add', 'bob'])).code === 0 ? true : undefined), 30_000, 'auth on and bob added');
    const issued = await cli(['--endpoints', ep, 'auth', 'token', 'issue', 'bob']);
    expect(issued.code, issued.stderr).toBe(0);
    const bob = { FENCELOCK_AUTH_TOKEN: issued.stdout.trim() };
    const file = path.join(cluster.dir, 'auth.flb');

    const refused = await cli(['--endpoints', ep, 'snapshot', 'save', file], bob);
    expect(refused.code).toBe(7);
    expect(refused.stderr).toMatch(/PERMISSION_DENIED|not an admin/);
    expect(existsSync(file) || existsSync(`${file}.tmp`)).toBe(false);
    const saved = await cli(['--endpoints', ep, 'snapshot', 'save', file]);
    expect(saved.code, saved.stderr).toBe(0);

    for (const id of cluster.ids) await cluster.kill(id);
    rmSync(path.join(cluster.dir, 'data'), { recursive: true, force: true });
    for (const n of cluster.nodes) {
      const res = await cli(['snapshot', 'restore', file, '--config', n.configFile, '--bump', '1000']);
      expect(res.code, res.stderr).toBe(0);
    }
    cluster.startAll();
    const whoami = await eventually(async () => {
      const res = await cli(['--endpoints', ep, '--json', 'auth', 'whoami'], bob);
      return res.code === 0 ? (JSON.parse(res.stdout) as { identity: string }) : undefined;
    }, 30_000, 'bob known to the restored cluster');
    expect(whoami.identity).toBe('bob');
    expect((await cli(['--endpoints', ep, 'snapshot', 'save', file], bob)).code).toBe(7);
  });
});

describe('an old node that comes back after a restore', () => {
  let started: Started | undefined;
  let cluster: LocalCluster;
  let client: FenceLockClient;

  beforeAll(async () => {
    started = await startCluster();
    ({ cluster, client } = started);
  });

  afterAll(() => started?.stop());

  it('wins no election with its old log and later terms, and is caught up to the restored state', async () => {
    await leaderOf(client);
    const s = await client.openSession({ ttlMs: 60_000 });
    const x = await s.acquire('x');
    await x.write([{ put: 'x/k', value: 'backed up' }]);
    const file = path.join(cluster.dir, 'b.flb');
    const saved = await cli(['--endpoints', cluster.endpoints.join(','), '--json', 'snapshot', 'save', file]);
    expect(saved.code, saved.stderr).toBe(0);
    const backup = JSON.parse(saved.stdout) as { index: number; term: number };

    // After the backup the old cluster moves on: later terms (leaders killed) and later tokens.
    let maxSeen = x.token;
    for (let i = 0; i < 2; i++) {
      const leader = await leaderOf(client);
      const id = cluster.nodes.find((n) => n.address === leader)!.id;
      await cluster.kill(id);
      cluster.start(id);
      const l = await eventually(() => s.acquire(`after-${i}`).catch(() => undefined), 20_000, 'a grant after a failover');
      maxSeen = l.token;
      await l.write([{ put: `after-${i}/k`, value: 'lost' }]);
    }
    const oldTerm = (await client.status()).term;
    expect(oldTerm).toBeGreaterThan(BigInt(backup.term));

    // n1 and n2 are restored; n3 keeps its old data and comes back with them.
    for (const id of cluster.ids) await cluster.kill(id);
    for (const id of ['n1', 'n2']) {
      rmSync(path.join(cluster.dir, 'data', id), { recursive: true, force: true });
      const res = await cli(['snapshot', 'restore', file, '--config', cluster.node(id).configFile, '--bump', '1000']);
      expect(res.code, res.stderr).toBe(0);
    }
    cluster.startAll();
    const fresh = new FenceLockClient({ endpoints: cluster.endpoints });
    try {
      const leader = await leaderOf(fresh);
      expect(leader).not.toBe(cluster.node('n3').address);
      const t = await eventually(async () => {
        const session = await fresh.openSession({ ttlMs: 60_000 });
        return (await session.acquire('x')).token;
      }, 20_000, 'a grant on the restored cluster');
      expect(t).toBeGreaterThan(maxSeen);
      expect(t).toBeGreaterThan(BigInt(backup.index + 1000));
      // n3 follows the restored leader, from the restored state.
      const n3 = await eventually(async () => {
        const st = await fresh.status(cluster.node('n3').address);
        return st.role === 'follower' && st.applied >= t ? st : undefined;
      }, 20_000, 'n3 caught up');
      expect(n3.snapshotIndex).toBeGreaterThanOrEqual(BigInt(backup.index + 1000));
      expect(text((await fresh.get('x/k')).value)).toBe('backed up');
      expect((await fresh.get('after-0/k')).found).toBe(false);
    } finally {
      await fresh.close();
    }
  });
});

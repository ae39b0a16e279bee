// The `fencelock` command and `npm run demo`, end to end against real node processes.
import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FenceLockClient } from '../../src/client';
import { clusterWithLeader } from './clusterWithLeader';
import { freePorts, LocalCluster, runNode } from './harness';

const ROOT = path.resolve(__dirname, '../..');
const CLI = path.join(ROOT, 'dist/src/cli/main.js');

describe('the fencelock CLI', () => {
  let cluster: LocalCluster;
  let client: FenceLockClient;

  beforeAll(async () => {
    ({ cluster, client } = await clusterWithLeader({}, 15_000));
  });

  afterAll(async () => {
    await client?.close();
    await cluster?.destroy();
  });

  it('lock -- CMD runs CMD with the token, and CMD writes under it with kv put', async () => {
    const endpoints = cluster.endpoints.join(',');
    const script = `echo "token=$FENCELOCK_TOKEN"; "${process.execPath}" "${CLI}" kv put cli/key "from CMD" && exit 7`;
    const res = await runNode([CLI, '--endpoints', endpoints, 'lock', 'cli-lock', '--', 'sh', '-c', script]);
    expect(res.code, res.stderr).toBe(7); // CMD's own exit code comes back
    const token = BigInt(/token=(\d+)/.exec(res.stdout)![1]);
    expect(token).toBeGreaterThan(0n);
    const value = await client.get('cli/key');
    expect(new TextDecoder().decode(value.value)).toBe('from CMD');
    expect(value.token).toBe(token);
    // The lock was released when CMD ended: a try-lock now succeeds.
    const described = await client.describe('cli-lock');
    expect(described.held).toBe(false);
  });

  it('lock --wait 0 on a held lock exits 3 without running CMD', async () => {
    const session = await client.openSession({ ttlMs: 10_000 });
    const held = await session.acquire('cli-held');
    const res = await runNode([CLI, '--endpoints', cluster.endpoints.join(','), 'lock', 'cli-held', '--wait', '0', '--', 'sh', '-c', 'echo ran']);
    expect(res.code).toBe(3);
    expect(res.stdout).not.toContain('ran');
    await held.release();
    await session.close();
  });

  it('kv put with a stale token is refused with exit code 2', async () => {
    const session = await client.openSession({ ttlMs: 10_000 });
    const first = await session.acquire('cli-stale');
    await first.release();
    const second = await session.acquire('cli-stale');
    const res = await runNode([CLI, '--endpoints', cluster.endpoints.join(','), 'kv', 'put', 'cli-stale/k', 'v', '--lock', 'cli-stale', '--token', String(first.token), '--session', session.id]);
    expect(res.code).toBe(2);
    expect(res.stderr + res.stdout).toContain('STALE_TOKEN');
    await second.release();
    await session.close();
  });

  it('kv get and kv list --all show each key\'s lock and watermark, deleted keys too; a write under another lock names the owner', async () => {
    const ep = cluster.endpoints.join(',');
    const session = await client.openSession({ ttlMs: 10_000 });
    const orders = await session.acquire('cli-orders');
    const t = orders.token.toString();
    const fenced = (lock: string, token: string): string[] => ['--lock', lock, '--token', token, '--session', session.id];
    expect((await runNode([CLI, '--endpoints', ep, 'kv', 'put', 'cli-own/1', 'one', ...fenced('cli-orders', t)])).code).toBe(0);
    expect((await runNode([CLI, '--endpoints', ep, 'kv', 'put', 'cli-own/2', 'two', ...fenced('cli-orders', t)])).code).toBe(0);
    expect((await runNode([CLI, '--endpoints', ep, 'kv', 'delete', 'cli-own/1', ...fenced('cli-orders', t)])).code).toBe(0);

    const live = await runNode([CLI, '--endpoints', ep, 'kv', 'get', 'cli-own/2']);
    expect(live).toMatchObject({ code: 0, stdout: `key:       cli-own/2\nlock:      cli-orders\nwatermark: ${t}\nvalue:     two\n` });
    const deleted = await runNode([CLI, '--endpoints', ep, 'kv', 'get', 'cli-own/1']);
    expect(deleted.code).toBe(5);
    expect(deleted.stderr).toBe(`fencelock: key "cli-own/1" was deleted; it still belongs to lock "cli-orders" (watermark ${t})\n`);
    const all = await runNode([CLI, '--endpoints', ep, 'kv', 'list', 'cli-own/', '--all']);
    expect(all.stdout.split('\n').map((l) => l.split(/\s+/))).toEqual([
      ['KEY', 'LOCK', 'WATERMARK', 'DELETED', 'VALUE'],
      ['cli-own/1', 'cli-orders', t, 'yes'],
      ['cli-own/2', 'cli-orders', t, 'no', 'two'],
      [''],
    ]);
    expect((await runNode([CLI, '--endpoints', ep, 'kv', 'list', 'cli-own/'])).stdout).not.toContain('cli-own/1');

    const billing = await session.acquire('cli-billing');
    const moved = await runNode([CLI, '--endpoints', ep, '--json', 'kv', 'put', 'cli-own/1', 'mine', ...fenced('cli-billing', billing.token.toString())]);
    expect(moved.code).toBe(2);
    expect(JSON.parse(moved.stdout).error).toMatchObject({ reason: 'WRONG_LOCK', key: 'cli-own/1', keyLock: 'cli-orders', watermark: billing.token.toString() });
    expect(JSON.parse(moved.stdout).error.message).toContain('key "cli-own/1" belongs to lock "cli-orders"');
    await session.close();
  });

  it('status lists every node with its role', async () => {
    const res = await runNode([CLI, '--endpoints', cluster.endpoints.join(','), '--json', 'status']);
    expect(res.code).toBe(0);
    const text = res.stdout;
    for (const n of cluster.nodes) expect(text).toContain(n.address);
    expect(text).toContain('leader');
  });
});

describe('npm run demo', () => {
  it('plays the fencing timeline: the frozen holder is refused with STALE_TOKEN, tokens grow across a failover', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'fencelock-demo-'));
    const ports = await freePorts(6);
    try {
      const res = await runNode([path.join(ROOT, 'dist/scripts/demo.js')], { env: { FENCELOCK_DEMO_DIR: dir, FENCELOCK_DEMO_PORTS: ports.join(',') }, timeoutMs: 120_000 });
      expect(res.code, res.stdout + res.stderr).toBe(0);
      expect(res.stdout).toMatch(/REFUSED FAILED_PRECONDITION STALE_TOKEN/);
      expect(res.stdout).toMatch(/B's write is intact/);
      const tokens = [...res.stdout.matchAll(/fencing token (\d+)/g)].map((m) => BigInt(m[1]));
      expect(tokens).toHaveLength(3);
      expect(tokens[1]).toBeGreaterThan(tokens[0]);
      expect(tokens[2]).toBeGreaterThan(tokens[1]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

// Elections (issue 34) against a real 3-node cluster: campaign and resign, the line of campaigners, a leader
// whose process is killed, a deposed leader's proclaim, and observers that see each leadership in token order.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FenceLockClient, isFenceLockError, type Leader, type Leadership } from '../../src/client';
import { Campaigner } from './campaigner';
import { clusterWithLeader } from './clusterWithLeader';
import { eventually, LocalCluster, PROJECT_ROOT, runNode } from './harness';

const TTL_MS = 3_000;
let cluster: LocalCluster;
let client: FenceLockClient;
const others: FenceLockClient[] = [];

/** Another client (its own sessions), endpoints in the order given. */
function newClient(endpoints = cluster.endpoints): FenceLockClient {
  const c = new FenceLockClient({ endpoints });
  others.push(c);
  return c;
}

beforeAll(async () => {
  ({ cluster, client } = await clusterWithLeader({}, 40_000));
}, 60_000);

afterEach(async () => {
  await Campaigner.stopAll();
  await Promise.all(others.splice(0).map((c) => c.close()));
});

afterAll(async () => {
  await client?.close();
  await cluster?.destroy();
});

describe('client.election', () => {
  it('campaign leads with a fenced value; leader() shows it; resign ends it and leader() is null', async () => {
    const election = client.election('el/basic', { ttlMs: TTL_MS });
    expect(await election.leader()).toBeNull();
    const l = await election.campaign('node-a');
    expect(l.text).toBe('node-a');
    const kv = await client.get('el/basic');
    expect(kv).toMatchObject({ found: true, token: l.token, lock: 'el/basic' });
    expect(await election.leader()).toMatchObject({ election: 'el/basic', token: l.token, text: 'node-a', holder: l.holder });
    await l.proclaim('node-a2');
    expect((await election.leader())?.text).toBe('node-a2');
    expect(l.signal.aborted).toBe(false);
    await l.resign();
    expect(l.signal.reason).toMatchObject({ reason: 'RELEASED' });
    expect(await election.leader()).toBeNull();
    expect((await client.describe('el/basic')).held).toBe(false);
    await expect(l.proclaim('again')).rejects.toMatchObject({ code: 'FAILED_PRECONDITION' });
  });

  it('the second campaigner leads once the first resigns, with a higher token', async () => {
    const a = await client.election('el/two', { ttlMs: TTL_MS }).campaign('a');
    const bPromise = newClient().election('el/two', { ttlMs: TTL_MS }).campaign('b');
    await eventually(async () => ((await client.describe('el/two')).waiters.length === 1 ? true : undefined), 5_000, 'b in line');
    await a.resign();
    const b = await bPromise;
    expect(b.token).toBeGreaterThan(a.token);
    expect(await client.election('el/two').leader()).toMatchObject({ token: b.token, text: 'b' });
    await b.resign();
  });

  it('a campaigner leads after the leader process is killed (its session expires)', async () => {
    const killed = new Campaigner('doomed', { endpoints: cluster.endpoints, election: 'el/crash', ttlMs: TTL_MS });
    const first = BigInt((await killed.expect('leader')).token!);
    const waiting = client.election('el/crash', { ttlMs: TTL_MS }).campaign('survivor');
    await eventually(async () => ((await client.describe('el/crash')).waiters.length === 1 ? true : undefined), 5_000, 'survivor in line');
    const killedAt = Date.now();
    await killed.kill();
    const next = await waiting;
    expect(Date.now() - killedAt).toBeGreaterThanOrEqual(TTL_MS / 2); // the lease ran out; nobody resigned
    expect(next.token).toBeGreaterThan(first);
    expect((await client.election('el/crash').leader())?.text).toBe('survivor');
    await next.resign();
  });

  it("a deposed leader's proclaim is refused, and so is its fenced write at the cluster", async () => {
    const deposed = new Campaigner('deposed', { endpoints: cluster.endpoints, election: 'el/deposed', ttlMs: TTL_MS });
    const old = BigInt((await deposed.expect('leader')).token!);
    const waiting = client.election('el/deposed', { ttlMs: TTL_MS }).campaign('new');
    await eventually(async () => ((await client.describe('el/deposed')).waiters.length === 1 ? true : undefined), 5_000, 'new in line');
    // Frozen past its TTL: its session expires on the cluster and the lock goes to the next in line.
    deposed.signal('SIGSTOP');
    const fresh = await waiting;
    expect(fresh.token).toBeGreaterThan(old);
    deposed.signal('SIGCONT');
    deposed.send('proclaim');
    expect(await deposed.expect('refused')).toMatchObject({ code: 'FAILED_PRECONDITION' });
    deposed.send('write'); // through client.write: only the cluster's fencing can refuse it
    expect(await deposed.expect('refused')).toMatchObject({ code: 'FAILED_PRECONDITION' });
    expect(await client.election('el/deposed').leader()).toMatchObject({ token: fresh.token, text: 'new' });
    expect((await client.get('el/deposed/work')).found).toBe(false);
    await fresh.resign();
  });

  it('a campaign given up by its signal leaves the line', async () => {
    const a = await client.election('el/abort', { ttlMs: TTL_MS }).campaign('a');
    const stop = new AbortController();
    const b = newClient().election('el/abort', { ttlMs: TTL_MS }).campaign('b', { signal: stop.signal });
    await eventually(async () => ((await client.describe('el/abort')).waiters.length === 1 ? true : undefined), 5_000, 'b in line');
    stop.abort(new Error('not today'));
    await expect(b).rejects.toThrow('not today');
    await eventually(async () => ((await client.describe('el/abort')).waiters.length === 0 ? true : undefined), 5_000, 'b out of line');
    await expect(client.election('el/abort').campaign('c', { waitMs: 0 })).rejects.toMatchObject({ code: 'DEADLINE_EXCEEDED', reason: 'LOCK_HELD' });
    await a.resign();
  });

  it('observers on different nodes see each leadership once, in token order, and the vacancy after the last', async () => {
    const seen: Leader[][] = [[], []];
    const vacant: bigint[][] = [[], []];
    const rotated = [...cluster.endpoints.slice(2), ...cluster.endpoints.slice(0, 2)];
    const handles = [client, newClient(rotated)].map((c, i) =>
      c.election('el/observe').observe((l) => seen[i]!.push(l), { onVacant: (t) => vacant[i]!.push(t), onError: (err) => seen[i]!.push({ error: err } as never) }),
    );
    const leaderships: Leadership[] = [];
    for (const value of ['a', 'b', 'c']) {
      const l = await newClient().election('el/observe', { ttlMs: TTL_MS }).campaign(value);
      leaderships.push(l);
      await eventually(() => (seen.every((s) => s.some((x) => x.token === l.token)) ? true : undefined), 10_000, `observers see ${value}`);
      await l.resign();
    }
    await eventually(() => (vacant.every((v) => v.includes(leaderships[2]!.token)) ? true : undefined), 10_000, 'observers see the vacancy');
    for (const h of handles) h.cancel();
    for (const s of seen) {
      expect(s.map((l) => l.text)).toEqual(['a', 'b', 'c']);
      expect(s.map((l) => l.token)).toEqual(leaderships.map((l) => l.token));
      expect(s.map((l) => l.holder)).toEqual(leaderships.map((l) => l.holder));
    }
  });

  it('refuses an empty name and a value that is neither text nor bytes', async () => {
    expect(() => client.election('')).toThrow(/non-empty/);
    await expect(client.election('el/bad').campaign(42 as never)).rejects.toSatisfy((err: unknown) => isFenceLockError(err, 'INVALID_ARGUMENT'));
  });

  it("runs the README's election example as written (the package name pointed at this build)", async () => {
    const readme = fs.readFileSync(path.join(PROJECT_ROOT, 'README.md'), 'utf8');
    const example = /<!-- example:election -->\n```js\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(example).toBeDefined();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fencelock-election-'));
    try {
      const file = path.join(dir, 'election.cjs');
      fs.writeFileSync(file, example!.replace("require('@fencelock/client')", `require(${JSON.stringify(path.join(PROJECT_ROOT, 'dist/src/client'))})`));
      const run = await runNode([file], { env: { FENCELOCK_ENDPOINTS: cluster.endpoints.join(',') }, timeoutMs: 30_000 });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toMatch(/^leading scheduler under token \d+\nleader: node-\d+\n$/);
      expect(await client.election('scheduler').leader()).toBeNull(); // it resigned
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

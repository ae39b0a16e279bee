// The proxy believes a claim only for a token the cluster issued to that lock (issue 29, defect 4), and keeps a
// bounded state: attacks sent to a real proxy process that checks claims with a real fencelock cluster.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FenceLockClient, lockFencing, type Session } from '../../src/client';
import { MAX_FENCING_TOKEN } from '../../src/fencing';
import { eventually, freePorts, LocalCluster } from '../integration/harness';
import { startBlindService, startProxy, type ProxyProcess } from './proxyProcess';

let cluster: LocalCluster;
let client: FenceLockClient;
let session: Session;

beforeAll(async () => {
  cluster = await LocalCluster.create({ size: 1 });
  cluster.startAll();
  client = new FenceLockClient({ endpoints: cluster.endpoints });
  session = await client.openSession({ ttlMs: 60_000 });
});
afterAll(async () => {
  await session?.close().catch(() => undefined);
  await client?.close();
  await cluster?.destroy();
});

/** The lines of the proxy's watermark log (none when it was never written). */
function stateLines(file: string): { r: string; l: string; t: string; s: string }[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as { r: string; l: string; t: string; s: string });
}

describe('fencelock proxy: claims checked against the cluster', () => {
  let dir: string;
  let state: string;
  let svc: Awaited<ReturnType<typeof startBlindService>>;
  let proxy: ProxyProcess | undefined;
  const checked = (extra: string[] = []) => startProxy(svc.url, state, ['--endpoints', cluster.endpoints.join(','), ...extra]);
  const post = (p: string, headers: Record<string, string>, body = 'x') => fetch(`${proxy!.url}${p}`, { method: 'POST', headers, body });

  beforeEach(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'fencelock-proxy-claims-'));
    state = path.join(dir, 'watermarks.log');
    svc = await startBlindService(undefined, (p) => (p.startsWith('/missing') ? 404 : 200));
  });
  afterEach(async () => {
    await proxy?.stop('SIGKILL');
    proxy = undefined;
    await svc.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the poisoning attack: a made-up lock or a token the lock never issued (2^63-1) gets 409 WRONG_LOCK and binds nothing; the real holder writes after', async () => {
    const holder = await session.acquire('poison/owner');
    proxy = await checked();
    const forgeries = [
      { claim: lockFencing('made-up', MAX_FENCING_TOKEN), why: 'knows no token of lock "made-up"' },
      { claim: lockFencing('never-granted', 1n), why: 'knows no token of lock "never-granted"' },
      { claim: lockFencing('poison/owner', MAX_FENCING_TOKEN), why: `has issued no token ${MAX_FENCING_TOKEN} for lock "poison/owner"` },
      { claim: lockFencing('poison/owner', holder.token + 1n), why: `has issued no token ${holder.token + 1n} for lock "poison/owner"` },
    ];
    for (const f of forgeries) {
      const r = await post('/victim', f.claim.headers(), 'forged');
      expect(r.status).toBe(409);
      expect(await r.json()).toMatchObject({ error: 'WRONG_LOCK', message: expect.stringContaining(f.why) });
    }
    expect(stateLines(state)).toEqual([]);
    expect((await post('/victim', holder.fencing.headers(), 'real')).status).toBe(200);
    expect(svc.received.map((x) => x.body)).toEqual(['real']);
    expect(stateLines(state)).toEqual([{ r: '/victim', l: 'poison/owner', t: holder.token.toString(), s: '1' }]);
    await holder.release();
  });

  it('a permit\'s claim (resource SEMAPHORE#SLOT) is checked against that slot\'s latest token: the holder writes, a token the slot never had gets 409 WRONG_LOCK', async () => {
    const first = await session.acquirePermit('pool/gpu', { permits: 2 });
    const other = await client.openSession({ ttlMs: 60_000 });
    const second = await other.acquirePermit('pool/gpu', { permits: 2 });
    proxy = await checked();
    expect(first.fencing.lock).toBe(`pool/gpu#${first.slot}`);
    expect((await post('/gpu', first.fencing.headers(), 'first')).status).toBe(200);
    // slot 1 was granted after slot 0: slot 0's token may not claim slot 1's later token, nor a future one.
    const forged = [lockFencing(`pool/gpu#${first.slot}`, second.token), lockFencing(`pool/gpu#${second.slot}`, second.token + 1n), lockFencing('pool/gpu#7', first.token)];
    for (const claim of forged) {
      const r = await post('/gpu-forged', claim.headers(), 'forged');
      expect(r.status, claim.lock).toBe(409);
      expect(await r.json()).toMatchObject({ error: 'WRONG_LOCK' });
    }
    expect((await post('/gpu-2', second.fencing.headers(), 'second')).status).toBe(200);
    expect(svc.received.map((x) => x.body)).toEqual(['first', 'second']);
    expect(stateLines(state).map((l) => l.r)).toEqual(['/gpu', '/gpu-2']);
    await Promise.all([first.release(), second.release()]);
    await other.close();
  });

  it('200 writes with made-up locks to paths the service answers 404 add nothing to the state file', async () => {
    proxy = await checked();
    const statuses: number[] = [];
    for (let batch = 0; batch < 10; batch++) {
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => post(`/missing-${batch * 20 + i}`, lockFencing(`ghost-${batch * 20 + i}`, BigInt(1 + batch * 20 + i)).headers())));
      statuses.push(...answers.map((a) => a.status));
    }
    expect(statuses).toEqual(Array.from({ length: 200 }, () => 409));
    expect(svc.received).toEqual([]);
    expect(existsSync(state) ? readFileSync(state).length : 0).toBe(0);
  });

  it('a token granted after the proxy cached the lock is accepted (the proxy asks again once); the older one is then stale', async () => {
    proxy = await checked();
    const first = await session.acquire('cache/lock');
    expect((await post('/r', first.fencing.headers(), 'first')).status).toBe(200);
    await first.release();
    const second = await session.acquire('cache/lock');
    expect(second.token).toBeGreaterThan(first.token);
    expect((await post('/r', second.fencing.headers(), 'second')).status).toBe(200);
    expect((await (await post('/r', first.fencing.headers(2n), 'late')).json()) as object).toMatchObject({ error: 'STALE' });
    expect(svc.received.map((x) => x.body)).toEqual(['first', 'second']);
    await second.release();
  });

  it('the state is bounded: beyond --max-resources a new resource gets 507 STATE_FULL and nothing is recorded or forwarded; compaction keeps the log short', async () => {
    const holder = await session.acquire('bound/lock');
    proxy = await checked(['--max-resources', '3']);
    for (const r of ['/r1', '/r2', '/r3']) expect((await post(r, holder.fencing.headers(), r)).status).toBe(200);
    const full = await post('/r4', holder.fencing.headers(), '/r4');
    expect(full.status).toBe(507);
    expect(await full.json()).toMatchObject({ error: 'STATE_FULL', message: expect.stringContaining('at most 3 resources') });
    // Known resources still take writes: many steps, and the log is compacted as it goes.
    for (let step = 2n; step <= 100n; step++) expect((await post('/r1', holder.fencing.headers(step), `s${step}`)).status).toBe(200);
    const lines = stateLines(state);
    expect(lines.length).toBeLessThanOrEqual(2 * 3 + 64);
    expect(lines.filter((l) => l.r === '/r1').at(-1)).toMatchObject({ t: holder.token.toString(), s: '100' });
    expect(new Set(lines.map((l) => l.r))).toEqual(new Set(['/r1', '/r2', '/r3']));
    // The bound and the watermarks hold across a restart.
    await proxy.stop();
    proxy = await checked(['--max-resources', '3']);
    expect((await post('/r4', holder.fencing.headers(), '/r4')).status).toBe(507);
    expect((await post('/r1', holder.fencing.headers(100n), 'again')).status).toBe(409);
    expect(svc.received.filter((x) => x.path === '/r4' || x.body === 'again')).toEqual([]);
    await holder.release();
  });

  it('a flood of made-up claims puts at most 64 checks in flight at the cluster: the rest get 503 at once', async () => {
    proxy = await checked(['--timeout', '30000']);
    // Warm the proxy's connection to the cluster, so that every check below is a Describe in flight.
    expect((await post('/warm', lockFencing('warm-up', 1n).headers())).status).toBe(409);
    const node = cluster.nodes[0]!.id;
    cluster.pause(node);
    try {
      // Whichever arrive after the first 64 (connections race) are answered while the cluster is paused.
      const early: string[] = [];
      const answers = Array.from({ length: 70 }, (_, i) =>
        post(`/flood-${i}`, lockFencing(`flood-${i}`, 1n).headers()).then(async (r) => {
          const body = (await r.json()) as { error: string; message: string };
          const seen = `${r.status} ${body.error} ${/checking 64 claims/.test(body.message) ? 'busy' : ''}`.trim();
          early.push(seen);
          return seen;
        }),
      );
      await eventually(() => early.length >= 6 || undefined, 30_000, 'the six claims beyond the 64 in flight');
      expect(early).toEqual(Array.from({ length: 6 }, () => '503 CLUSTER_UNAVAILABLE busy'));
      cluster.resume(node);
      const all = await Promise.all(answers);
      expect(all.filter((a) => a === '409 WRONG_LOCK')).toHaveLength(64);
    } finally {
      cluster.resume(node);
    }
    expect(svc.received).toEqual([]);
    expect(stateLines(state)).toEqual([]);
  });

  it('when the cluster cannot answer, a write gets 503 and is neither recorded nor forwarded', async () => {
    const [nobody] = await freePorts(1);
    proxy = await startProxy(svc.url, state, ['--endpoints', `127.0.0.1:${nobody}`, '--timeout', '1000']);
    const r = await post('/r', lockFencing('l', 1n).headers());
    expect(r.status).toBe(503);
    expect(await r.json()).toMatchObject({ error: 'CLUSTER_UNAVAILABLE', message: expect.stringContaining('nothing was forwarded') });
    expect(svc.received).toEqual([]);
    expect(stateLines(state)).toEqual([]);
  });
});

// Tenants that cannot starve each other (issue 10's observations, each as a named regression): with auth
// on and an identity per tenant, over real node processes and real TLS connections, a hostile tenant
// reaches its own quotas and nothing of the others': no session flood, no eviction of another tenant's
// retry records, no squatting of keys outside its prefixes, no filling of the store.
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FenceLockClient, type FenceLockError } from '../../src/client';
import { DEFAULT_QUOTAS } from '../../src/state/limits';
import { eventually, LocalCluster } from '../integration/harness';
import { authedClient, type AuthedClient } from './authKit';
import { formatRss, watchRss } from './processMemory';

type Obj = Record<string, unknown>;

let cluster: LocalCluster;
let admin: FenceLockClient;
const tokens = new Map<string, string>();
const clients: FenceLockClient[] = [];

/** A client of tenant `name` (by its bearer token). */
function tenant(name: string, opts: { clientId?: string } = {}): FenceLockClient {
  const c = new FenceLockClient({ endpoints: cluster.endpoints, token: tokens.get(name)!, requestTimeoutMs: 3_000, totalTimeoutMs: 15_000, ...opts });
  clients.push(c);
  return c;
}

async function leaderNode(): Promise<{ address: string; pid: number }> {
  const st = await admin.status();
  const node = cluster.nodes.find((n) => n.id === st.leader)!;
  return { address: node.address, pid: node.process!.pid! };
}

/** The refusal of `p` as CODE/REASON/QUOTA ('ok' when it succeeded). */
async function outcome(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'ok';
  } catch (err) {
    const e = err as FenceLockError;
    return `${e.code}/${e.reason ?? ''}${e.quota ? `/${e.quota}` : ''}`;
  }
}

beforeAll(async () => {
  // A longer election timeout: the floods below load a 2-core machine, and an election would end them.
  cluster = await LocalCluster.create({ authAdmin: 'test', electionTicks: 20 });
  cluster.startAll();
  // The test process's client certificate names `test`: the admin.
  admin = new FenceLockClient({ endpoints: cluster.endpoints, requestTimeoutMs: 3_000, totalTimeoutMs: 20_000 });
  await eventually(async () => ((await admin.auth.whoAmI()).authEnabled ? true : undefined), 30_000, 'auth on');
  for (const name of ['eve', 'vic']) {
    await admin.auth.roleAdd(`own-${name}`);
    for (const perm of ['lock', 'write', 'read'] as const) {
      await admin.auth.roleGrantPermission(`own-${name}`, perm, `${name}/`);
      await admin.auth.roleGrantPermission(`own-${name}`, perm, 'shared/');
    }
    await admin.auth.userAdd(name);
    await admin.auth.userGrantRole(name, `own-${name}`);
    tokens.set(name, (await admin.auth.tokenIssue(name)).token);
  }
}, 90_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await admin?.close();
  await cluster?.destroy();
});

describe('tenants cannot starve each other', () => {
  it('session flood: one identity stops at its sessions quota, and another still opens sessions', async () => {
    await admin.auth.roleSetQuota('own-eve', 'sessions', 200);
    const eve = tenant('eve');
    const results: string[] = [];
    for (let batch = 0; batch < 5; batch++) {
      results.push(...(await Promise.all(Array.from({ length: 50 }, () => outcome(eve.openSession({ ttlMs: 60_000 }))))));
    }
    const opened = results.filter((r) => r === 'ok').length;
    expect(opened).toBe(200);
    expect(new Set(results.filter((r) => r !== 'ok'))).toEqual(new Set(['RESOURCE_EXHAUSTED/QUOTA_EXCEEDED/sessions']));
    const vic = tenant('vic');
    expect(await outcome(vic.openSession({ ttlMs: 60_000 }))).toBe('ok');
    await eve.close();
  });

  it('dedup eviction: another identity flooding fresh client ids cannot make a retried Acquire apply twice', async () => {
    const { address } = await leaderNode();
    const certsDir = cluster.certsDir!;
    const vic: AuthedClient = authedClient(address, certsDir, { token: tokens.get('vic')! });
    const eve: AuthedClient = authedClient(address, certsDir, { token: tokens.get('eve')! });
    try {
      const opened = await vic.call('Session', 'Open', { header: { clientId: 'vic-retrier', requestId: '1' }, ttlMs: '60000' });
      const acquire: Obj = { header: { clientId: 'vic-retrier', requestId: '2' }, lock: 'vic/dedup', sessionId: opened.sessionId, waitTimeoutMs: '0' };
      const first = await vic.call('Lock', 'Acquire', acquire);
      expect(first.acquired).toBe(true);
      await vic.call('Lock', 'Release', { header: { clientId: 'vic-retrier', requestId: '3' }, lock: 'vic/dedup', sessionId: opened.sessionId, token: first.token });

      // 12,000 cheap requests under fresh client ids: more than the whole table held before quotas (10,000;
      // 10,050 of them evicted the victim then).
      const recorded = await floodClientIds(eve, 12_000);
      expect(recorded).toBeGreaterThanOrEqual(10_050);

      // The retry of the first Acquire gets its stored answer: the same token, and no second grant.
      const retry = await vic.call('Lock', 'Acquire', acquire);
      expect(retry.token).toBe(first.token);
      const described = await vic.call('Lock', 'Describe', { lock: 'vic/dedup' });
      // Not held: a second grant would hold it (an idle lock without keys is forgotten, so no latest token shows).
      expect(described.held).toBe(false);
    } finally {
      vic.close();
      eve.close();
    }
  });

  it('key squatting: a tenant cannot write outside its prefixes, and an admin moves a squatted key to its rightful lock', async () => {
    const eve = tenant('eve');
    const vic = tenant('vic');
    const eveSession = await eve.openSession({ ttlMs: 30_000 });
    const vicSession = await vic.openSession({ ttlMs: 30_000 });
    const eveLock = await eveSession.acquire('eve/l', { waitTimeoutMs: 0 });
    expect(await outcome(eveLock.write([{ put: 'vic/report', value: 'squat' }]))).toBe('PERMISSION_DENIED/PERMISSION_DENIED');

    // Both may write shared/: eve writes shared/report first, under her lock, and so binds it.
    const eveShared = await eveSession.acquire('shared/eve', { waitTimeoutMs: 0 });
    await eveShared.write([{ put: 'shared/report', value: 'eve was here' }]);
    const vicShared = await vicSession.acquire('shared/vic', { waitTimeoutMs: 0 });
    const refused = await vicShared.write([{ put: 'shared/report', value: 'vic' }]).catch((e: FenceLockError) => e);
    expect((refused as FenceLockError).reason).toBe('WRONG_LOCK');
    expect((refused as FenceLockError).keyLock).toBe('shared/eve');

    // The admin moves the key to vic's lock (nobody may hold it meanwhile); its watermark stays.
    await vicShared.release();
    const moved = await admin.move({ key: 'shared/report' }, 'shared/vic');
    expect(moved.moved).toBe(1);
    const again = await vicSession.acquire('shared/vic', { waitTimeoutMs: 0 });
    expect(again.token).toBeGreaterThan(eveShared.token);
    await again.write([{ put: 'shared/report', value: 'vic' }]);
    expect(Buffer.from((await vic.get('shared/report')).value ?? []).toString()).toBe('vic');
    // eve's grant, still held, is now refused on that key: it belongs to another lock.
    expect(await outcome(eveShared.write([{ put: 'shared/report', value: 'eve again' }]))).toBe('FAILED_PRECONDITION/WRONG_LOCK');
    expect(await outcome(eve.move({ key: 'shared/report' }, 'shared/eve'))).toBe('PERMISSION_DENIED/PERMISSION_DENIED');
  });

  it('a client whose first request never reached the log goes on under a fresh client id (its request 2 would be refused REQUEST_TOO_OLD)', async () => {
    const eve = tenant('eve', { clientId: 'eve-first-refused' });
    // Request 1 is refused by the node before it proposes anything: the cluster never hears of this client id.
    const session = await admin.openSession({ ttlMs: 30_000 });
    expect(await outcome(eve.acquireFor(session, 'vic/not-eves', 0))).toBe('PERMISSION_DENIED/PERMISSION_DENIED');
    // Request 2 of an unknown client id is refused at its first attempt; the library sends it again under a new id.
    const own = await eve.openSession({ ttlMs: 30_000 });
    expect(eve.clientId).not.toBe('eve-first-refused');
    expect(eve.clientId.startsWith('eve-first-refused~')).toBe(true);
    const grant = await own.acquire('eve/after-renewal', { waitTimeoutMs: 0 });
    expect(grant.token).toBeGreaterThan(0n);
    await session.close();
  });

  it('store full: one identity stops at its store_bytes quota, another still writes, and node memory stays bounded', async () => {
    const { pid } = await leaderNode();
    const rss = watchRss(pid);
    const eve = tenant('eve');
    const held = await (await eve.openSession({ ttlMs: 60_000 })).acquire('eve/bulk', { waitTimeoutMs: 0 });
    const chunk = Buffer.alloc(64 * 1024, 7);
    let written = 0;
    let refusal = 'none';
    const perWrite = 7; // 448 KiB and the keys: under MAX_WRITE_BYTES
    for (let i = 0; i < 64 && refusal === 'none'; i++) {
      const ops = Array.from({ length: perWrite }, (_, j) => ({ put: `eve/bulk/${i}-${j}`, value: chunk }));
      const result = await outcome(held.write(ops));
      if (result === 'ok') written += perWrite * chunk.length;
      else refusal = result;
    }
    expect(refusal).toBe('RESOURCE_EXHAUSTED/QUOTA_EXCEEDED/store_bytes');
    expect(written).toBeLessThanOrEqual(DEFAULT_QUOTAS.store_bytes);
    expect(written).toBeGreaterThan(DEFAULT_QUOTAS.store_bytes - perWrite * chunk.length - 64 * 1024);
    const vic = tenant('vic');
    const vicLock = await (await vic.openSession({ ttlMs: 30_000 })).acquire('vic/small', { waitTimeoutMs: 0 });
    expect(await outcome(vicLock.write([{ put: 'vic/small', value: 'hello' }]))).toBe('ok');
    const report = rss.stop();
    console.log(`store quota: eve wrote ${(written / 2 ** 20).toFixed(1)} MiB before ${refusal}; ${formatRss("leader RSS", report)}`);
    // The store holds at most 16 MiB of eve's; the log entries and their copies add a few times that.
    expect(report.growthMiB).toBeLessThan(200);
  });
});

/**
 * Sends `n` Release calls, each under a fresh client id, on one Pipeline stream; returns how many were
 * applied (answered with the refusal the state machine stores: the session is unknown).
 */
async function floodClientIds(c: AuthedClient, n: number): Promise<number> {
  const stream = c.duplex('Pipeline', 'Calls');
  let answered = 0;
  const batch = 250;
  try {
    for (let start = 0; start < n; start += batch) {
      const done = new Promise<void>((resolve, reject) => {
        let left = Math.min(batch, n - start);
        const onData = (res: Obj): void => {
          if (Number(res.code) === grpc.status.NOT_FOUND) answered++;
          if (--left === 0) {
            stream.off('data', onData);
            resolve();
          }
        };
        stream.on('data', onData);
        stream.once('error', reject);
      });
      for (let i = start; i < Math.min(start + batch, n); i++) {
        const release = { header: { clientId: `flood-${i}`, requestId: '1' }, lock: 'eve/none', sessionId: 'f'.repeat(32), token: '1' };
        stream.write({ callId: String(i + 1), release });
      }
      await done;
    }
  } finally {
    stream.end();
  }
  return answered;
}

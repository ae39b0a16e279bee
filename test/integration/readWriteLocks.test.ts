// Read-write locks over real processes (issue 33, docs/architecture.md#read-write-locks): shared holders
// together, each with its own token; a writer waits for them and later readers wait behind the writer; a
// shared holder's fenced write is refused SHARED_GRANT; Describe lists the shared holders.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FenceLockClient, isFenceLockError } from '../../src/client';
import { eventually, LocalCluster } from './harness';

let cluster: LocalCluster;
let client: FenceLockClient;

beforeAll(async () => {
  cluster = await LocalCluster.create();
  cluster.startAll();
  client = new FenceLockClient({ endpoints: cluster.endpoints });
  await eventually(async () => (await client.statusAll()).find((r) => r.ok && r.status.role === 'leader')?.endpoint, 30_000, 'a leader');
}, 60_000);

afterAll(async () => {
  await client?.close();
  await cluster?.destroy();
});

describe('read-write locks', () => {
  it('shares a lock between readers, queues a writer and a later reader FIFO, and refuses a reader\'s write SHARED_GRANT', async () => {
    const [r1, r2, w, r3] = await Promise.all([0, 1, 2, 3].map(() => client.openSession({ ttlMs: 30_000 })));
    const h1 = await r1!.acquire('rw/db', { mode: 'shared' });
    const h2 = await r2!.acquire('rw/db', { mode: 'shared' });
    expect(h2.token).toBeGreaterThan(h1.token);
    const d = await client.describe('rw/db');
    expect(d.held).toBe(false);
    expect(d.sharedHolders.map((x) => x.token)).toEqual([h1.token, h2.token]);
    expect(await w!.tryAcquire('rw/db')).toBeNull();

    const refused = await h1.write([{ put: 'rw/db/k', value: 'x' }]).catch((e: unknown) => e);
    expect(isFenceLockError(refused) && refused.reason).toBe('SHARED_GRANT');

    const writer = w!.acquire('rw/db', { waitTimeoutMs: 30_000 });
    await eventually(async () => ((await client.describe('rw/db')).waiters.length === 1 ? true : undefined), 10_000, 'the writer queued');
    const reader3 = r3!.acquire('rw/db', { mode: 'shared', waitTimeoutMs: 30_000 });
    const queued = await eventually(async () => {
      const x = await client.describe('rw/db');
      return x.waiters.length === 2 ? x : undefined;
    }, 10_000, 'the late reader queued behind the writer');
    expect(queued.waiterShared).toEqual([false, true]);

    await h1.release();
    await h2.release();
    const hw = await writer;
    expect(hw.token).toBeGreaterThan(h2.token);
    await hw.write([{ put: 'rw/db/k', value: 'written' }]);
    await hw.release();
    const h3 = await reader3;
    expect(h3.token).toBeGreaterThan(hw.token);
    await h3.release();
    await Promise.all([r1, r2, w, r3].map((s) => s!.close()));
  }, 60_000);

  it('withReadLock holds a shared grant; MODE_CONFLICT for the same session in the other mode', async () => {
    const s = await client.openSession({ ttlMs: 30_000 });
    await client.withReadLock('rw/conf', async (token) => {
      expect(token).toBeGreaterThan(0n);
      expect((await client.describe('rw/conf')).sharedHolders).toHaveLength(1);
    });
    await s.acquire('rw/conf', { mode: 'shared' });
    const err = await s.tryAcquire('rw/conf').catch((e: unknown) => e);
    expect(isFenceLockError(err) && err.reason).toBe('MODE_CONFLICT');
    await s.close();
  }, 60_000);
});

// Semaphores over real processes (issue 33, docs/architecture.md#semaphores): three permits, three holders
// writing under their slots; the holder of slot 2 stops renewing (a process paused past its lease), its
// session expires on the leader and a waiter gets slot 2 under a new token and writes; the stale slot-2
// write is then refused STALE_TOKEN while slots 0 and 1 write on. Also withPermit and Describe.
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FenceLockClient, isFenceLockError } from '../../src/client';
import { eventually, LocalCluster, runNode } from './harness';

const CLI = path.join(path.resolve(__dirname, '../..'), 'dist/src/cli/main.js');

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

describe('semaphores', () => {
  it('refuses a stale holder of slot 2 paused past its lease once slot 2 has a new holder, while slots 0 and 1 write on', async () => {
    const [a, b, c, d] = await Promise.all([30_000, 30_000, 3_000, 30_000].map((ttlMs) => client.openSession({ ttlMs })));
    const permits = [await a!.acquirePermit('sem/pool', { permits: 3 }), await b!.acquirePermit('sem/pool', { permits: 3 }), await c!.acquirePermit('sem/pool', { permits: 3 })];
    expect(permits.map((p) => p.slot)).toEqual([0, 1, 2]);
    for (const p of permits) await p.write([{ put: `sem/pool/${p.slot}`, value: `first ${p.slot}` }]);
    const stale = permits[2]!;
    expect(stale.fencing).toMatchObject({ lock: 'sem/pool#2', semaphore: 'sem/pool', slot: 2, token: stale.token });

    const waiting = d!.acquirePermit('sem/pool', { permits: 3, waitTimeoutMs: 60_000 });
    await eventually(async () => ((await client.describeSemaphore('sem/pool')).waiters.length === 1 ? true : undefined), 10_000, 'the waiter queued');
    // The holder of slot 2 stops renewing: its session expires on the leader after its TTL.
    c!.abandon('paused past its lease (test)');
    const next = await waiting;
    expect(next.slot).toBe(2);
    expect(next.token).toBeGreaterThan(stale.token);
    await next.write([{ put: 'sem/pool/2', value: 'the new holder' }]);

    const refused = await stale.write([{ put: 'sem/pool/2', value: 'stale' }]).catch((e: unknown) => e);
    expect(isFenceLockError(refused) && refused.reason).toBe('STALE_TOKEN');
    expect(isFenceLockError(refused) && refused.watermark).toBe(next.token);
    expect(stale.signal.aborted).toBe(true);
    // Slots 0 and 1 are untouched by slot 2's new grant.
    for (const p of permits.slice(0, 2)) await p.write([{ put: `sem/pool/${p.slot}`, value: `again ${p.slot}` }]);

    const kept = await client.get('sem/pool/2');
    expect(kept).toMatchObject({ lock: 'sem/pool', slot: 2, token: next.token });
    expect(new TextDecoder().decode(kept.value)).toBe('the new holder');
    const described = await client.describeSemaphore('sem/pool');
    expect(described.permits).toBe(3);
    expect(described.holders.map((h) => [h.slot, h.token, h.session?.handle])).toEqual([
      [0, permits[0]!.token, a!.publicId],
      [1, permits[1]!.token, b!.publicId],
      [2, next.token, d!.publicId],
    ]);
    await Promise.all([permits[0]!.release(), permits[1]!.release(), next.release()]);
    expect((await client.describeSemaphore('sem/pool')).permits).toBe(0);
  }, 60_000);

  it('runs withPermit under a slot and releases it after; refuses another number of permits PERMITS_MISMATCH', async () => {
    const other = await client.openSession({ ttlMs: 30_000 });
    const held = await other.acquirePermit('sem/jobs', { permits: 2 });
    const mismatch = await client.withPermit('sem/jobs', { permits: 3 }, () => Promise.resolve('ran')).catch((e: unknown) => e);
    expect(isFenceLockError(mismatch) && mismatch.reason).toBe('PERMITS_MISMATCH');
    const slot = await client.withPermit('sem/jobs', { permits: 2 }, async (permit, signal) => {
      expect(signal.aborted).toBe(false);
      expect(permit.fencing.lock).toBe(`sem/jobs#${permit.slot}`);
      await permit.write([{ put: 'sem/jobs/out', value: 'done' }]);
      return permit.slot;
    });
    expect(slot).toBe(1);
    expect((await client.describeSemaphore('sem/jobs')).holders.map((h) => h.slot)).toEqual([held.slot]);
    expect(await other.tryAcquirePermit('sem/jobs', { permits: 2 })).toMatchObject({ slot: held.slot, token: held.token });
    await held.release();
  }, 30_000);

  it('fencelock lock NAME --permits N -- CMD runs CMD with the permit\'s token and slot; --wait 0 fails PERMITS_FULL when all are taken', async () => {
    const endpoints = cluster.endpoints.join(',');
    const holder = await client.openSession({ ttlMs: 30_000 });
    const held = await holder.acquirePermit('sem/cli', { permits: 2 });
    const res = await runNode([CLI, '--endpoints', endpoints, '--json', 'lock', 'sem/cli', '--permits', '2', '--', 'sh', '-c', 'echo "slot=$FENCELOCK_SLOT token=$FENCELOCK_TOKEN" >&2; exit 5']);
    expect(res.code, res.stderr).toBe(5);
    const m = /slot=(\d+) token=(\d+)/.exec(res.stderr);
    expect(m, res.stderr).not.toBeNull();
    expect(Number(m![1])).toBe(1);
    expect(JSON.parse(res.stdout)).toEqual({ lock: 'sem/cli', token: m![2], slot: 1, exitCode: 5 });
    // Released when CMD ended: only the holder's permit is left.
    expect((await client.describeSemaphore('sem/cli')).holders.map((h) => h.slot)).toEqual([held.slot]);

    const other = await client.openSession({ ttlMs: 30_000 });
    const second = await other.acquirePermit('sem/cli', { permits: 2 });
    const full = await runNode([CLI, '--endpoints', endpoints, '--json', 'lock', 'sem/cli', '--permits', '2', '--wait', '0', '--', 'sh', '-c', 'echo ran']);
    expect(full.code).toBe(3);
    expect(full.stdout).not.toContain('ran');
    expect(JSON.parse(full.stdout)).toMatchObject({ error: { code: 'PERMITS_FULL' } });
    await Promise.all([held.release(), second.release()]);
  }, 30_000);
});

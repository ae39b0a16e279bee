// Issue 14: what "presumed lost" does to a holder, over a real 3-node cluster (TLS, the harness's default):
// withLock's signal aborts before the lease can have ended, close() is bounded during an outage, and a
// process that forgets close() still exits (its lock stays held on the server until the lease ends there).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FenceLockClient, FenceLockError } from '../../src/client';
import { monotonicNow } from '../../src/client/clock';
import { eventually, LocalCluster, PROJECT_ROOT, runNode } from '../integration/harness';

let cluster: LocalCluster | undefined;
let client: FenceLockClient | undefined;

afterEach(async () => {
  for (const n of cluster?.nodes ?? []) if (n.paused) cluster!.resume(n.id);
  await client?.close({ timeoutMs: 0 }).catch(() => undefined);
  await cluster?.destroy();
  client = undefined;
  cluster = undefined;
});

async function started(): Promise<{ cluster: LocalCluster; client: FenceLockClient }> {
  cluster = await LocalCluster.create();
  cluster.startAll();
  client = new FenceLockClient({ endpoints: cluster.endpoints, requestTimeoutMs: 1_000, totalTimeoutMs: 5_000 });
  const c = client;
  await eventually(async () => (await c.status()).leader !== '' || undefined, 20_000, 'a leader');
  return { cluster, client };
}

/** SIGSTOPs every node but one: no majority is left to renew a lease. */
function freezeMajority(c: LocalCluster): void {
  for (const n of c.nodes.slice(1)) c.pause(n.id);
}

describe('presumed lost (README "The TypeScript client")', () => {
  it("withLock's signal aborts with PRESUMED_LOST once renewals stop, before the TTL is over", async () => {
    const { cluster: c, client: cl } = await started();
    const ttl = 3_000;
    let seen: { token: bigint; reason: unknown; abortedAt: number; acquiredBy: number } | undefined;
    const done = cl.withLock(
      'loss/signal',
      async (token, lock, signal) => {
        const acquiredBy = monotonicNow();
        expect(signal.aborted).toBe(false);
        expect(lock.signal).toBe(signal);
        freezeMajority(c);
        const reason = await new Promise<unknown>((resolve) => signal.addEventListener('abort', () => resolve(signal.reason), { once: true }));
        seen = { token, reason, abortedAt: monotonicNow(), acquiredBy };
        for (const n of c.nodes) if (n.paused) c.resume(n.id);
      },
      { ttlMs: ttl },
    );
    // The release after the outage may or may not be confirmed: what the body saw is under test.
    await done.catch((err: unknown) => expect(err).toBeInstanceOf(FenceLockError));
    if (!seen) throw new Error('the body never saw its signal abort');
    expect(seen.reason).toBeInstanceOf(FenceLockError);
    expect((seen.reason as FenceLockError).reason).toBe('PRESUMED_LOST');
    // The client stops before the server can have ended the lease (that needs a whole TTL without renewal).
    expect(seen.abortedAt).toBeLessThan(seen.acquiredBy + ttl);
    expect(seen.token).toBeGreaterThan(0n);
  });

  it('close({ timeoutMs }) returns within its bound while no majority answers, and the default is under 10 s', async () => {
    const { cluster: c, client: cl } = await started();
    const s = await cl.openSession({ ttlMs: 3_000 });
    await s.acquire('loss/close');
    const other = new FenceLockClient({ endpoints: c.endpoints, requestTimeoutMs: 1_000, totalTimeoutMs: 5_000 });
    const s2 = await other.openSession({ ttlMs: 3_000 });
    freezeMajority(c);
    for (const n of c.nodes) if (!n.paused) c.pause(n.id); // nothing answers at all

    let t0 = monotonicNow();
    await cl.close({ timeoutMs: 500 });
    const bounded = monotonicNow() - t0;
    expect(bounded).toBeGreaterThanOrEqual(450);
    expect(bounded).toBeLessThan(1_500);

    t0 = monotonicNow();
    await other.close();
    const byDefault = monotonicNow() - t0;
    expect(byDefault).toBeLessThan(3_500);
    expect(s.isClosed() && s2.isClosed()).toBe(true);
    await expect(cl.close({ timeoutMs: 1 })).resolves.toBeUndefined(); // idempotent: the first call's promise
    await expect(new FenceLockClient({ endpoints: c.endpoints }).close({ timeoutMs: -1 })).rejects.toThrow(/timeoutMs must be a non-negative integer/);
  });

  it('a process that acquires and forgets close() exits; the server holds its lock until the lease ends there', async () => {
    const { client: cl } = await started();
    const dir = fs.mkdtempSync(path.join(cluster!.dir, 'app-'));
    const script = path.join(dir, 'forgetful.cjs');
    fs.writeFileSync(
      script,
      [
        `const { FenceLockClient } = require(${JSON.stringify(path.join(PROJECT_ROOT, 'dist/src/client'))});`,
        'const client = new FenceLockClient({ endpoints: process.env.ENDPOINTS.split(",") });',
        'client.openSession({ ttlMs: 6000 })',
        '  .then((s) => s.acquire("loss/forgotten"))',
        '  .then((lock) => console.log("acquired " + lock.token));',
      ].join('\n'),
    );
    const t0 = monotonicNow();
    const run = await runNode([script], { env: { ENDPOINTS: cluster!.endpoints.join(',') }, timeoutMs: 15_000 });
    const ranFor = monotonicNow() - t0;
    expect(run.stderr).not.toMatch(/error|unhandled/i);
    expect(run.code).toBe(0);
    const token = BigInt(/acquired (\d+)/.exec(run.stdout)?.[1] ?? '0');
    expect(token).toBeGreaterThan(0n);
    // Well before the 6 s TTL: nothing of the client kept the process alive.
    expect(ranFor).toBeLessThan(5_000);
    const d = await cl.describe('loss/forgotten');
    expect(d.held).toBe(true);
    expect(d.token).toBe(token);
    await eventually(async () => !(await cl.describe('loss/forgotten')).held || undefined, 15_000, 'the forgotten lease to expire');
  });
});

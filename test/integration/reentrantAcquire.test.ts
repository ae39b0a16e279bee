// Re-entrancy (issue 34), through the client over gRPC against a real 3-node cluster: an Acquire by the
// session that already holds the lock answers the current grant (same token, no new grant), and there is no
// hold count: one release frees the lock, whatever number of acquires returned it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FenceLockClient, FenceLockError, type LockHandle } from '../../src/client';
import { clusterWithLeader } from './clusterWithLeader';
import { LocalCluster } from './harness';

let cluster: LocalCluster;
let client: FenceLockClient;

beforeAll(async () => {
  ({ cluster, client } = await clusterWithLeader({}, 15_000));
}, 60_000);

afterAll(async () => {
  await client?.close();
  await cluster?.destroy();
});

describe('an acquire by the session that holds the lock', () => {
  it('answers the same grant, blocking or try; one release frees the lock', async () => {
    const session = await client.openSession({ ttlMs: 10_000 });
    const first = await session.acquire('re/a');
    const again = await session.acquire('re/a', { waitTimeoutMs: 0 });
    const tried = await session.tryAcquire('re/a');
    // The tokens come from the server (a different one would make a new handle below).
    expect(again.token).toBe(first.token);
    expect(tried?.token).toBe(first.token);
    // The client hands out the one handle of the one grant: whoever holds it sees the same state.
    expect(again).toBe(first);
    expect(tried).toBe(first);
    // No new grant: the lock's latest token is still the first one.
    expect(await client.describe('re/a')).toMatchObject({ held: true, token: first.token, latestToken: first.token, holderSession: session.publicId });

    await again.release();
    expect((await client.describe('re/a')).held).toBe(false);
    expect(first.isReleased()).toBe(true);
    // The grant is over for every acquire that returned it: a write under its token is refused.
    const refused = await first.write([{ put: 're/a/k', value: 'v' }]).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(FenceLockError);
    expect((refused as FenceLockError).reason).toBe('LOCK_NOT_HELD');

    // The next acquire is a new grant, with a higher token.
    const next = await session.acquire('re/a');
    expect(next.token).toBeGreaterThan(first.token);
    await next.release();
    await session.close();
  }, 30_000);

  it('a nested withLock of the same lock shares the grant, and its release ends it for the outer one too', async () => {
    let outer: LockHandle | undefined;
    let innerToken: bigint | undefined;
    await client.withLock('re/nested', async (token, lock, signal) => {
      outer = lock;
      await client.withLock('re/nested', async (t) => {
        innerToken = t;
      });
      expect(innerToken).toBe(token);
      // The inner release ended the one grant: the outer body is told, and the lock is free.
      expect(signal.aborted).toBe(true);
      expect((signal.reason as FenceLockError).reason).toBe('RELEASED');
      expect((await client.describe('re/nested')).held).toBe(false);
    });
    expect(outer!.isReleased()).toBe(true);
  }, 30_000);
});

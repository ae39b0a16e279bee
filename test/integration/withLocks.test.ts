// client.withLocks (issue 33) over real processes: the body runs holding every lock of the set under one
// token, bodies naming [a, b] and [b, a] from two clients take turns and never overlap, every lock is released
// after the body (also when it throws), and the signal aborts when one lock of the set is revoked alone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FenceLockClient, isFenceLockError, type FenceLockError } from '../../src/client';
import { clusterWithLeader } from './clusterWithLeader';
import { type LocalCluster } from './harness';

let cluster: LocalCluster;
let client: FenceLockClient;
let other: FenceLockClient;

beforeAll(async () => {
  ({ cluster, client } = await clusterWithLeader({}, 90_000));
  other = new FenceLockClient({ endpoints: cluster.endpoints });
}, 120_000);

afterAll(async () => {
  await other?.close();
  await client?.close();
  await cluster?.destroy();
});

async function heldTokens(locks: string[]): Promise<Array<bigint | null>> {
  return Promise.all(locks.map(async (l) => {
    const d = await client.describe(l);
    return d.held ? d.token : null;
  }));
}

describe('client.withLocks', () => {
  it('runs the body under one token for every lock, handles in the order given, and releases them all after', async () => {
    const result = await client.withLocks(['wl/b', 'wl/a'], async (token, locks, signal) => {
      expect(locks.map((l) => l.name)).toEqual(['wl/b', 'wl/a']);
      for (const l of locks) expect(l.token).toBe(token);
      expect(await heldTokens(['wl/a', 'wl/b'])).toEqual([token, token]);
      for (const l of locks) await l.write([{ put: `${l.name}/v`, value: 'set' }]);
      expect(signal.aborted).toBe(false);
      return token;
    });
    expect((await client.get('wl/a/v')).token).toBe(result);
    expect(await heldTokens(['wl/a', 'wl/b'])).toEqual([null, null]);
  }, 30_000);

  it('bodies of [a, b] and [b, a] from two clients take turns: never together, no deadlock', async () => {
    let inside = 0;
    let overlapped = false;
    const tokens: bigint[] = [];
    const turns = async (c: FenceLockClient, locks: string[]): Promise<void> => {
      for (let i = 0; i < 5; i++) {
        await c.withLocks(locks, async (token) => {
          inside++;
          if (inside > 1) overlapped = true;
          // A call while inside: the other body would get in now if the set were not exclusive.
          expect(await heldTokens(['turn/a', 'turn/b'])).toEqual([token, token]);
          tokens.push(token);
          inside--;
        }, { waitTimeoutMs: 30_000 });
      }
    };
    await Promise.all([turns(client, ['turn/a', 'turn/b']), turns(other, ['turn/b', 'turn/a'])]);
    expect(overlapped).toBe(false);
    expect(tokens).toHaveLength(10);
    expect(new Set(tokens).size).toBe(10);
  }, 60_000);

  it('releases every lock when the body throws, and rethrows the body\'s error', async () => {
    const err = await client
      .withLocks(['throw/a', 'throw/b'], async () => {
        expect(await heldTokens(['throw/a', 'throw/b'])).not.toContain(null);
        throw new Error('body failed');
      })
      .catch((e: unknown) => e);
    expect((err as Error).message).toBe('body failed');
    expect(await heldTokens(['throw/a', 'throw/b'])).toEqual([null, null]);
  }, 30_000);

  it('aborts the signal (REVOKED) when one lock of the set is revoked alone; the other is released after the body', async () => {
    let reason: FenceLockError | undefined;
    const outcome = await client
      .withLocks(
        ['rv/a', 'rv/b'],
        async (token, _locks, signal) => {
          await client.revokeLock('rv/b', { token, reason: 'test: one lock of a set' });
          // The client learns of the revoke from its next renewal.
          await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
          reason = signal.reason as FenceLockError;
          return 'body done';
        },
        { ttlMs: 3_000 },
      )
      .catch((e: unknown) => e);
    expect(isFenceLockError(reason) && reason.reason).toBe('REVOKED');
    expect(reason?.message).toContain('lock "rv/b"');
    // As withLock after a revoke: the lock was no longer held at its release, which the caller is told.
    expect(isFenceLockError(outcome, 'FAILED_PRECONDITION')).toBe(true);
    expect(await heldTokens(['rv/a', 'rv/b'])).toEqual([null, null]);
  }, 30_000);
});

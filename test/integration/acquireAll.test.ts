// Atomic multi-lock over real processes (issue 33, docs/architecture.md#atomic-multi-lock): two clients
// acquiring the same two locks in opposite orders, over and over, never deadlock and never hold part of the
// set; a set's holder writes under both locks; a holder's session expiry hands the whole set on in one entry.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FenceLockClient, type LockHandle, type Session } from '../../src/client';
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

/** Takes the set `locks` `rounds` times; each time checks that both locks are its own under one token, and writes under both. */
async function takeTurns(session: Session, locks: string[], rounds: number, seen: bigint[]): Promise<void> {
  for (let i = 0; i < rounds; i++) {
    const handles: LockHandle[] = await session.acquireAll(locks, { waitTimeoutMs: 30_000 });
    expect(handles.map((h) => h.name)).toEqual(locks);
    const token = handles[0]!.token;
    for (const h of handles) expect(h.token).toBe(token);
    for (const lock of locks) {
      const d = await client.describe(lock);
      expect(d.held && d.token === token, `${lock} held under the set's token ${token}`).toBe(true);
    }
    for (const h of handles) await h.write([{ put: `${h.name}/last`, value: `${session.publicId}:${i}` }]);
    seen.push(token);
    for (const h of handles) await h.release();
  }
}

describe('AcquireAll', () => {
  it('two clients taking [a, b] and [b, a] in a loop: no deadlock, never a partial set, writes under both locks', async () => {
    const [p, q] = await Promise.all([0, 1].map(() => client.openSession({ ttlMs: 30_000 })));
    const seen: bigint[] = [];
    await Promise.all([takeTurns(p!, ['multi/a', 'multi/b'], 15, seen), takeTurns(q!, ['multi/b', 'multi/a'], 15, seen)]);
    expect(new Set(seen).size).toBe(30);
    await Promise.all([p, q].map((s) => s!.close()));
  }, 120_000);

  it('the expiry of a set holder\'s session hands the whole set to a waiting set in one entry', async () => {
    const [holder, waiter] = await Promise.all([0, 1].map(() => client.openSession({ ttlMs: 3_000 })));
    const held = await holder!.acquireAll(['expiry/x', 'expiry/y']);
    const waiting = waiter!.acquireAll(['expiry/y', 'expiry/x'], { waitTimeoutMs: 60_000 });
    await eventually(async () => ((await client.describe('expiry/x')).waiters.length === 1 ? true : undefined), 10_000, 'the set queued');
    holder!.abandon('test: let the session expire');
    const got = await waiting;
    expect(got[0]!.token).toBe(got[1]!.token);
    expect(got[0]!.token).toBeGreaterThan(held[0]!.token);
    for (const h of got) await h.release();
    await waiter!.close();
  }, 60_000);
});

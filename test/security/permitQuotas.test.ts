// Quotas of semaphores and AcquireAll over the API (issue 33), with auth on, over real node processes and
// real TLS connections: an identity's `locks` quota counts its permits and every lock of its AcquireAll sets,
// its `waiters` quota counts a blocked permit wait and every queue a waiting set stands in; a refusal is
// RESOURCE_EXHAUSTED QUOTA_EXCEEDED naming the quota (docs/auth.md "Quotas"), and other identities go on.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FenceLockClient, type FenceLockError } from '../../src/client';
import { eventually, LocalCluster } from '../integration/harness';

let cluster: LocalCluster;
let admin: FenceLockClient;
const tokens = new Map<string, string>();
const clients: FenceLockClient[] = [];

function tenant(name: string): FenceLockClient {
  const c = new FenceLockClient({ endpoints: cluster.endpoints, token: tokens.get(name)!, requestTimeoutMs: 3_000, totalTimeoutMs: 15_000 });
  clients.push(c);
  return c;
}

/** The refusal of `p` as CODE/REASON/QUOTA ('ok' when it succeeded); its message must name the quota. */
async function outcome(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'ok';
  } catch (err) {
    const e = err as FenceLockError;
    if (e.quota) expect(e.message, 'the message names the quota').toContain(`quota ${e.quota}`);
    return `${e.code}/${e.reason ?? ''}${e.quota ? `/${e.quota}` : ''}`;
  }
}

const LOCKS_FULL = 'RESOURCE_EXHAUSTED/QUOTA_EXCEEDED/locks';
const WAITERS_FULL = 'RESOURCE_EXHAUSTED/QUOTA_EXCEEDED/waiters';
const SEMAPHORES_FULL = 'RESOURCE_EXHAUSTED/QUOTA_EXCEEDED/semaphores';

beforeAll(async () => {
  cluster = await LocalCluster.create({ authAdmin: 'test' });
  cluster.startAll();
  // The test process's client certificate names `test`: the admin.
  admin = new FenceLockClient({ endpoints: cluster.endpoints, requestTimeoutMs: 3_000, totalTimeoutMs: 20_000 });
  await eventually(async () => ((await admin.auth.whoAmI()).authEnabled ? true : undefined), 30_000, 'auth on');
  for (const name of ['eve', 'ann', 'vic', 'sam']) {
    await admin.auth.roleAdd(`own-${name}`);
    await admin.auth.roleGrantPermission(`own-${name}`, 'lock', `${name}/`);
    await admin.auth.roleGrantPermission(`own-${name}`, 'lock', 'shared/');
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

describe('quotas of permits and AcquireAll sets', () => {
  it('locks: a permit and each lock of a set count; past the quota every kind of grant is refused, and another identity goes on', async () => {
    await admin.auth.roleSetQuota('own-eve', 'locks', 3);
    const eve = tenant('eve');
    const session = await eve.openSession({ ttlMs: 60_000 });
    await session.acquirePermit('eve/pool', { permits: 5, waitTimeoutMs: 0 });
    await session.acquireAll(['eve/a', 'eve/b'], { waitTimeoutMs: 0 });
    // One permit and two locks: the quota of 3 is used up.
    expect(await outcome(session.acquire('eve/c', { waitTimeoutMs: 0 }))).toBe(LOCKS_FULL);
    expect(await outcome(session.tryAcquirePermit('eve/pool2', { permits: 2 }))).toBe(LOCKS_FULL);
    expect(await outcome(session.tryAcquireAll(['eve/d']))).toBe(LOCKS_FULL);
    // A second session of the same identity shares the quota.
    const second = await eve.openSession({ ttlMs: 60_000 });
    expect(await outcome(second.tryAcquirePermit('eve/pool', { permits: 5 }))).toBe(LOCKS_FULL);

    // vic (default quota) is not affected by eve's.
    const vic = tenant('vic');
    const vs = await vic.openSession({ ttlMs: 60_000 });
    await vs.acquirePermit('vic/pool', { permits: 5, waitTimeoutMs: 0 });
    expect((await vs.acquireAll(['vic/a', 'vic/b', 'vic/c'], { waitTimeoutMs: 0 })).length).toBe(3);
    await eve.close();
    await vic.close();
  });

  it('semaphores: an identity cannot keep more semaphores than its quota alive (the table is shared), whether it would hold or wait; another identity goes on', async () => {
    await admin.auth.roleSetQuota('own-sam', 'semaphores', 2);
    const sam = tenant('sam');
    const [s1, s2] = [await sam.openSession({ ttlMs: 60_000 }), await sam.openSession({ ttlMs: 60_000 })];
    const first = await s1.acquirePermit('sam/a', { permits: 1, waitTimeoutMs: 0 });
    await s1.acquirePermit('sam/b', { permits: 1, waitTimeoutMs: 0 });
    expect(await outcome(s1.tryAcquirePermit('sam/c', { permits: 1 }))).toBe(SEMAPHORES_FULL);
    expect((await admin.describeSemaphore('sam/c')).permits).toBe(0); // nothing kept for the refusal
    // vic keeps shared/q alive; sam's blocking acquire of it would enter a third semaphore: refused too.
    const vic = tenant('vic');
    const vs = await vic.openSession({ ttlMs: 60_000 });
    await vs.acquirePermit('shared/q', { permits: 1, waitTimeoutMs: 0 });
    expect(await outcome(s2.acquirePermit('shared/q', { permits: 1, waitTimeoutMs: 5_000 }))).toBe(SEMAPHORES_FULL);
    // Leaving one makes room.
    await first.release();
    const late = s2.acquirePermit('shared/q', { permits: 1, waitTimeoutMs: 30_000 });
    await eventually(async () => ((await admin.describeSemaphore('shared/q')).waiters.length === 1 ? true : undefined), 10_000, 'sam waiting');
    await vs.close();
    expect((await late).slot).toBe(0);
    await sam.close();
    await vic.close();
  });

  it('waiters: a blocked permit wait counts, and a waiting AcquireAll set counts once per queue', async () => {
    const vic = tenant('vic');
    const holder = await vic.openSession({ ttlMs: 60_000 });
    await holder.acquirePermit('shared/w', { permits: 1, waitTimeoutMs: 0 });
    await holder.acquireAll(['shared/x', 'shared/y', 'shared/z'], { waitTimeoutMs: 0 });
    const pending: Array<Promise<unknown>> = [];
    const queued = async (what: string, waiters: () => Promise<number>, n: number): Promise<void> => {
      await eventually(async () => ((await waiters()) >= n ? true : undefined), 30_000, what);
    };
    const lockWaiters = async (lock: string): Promise<number> => (await admin.describe(lock)).waiters.length;
    const permitWaiters = async (): Promise<number> => (await admin.describeSemaphore('shared/w')).waiters.length;

    // eve, waiters quota 2: a permit wait and a lock wait fill it; a third wait of any kind is refused.
    await admin.auth.roleSetQuota('own-eve', 'waiters', 2);
    const eve = tenant('eve');
    const [e1, e2, e3] = [await eve.openSession({ ttlMs: 60_000 }), await eve.openSession({ ttlMs: 60_000 }), await eve.openSession({ ttlMs: 60_000 })];
    pending.push(e1.acquirePermit('shared/w', { permits: 1, waitTimeoutMs: 60_000 }).catch(() => undefined));
    await queued('eve waiting for a permit', permitWaiters, 1);
    expect(await outcome(e2.acquireAll(['shared/x', 'shared/y'], { waitTimeoutMs: 60_000 }))).toBe(WAITERS_FULL); // 1 + 2 > 2
    pending.push(e2.acquire('shared/x', { waitTimeoutMs: 60_000 }).catch(() => undefined));
    await queued('eve waiting for shared/x', () => lockWaiters('shared/x'), 1);
    expect(await outcome(e3.acquire('shared/y', { waitTimeoutMs: 60_000 }))).toBe(WAITERS_FULL);
    expect(await outcome(e3.acquirePermit('shared/w', { permits: 1, waitTimeoutMs: 60_000 }))).toBe(WAITERS_FULL);

    // ann, waiters quota 2: one waiting set of two locks fills it.
    await admin.auth.roleSetQuota('own-ann', 'waiters', 2);
    const ann = tenant('ann');
    const [a1, a2] = [await ann.openSession({ ttlMs: 60_000 }), await ann.openSession({ ttlMs: 60_000 })];
    pending.push(a1.acquireAll(['shared/y', 'shared/z'], { waitTimeoutMs: 60_000 }).catch(() => undefined));
    await queued('ann waiting for her set', () => lockWaiters('shared/z'), 1);
    expect(await outcome(a2.acquirePermit('shared/w', { permits: 1, waitTimeoutMs: 60_000 }))).toBe(WAITERS_FULL);
    expect(await outcome(a2.acquire('shared/x', { waitTimeoutMs: 60_000 }))).toBe(WAITERS_FULL);

    // vic, at the default quota, still queues.
    const v2 = await vic.openSession({ ttlMs: 60_000 });
    pending.push(v2.acquirePermit('shared/w', { permits: 1, waitTimeoutMs: 60_000 }).catch(() => undefined));
    await queued('vic waiting for a permit', permitWaiters, 2);

    // Closing the clients ends their sessions and so their waits.
    await eve.close();
    await ann.close();
    await vic.close();
    await Promise.all(pending);
  });
});

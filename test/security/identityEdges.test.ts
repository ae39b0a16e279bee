// Identity edges of issue 28, attacked over real TLS connections to real node processes with auth on:
// - a tenant at its default quotas cannot fill a lock queue that others share (waiters quota below the
//   per-lock waiter limit);
// - a refused fenced write names another lock's key's owner and a watermark only to a caller that may read
//   that key or lock that lock; others get the reason and their own key, nothing more.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FenceLockClient, type FenceLockError, type Session } from '../../src/client';
import { DEFAULT_QUOTAS, MAX_WAITERS_PER_LOCK } from '../../src/state/limits';
import { eventually, LocalCluster } from '../integration/harness';

let cluster: LocalCluster;
let admin: FenceLockClient;
const tokens = new Map<string, string>();
const clients: FenceLockClient[] = [];

function as(name: string): FenceLockClient {
  const c = new FenceLockClient({ endpoints: cluster.endpoints, token: tokens.get(name)!, requestTimeoutMs: 5_000, totalTimeoutMs: 20_000 });
  clients.push(c);
  return c;
}

async function refusal(p: Promise<unknown>): Promise<FenceLockError> {
  const err = await p.then(
    () => undefined,
    (e: FenceLockError) => e,
  );
  expect(err, 'the call succeeded').toBeDefined();
  return err!;
}

/** Users and what they may do: eve writes hidden/ blind; rita reads and writes it; vic owns vic/. */
const USERS: Record<string, Array<['lock' | 'write' | 'read', string]>> = {
  eve: [['lock', 'eve/'], ['write', 'eve/'], ['write', 'hidden/'], ['lock', 'shared/']],
  vic: [['lock', 'vic/'], ['write', 'hidden/'], ['read', 'hidden/'], ['lock', 'shared/']],
  rita: [['lock', 'rita/'], ['write', 'hidden/'], ['read', 'hidden/']],
};

beforeAll(async () => {
  cluster = await LocalCluster.create({ authAdmin: 'test', electionTicks: 20 });
  cluster.startAll();
  admin = new FenceLockClient({ endpoints: cluster.endpoints, requestTimeoutMs: 5_000, totalTimeoutMs: 30_000 });
  await eventually(async () => ((await admin.auth.whoAmI().catch(() => undefined))?.authEnabled ? true : undefined), 30_000, 'auth on');
  for (const [user, rules] of Object.entries(USERS)) {
    await admin.auth.roleAdd(`r-${user}`);
    for (const [perm, prefix] of rules) await admin.auth.roleGrantPermission(`r-${user}`, perm, prefix);
    await admin.auth.userAdd(user);
    await admin.auth.userGrantRole(user, `r-${user}`);
    tokens.set(user, (await admin.auth.tokenIssue(user)).token);
  }
}, 90_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await admin?.close();
  await cluster?.destroy();
});

describe('refusals say only what the caller may know', () => {
  let vicSession: Session;
  let ownerToken = 0n;

  beforeAll(async () => {
    // vic binds hidden/plans to its lock vic/owner by writing it first.
    vicSession = await as('vic').openSession({ ttlMs: 60_000 });
    const owner = await vicSession.acquire('vic/owner', { waitTimeoutMs: 0 });
    ownerToken = owner.token;
    await owner.write([{ put: 'hidden/plans', value: 'secret' }]);
  });

  it('WRONG_LOCK to a writer that may not read the key: no owning lock, no watermark, in metadata or message', async () => {
    const eve = as('eve');
    const eveSession = await eve.openSession({ ttlMs: 60_000 });
    const mine = await eveSession.acquire('eve/l', { waitTimeoutMs: 0 });
    // The key is hers to write but not to read: KV.Get is refused.
    expect((await refusal(eve.get('hidden/plans'))).code).toBe('PERMISSION_DENIED');
    const err = await refusal(mine.write([{ put: 'hidden/plans', value: 'x' }]));
    expect(err.code).toBe('FAILED_PRECONDITION');
    expect(err.reason).toBe('WRONG_LOCK');
    expect(err.key).toBe('hidden/plans');
    expect(err.keyLock).toBeUndefined();
    expect(err.watermark).toBeUndefined();
    expect(err.details).not.toContain('vic/owner');
    expect(err.details).not.toContain(String(ownerToken));
    expect(err.details).toMatch(/belongs to another lock .*which lock, and its watermark, are shown only to a caller that may read the key/);
  });

  it('a write under a lock the caller may not use tells it nothing of that lock (no watermark)', async () => {
    const eve = as('eve');
    const eveSession = await eve.openSession({ ttlMs: 60_000 });
    // eve names vic's lock with her own session and a made-up token, on a key she may write.
    const err = await refusal(eve.write({ lock: 'vic/owner', token: ownerToken + 1_000n, sessionId: eveSession.id, ops: [{ put: 'eve/probe', value: 'x' }] }));
    expect(err.reason).toBe('WRONG_LOCK');
    expect(err.watermark).toBeUndefined();
    expect(err.details).not.toContain(String(ownerToken));
    const stale = await refusal(eve.write({ lock: 'vic/owner', token: 1n, sessionId: eveSession.id, ops: [{ put: 'eve/probe', value: 'x' }] }));
    expect(stale.reason).toBe('STALE_TOKEN');
    expect(stale.watermark).toBeUndefined();
    expect(stale.details).not.toContain(String(ownerToken));
  });

  it('a release of a lock the caller may not use (releasing needs no permission) shows no watermark', async () => {
    const eve = as('eve');
    const eveSession = await eve.openSession({ ttlMs: 60_000 });
    const err = await refusal(eve.releaseFor(eveSession, 'vic/owner', ownerToken));
    expect(err.reason).toBe('NOT_HOLDER');
    expect(err.watermark).toBeUndefined();
    expect(err.details).not.toContain(String(ownerToken));
  });

  it('a caller that may read the key is told the owning lock and the watermark, as before', async () => {
    const rita = as('rita');
    const session = await rita.openSession({ ttlMs: 60_000 });
    const mine = await session.acquire('rita/l', { waitTimeoutMs: 0 });
    const err = await refusal(mine.write([{ put: 'hidden/plans', value: 'x' }]));
    expect(err.reason).toBe('WRONG_LOCK');
    expect(err.keyLock).toBe('vic/owner');
    expect(err.watermark).toBeGreaterThanOrEqual(ownerToken);
    expect(err.details).toContain('belongs to lock "vic/owner"');
  });

  it('nothing changed: the key holds what its owner wrote', async () => {
    expect(Buffer.from((await as('vic').get('hidden/plans')).value ?? []).toString()).toBe('secret');
  });
});

describe('defaults below every shared limit', () => {
  it(`one identity at its default quotas cannot fill a lock queue others share (it stops at ${DEFAULT_QUOTAS.waiters} waiters)`, async () => {
    expect(DEFAULT_QUOTAS.waiters).toBeLessThan(MAX_WAITERS_PER_LOCK);
    const vic = as('vic');
    const holder = await vic.openSession({ ttlMs: 120_000 });
    await holder.acquire('shared/queue', { waitTimeoutMs: 0 });
    const eve = as('eve');
    const quota = DEFAULT_QUOTAS.waiters;
    const sessions: Session[] = [];
    for (let batch = 0; sessions.length < quota + 1; batch++) {
      const n = Math.min(50, quota + 1 - sessions.length);
      sessions.push(...(await Promise.all(Array.from({ length: n }, () => eve.openSession({ ttlMs: 120_000 })))));
    }
    // Every wait but the last queues (their acquires stay pending: nobody releases); none is granted.
    const pending = sessions.slice(0, quota).map((s) => s.acquire('shared/queue', { waitTimeoutMs: 600_000 }).catch((e: FenceLockError) => e));
    await eventually(async () => ((await admin.describe('shared/queue')).waiters.length === quota ? true : undefined), 60_000, `${quota} of eve's waits queued`);
    const over = await refusal(sessions[quota]!.acquire('shared/queue', { waitTimeoutMs: 600_000 }));
    expect([over.code, over.reason, over.quota]).toEqual(['RESOURCE_EXHAUSTED', 'QUOTA_EXCEEDED', 'waiters']);
    // Another identity still queues behind them.
    const vicWaiter = await vic.openSession({ ttlMs: 120_000 });
    const vicWait = vicWaiter.acquire('shared/queue', { waitTimeoutMs: 600_000 }).catch((e: FenceLockError) => e);
    await eventually(async () => ((await admin.describe('shared/queue')).waiters.length === quota + 1 ? true : undefined), 20_000, "vic's wait queued");
    await eve.close();
    await vic.close();
    await Promise.all([...pending, vicWait]);
  }, 240_000);
});

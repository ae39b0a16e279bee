// Lock-delay over real processes (issue 34, docs/architecture.md#lock-delay): a holder whose session expires
// keeps its lock from everyone for the delay its Acquire asked for; the next waiter is granted only once
// the delay is over, with a higher token, also when the leader changes during the delay. A release starts no
// delay; an out-of-range delay is refused naming the field; `fencelock lock --lock-delay` sends it.
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FenceLockClient, isFenceLockError, type LockDescription } from '../../src/client';
import { eventually, LocalCluster, PROJECT_ROOT, runNode } from './harness';
import { header, rawClient, type RawNodeClient } from './rawClient';

const CLI = path.join(PROJECT_ROOT, 'dist/src/cli/main.js');

let cluster: LocalCluster;
let client: FenceLockClient;

beforeAll(async () => {
  cluster = await LocalCluster.create();
  cluster.startAll();
  client = new FenceLockClient({ endpoints: cluster.endpoints });
  await leaderEndpoint();
}, 60_000);

afterAll(async () => {
  await client?.close();
  await cluster?.destroy();
});

function leaderEndpoint(): Promise<string> {
  return eventually(async () => (await client.statusAll()).find((r) => r.ok && r.status.role === 'leader')?.endpoint, 30_000, 'a leader');
}

/**
 * A session that is never renewed (its TTL the minimum, 3 s), holding `lock` under a lock-delay: it expires
 * by itself, as a crashed holder's would.
 */
async function abandonedHolder(lock: string, lockDelayMs: number): Promise<{ raw: RawNodeClient; token: bigint }> {
  const raw = rawClient(await leaderEndpoint());
  const { sessionId } = await raw.call('Session', 'Open', { header: header(), ttlMs: '3000' });
  const r = await raw.call('Lock', 'Acquire', { header: header(), lock, sessionId, waitTimeoutMs: '0', lockDelayMs: String(lockDelayMs) });
  expect(r.acquired).toBe(true);
  return { raw, token: BigInt(r.token as string) };
}

/** The lock once its holder's grant ended and its delay is in force. */
function delayed(lock: string): Promise<LockDescription> {
  return eventually(async () => {
    const d = await client.describe(lock);
    return !d.held && d.delayedUntilMs > 0 ? d : undefined;
  }, 30_000, `lock ${lock} in its delay`);
}

describe('lock-delay', () => {
  it('an expired holder\'s lock goes to its waiter only after the delay, with a higher token; a try-acquire meanwhile is refused LOCK_DELAYED', async () => {
    const { raw, token } = await abandonedHolder('ld/expiry', 4_000);
    try {
      expect((await client.describe('ld/expiry')).lockDelayMs).toBe(4_000);
      const waiter = await client.openSession({ ttlMs: 30_000 });
      const granted = waiter.acquire('ld/expiry', { waitTimeoutMs: 60_000 });
      const d = await delayed('ld/expiry');
      expect(d.waiters).toHaveLength(1);
      const other = await client.openSession({ ttlMs: 30_000 });
      const refusal = await other.tryAcquire('ld/expiry').then(
        () => undefined,
        (err: unknown) => err,
      );
      // Refused while the delay lasts: the waiter cannot have been granted before the refusal was answered.
      if (isFenceLockError(refusal)) {
        expect([refusal.code, refusal.reason, refusal.delayedUntil]).toEqual(['FAILED_PRECONDITION', 'LOCK_DELAYED', d.delayedUntilMs]);
      } else {
        // The delay ended between describe and the try: then the waiter, first in line, holds the lock.
        expect((await client.describe('ld/expiry')).held).toBe(true);
      }
      const lock = await granted;
      expect(lock.token).toBeGreaterThan(token);
      const after = await client.describe('ld/expiry');
      // Both times are the leader's clock: the grant came no earlier than the delay's end.
      expect(after.grantedAtMs).toBeGreaterThanOrEqual(d.delayedUntilMs);
      expect([after.delayedUntilMs, after.delayRemainingMs]).toEqual([0, 0]);
      await waiter.close();
      await other.close();
    } finally {
      raw.close();
    }
  }, 90_000);

  it('a release by the holder starts no delay, however long the grant asked for', async () => {
    const holder = await client.openSession({ ttlMs: 30_000 });
    const waiter = await client.openSession({ ttlMs: 30_000 });
    const held = await holder.acquire('ld/release', { lockDelayMs: 60_000 });
    expect((await client.describe('ld/release')).lockDelayMs).toBe(60_000);
    const granted = waiter.acquire('ld/release', { waitTimeoutMs: 20_000 });
    await eventually(async () => ((await client.describe('ld/release')).waiters.length === 1 ? true : undefined), 10_000, 'the waiter queued');
    await held.release();
    const lock = await granted; // a 60 s delay would make this wait time out after 20 s
    expect(lock.token).toBeGreaterThan(held.token);
    expect((await client.describe('ld/release')).delayedUntilMs).toBe(0);
    await holder.close();
    await waiter.close();
  }, 60_000);

  it('refuses a delay past 60 s with INVALID_ARGUMENT naming lock_delay_ms (server and client)', async () => {
    const raw = rawClient(await leaderEndpoint());
    try {
      const { sessionId } = await raw.call('Session', 'Open', { header: header(), ttlMs: '10000' });
      const err = (await raw.call('Lock', 'Acquire', { header: header(), lock: 'ld/range', sessionId, waitTimeoutMs: '0', lockDelayMs: '60001' }).catch((e: unknown) => e)) as grpc.ServiceError;
      expect(err.code).toBe(grpc.status.INVALID_ARGUMENT);
      expect(err.details).toMatch(/lock_delay_ms/);
      const ok = await raw.call('Lock', 'Acquire', { header: header(), lock: 'ld/range', sessionId, waitTimeoutMs: '0', lockDelayMs: '60000' });
      expect(ok.acquired).toBe(true);
    } finally {
      raw.close();
    }
    const session = await client.openSession({ ttlMs: 10_000 });
    await expect(session.acquire('ld/range2', { lockDelayMs: 60_001 })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await session.close();
  });

  it('a new leader does not end a delay earlier than the old one would have', async () => {
    const { raw, token } = await abandonedHolder('ld/failover', 6_000);
    try {
      const waiter = await client.openSession({ ttlMs: 30_000 });
      const granted = waiter.acquire('ld/failover', { waitTimeoutMs: 90_000 });
      const d = await delayed('ld/failover');
      const old = await leaderEndpoint();
      const oldId = cluster.ids.find((id) => cluster.node(id).address === old) ?? '';
      await cluster.kill(oldId);
      const lock = await granted;
      expect(lock.token).toBeGreaterThan(token);
      const after = await client.describe('ld/failover');
      expect(after.holderSession).toBe(waiter.publicId);
      // The new leader timed the delay afresh from its takeover: its grant is no earlier than the old end.
      expect(after.grantedAtMs).toBeGreaterThanOrEqual(d.delayedUntilMs);
      cluster.start(oldId);
      await waiter.close();
    } finally {
      raw.close();
    }
  }, 120_000);

  it('fencelock lock --lock-delay 2s sends the delay with the grant; past 60 s is a usage error', async () => {
    const endpoints = cluster.endpoints.join(',');
    const describeCmd = [process.execPath, CLI, '--endpoints', endpoints, '--json', 'describe', 'ld/cli'];
    const r = await runNode([CLI, '--endpoints', endpoints, 'lock', 'ld/cli', '--lock-delay', '2s', '--wait', '0', '--', ...describeCmd], { timeoutMs: 30_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout) as object).toMatchObject({ lock: 'ld/cli', held: true, lockDelayMs: 2_000 });
    // Released when CMD ended: no delay.
    expect((await client.describe('ld/cli')).delayedUntilMs).toBe(0);
    const bad = await runNode([CLI, '--endpoints', endpoints, 'lock', 'ld/cli', '--lock-delay', '61s', '--', 'true'], { timeoutMs: 30_000 });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/--lock-delay: 61s is above the maximum 60000 ms/);
    // A lock in its delay: --wait 0 exits 3 as on a held lock, with the reason, and CMD does not run.
    const { raw } = await abandonedHolder('ld/cli-delayed', 60_000);
    try {
      await delayed('ld/cli-delayed');
      const refused = await runNode([CLI, '--endpoints', endpoints, '--json', 'lock', 'ld/cli-delayed', '--wait', '0', '--', 'true'], { timeoutMs: 30_000 });
      expect(refused.code, refused.stderr).toBe(3);
      expect(JSON.parse(refused.stdout) as object).toMatchObject({ error: { code: 'LOCK_DELAYED', message: expect.stringMatching(/lock-delay .* until 20\d\d-/) } });
    } finally {
      raw.close();
    }
  }, 60_000);
});

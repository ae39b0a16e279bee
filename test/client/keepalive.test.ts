// The client's lease estimate against acknowledgements that come late, twice, out of order or without a
// renewal id. The rule under test: after any acknowledgement, presumedLostAt() is at most the time the server
// received the latest renewal it has acknowledged (or answered Open) + TTL - margin, so the client never
// believes in a lease the server did not grant.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FenceLockClient } from '../../src/client';
import { monotonicNow } from '../../src/client/clock';
import { safetyMarginMs } from '../../src/client/session';
import { startFakeCluster, type FakeNode } from './fakeServer';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  vi.useRealTimers();
  while (cleanups.length > 0) await cleanups.pop()!();
});

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function until(cond: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

async function leaderAndClient(): Promise<{ node: FakeNode; client: FenceLockClient }> {
  const c = await startFakeCluster(1);
  cleanups.push(c.stop);
  // A stall timeout far beyond the test: the stream stays open however long renewals wait for an answer.
  const client = new FenceLockClient({ endpoints: [c.nodes[0]!.address], requestTimeoutMs: 60_000, totalTimeoutMs: 60_000, insecure: true, pipeline: false });
  cleanups.push(() => client.close());
  await client.describe('warm-up'); // the channel exists before the test fakes setInterval
  return { node: c.nodes[0]!, client };
}

describe('keepalive acknowledgements', () => {
  it('keepalive: a late acknowledgement is never matched to a newer renewal', async () => {
    const { node, client } = await leaderAndClient();
    node.keepAliveMode = 'hold';
    // Only the renewal timer (setInterval, every ttl/3) is faked: many renewals go out in a few hundred real
    // milliseconds, while the session's loss timer, gRPC and performance.now run for real.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const ttl = 30_000;
    const s = await client.openSession({ ttlMs: ttl });
    const openAnsweredBy = monotonicNow();
    const margin = safetyMarginMs(ttl);
    await until(() => node.heldRenewals.length >= 1, 'the first renewal');
    // Renewals the server holds unanswered, 20 ms apart in real time.
    for (let i = 0; i < 24; i++) {
      await sleep(20);
      vi.advanceTimersByTime(ttl / 3);
    }
    await until(() => node.heldRenewals.length >= 16, 'at least 16 held renewals');
    await sleep(100); // every renewal the client sent has arrived
    const held = [...node.heldRenewals];

    const acked: number[] = [openAnsweredBy];
    const assertNoLaterThanGranted = (step: string): void => {
      const granted = Math.max(...acked) + ttl - margin;
      expect(s.presumedLostAt(), `${step}: estimate ${s.presumedLostAt().toFixed(1)} vs granted ${granted.toFixed(1)}`).toBeLessThanOrEqual(granted);
    };
    const answer = async (r: (typeof held)[number], step: string): Promise<void> => {
      const before = s.presumedLostAt();
      r.answer();
      acked.push(r.receivedAt);
      // Wait for the estimate to move, or long enough for the acknowledgement to have been read and ignored.
      await until(() => s.presumedLostAt() !== before, step, 300).catch(() => undefined);
      assertNoLaterThanGranted(step);
    };

    // 1. The oldest renewal is answered only now, with 15 or more newer renewals still unanswered.
    await answer(held[0]!, 'late acknowledgement of the first renewal');
    // 2. The same acknowledgement again: it proves nothing new.
    await answer(held[0]!, 'duplicate acknowledgement of the first renewal');
    // 3. The newest renewal is answered: the estimate moves up to its send time.
    const before = s.presumedLostAt();
    await answer(held[held.length - 1]!, 'acknowledgement of the newest renewal');
    expect(s.presumedLostAt()).toBeGreaterThan(before);
    // 4. An older renewal is answered after a newer one (out of order).
    await answer(held[1]!, 'late acknowledgement of the second renewal, after the newest');
    expect(s.isLost()).toBe(false);
  });

  it('keepalive: an acknowledgement without a renewal id (a server older than the field) counts from the oldest unanswered renewal', async () => {
    const { node, client } = await leaderAndClient();
    node.keepAliveMode = 'hold';
    node.echoRenewalId = false;
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const ttl = 30_000;
    const s = await client.openSession({ ttlMs: ttl });
    const openAnsweredBy = monotonicNow();
    await until(() => node.heldRenewals.length >= 1, 'the first renewal');
    for (let i = 0; i < 3; i++) {
      await sleep(20);
      vi.advanceTimersByTime(ttl / 3);
    }
    await until(() => node.heldRenewals.length >= 4, 'four held renewals');
    const held = [...node.heldRenewals];
    const before = s.presumedLostAt();
    held[0]!.answer();
    await until(() => s.presumedLostAt() !== before, 'the estimate to move');
    expect(s.presumedLostAt()).toBeLessThanOrEqual(Math.max(openAnsweredBy, held[0]!.receivedAt) + ttl - safetyMarginMs(ttl));
    expect(s.presumedLostAt()).toBeGreaterThan(before);
  });

  it('keepalive: an acknowledgement naming a renewal the client never sent proves nothing', async () => {
    const { node, client } = await leaderAndClient();
    node.keepAliveMode = 'hold';
    const s = await client.openSession({ ttlMs: 30_000 });
    await until(() => node.heldRenewals.length >= 1, 'the first renewal');
    const first = node.heldRenewals[0]!;
    const before = s.presumedLostAt();
    first.answer(String(BigInt(first.renewalId) + 1_000n));
    await sleep(200);
    expect(s.presumedLostAt()).toBe(before);
    first.answer(); // the real acknowledgement still counts
    await until(() => s.presumedLostAt() > before, 'the estimate to move');
  });
});

describe('the safety margin (README guarantee 7)', () => {
  it('is 10% of the TTL, at least 500 ms, at most half the TTL, and covers the clock-rate bound over TTL + 2 election timeouts', () => {
    expect(safetyMarginMs(3_000)).toBe(500);
    expect(safetyMarginMs(10_000, 500)).toBe(1_000);
    expect(safetyMarginMs(300_000, 500)).toBe(30_000);
    // Election timeout 20 s: 2 x 1% x (30 s + 40 s) = 1.4 s, below 10% of the TTL.
    expect(safetyMarginMs(30_000, 20_000)).toBeCloseTo(3_000);
    // Election timeout 100 s: 2 x 1% x (10 s + 200 s) = 4.2 s, above 10% of the TTL; capped at half the TTL.
    expect(safetyMarginMs(10_000, 100_000)).toBeCloseTo(4_200);
    expect(safetyMarginMs(3_000, 100_000)).toBe(1_500);
  });
});

// FenceLockClient.watchSemaphore over real processes (issue 33): the permits of one semaphore, each granted,
// released or expired with its slot and token, nothing of the lock of the same name; the watch goes on across
// the loss of the node serving it without delivering an event twice.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FenceLockClient, type LockEvent, type PermitEvent } from '../../src/client';
import { eventually, LocalCluster } from './harness';

let cluster: LocalCluster;
let client: FenceLockClient;

beforeAll(async () => {
  cluster = await LocalCluster.create();
  cluster.startAll();
  client = new FenceLockClient({ endpoints: cluster.endpoints });
  await leaderId();
}, 60_000);

afterAll(async () => {
  await client?.close();
  await cluster?.destroy();
});

async function leaderId(): Promise<string> {
  return eventually(
    async () => {
      for (const row of await client.statusAll()) if (row.ok && row.status.role === 'leader') return row.status.id;
      return undefined;
    },
    30_000,
    'a leader',
  );
}

/** Starts a watch and waits until it is in place: a probe permit's RELEASED has come through; the probe's events are dropped. */
async function watchInPlace(name: string): Promise<{ events: PermitEvent[]; cancel(): void }> {
  const events: PermitEvent[] = [];
  const handle = client.watchSemaphore(name, (ev) => events.push(ev));
  await eventually(
    async () => {
      await client.withPermit(name, { permits: 2, waitTimeoutMs: 5_000 }, () => Promise.resolve());
      await new Promise((r) => setTimeout(r, 200));
      return events.some((e) => e.kind === 'RELEASED') ? true : undefined;
    },
    20_000,
    'the watch in place',
  );
  events.length = 0;
  return { events, cancel: () => handle.cancel() };
}

describe('watchSemaphore', () => {
  it('streams each permit granted, released and expired with its slot and token, and nothing of the lock of the same name', async () => {
    const watch = await watchInPlace('sem/watched');
    const lockEvents: LockEvent[] = [];
    const lockWatch = client.watch('sem/watched', (ev) => lockEvents.push(ev));
    const [a, b] = await Promise.all([client.openSession({ ttlMs: 30_000 }), client.openSession({ ttlMs: 3_000 })]);
    const first = await a.acquirePermit('sem/watched', { permits: 2 });
    const second = await b.acquirePermit('sem/watched', { permits: 2 });
    const lock = await a.acquire('sem/watched');
    await first.release();
    b.abandon('stops renewing (test): its permit expires on the server');
    await eventually(async () => (watch.events.length >= 4 ? true : undefined), 20_000, 'four permit events');

    expect(watch.events.map((e) => [e.kind, e.semaphore, e.slot, e.token, e.sessionId])).toEqual([
      ['GRANTED', 'sem/watched', first.slot, first.token, a.publicId],
      ['GRANTED', 'sem/watched', second.slot, second.token, b.publicId],
      ['RELEASED', 'sem/watched', first.slot, first.token, a.publicId],
      ['EXPIRED', 'sem/watched', second.slot, second.token, b.publicId],
    ]);
    expect(watch.events[0]!.holder?.handle).toBe(a.publicId);
    expect(watch.events.every((e) => !('lock' in e))).toBe(true);
    // The lock of the same name is another resource: its grant is on the lock's watch only.
    await eventually(async () => (lockEvents.length > 0 ? true : undefined), 10_000, 'the lock grant event');
    expect(lockEvents.map((e) => [e.kind, e.token])).toEqual([['GRANTED', lock.token]]);
    expect(watch.events.some((e) => e.token === lock.token)).toBe(false);
    lockWatch.cancel();
    watch.cancel();
    await lock.release();
  }, 60_000);

  it('goes on after the node serving it stops, without an event twice', async () => {
    const watch = await watchInPlace('sem/failover');
    const session = await client.openSession({ ttlMs: 30_000 });
    const before = await session.acquirePermit('sem/failover', { permits: 2 });
    await eventually(async () => (watch.events.length === 1 ? true : undefined), 10_000, 'the first grant');
    const leader = await leaderId();
    await cluster.kill(leader);
    await before.release();
    const after = await session.acquirePermit('sem/failover', { permits: 2 });
    await after.release();
    await eventually(async () => (watch.events.length >= 4 ? true : undefined), 30_000, 'the events after the failover');
    await new Promise((r) => setTimeout(r, 500));
    expect(watch.events.map((e) => [e.kind, e.token])).toEqual([
      ['GRANTED', before.token],
      ['RELEASED', before.token],
      ['GRANTED', after.token],
      ['RELEASED', after.token],
    ]);
    watch.cancel();
    cluster.start(leader);
  }, 90_000);

  it('stops with onError (INVALID_ARGUMENT) for a name the server refuses, and says which semaphore', async () => {
    const err = await new Promise<Error>((resolve) => client.watchSemaphore('', () => undefined, { onError: resolve }));
    expect(err).toMatchObject({ code: 'INVALID_ARGUMENT' });
    expect(err.message).toContain('semaphore ""');
  }, 30_000);
});

// The real FenceLockClient on virtual ports (FenceLockClientOptions.ports): a fake clock, timers and transport
// drive a time-dependent behaviour, the presumed loss of a lock, with no real time passing and no socket.
import { afterEach, describe, expect, it } from 'vitest';
import { FenceLockClient, FenceLockError, type LockHandle } from '../../src/client';
import { methods } from '../../src/client/proto';
import { realClock } from '../../src/client/realPorts';
import type { KeepAliveRequest } from '../../src/protocol/generated/fencelock/v1/KeepAliveRequest';
import { FakeTime, FakeTransport, type FakeBidiStream } from './fakePorts';

const TTL_MS = 10_000;
const ELECTION_TIMEOUT_MS = 1_000;
/** safetyMarginMs(10 s, 1 s): the 10% of the TTL (the clock-rate term, 240 ms, and the 500 ms floor are less). */
const MARGIN_MS = 1_000;
const OPENED_AT = 1_000;

const clients: FenceLockClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close({ timeoutMs: 0 });
});

/** What a leader would answer: the session open, the lock granted (token 7), the close confirmed. */
function leader(path: string): unknown {
  const m = methods();
  if (path === m.Session.Open.path) return { sessionId: 's'.repeat(32), ttlMs: String(TTL_MS), electionTimeoutMs: String(ELECTION_TIMEOUT_MS) };
  if (path === m.Lock.Acquire.path) return { acquired: true, token: '7', holderSession: '' };
  if (path === m.Session.Close.path) return {};
  throw new Error(`unexpected call ${path}`);
}

function virtualClient(): { client: FenceLockClient; time: FakeTime; transport: FakeTransport } {
  const time = new FakeTime(OPENED_AT);
  const transport = new FakeTransport(leader);
  const random = { bytes: (size: number) => new Uint8Array(size).fill(0xab) };
  const client = new FenceLockClient({ endpoints: ['n1:7001'], insecure: true, pipeline: false, ports: { clock: time, timers: time, random, transport } });
  clients.push(client);
  return { client, time, transport };
}

async function holdLock(client: FenceLockClient): Promise<LockHandle> {
  const session = await client.openSession({ ttlMs: TTL_MS });
  return session.acquire('a');
}

function reasonOf(signal: AbortSignal): string | undefined {
  return signal.reason instanceof FenceLockError ? signal.reason.reason : undefined;
}

describe('FenceLockClient on virtual ports', () => {
  it('presumes a lock lost when the virtual clock passes the lease minus the margin, with no real time passing', async () => {
    const realStart = realClock.monotonicMs();
    const { client, time, transport } = virtualClient();
    expect(client.clientId).toBe('ab'.repeat(16)); // the random port names the client
    const lock = await holdLock(client);
    expect(transport.unaryCalls.map((c) => c.path)).toEqual([methods().Session.Open.path, methods().Lock.Acquire.path]);
    const presumedAt = OPENED_AT + TTL_MS - MARGIN_MS;
    expect(lock.presumedLostAt()).toBe(presumedAt);

    // The keepalive stream went out on the fake transport, and nobody answers it.
    await time.advanceTo(presumedAt - 1);
    expect(transport.streams.length).toBeGreaterThan(0);
    expect(lock.signal.aborted).toBe(false);
    expect(lock.isPresumedLost()).toBe(false);

    await time.advanceTo(presumedAt + 1);
    expect(lock.isPresumedLost()).toBe(true);
    expect(lock.signal.aborted).toBe(true);
    expect(reasonOf(lock.signal)).toBe('PRESUMED_LOST');
    expect(lock.session.isLost()).toBe(false); // lost only at the lease's end

    await time.advanceTo(OPENED_AT + TTL_MS + 1);
    expect(lock.session.isLost()).toBe(true);
    expect(realClock.monotonicMs() - realStart).toBeLessThan(TTL_MS / 2);
  });

  it('an acknowledged renewal, sent on the fake stream at virtual time t, moves the presumption to t + lease - margin', async () => {
    const { client, time, transport } = virtualClient();
    const lock = await holdLock(client);
    const renewedAt = OPENED_AT + Math.floor(TTL_MS / 3); // the first renewal after the one sent at open
    await time.advanceTo(renewedAt);
    const stream = transport.streams.at(-1) as FakeBidiStream<KeepAliveRequest, unknown>;
    const renewal = stream.written.at(-1);
    if (!renewal) throw new Error('no renewal was sent');
    stream.reply({ sessionId: renewal.sessionId, alive: true, remainingMs: '0', renewalId: renewal.renewalId, reason: '' });
    const presumedAt = renewedAt + TTL_MS - MARGIN_MS;
    expect(lock.presumedLostAt()).toBe(presumedAt);

    await time.advanceTo(presumedAt - 1);
    expect(lock.signal.aborted).toBe(false);
    await time.advanceTo(presumedAt + 1);
    expect(reasonOf(lock.signal)).toBe('PRESUMED_LOST');
  });
});

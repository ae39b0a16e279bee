// Lock over the wire (Acquire, Release, Describe, Watch) with generated edge values against a real TLS node
// with auth on: tokens are the log indexes that granted them and only go up, every answer field within what
// lock.proto and docs/limits.md state, every bad value refused naming its field, never a server fault.
import { createHash } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_LOCK_NAME_BYTES, MAX_WAIT_TIMEOUT_MS } from '../../src/protocol/limits';
import {
  asDecoded, checkShape, expectAlive, expectOk, expectRefused, generator, header, intValid, MAX_SAFE, printSeedOnFailure, reasonOf, sendable,
  startCluster, textValid, wireInt, type Gen, type Obj, type WireCluster,
} from './wireKit';

printSeedOnFailure();

const LOCK_NAMES = { minBytes: 1, maxBytes: MAX_LOCK_NAME_BYTES };
const HANDLE = /^[0-9a-f]{16}$/;

let w: WireCluster;
/** The highest token seen so far: every grant's token is above every earlier one (one log). */
let highestToken = 0;

beforeAll(async () => {
  w = await startCluster(1);
});
afterAll(async () => {
  await w?.stop();
});

const handleOf = (sessionId: string): string => createHash('sha256').update(sessionId).digest('hex').slice(0, 16);

async function openSession(gen: Gen): Promise<string> {
  return expectOk(await w.leader.unary('Session', 'Open', { header: header(gen), ttlMs: '60000' }), 'open', 'Session', 'Open').sessionId as string;
}

/** A granted acquire's token: a new log index, above every token before it. */
function checkGranted(res: Obj, what: string): number {
  expect(res.acquired, `${what}: acquired`).toBe(true);
  expect(res.holderSession, `${what}: holder_session is set only when not acquired`).toBe('');
  const token = wireInt(`${what}: token`, res.token, { min: highestToken + 1, max: MAX_SAFE });
  highestToken = token;
  return token;
}

async function acquire(gen: Gen, lock: string, sessionId: string, waitTimeoutMs: string | number = '0', timeoutMs = 10_000): Promise<ReturnType<typeof w.leader.unary>> {
  return w.leader.unary('Lock', 'Acquire', { header: header(gen), lock, sessionId, waitTimeoutMs }, timeoutMs);
}

async function release(gen: Gen, lock: string, sessionId: string, token: string | number): Promise<ReturnType<typeof w.leader.unary>> {
  return w.leader.unary('Lock', 'Release', { header: header(gen), lock, sessionId, token });
}

async function describeLock(lock: string): Promise<Obj> {
  const res = expectOk(await w.leader.unary('Lock', 'Describe', { lock }), `describe ${lock}`, 'Lock', 'Describe');
  const latest = wireInt('latest_token', res.latestToken);
  const token = wireInt('token', res.token, { min: 0, max: latest });
  expect(latest, 'latest_token never above the highest token issued').toBeLessThanOrEqual(highestToken);
  (res.waiters as string[]).forEach((h) => expect(h).toMatch(HANDLE));
  if (res.held) {
    expect(res.holderSession).toMatch(HANDLE);
    expect(token, 'a held lock has a token').toBeGreaterThan(0);
    wireInt('granted_at_ms', res.grantedAtMs, { min: w.startedAt - 1_000, max: Date.now() + 1_000 });
  } else {
    expect(res).toMatchObject({ holderSession: '', token: '0', grantedAtMs: '0' });
  }
  return res;
}

describe('Lock.Acquire', () => {
  it('takes wait_timeout_ms in 0..1 h and refuses the rest naming wait_timeout_ms; tokens only go up', async () => {
    const gen = generator('acquire wait');
    const sessionId = await openSession(gen);
    for (const waitTimeoutMs of gen.intEdges({ min: 0, max: MAX_WAIT_TIMEOUT_MS })) {
      const lock = gen.name('wait');
      const req = { header: header(gen), lock, sessionId, waitTimeoutMs };
      if (!sendable('Lock', 'Acquire', req)) continue;
      const decoded = asDecoded('Lock', 'Acquire', req).waitTimeoutMs as string;
      const what = `wait_timeout_ms ${JSON.stringify(waitTimeoutMs)} (on the wire ${decoded})`;
      const out = await w.leader.unary('Lock', 'Acquire', req);
      if (!intValid(decoded, { min: 0, max: MAX_WAIT_TIMEOUT_MS })) {
        expectRefused(out, what, [grpc.status.INVALID_ARGUMENT], 'wait_timeout_ms');
        continue;
      }
      const token = checkGranted(expectOk(out, what, 'Lock', 'Acquire'), what);
      const described = await describeLock(lock);
      expect(described, what).toMatchObject({ held: true, holderSession: handleOf(sessionId), token: String(token), latestToken: String(token), waiters: [] });
    }
    await expectAlive(w);
  });

  it('on a held lock: a try answers the holder, a short wait (fractional too) ends DEADLINE_EXCEEDED', async () => {
    const gen = generator('acquire held');
    const [holder, other] = [await openSession(gen), await openSession(gen)];
    const lock = gen.name('held');
    const token = checkGranted(expectOk(await acquire(gen, lock, holder), 'holder', 'Lock', 'Acquire'), 'holder');
    for (const wait of [0, '0', 0.5, '0.9']) {
      const res = expectOk(await acquire(gen, lock, other, wait), `try with ${JSON.stringify(wait)}`, 'Lock', 'Acquire');
      expect(res, `try with ${JSON.stringify(wait)}`).toMatchObject({ acquired: false, holderSession: handleOf(holder) });
    }
    // Short waits only (the encoder truncates a short decimal fraction): each is waited out in full.
    for (const wait of [1, '25.7', `${gen.int(2, 400)}.${gen.int(1, 999)}`]) {
      const decoded = asDecoded('Lock', 'Acquire', { waitTimeoutMs: wait }).waitTimeoutMs as string;
      const out = await acquire(gen, lock, other, wait);
      if (Number(decoded) <= MAX_WAIT_TIMEOUT_MS) expectRefused(out, `wait ${JSON.stringify(wait)}`, [grpc.status.DEADLINE_EXCEEDED]);
      else expectRefused(out, `wait ${JSON.stringify(wait)} (on the wire ${decoded})`, [grpc.status.INVALID_ARGUMENT], 'wait_timeout_ms');
    }
    const described = await describeLock(lock);
    expect(described, 'timed-out waiters are gone').toMatchObject({ held: true, token: String(token), waiters: [] });
  });

  it('takes lock names of 1..256 bytes of UTF-8 and refuses the rest naming lock', async () => {
    const gen = generator('acquire names');
    const sessionId = await openSession(gen);
    for (const lock of gen.textEdges(LOCK_NAMES)) {
      const what = `lock of ${Buffer.byteLength(lock)} bytes ${JSON.stringify(lock.slice(0, 16))}`;
      const out = await acquire(gen, lock, sessionId);
      if (!textValid(lock, LOCK_NAMES)) {
        expectRefused(out, what, [grpc.status.INVALID_ARGUMENT], 'lock');
        continue;
      }
      const token = checkGranted(expectOk(out, what, 'Lock', 'Acquire'), what);
      expect((await describeLock(lock)).token, what).toBe(String(token));
      expectOk(await release(gen, lock, sessionId, String(token)), `release ${what}`, 'Lock', 'Release');
    }
    await expectAlive(w);
  });

  it('refuses an ill-formed session id naming session_id, and an unknown one NOT_FOUND', async () => {
    const gen = generator('acquire sessions');
    for (const sessionId of gen.textEdges({ minBytes: 32, maxBytes: 32 })) {
      if (/^[0-9a-f]{32}$/.test(sessionId)) continue;
      expectRefused(await acquire(gen, gen.name('s'), sessionId), `session ${JSON.stringify(sessionId)}`, [grpc.status.INVALID_ARGUMENT], 'session_id');
    }
    const unknown = await acquire(gen, gen.name('s'), gen.textOfBytes(32, [...'0123456789abcdef']));
    expectRefused(unknown, 'unknown session', [grpc.status.NOT_FOUND]);
    expect(reasonOf(unknown)).toBe('UNKNOWN_SESSION');
  });
});

describe('Lock.Release', () => {
  it('takes the held token only; other tokens are refused, 0 and past 2^53 naming token', async () => {
    const gen = generator('release tokens');
    const sessionId = await openSession(gen);
    const lock = gen.name('release');
    const token = checkGranted(expectOk(await acquire(gen, lock, sessionId), 'acquire', 'Lock', 'Acquire'), 'acquire');
    for (const t of gen.intEdges({ min: 1, max: MAX_SAFE })) {
      const req = { header: header(gen), lock, sessionId, token: t };
      if (!sendable('Lock', 'Release', req)) continue;
      const decoded = asDecoded('Lock', 'Release', req).token as string;
      const what = `token ${JSON.stringify(t)} (on the wire ${decoded})`;
      if (decoded === String(token)) continue; // released at the end
      const out = await w.leader.unary('Lock', 'Release', req);
      if (!intValid(decoded, { min: 1, max: MAX_SAFE })) expectRefused(out, what, [grpc.status.INVALID_ARGUMENT], 'token');
      else expectRefused(out, what, [grpc.status.FAILED_PRECONDITION, grpc.status.NOT_FOUND]);
    }
    expect((await describeLock(lock)).held, 'no refused release freed it').toBe(true);
    const res = expectOk(await release(gen, lock, sessionId, String(token)), 'release', 'Lock', 'Release');
    expect(res).toEqual({ nextHolderSession: '', nextToken: '0' });
    const after = await describeLock(lock);
    expect(after.held).toBe(false);
    // lock.proto: an idle lock that owns no keys may be forgotten, its latest token then reads 0.
    expect(['0', String(token)]).toContain(after.latestToken);
    await expectAlive(w);
  });

  it('hands the lock to the first waiter: next_token is its grant, above the released token', async () => {
    const gen = generator('release handover');
    const [a, b, c] = [await openSession(gen), await openSession(gen), await openSession(gen)];
    const lock = gen.name('handover');
    const first = checkGranted(expectOk(await acquire(gen, lock, a), 'a', 'Lock', 'Acquire'), 'a');
    const waitingB = acquire(gen, lock, b, '20000.5', 30_000);
    await waitForWaiters(lock, 1);
    const waitingC = acquire(gen, lock, c, String(MAX_WAIT_TIMEOUT_MS), 30_000);
    const described = await waitForWaiters(lock, 2);
    expect(described.waiters, 'FIFO order').toEqual([handleOf(b), handleOf(c)]);
    const handed = expectOk(await release(gen, lock, a, String(first)), 'release a', 'Lock', 'Release');
    expect(handed.nextHolderSession).toBe(handleOf(b));
    const bToken = checkGranted(expectOk(await waitingB, 'b', 'Lock', 'Acquire'), 'b');
    expect(handed.nextToken, 'next_token is the waiter\'s grant').toBe(String(bToken));
    expect(await describeLock(lock)).toMatchObject({ held: true, holderSession: handleOf(b), token: String(bToken), latestToken: String(bToken), waiters: [handleOf(c)] });
    const toC = expectOk(await release(gen, lock, b, String(bToken)), 'release b', 'Lock', 'Release');
    const cToken = checkGranted(expectOk(await waitingC, 'c', 'Lock', 'Acquire'), 'c');
    expect(toC).toEqual({ nextHolderSession: handleOf(c), nextToken: String(cToken) });
  });
});

async function waitForWaiters(lock: string, n: number): Promise<Obj> {
  for (let i = 0; i < 200; i++) {
    const d = await describeLock(lock);
    if ((d.waiters as string[]).length >= n) return d;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`${lock}: ${n} waiters never showed`);
}

describe('Lock.Describe', () => {
  it('answers any valid name (unknown ones all zero) and refuses the rest naming lock', async () => {
    const gen = generator('describe');
    for (const lock of gen.textEdges(LOCK_NAMES)) {
      const what = `lock of ${Buffer.byteLength(lock)} bytes`;
      const out = await w.leader.unary('Lock', 'Describe', { lock });
      if (!textValid(lock, LOCK_NAMES)) expectRefused(out, what, [grpc.status.INVALID_ARGUMENT], 'lock');
      else expectOk(out, what, 'Lock', 'Describe');
    }
    expect(await describeLock(gen.name('never'))).toEqual({ held: false, holderSession: '', holder: null, token: '0', grantedAtMs: '0', waiters: [], waiterSessions: [], latestToken: '0', lockDelayMs: '0', delayedUntilMs: '0', delayRemainingMs: '0', sharedHolders: [], waiterShared: [] });
  });
});

describe('Lock.Watch', () => {
  it('sends events whose GRANTED token is the index of its entry, and refuses bad names naming lock', async () => {
    const gen = generator('watch');
    const sessionId = await openSession(gen);
    const lock = gen.name('watched');
    const stream = w.leader.serverStream('Lock', 'Watch', { lock }, 30_000);
    const events: Obj[] = [];
    stream.on('data', (e: Obj) => events.push(e));
    stream.on('error', () => undefined);
    await new Promise((r) => setTimeout(r, 200)); // the watch is registered before the first grant
    const tokens: number[] = [];
    for (let i = 0; i < 3; i++) {
      const token = checkGranted(expectOk(await acquire(gen, lock, sessionId), `acquire ${i}`, 'Lock', 'Acquire'), `acquire ${i}`);
      tokens.push(token);
      expectOk(await release(gen, lock, sessionId, String(token)), `release ${i}`, 'Lock', 'Release');
    }
    for (let i = 0; i < 100 && events.length < 6; i++) await new Promise((r) => setTimeout(r, 25));
    stream.cancel();
    expect(events.map((e) => e.kind)).toEqual(['GRANTED', 'RELEASED', 'GRANTED', 'RELEASED', 'GRANTED', 'RELEASED']);
    let lastIndex = 0;
    for (const [i, e] of events.entries()) {
      checkShape('fencelock.v1.LockEvent', e, `event ${i}`);
      expect(e.lock).toBe(lock);
      expect(e.sessionId, 'a public handle, never the session id').toBe(handleOf(sessionId));
      const index = wireInt(`event ${i} index`, e.index, { min: lastIndex + 1, max: MAX_SAFE });
      lastIndex = index;
      expect(e.token, `event ${i}: its grant's token`).toBe(String(tokens[i >> 1]));
      if (e.kind === 'GRANTED') expect(index, 'a token is the index of the entry that granted it').toBe(tokens[i >> 1]);
    }
    for (const bad of gen.textEdges(LOCK_NAMES).filter((l) => !textValid(l, LOCK_NAMES))) {
      const s = w.leader.serverStream('Lock', 'Watch', { lock: bad });
      const err = await new Promise<grpc.ServiceError>((resolve) => s.on('error', resolve));
      expectRefused({ ok: false, code: err.code, details: err.details, metadata: err.metadata }, `watch ${bad.length} chars`, [grpc.status.INVALID_ARGUMENT], 'lock');
    }
    await expectAlive(w);
  });
});

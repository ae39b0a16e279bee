// KV over the wire (Write, Get, List, Move) with generated edge values against a real TLS node with auth on:
// the limits of docs/limits.md at the limit accepted and one past refused naming the field, write indexes
// above the token that fenced them, watermarks that read back as written, never a server fault.
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_KEY_BYTES, MAX_LOCK_NAME_BYTES, MAX_OPS_PER_WRITE, MAX_VALUE_BYTES, MAX_WRITE_BYTES } from '../../src/protocol/limits';
import {
  asDecoded, expectAlive, expectOk, expectRefused, generator, header, intValid, MAX_SAFE, printSeedOnFailure, sendable, startCluster, textValid,
  wireInt, type Gen, type Obj, type Outcome, type WireCluster,
} from './wireKit';

printSeedOnFailure();

const KEYS = { minBytes: 1, maxBytes: MAX_KEY_BYTES };
const PREFIXES = { minBytes: 0, maxBytes: MAX_KEY_BYTES };

let w: WireCluster;
beforeAll(async () => {
  w = await startCluster(1);
});
afterAll(async () => {
  await w?.stop();
});

/** A lock held by a session of its own. */
interface Held {
  lock: string;
  sessionId: string;
  token: string;
}

async function hold(gen: Gen, lock = gen.name('kv-lock')): Promise<Held> {
  const sessionId = expectOk(await w.leader.unary('Session', 'Open', { header: header(gen), ttlMs: '60000' }), 'open', 'Session', 'Open').sessionId as string;
  const res = expectOk(await w.leader.unary('Lock', 'Acquire', { header: header(gen), lock, sessionId, waitTimeoutMs: '0' }), 'acquire', 'Lock', 'Acquire');
  return { lock, sessionId, token: res.token as string };
}

/** The highest write index so far: writes apply at increasing log indexes. */
let lastIndex = 0;

function write(gen: Gen, h: Held, ops: Obj[], token: string | number = h.token): Promise<Outcome> {
  return w.leader.unary('KV', 'Write', { header: header(gen), lock: h.lock, sessionId: h.sessionId, token, ops });
}

function checkWritten(out: Outcome, what: string, h: Held): number {
  const res = expectOk(out, what, 'KV', 'Write');
  const index = wireInt(`${what}: index`, res.index, { min: Math.max(lastIndex, Number(h.token)) + 1, max: MAX_SAFE });
  lastIndex = index;
  return index;
}

async function get(key: string, staleOk = false): Promise<Obj> {
  return expectOk(await w.leader.unary('KV', 'Get', { key, staleOk }), `get ${key.slice(0, 20)}`, 'KV', 'Get');
}

const put = (key: string, value: Buffer | string = 'v'): Obj => ({ type: 'PUT', key, value: Buffer.from(value) });

describe('KV.Write', () => {
  it('takes keys of 1..512 bytes and values up to 64 KiB; one past either is refused naming the op', async () => {
    const gen = generator('write keys');
    const h = await hold(gen);
    for (const key of gen.textEdges(KEYS)) {
      const what = `key of ${Buffer.byteLength(key)} bytes ${JSON.stringify(key.slice(0, 12))}`;
      const out = await write(gen, h, [put(key, key)]);
      if (!textValid(key, KEYS)) {
        expectRefused(out, what, [grpc.status.INVALID_ARGUMENT], 'ops[0].key');
        continue;
      }
      checkWritten(out, what, h);
      for (const staleOk of [false, true]) {
        expect(await get(key, staleOk), what).toEqual({ found: true, value: Buffer.from(key), token: h.token, lock: h.lock, deleted: false, semaphore: false, slot: 0 });
      }
    }
    const key = gen.name('value');
    for (const size of [0, 1, gen.int(2, MAX_VALUE_BYTES - 1), MAX_VALUE_BYTES]) {
      checkWritten(await write(gen, h, [put(key, Buffer.alloc(size, 7))]), `value of ${size} bytes`, h);
      expect((await get(key)).value.length).toBe(size);
    }
    expectRefused(await write(gen, h, [put('fine'), put(key, Buffer.alloc(MAX_VALUE_BYTES + 1))]), 'value one past 64 KiB', [grpc.status.INVALID_ARGUMENT], 'ops[1].value');
    expectRefused(await write(gen, h, [{ type: 'TYPE_UNSPECIFIED', key }]), 'no op type', [grpc.status.INVALID_ARGUMENT], 'ops[0].type');
    await expectAlive(w);
  });

  it('takes 1..64 ops and 512 KiB in all; one past is refused naming ops, and nothing of it applies', async () => {
    const gen = generator('write ops');
    const h = await hold(gen);
    const keys = Array.from({ length: MAX_OPS_PER_WRITE + 1 }, (_, i) => `${gen.name('op')}-${i}`);
    expectRefused(await write(gen, h, []), 'no ops', [grpc.status.INVALID_ARGUMENT], 'ops');
    expectRefused(await write(gen, h, keys.map((k) => put(k))), `${keys.length} ops`, [grpc.status.INVALID_ARGUMENT], 'ops');
    expect((await get(keys[0]!)).found, 'nothing of a refused write applied').toBe(false);
    checkWritten(await write(gen, h, keys.slice(0, MAX_OPS_PER_WRITE).map((k) => put(k))), `${MAX_OPS_PER_WRITE} ops`, h);
    // Exactly 512 KiB of keys and values, then one byte more.
    const big = keys.slice(0, 9);
    const keyBytes = big.reduce((n, k) => n + Buffer.byteLength(k), 0);
    const full = big.map((k, i) => put(k, Buffer.alloc(i < 8 ? MAX_VALUE_BYTES - 1_024 : MAX_WRITE_BYTES - keyBytes - 8 * (MAX_VALUE_BYTES - 1_024), 1)));
    checkWritten(await write(gen, h, full), 'exactly 512 KiB', h);
    full[8]!.value = Buffer.alloc(full[8]!.value.length + 1, 2);
    expectRefused(await write(gen, h, full), 'one byte past 512 KiB', [grpc.status.INVALID_ARGUMENT], 'ops');
    await expectAlive(w);
  });

  it('fences on the token: the held one writes, any other is refused, 0 and past 2^53 naming token', async () => {
    const gen = generator('write tokens');
    const h = await hold(gen);
    const key = gen.name('fenced');
    checkWritten(await write(gen, h, [put(key, 'first')]), 'first write', h);
    for (const token of gen.intEdges({ min: 1, max: MAX_SAFE })) {
      const req = { header: header(gen), lock: h.lock, sessionId: h.sessionId, token, ops: [put(key, 'stale')] };
      if (!sendable('KV', 'Write', req)) continue;
      const decoded = asDecoded('KV', 'Write', req).token as string;
      if (decoded === h.token) continue;
      const what = `token ${JSON.stringify(token)} (on the wire ${decoded})`;
      const out = await w.leader.unary('KV', 'Write', req);
      if (!intValid(decoded, { min: 1, max: MAX_SAFE })) expectRefused(out, what, [grpc.status.INVALID_ARGUMENT], 'token');
      else expectRefused(out, what, [grpc.status.FAILED_PRECONDITION, grpc.status.NOT_FOUND]);
      if (!out.ok && out.code === grpc.status.FAILED_PRECONDITION) wireInt(`${what}: fencelock-watermark`, String(out.metadata.get('fencelock-watermark')[0]));
    }
    expect((await get(key)).value.toString(), 'no refused write applied').toBe('first');
    const deleted = checkWritten(await write(gen, h, [{ type: 'DELETE', key }]), 'delete', h);
    expect(deleted).toBeGreaterThan(Number(h.token));
    expect(await get(key)).toEqual({ found: false, value: Buffer.alloc(0), token: h.token, lock: h.lock, deleted: true, semaphore: false, slot: 0 });
  });
});

describe('KV.Get', () => {
  it('answers any valid key (never written: all empty) and refuses the rest naming key', async () => {
    const gen = generator('get keys');
    for (const key of gen.textEdges(KEYS)) {
      const out = await w.leader.unary('KV', 'Get', { key, staleOk: gen.pick([true, false]) });
      const what = `key of ${Buffer.byteLength(key)} bytes`;
      if (textValid(key, KEYS)) expectOk(out, what, 'KV', 'Get');
      else expectRefused(out, what, [grpc.status.INVALID_ARGUMENT], 'key');
    }
    expect(await get(gen.name('never'))).toEqual({ found: false, value: Buffer.alloc(0), token: '0', lock: '', deleted: false, semaphore: false, slot: 0 });
  });
});

function checkListed(res: Obj, req: { prefix: string; startAfter: string; limit: number; includeDeleted: boolean }, what: string): void {
  const items = res.items as Obj[];
  const limit = req.limit === 0 ? 100 : req.limit;
  expect(items.length, what).toBeLessThanOrEqual(limit);
  if (res.more) expect(items.length, `${what}: a page with more after it is full`).toBe(limit);
  const keys = items.map((i) => i.key as string);
  expect(keys, `${what}: sorted`).toEqual([...keys].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))));
  for (const item of items) {
    expect(item.key.startsWith(req.prefix), `${what}: ${item.key} under the prefix`).toBe(true);
    expect(Buffer.compare(Buffer.from(item.key), Buffer.from(req.startAfter)) > 0, `${what}: after start_after`).toBe(true);
    wireInt(`${what}: token`, item.token, { min: 1, max: MAX_SAFE });
    expect(item.lock.length, `${what}: a written key has a lock`).toBeGreaterThan(0);
    if (item.deleted) expect(item.value.length, `${what}: a deleted key has no value`).toBe(0);
    if (!req.includeDeleted) expect(item.deleted, what).toBe(false);
  }
}

describe('KV.List', () => {
  it('pages by prefix, start_after and limit 0..1000; bad values are refused naming the field', async () => {
    const gen = generator('list');
    const h = await hold(gen);
    const prefix = gen.name('listed');
    const keys = Array.from({ length: 12 }, (_, i) => `${prefix}/${String(i).padStart(2, '0')}-${gen.textOfBytes(4)}`);
    checkWritten(await write(gen, h, keys.map((k) => put(k, k))), 'the listed keys', h);
    checkWritten(await write(gen, h, [{ type: 'DELETE', key: keys[3] }]), 'one deleted', h);
    for (const limit of gen.intEdges({ min: 0, max: 1_000 })) {
      const req = { prefix, startAfter: '', limit, includeDeleted: true };
      if (!sendable('KV', 'List', req)) continue;
      const decoded = asDecoded('KV', 'List', req).limit as number;
      const what = `limit ${JSON.stringify(limit)} (on the wire ${decoded})`;
      const out = await w.leader.unary('KV', 'List', req);
      if (!intValid(decoded, { min: 0, max: 1_000 })) expectRefused(out, what, [grpc.status.INVALID_ARGUMENT], 'limit');
      else checkListed(expectOk(out, what, 'KV', 'List'), { ...req, limit: decoded }, what);
    }
    for (const includeDeleted of [true, false]) {
      const res = expectOk(await w.leader.unary('KV', 'List', { prefix, limit: 1_000, includeDeleted }), 'all', 'KV', 'List');
      expect(res.items.map((i: Obj) => i.key)).toEqual(includeDeleted ? keys : keys.filter((_, i) => i !== 3));
    }
    for (const [field, value] of [...gen.textEdges(PREFIXES).map((v) => ['prefix', v]), ...gen.textEdges(PREFIXES).map((v) => ['start_after', v])] as const) {
      const req = { prefix: field === 'prefix' ? value : prefix, startAfter: field === 'start_after' ? value : '', limit: gen.int(0, 20), includeDeleted: gen.pick([true, false]) };
      const what = `${field} of ${Buffer.byteLength(value)} bytes`;
      const out = await w.leader.unary('KV', 'List', req);
      if (textValid(value, PREFIXES)) checkListed(expectOk(out, what, 'KV', 'List'), req, what);
      else expectRefused(out, what, [grpc.status.INVALID_ARGUMENT], field);
    }
    await expectAlive(w);
  });
});

describe('KV.Move', () => {
  it('moves a key or a prefix to a free lock, keeping watermarks; bad values are refused naming the field', async () => {
    const gen = generator('move');
    const h = await hold(gen);
    const prefix = gen.name('moved');
    const keys = [`${prefix}/a`, `${prefix}/b`];
    checkWritten(await write(gen, h, keys.map((k) => put(k))), 'keys to move', h);
    expectOk(await w.leader.unary('Lock', 'Release', { header: header(gen), lock: h.lock, sessionId: h.sessionId, token: h.token }), 'release', 'Lock', 'Release');
    const target = gen.name('target');
    const byKey = expectOk(await w.leader.unary('KV', 'Move', { header: header(gen), key: keys[0], toLock: target }), 'move a key', 'KV', 'Move');
    expect(byKey.moved).toBe('1');
    wireInt('index', byKey.index, { min: lastIndex + 1, max: MAX_SAFE });
    const byPrefix = expectOk(await w.leader.unary('KV', 'Move', { header: header(gen), prefix, toLock: target }), 'move a prefix', 'KV', 'Move');
    // lock.proto leaves open whether a key bound to the target already counts; what counts is where both are now.
    wireInt('moved', byPrefix.moved, { min: 1, max: 2 });
    wireInt('index', byPrefix.index, { min: Number(byKey.index) + 1, max: MAX_SAFE });
    lastIndex = Number(byPrefix.index);
    for (const key of keys) expect(await get(key)).toMatchObject({ lock: target, token: h.token, found: true });
    const described = expectOk(await w.leader.unary('Lock', 'Describe', { lock: target }), 'target', 'Lock', 'Describe');
    expect(BigInt(described.latestToken) >= BigInt(h.token), 'the target\'s latest token is raised to the moved watermarks').toBe(true);
    for (const toLock of gen.textEdges({ minBytes: 1, maxBytes: MAX_LOCK_NAME_BYTES })) {
      const out = await w.leader.unary('KV', 'Move', { header: header(gen), key: gen.name('absent'), toLock });
      const what = `to_lock of ${Buffer.byteLength(toLock)} bytes`;
      if (textValid(toLock, { minBytes: 1, maxBytes: MAX_LOCK_NAME_BYTES })) expect(expectOk(out, what, 'KV', 'Move').moved, what).toBe('0');
      else expectRefused(out, what, [grpc.status.INVALID_ARGUMENT], 'to_lock');
    }
    for (const key of gen.textEdges(KEYS).filter((k) => !textValid(k, KEYS))) {
      expectRefused(await w.leader.unary('KV', 'Move', { header: header(gen), key, toLock: target }), `key of ${Buffer.byteLength(key)} bytes`, [grpc.status.INVALID_ARGUMENT], 'key');
    }
    for (const p of gen.textEdges(PREFIXES).filter((k) => !textValid(k, PREFIXES))) {
      expectRefused(await w.leader.unary('KV', 'Move', { header: header(gen), prefix: p, toLock: target }), `prefix of ${Buffer.byteLength(p)} bytes`, [grpc.status.INVALID_ARGUMENT], 'prefix');
    }
    expectRefused(await w.leader.unary('KV', 'Move', { header: header(gen), toLock: target }), 'neither key nor prefix', [grpc.status.INVALID_ARGUMENT], 'what');
    await expectAlive(w);
  });
});

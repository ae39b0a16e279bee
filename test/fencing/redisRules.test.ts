// The fencing rules (ruleMatrix.ts) on a real Redis server through the Lua script (src/fencing/redis), then what
// is Redis's own: keys are exact bytes, the script refuses what the client would, operation records expire.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { redisFencing, type FencingClaim } from '../../src/fencing';
import { defineRuleMatrix, type Key, type MatrixSubject, type Outcome } from './ruleMatrix';

const { fencedDelete, fencedSet, fencedUpdate, markKey, raiseWatermarks, FENCE_SCRIPT } = redisFencing;

const connect = (): Redis => new Redis(inject('redisUrl'), { lazyConnect: false, maxRetriesPerRequest: 1 });

async function redisSubject(): Promise<MatrixSubject> {
  const redis = connect();
  // Each test's keys under a prefix of its own; the audit stream outside the rows' prefix.
  const prefix = `t_${randomBytes(6).toString('hex')}:`;
  const rows = `${prefix}row:`;
  const stream = `${prefix}audit`;
  const key = (k: Key): string => `${rows}${String(k)}`;
  await redis.set(key(1), '100');
  await redis.set(key(2), '100');
  const update = (r: Redis) => (k: Key, value: number, c: FencingClaim) => fencedUpdate(r, { key: key(k), value: String(value) }, c, { outbox: { stream, fields: { value: String(value) } } }) as Promise<Outcome>;
  return {
    update: update(redis),
    upsert: (k, value, c) => fencedSet(redis, { key: key(k), value: String(value) }, c) as Promise<Outcome>,
    remove: (k, c) => fencedDelete(redis, { key: key(k) }, c) as Promise<Outcome>,
    value: async (k) => {
      const v = await redis.get(key(k));
      return v === null ? undefined : Number(v);
    },
    auditTokens: async () => (await redis.xrange(stream, '-', '+')).map(([, fields]) => BigInt(fields[fields.indexOf('token') + 1]!)),
    raise: (min) => raiseWatermarks(redis, rows, min),
    rewind: async (k, fence, value) => {
      await redis.hset(markKey(key(k)), 'fence', fence.toString(), 'step', '1');
      await redis.set(key(k), String(value));
    },
    racers: async (n) => {
      const clients = Array.from({ length: n }, connect);
      await Promise.all(clients.map((c) => c.ping()));
      return { writers: clients.map((c) => (value: number, cl: FencingClaim) => update(c)(1, value, cl)), close: async () => void (await Promise.all(clients.map((c) => c.quit()))) };
    },
    // Redis keys are exact strings: the one key 'row:1', however the caller's code spells the number.
    spellingsOfOne: [1n, '1'],
    close: async () => {
      const keys = [...(await redis.keys(`${prefix}*`)), ...(await redis.keys(`fencing:*${prefix}*`))];
      if (keys.length) await redis.del(...keys);
      await redis.quit();
    },
  };
}

defineRuleMatrix('Redis', { open: redisSubject });

describe('Redis: what is its own', () => {
  let redis: Redis;
  const prefix = `own_${randomBytes(6).toString('hex')}:`;
  beforeAll(() => {
    redis = connect();
  });
  afterAll(async () => redis.quit());
  const LOCK = 'k';

  it('keys are exact strings: other spellings are other keys, and writing them never touches the fenced one', async () => {
    const k = `${prefix}row:3`;
    expect((await fencedSet(redis, { key: k, value: 'a' }, { lock: LOCK, token: 30n })).status).toBe('APPLIED');
    expect((await fencedDelete(redis, { key: k }, { lock: LOCK, token: 31n })).status).toBe('APPLIED');
    for (const other of [`${prefix}row:03`, `${prefix}ROW:3`, `${prefix}row:3 `]) {
      expect((await fencedSet(redis, { key: other, value: 'b' }, { lock: LOCK, token: 30n })).status).toBe('APPLIED');
    }
    expect(await redis.get(k)).toBeNull();
    expect(await fencedSet(redis, { key: k, value: 'c' }, { lock: LOCK, token: 30n, step: 2n })).toEqual({ status: 'STALE', watermark: 31n, lock: LOCK });
  });

  it('the script itself refuses tokens the client would (2^63, leading zeros, 0), so a caller that skips the checks cannot wrap a token', async () => {
    const k = `${prefix}raw`;
    const call = (token: string) => redis.eval(FENCE_SCRIPT, 3, k, markKey(k), `${markKey(k)}:op`, 'set', LOCK, token, '1', '60', 'v');
    for (const bad of ['9223372036854775808', '09', '0', '-1', '1e3', '']) await expect(call(bad), bad).rejects.toThrow(/token and step must be decimal 1\.\.9223372036854775807/);
    expect(await call('9223372036854775807')).toEqual(['APPLIED', '0']);
    expect(await redis.hget(markKey(k), 'fence')).toBe('9223372036854775807');
  });

  it('operation records expire after operationTtlSeconds; a retry after that is refused, never applied twice', async () => {
    const k = `${prefix}ttl`;
    const c = { lock: LOCK, token: 7n, operationId: 'once' };
    expect((await fencedSet(redis, { key: k, value: 'x' }, c, { operationTtlSeconds: 1 })).status).toBe('APPLIED');
    const opKey = redisFencing.operationKey(k, 7n, 'once');
    expect(await redis.ttl(opKey)).toBeGreaterThan(0);
    expect((await fencedSet(redis, { key: k, value: 'x' }, c)).status).toBe('REPLAYED');
    await redis.del(opKey); // what the expiry does
    expect(await fencedSet(redis, { key: k, value: 'x' }, c)).toEqual({ status: 'STALE_STEP', watermark: 7n, lastStep: 1n, lock: LOCK });
  });

  it('fenced keys may not be under fencing:, where the watermarks live', async () => {
    await expect(fencedSet(redis, { key: markKey('x'), value: 'v' }, { lock: LOCK, token: 1n })).rejects.toThrow(/hold fencing state/);
  });

  it('restore raise gives keys written before fencing a watermark too, and escapes glob characters in the prefix', async () => {
    const p = `${prefix}g*[x]:`;
    await redis.set(`${p}old`, 'unfenced');
    await redis.set(`${prefix}gZx:other`, 'not under the prefix');
    expect(await raiseWatermarks(redis, p, 20n)).toBe(1);
    expect(await fencedUpdate(redis, { key: `${p}old`, value: 'v' }, { lock: LOCK, token: 19n })).toEqual({ status: 'STALE', watermark: 20n, lock: null });
    expect(await redis.exists(markKey(`${prefix}gZx:other`))).toBe(0);
  });
});

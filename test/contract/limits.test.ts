// The README's limits table, checked through generated stubs over real node processes: each limit's value
// is accepted, one past it is refused with the documented code and the field named.
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as L from '../../src/state/limits';
import { eventually, LocalCluster } from '../integration/harness';
import { header, rawClient, type RawNodeClient } from '../integration/rawClient';

let cluster: LocalCluster;
let raw: RawNodeClient;
let sessionId: string;

beforeAll(async () => {
  cluster = await LocalCluster.create({ size: 1 });
  cluster.startAll();
  raw = rawClient(cluster.endpoints[0]);
  await eventually(async () => (await raw.call('Cluster', 'Status', {})).role === 'leader', 30_000, 'a leader');
  sessionId = (await raw.call('Session', 'Open', { header: header('contract-limits'), ttlMs: '60000' })).sessionId as string;
});

afterAll(async () => {
  raw?.close();
  await cluster?.destroy();
});

async function refusal(p: Promise<unknown>): Promise<grpc.ServiceError> {
  try {
    await p;
  } catch (err) {
    return err as grpc.ServiceError;
  }
  throw new Error('the call was accepted');
}

const bytes = (n: number, c = 'a'): string => c.repeat(n);
const acquire = (lock: string, extra: object = {}): Promise<Record<string, unknown>> =>
  raw.call('Lock', 'Acquire', { header: header('contract-limits'), lock, sessionId, waitTimeoutMs: '0', ...extra });

/** Takes a fresh lock and returns a write function under its token. */
async function holder(tag: string): Promise<(ops: object[], extra?: object) => Promise<Record<string, unknown>>> {
  const lock = `contract/${tag}`;
  const { token } = await acquire(lock);
  return (ops, extra = {}) => raw.call('KV', 'Write', { header: header('contract-limits'), lock, token, sessionId, ops, ...extra });
}

describe('limits table: at the limit accepted, one past refused INVALID_ARGUMENT naming the field', () => {
  it(`lock name: ${L.MAX_LOCK_NAME_BYTES} bytes`, async () => {
    expect((await acquire(bytes(L.MAX_LOCK_NAME_BYTES, 'n'))).acquired).toBe(true);
    const err = await refusal(acquire(bytes(L.MAX_LOCK_NAME_BYTES + 1, 'n')));
    expect(err.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(err.details).toMatch(/lock/);
  });

  it(`key: ${L.MAX_KEY_BYTES} bytes`, async () => {
    const write = await holder('key');
    const key = (n: number): string => `contract/key/${bytes(n - 'contract/key/'.length, 'k')}`;
    await write([{ type: 'PUT', key: key(L.MAX_KEY_BYTES), value: Buffer.from('v') }]);
    const err = await refusal(write([{ type: 'PUT', key: key(L.MAX_KEY_BYTES + 1), value: Buffer.from('v') }]));
    expect(err.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(err.details).toMatch(/key/);
  });

  it(`value: ${L.MAX_VALUE_BYTES} bytes`, async () => {
    const write = await holder('value');
    await write([{ type: 'PUT', key: 'contract/value/k', value: Buffer.alloc(L.MAX_VALUE_BYTES) }]);
    const err = await refusal(write([{ type: 'PUT', key: 'contract/value/k', value: Buffer.alloc(L.MAX_VALUE_BYTES + 1) }]));
    expect(err.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(err.details).toMatch(/value/);
  });

  it(`ops per write: ${L.MAX_OPS_PER_WRITE}`, async () => {
    const write = await holder('ops');
    const ops = (n: number): object[] => Array.from({ length: n }, (_, i) => ({ type: 'PUT', key: `contract/ops/${i}`, value: Buffer.from('v') }));
    await write(ops(L.MAX_OPS_PER_WRITE));
    const err = await refusal(write(ops(L.MAX_OPS_PER_WRITE + 1)));
    expect(err.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(err.details).toMatch(/ops/);
  });

  it(`bytes of one write: ${L.MAX_WRITE_BYTES}`, async () => {
    const write = await holder('wbytes');
    // Eight full values and their keys: over the limit by the keys' bytes; the same with shorter values fits.
    const ops = (valueBytes: number): object[] => Array.from({ length: 8 }, (_, i) => ({ type: 'PUT', key: `contract/wbytes/${i}`, value: Buffer.alloc(valueBytes) }));
    const keyBytes = Array.from({ length: 8 }, (_, i) => `contract/wbytes/${i}`.length).reduce((a, b) => a + b, 0);
    const fits = Math.floor((L.MAX_WRITE_BYTES - keyBytes) / 8);
    await write(ops(fits));
    const err = await refusal(write(ops(L.MAX_VALUE_BYTES)));
    expect(8 * L.MAX_VALUE_BYTES + keyBytes).toBeGreaterThan(L.MAX_WRITE_BYTES);
    expect(err.code).toBe(grpc.status.INVALID_ARGUMENT);
  });

  it(`client id: ${L.MAX_CLIENT_ID_BYTES} bytes`, async () => {
    const open = (clientId: string): Promise<Record<string, unknown>> => raw.call('Session', 'Open', { header: { clientId, requestId: '1' }, ttlMs: '60000' });
    expect((await open(bytes(L.MAX_CLIENT_ID_BYTES, 'c'))).sessionId).toMatch(/^[0-9a-f]{32}$/);
    const err = await refusal(open(bytes(L.MAX_CLIENT_ID_BYTES + 1, 'c')));
    expect(err.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(err.details).toMatch(/client_id|clientId/);
    expect(err.details).toMatch(/128/);
  });

  it('session TTL: from 3,000 ms (the default minSessionTtlMs) to 300,000 ms (maxSessionTtlMs)', async () => {
    const open = (ttlMs: number): Promise<Record<string, unknown>> => raw.call('Session', 'Open', { header: header('contract-ttl'), ttlMs: String(ttlMs) });
    // The answer names the cluster's election timeout (tickMs 50 x electionTicks 10), for the client's margin.
    expect((await open(3_000)).electionTimeoutMs).toBe('500');
    await open(300_000);
    for (const ttl of [2_999, 300_001]) {
      const err = await refusal(open(ttl));
      expect(err.code, `ttl ${ttl}`).toBe(grpc.status.INVALID_ARGUMENT);
      expect(err.details).toMatch(/ttl/);
    }
  });

  it(`wait timeout: 0 to ${L.MAX_WAIT_TIMEOUT_MS} ms`, async () => {
    expect((await acquire('contract/wait', { waitTimeoutMs: String(L.MAX_WAIT_TIMEOUT_MS) })).acquired).toBe(true);
    const err = await refusal(acquire('contract/wait2', { waitTimeoutMs: String(L.MAX_WAIT_TIMEOUT_MS + 1) }));
    expect(err.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(err.details).toMatch(/wait_timeout|waitTimeout/);
  });

  it(`lock-delay: 0 to ${L.MAX_LOCK_DELAY_MS} ms`, async () => {
    expect((await acquire('contract/delay', { lockDelayMs: String(L.MAX_LOCK_DELAY_MS) })).acquired).toBe(true);
    const err = await refusal(acquire('contract/delay2', { lockDelayMs: String(L.MAX_LOCK_DELAY_MS + 1) }));
    expect(err.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(err.details).toMatch(/lock_delay_ms/);
  });

  it('integers stay below 2^53: a token of 2^53 is refused as input, 2^53 - 1 is judged by fencing', async () => {
    const write = (token: string): Promise<Record<string, unknown>> =>
      raw.call('KV', 'Write', { header: header('contract-limits'), lock: 'contract/int', token, sessionId, ops: [{ type: 'PUT', key: 'contract/int/k', value: Buffer.from('v') }] });
    const tooBig = await refusal(write(String(2 ** 53)));
    expect(tooBig.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(tooBig.details).toMatch(/2\^53/);
    const judged = await refusal(write(String(2 ** 53 - 1)));
    expect(judged.code).toBe(grpc.status.FAILED_PRECONDITION);
  });
});

describe('REQUEST_ID_REUSED', () => {
  it('a request id used before for another kind of request is INVALID_ARGUMENT REQUEST_ID_REUSED', async () => {
    const h = header('contract-reuse');
    await raw.call('Session', 'Open', { header: h, ttlMs: '60000' });
    const err = await refusal(raw.call('Lock', 'Acquire', { header: h, lock: 'contract/reuse', sessionId, waitTimeoutMs: '0' }));
    expect(err.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(err.metadata.get('fencelock-reason')).toEqual(['REQUEST_ID_REUSED']);
  });
});

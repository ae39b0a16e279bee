// The README's fencing table, every row, end to end over real processes and TLS gRPC: the reason a refused
// write gets, in the table's precedence (issue 17, items 2 and 3).
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, LocalCluster } from '../integration/harness';
import { header, rawClient, type RawNodeClient } from '../integration/rawClient';

let cluster: LocalCluster;
let raw: RawNodeClient[] = [];

async function rawLeader(): Promise<RawNodeClient> {
  return eventually(
    async () => {
      for (const r of raw) {
        const status = await r.call('Cluster', 'Status', {}).catch(() => undefined);
        if (status?.role === 'leader') return r;
      }
      return undefined;
    },
    15_000,
    'a leader',
  );
}

async function openSession(r: RawNodeClient): Promise<string> {
  const res = await r.call('Session', 'Open', { header: header(), ttlMs: '30000', clientName: 'fencing-reasons' });
  return res.sessionId as string;
}

async function grant(r: RawNodeClient, sessionId: string, lock: string): Promise<bigint> {
  const res = await r.call('Lock', 'Acquire', { header: header(), lock, sessionId, waitTimeoutMs: '0' });
  expect(res.acquired).toBe(true);
  return BigInt(res.token as string);
}

function refusedWrite(r: RawNodeClient, sessionId: string, lock: string, token: bigint, key: string): Promise<grpc.ServiceError> {
  return r
    .call('KV', 'Write', { header: header(), lock, token: String(token), sessionId, ops: [{ type: 'PUT', key, value: Buffer.from('x') }] })
    .then(
      () => {
        throw new Error('expected the write to be refused');
      },
      (err: grpc.ServiceError) => err,
    );
}

/** One call on a fresh Pipeline stream: its CallResponse. */
function pipelineCall(r: RawNodeClient, call: Record<string, unknown>): Promise<Record<string, unknown>> {
  const stream = r.pipelineStream();
  return new Promise((resolve, reject) => {
    stream.on('data', (res: Record<string, unknown>) => {
      resolve(res);
      stream.cancel();
    });
    stream.on('error', (err: grpc.ServiceError) => {
      if (err.code !== grpc.status.CANCELLED) reject(err);
    });
    stream.write({ callId: '1', ...call });
  });
}

function fencelockMetadata(md: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(Object.entries(md).filter(([k]) => k.startsWith('fencelock-')).map(([k, v]) => [k, String(v)]));
}

beforeAll(async () => {
  cluster = await LocalCluster.create();
  cluster.startAll();
  raw = cluster.endpoints.map((e) => rawClient(e));
  await rawLeader();
});

afterAll(async () => {
  await cluster?.destroy();
  for (const r of raw) r.close();
});

describe('write refusals the fencing table orders', () => {
  it('a token issued for another lock, below this lock\'s latest token: FAILED_PRECONDITION, STALE_TOKEN', async () => {
    const leader = await rawLeader();
    const [a, b] = [await openSession(leader), await openSession(leader)];
    const ty = await grant(leader, a, 'res/y');
    const tx = await grant(leader, b, 'res/x');
    expect(ty).toBeLessThan(tx);

    const err = await refusedWrite(leader, a, 'res/x', ty, 'res/x/data');
    expect(grpc.status[err.code], err.details).toBe('FAILED_PRECONDITION');
    expect(err.metadata.get('fencelock-reason')).toEqual(['STALE_TOKEN']);
    expect(err.metadata.get('fencelock-watermark')).toEqual([String(tx)]);
    expect(err.details).toBe(
      `STALE_TOKEN: stale token: a newer grant of this lock exists (the token is below its latest), or a key was written under a newer token; current watermark ${tx}`,
    );
  });

  it('an open session that does not hold the lock, writing with the holder\'s current token: FAILED_PRECONDITION, NOT_HOLDER', async () => {
    const leader = await rawLeader();
    const [holder, other] = [await openSession(leader), await openSession(leader)];
    const t = await grant(leader, holder, 'res/z');

    const err = await refusedWrite(leader, other, 'res/z', t, 'res/z/data');
    expect(grpc.status[err.code], err.details).toBe('FAILED_PRECONDITION');
    expect(err.metadata.get('fencelock-reason')).toEqual(['NOT_HOLDER']);
    expect(err.metadata.get('fencelock-watermark')).toEqual([String(t)]);
    expect(err.details).toBe(
      `NOT_HOLDER: not the holder: this session does not hold the lock (for a write: the token is another session's grant); current watermark ${t}`,
    );
    expect(err.details).not.toContain('released or expired');

    // the holder still writes under it
    await leader.call('KV', 'Write', {
      header: header(),
      lock: 'res/z',
      token: String(t),
      sessionId: holder,
      ops: [{ type: 'PUT', key: 'res/z/data', value: Buffer.from('h') }],
    });
  });

  const reasonOf = (err: grpc.ServiceError): string[] => err.metadata.get('fencelock-reason') as string[];

  it('row 1, WRONG_LOCK: a touched key belongs to another lock (the message and metadata name the key and its lock)', async () => {
    const leader = await rawLeader();
    const a = await openSession(leader);
    const ta = await grant(leader, a, 'res/a');
    await leader.call('KV', 'Write', { header: header(), lock: 'res/a', token: String(ta), sessionId: a, ops: [{ type: 'PUT', key: 'res/a/owned', value: Buffer.from('a') }] });
    const tb = await grant(leader, a, 'res/b');
    const err = await refusedWrite(leader, a, 'res/b', tb, 'res/a/owned');
    expect(grpc.status[err.code]).toBe('FAILED_PRECONDITION');
    expect(reasonOf(err)).toEqual(['WRONG_LOCK']);
    expect(err.metadata.get('fencelock-key')).toEqual(['res/a/owned']);
    expect(err.metadata.get('fencelock-key-lock')).toEqual(['res/a']);
    expect(err.details).toBe(
      'WRONG_LOCK: wrong lock: key "res/a/owned" belongs to lock "res/a" (for good: bound by its first write, also once deleted); ' +
        `write it under lock "res/a" or use another key; current watermark ${tb}`,
    );
  });

  it('row 1 for a deleted key with non-ASCII names, unary and on the Pipeline stream alike: the owner, percent-encoded (regression: gRPC metadata is ASCII only)', async () => {
    const leader = await rawLeader();
    const a = await openSession(leader);
    const [owner, key] = ['commandes/été', 'clé 100%'];
    const to = await grant(leader, a, owner);
    for (const type of ['PUT', 'DELETE']) {
      await leader.call('KV', 'Write', { header: header(), lock: owner, token: String(to), sessionId: a, ops: [{ type, key, value: Buffer.from('v') }] });
    }
    const tb = await grant(leader, a, 'res/other');
    const unary = await refusedWrite(leader, a, 'res/other', tb, key);
    const write = { header: header(), lock: 'res/other', token: String(tb), sessionId: a, ops: [{ type: 'PUT', key, value: Buffer.from('x') }] };
    const piped = await pipelineCall(leader, { write });
    const expected = { 'fencelock-reason': 'WRONG_LOCK', 'fencelock-watermark': String(tb), 'fencelock-key': 'cl%C3%A9 100%25', 'fencelock-key-lock': 'commandes/%C3%A9t%C3%A9' };
    expect(fencelockMetadata(unary.metadata.getMap())).toEqual(expected);
    expect(piped).toMatchObject({ code: grpc.status.FAILED_PRECONDITION, message: unary.details, metadata: expected });
    expect(unary.details).toContain('key "clé 100%" belongs to lock "commandes/été"');
  });

  it('row 2, WRONG_LOCK: a token above the lock\'s latest token, which cannot have been issued for it', async () => {
    const leader = await rawLeader();
    const [a, b] = [await openSession(leader), await openSession(leader)];
    const tx = await grant(leader, a, 'res/low');
    const later = await grant(leader, b, 'res/high');
    expect(later).toBeGreaterThan(tx);
    const err = await refusedWrite(leader, a, 'res/low', later, 'res/low/k');
    expect(reasonOf(err)).toEqual(['WRONG_LOCK']);
  });

  it('row 4, UNKNOWN_SESSION: a session that is not open and was not the grant\'s holder, with the latest token', async () => {
    const leader = await rawLeader();
    const holder = await openSession(leader);
    const t = await grant(leader, holder, 'res/u');
    const gone = await openSession(leader);
    await leader.call('Session', 'Close', { header: header(), sessionId: gone });
    const err = await refusedWrite(leader, gone, 'res/u', t, 'res/u/k');
    expect(grpc.status[err.code]).toBe('NOT_FOUND');
    expect(reasonOf(err)).toEqual(['UNKNOWN_SESSION']);
  });

  it('row 6, LOCK_NOT_HELD: the holder, after its grant ended, with no newer grant', async () => {
    const leader = await rawLeader();
    const holder = await openSession(leader);
    const t = await grant(leader, holder, 'res/ended');
    await leader.call('Lock', 'Release', { header: header(), lock: 'res/ended', sessionId: holder, token: String(t) });
    const err = await refusedWrite(leader, holder, 'res/ended', t, 'res/ended/k');
    expect(grpc.status[err.code]).toBe('FAILED_PRECONDITION');
    expect(reasonOf(err)).toEqual(['LOCK_NOT_HELD']);
    expect(err.details).toMatch(/released|ended|expired/);
  });
});

describe('a key belongs to one lock for good, and says which', () => {
  it('KV.Get of a deleted key: not found, deleted, with its lock and watermark; KV.List shows it only with include_deleted', async () => {
    const leader = await rawLeader();
    const a = await openSession(leader);
    const t = await grant(leader, a, 'own/a');
    await leader.call('KV', 'Write', {
      header: header(),
      lock: 'own/a',
      token: String(t),
      sessionId: a,
      ops: [{ type: 'PUT', key: 'own/a/1', value: Buffer.from('one') }, { type: 'PUT', key: 'own/a/2', value: Buffer.from('two') }],
    });
    await leader.call('KV', 'Write', { header: header(), lock: 'own/a', token: String(t), sessionId: a, ops: [{ type: 'DELETE', key: 'own/a/1' }] });

    expect(await leader.call('KV', 'Get', { key: 'own/a/1' })).toEqual({ found: false, deleted: true, value: Buffer.alloc(0), token: String(t), lock: 'own/a', semaphore: false, slot: 0 });
    expect(await leader.call('KV', 'Get', { key: 'own/a/2' })).toEqual({ found: true, deleted: false, value: Buffer.from('two'), token: String(t), lock: 'own/a', semaphore: false, slot: 0 });
    expect(await leader.call('KV', 'Get', { key: 'own/never' })).toEqual({ found: false, deleted: false, value: Buffer.alloc(0), token: '0', lock: '', semaphore: false, slot: 0 });

    const live = await leader.call('KV', 'List', { prefix: 'own/a/' });
    expect((live.items as Array<Record<string, unknown>>).map((i) => i.key)).toEqual(['own/a/2']);
    const all = await leader.call('KV', 'List', { prefix: 'own/a/', includeDeleted: true });
    expect(all.items).toEqual([
      { key: 'own/a/1', value: Buffer.alloc(0), token: String(t), lock: 'own/a', deleted: true, semaphore: false, slot: 0 },
      { key: 'own/a/2', value: Buffer.from('two'), token: String(t), lock: 'own/a', deleted: false, semaphore: false, slot: 0 },
    ]);
    const page = await leader.call('KV', 'List', { prefix: 'own/a/', includeDeleted: true, limit: 1 });
    expect(page).toMatchObject({ items: [{ key: 'own/a/1', deleted: true }], more: true });
  });
});

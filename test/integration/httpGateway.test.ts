// The HTTP JSON gateway (issue 35) over real HTTPS connections to a real 3-node cluster: a whole curl-like
// cycle (open, acquire, fenced write, a stale write refused with its reason, describe, list, release), a
// retried request id answered from its retry record, a renewal, a watch as server-sent events that sees the
// hand-over, and the answers a follower and a wrong route give.
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from './harness';
import { atLeader, httpCluster, openEvents, request, type HttpCluster, type Obj } from './httpGateway';

let k: HttpCluster;
let leader: string;

const call = (route: string, json?: unknown) => atLeader(k, route, json === undefined ? {} : { json });
const b64 = (s: string): string => Buffer.from(s).toString('base64');

beforeAll(async () => {
  k = await httpCluster();
  leader = await k.leaderHttp();
}, 90_000);

afterAll(async () => {
  await k?.client.close();
  await k?.cluster.destroy();
});

async function openSession(clientId: string): Promise<string> {
  const opened = await call('/v1/sessions/open', { header: { clientId, requestId: '1' }, ttlMs: '30000', clientName: clientId });
  expect(opened.status).toBe(200);
  return opened.body.sessionId as string;
}

describe('the HTTP gateway', () => {
  it('serves a whole lock cycle: acquire, fenced write, a stale write refused 409 STALE_TOKEN, hand-over seen on the event stream', async () => {
    const alice = await openSession('alice');
    const bob = await openSession('bob');
    const watch = await openEvents(leader, k.cluster.certsDir!, '/v1/locks/watch?lock=jobs%2Fnightly');
    expect(watch.status).toBe(200);
    try {
      const first = await call('/v1/locks/acquire', { header: { clientId: 'alice', requestId: '2' }, lock: 'jobs/nightly', sessionId: alice, waitTimeoutMs: '0' });
      expect(first.status).toBe(200);
      expect(first.body.acquired).toBe(true);
      const token1 = first.body.token as string;
      expect(token1).toMatch(/^\d+$/);

      // A retry of the same request id is answered from its retry record: the same token, nothing applied twice.
      const retried = await call('/v1/locks/acquire', { header: { client_id: 'alice', request_id: '2' }, lock: 'jobs/nightly', session_id: alice, wait_timeout_ms: '0' });
      expect(retried.body).toEqual(first.body);

      const written = await call('/v1/kv/write', { header: { clientId: 'alice', requestId: '3' }, lock: 'jobs/nightly', token: token1, sessionId: alice, ops: [{ type: 'PUT', key: 'jobs/nightly/state', value: b64('running') }] });
      expect(written.status).toBe(200);
      const read = await call('/v1/kv/get?key=jobs%2Fnightly%2Fstate');
      expect(read.status).toBe(200);
      expect(Buffer.from(read.body.value as string, 'base64').toString()).toBe('running');

      // Bob waits; alice releases; bob is granted with a higher token.
      const bobWaits = call('/v1/locks/acquire', { header: { clientId: 'bob', requestId: '2' }, lock: 'jobs/nightly', sessionId: bob, waitTimeoutMs: '20000' });
      await eventually(async () => (((await call('/v1/locks/describe?lock=jobs%2Fnightly')).body.waiters as string[]).length === 1 ? true : undefined), 10_000, 'bob queued');
      const described = await call('/v1/locks/describe?lock=jobs%2Fnightly');
      expect(described.body).toMatchObject({ held: true, token: token1 });
      const released = await call('/v1/locks/release', { header: { clientId: 'alice', requestId: '4' }, lock: 'jobs/nightly', sessionId: alice, token: token1 });
      expect(released.status).toBe(200);
      const second = await bobWaits;
      expect(second.status).toBe(200);
      const token2 = second.body.token as string;
      expect(BigInt(token2)).toBeGreaterThan(BigInt(token1));

      // Alice, paused past her grant, writes with her old token: refused, with the reason and the watermark.
      const stale = await call('/v1/kv/write', { header: { clientId: 'alice', requestId: '5' }, lock: 'jobs/nightly', token: token1, sessionId: alice, ops: [{ type: 'PUT', key: 'jobs/nightly/state', value: b64('stale') }] });
      expect(stale.status).toBe(409);
      expect(stale.body).toMatchObject({ status: 'FAILED_PRECONDITION', reason: 'STALE_TOKEN' });
      expect(stale.body.message).toMatch(/stale token/);
      expect(Buffer.from((await call('/v1/kv/get?key=jobs%2Fnightly%2Fstate')).body.value as string, 'base64').toString()).toBe('running');

      const listed = await call('/v1/locks?prefix=jobs%2F');
      expect(listed.status).toBe(200);
      expect(JSON.stringify(listed.body)).toContain('jobs/nightly');

      await eventually(() => (watch.events.filter((e) => e.data.kind === 'GRANTED').length >= 2 ? true : undefined), 10_000, 'both grants on the event stream');
      const kinds = watch.events.map((e) => `${e.event}:${e.data.kind as string}:${e.data.token as string}`);
      expect(kinds).toEqual([`lock:GRANTED:${token1}`, `lock:RELEASED:${token1}`, `lock:GRANTED:${token2}`]);
    } finally {
      watch.close();
    }
  });

  it('renews a session with one renewal per request, and says when a session is gone', async () => {
    const carol = await openSession('carol');
    const renewed = await call('/v1/sessions/keepalive', { sessionId: carol, renewalId: '7' });
    expect(renewed.status).toBe(200);
    expect(renewed.body).toMatchObject({ alive: true, renewalId: '7', sessionId: carol });
    expect((await call('/v1/sessions/close', { header: { clientId: 'carol', requestId: '2' }, sessionId: carol })).status).toBe(200);
    expect((await call('/v1/sessions/keepalive', { sessionId: carol, renewalId: '8' })).body).toMatchObject({ alive: false });
  });

  it('serves the reads a dashboard needs: status, members, sessions, whoami', async () => {
    const status = await call('/v1/cluster/status');
    expect(status.status).toBe(200);
    expect(typeof status.body.term).toBe('string');
    const members = await call('/v1/cluster/members');
    expect((members.body.members as Obj[]).length).toBe(3);
    const sessions = await call('/v1/sessions');
    expect(sessions.status).toBe(200);
    expect((await call('/v1/auth/whoami')).body).toMatchObject({ identity: '', via: '' });
    // The client certificate of the TLS connection identifies the caller, as on gRPC.
    const certsDir = k.cluster.certsDir!;
    const cert = { certPem: readFileSync(path.join(certsDir, 'client.pem'), 'utf8'), keyPem: readFileSync(path.join(certsDir, 'client-key.pem'), 'utf8') };
    const me = await atLeader(k, '/v1/auth/whoami', { cert });
    expect(me.body).toMatchObject({ identity: 'test', via: 'certificate' });
  });

  it('a follower answers 503 NOT_LEADER naming the leader, as on gRPC', async () => {
    // Asked again if an election moved the leader between the status and the call.
    const { st, refused } = await eventually(async () => {
      const st = await k.client.status();
      const follower = [...k.http.entries()].find(([id]) => id !== st.leader)![1];
      const refused = await request(follower, k.cluster.certsDir!, '/v1/sessions/open', { json: { header: { clientId: 'dave', requestId: '1' }, ttlMs: '30000' } });
      return refused.body.leaderId === st.leader ? { st, refused } : undefined;
    }, 20_000, 'a follower naming the leader');
    expect(refused.status).toBe(503);
    expect(refused.body).toMatchObject({ status: 'UNAVAILABLE', reason: 'NOT_LEADER', leaderId: st.leader });
    expect(refused.body.metadata).toMatchObject({ 'fencelock-leader': k.cluster.nodes.find((n) => n.id === st.leader)!.address });
  });

  it('an unknown route is 404 and a wrong verb 405 with Allow, both as JSON errors', async () => {
    const missing = await call('/v1/nothing');
    expect(missing.status).toBe(404);
    expect(missing.body.status).toBe('NOT_FOUND');
    const wrongVerb = await request(leader, k.cluster.certsDir!, '/v1/locks/acquire', { method: 'GET' });
    expect(wrongVerb.status).toBe(405);
    expect(wrongVerb.headers.allow).toBe('POST');
  });
});

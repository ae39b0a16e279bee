// The HTTP gateway under hostile input (issue 35), over real HTTPS connections to a real 3-node cluster with
// auth on: malformed JSON, oversize bodies, wrong content types, missing, bad and forged credentials, a
// revoked token's open event stream, a slow drip client, a user without permission on a prefix, and the
// per-identity stream quota shared with gRPC.
import { mkdtempSync, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateDevCerts } from '../../src/certs/generate';
import { MAX_HTTP_BODY_BYTES } from '../../src/node/http/httpLimits';
import { eventually } from '../integration/harness';
import { atLeader, httpCluster, openEvents, within, type HttpCluster, type Obj, type RequestOptions } from '../integration/httpGateway';
import type { Pem } from './certs';

let k: HttpCluster;
let leader: string;
let certsDir: string;
let admin: Pem;
let tomToken: string;

beforeAll(async () => {
  k = await httpCluster({ authAdmin: 'test' });
  certsDir = k.cluster.certsDir!;
  admin = { certPem: readFileSync(path.join(certsDir, 'client.pem'), 'utf8'), keyPem: readFileSync(path.join(certsDir, 'client-key.pem'), 'utf8') };
  await eventually(async () => ((await k.client.auth.whoAmI()).authEnabled ? true : undefined), 30_000, 'auth on');
  await k.client.auth.roleAdd('app');
  for (const perm of ['lock', 'write', 'read'] as const) await k.client.auth.roleGrantPermission('app', perm, 'app/');
  await k.client.auth.userAdd('tom');
  await k.client.auth.userGrantRole('tom', 'app');
  tomToken = (await k.client.auth.tokenIssue('tom')).token;
  // A lock tom may not see: the admin holds secret/plan.
  const s = await k.client.openSession({ ttlMs: 60_000 });
  await s.acquire('secret/plan', { waitTimeoutMs: 0 });
  leader = await k.leaderHttp();
}, 120_000);

afterAll(async () => {
  await k?.client.close();
  await k?.cluster.destroy();
});

/** Sends `text` on a TLS connection of its own and resolves with everything the node answers. */
function rawExchange(text: string): Promise<string> {
  const [host, port] = leader.split(':');
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host, port: Number(port), ca: readFileSync(path.join(certsDir, 'ca.pem')) }, () => socket.end(text));
    let answer = '';
    socket.on('data', (c: Buffer) => (answer += c.toString()));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
}

const asAdmin = (route: string, opts: RequestOptions = {}) => atLeader(k, route, { cert: admin, ...opts });

describe('hostile input to the HTTP gateway', () => {
  it('malformed JSON, a body that is not an object, an unknown field and a wrong type are 400 INVALID_ARGUMENT naming what', async () => {
    const cases: Array<[string, RegExp]> = [
      ['{"lock": ', /not JSON/],
      ['[1, 2]', /must be a JSON object/],
      ['{"lock": "app/x", "evil": 1}', /evil: is not a field/],
      ['{"lock": 42}', /lock: must be a JSON string/],
      ['{"lock": "app/x", "token": "1e3"}', /token: must be an integer/],
      ['{"lock": "app/x", "token": "18446744073709551616"}', /token: is out of range/],
    ];
    for (const [raw, why] of cases) {
      const answer = await asAdmin('/v1/locks/release', { raw });
      expect(answer.status, raw).toBe(400);
      expect(answer.body.status).toBe('INVALID_ARGUMENT');
      expect(answer.body.message).toMatch(why);
    }
    // A body that is not UTF-8.
    const badUtf8 = await asAdmin('/v1/sessions/close', { raw: Buffer.from('{"sessionId":"\xff"}', 'latin1') });
    expect(badUtf8.status).toBe(400);
  });

  it('a body of the wrong content type is 415; an oversize body is 413, declared or streamed, and nothing of it is parsed', async () => {
    expect((await asAdmin('/v1/locks/release', { raw: '{}', contentType: 'text/plain' })).status).toBe(415);
    expect((await asAdmin('/v1/locks/release', { raw: 'lock=app/x', contentType: 'application/x-www-form-urlencoded' })).status).toBe(415);
    const big = Buffer.alloc(MAX_HTTP_BODY_BYTES + 1, 0x20);
    const declared = await asAdmin('/v1/kv/write', { raw: big });
    expect(declared.status).toBe(413);
    expect(declared.body.status).toBe('RESOURCE_EXHAUSTED');
    const chunked = await asAdmin('/v1/kv/write', { raw: big, headers: { 'transfer-encoding': 'chunked' } });
    expect(chunked.status).toBe(413);
  });

  it('no credentials, an unknown token, a malformed token and a certificate from another CA are 401; two Authorization headers too', async () => {
    const route = '/v1/locks?prefix=app%2F';
    expect((await atLeader(k, route)).status).toBe(401);
    // tom's token id with another secret; then tokens of the wrong shape.
    const wrongSecret = `${tomToken.slice(0, 'flt_0123456789abcdef_'.length)}${'A'.repeat(43)}`;
    expect(wrongSecret).not.toBe(tomToken);
    for (const token of [wrongSecret, 'not-a-token', 'flt_x_y']) {
      const answer = await atLeader(k, route, { token });
      expect(answer.status, token).toBe(401);
      expect(answer.body.status).toBe('UNAUTHENTICATED');
    }
    // A certificate naming the admin, from a CA the cluster does not trust: no identity at all.
    const foreign = mkdtempSync(path.join(os.tmpdir(), 'fencelock-foreign-'));
    await generateDevCerts(foreign, { nodes: ['x'], client: 'test' });
    const forged = { certPem: readFileSync(path.join(foreign, 'client.pem'), 'utf8'), keyPem: readFileSync(path.join(foreign, 'client-key.pem'), 'utf8') };
    const answer = await atLeader(k, route, { cert: forged });
    expect(answer.status).toBe(401);
    const twice = await rawExchange(`GET ${route} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${tomToken}\r\nAuthorization: Bearer ${tomToken}\r\nConnection: close\r\n\r\n`);
    expect(twice).toMatch(/^HTTP\/1.1 401 [^]*one authorization/);
  });

  it("a user without permission on a prefix sees none of its locks in List, and may not watch them (403)", async () => {
    const mine = await atLeader(k, '/v1/locks', { token: tomToken });
    expect(mine.status).toBe(200);
    expect(JSON.stringify(mine.body)).not.toContain('secret/plan');
    expect(JSON.stringify((await asAdmin('/v1/locks')).body)).toContain('secret/plan');
    const prefixed = await atLeader(k, '/v1/locks?prefix=secret%2F', { token: tomToken });
    expect(JSON.stringify(prefixed.body)).not.toContain('secret/plan');
    const watch = await openEvents(await k.leaderHttp(), certsDir, '/v1/locks/watch?lock=secret%2Fplan', { token: tomToken });
    expect(watch.status).toBe(403);
    await watch.ended;
    expect(watch.body).toMatchObject({ status: 'PERMISSION_DENIED', reason: 'PERMISSION_DENIED' });
    expect(watch.events).toEqual([]);
  });

  it("a revoked token's open event stream ends at the revoke with an UNAUTHENTICATED error event", async () => {
    await k.client.auth.userAdd('una');
    await k.client.auth.userGrantRole('una', 'app');
    const una = await k.client.auth.tokenIssue('una');
    const watch = await openEvents(await k.leaderHttp(), certsDir, '/v1/locks/watch?lock=app%2Fjob', { token: una.token });
    try {
      expect(watch.status).toBe(200);
      expect(await within(watch.ended, 500)).toBe('pending');
      await k.client.auth.tokenRevoke(una.tokenId);
      expect(await within(watch.ended, 10_000)).not.toBe('pending');
      const last = watch.events.at(-1) as { event: string; data: Obj };
      expect(last.event).toBe('error');
      expect(last.data).toMatchObject({ status: 'UNAUTHENTICATED' });
      expect((await atLeader(k, '/v1/locks/watch?lock=app%2Fjob', { token: una.token })).status).toBe(401);
    } finally {
      watch.close();
    }
  });

  it("event streams count against the identity's watch_streams quota, shared with gRPC: over it, 429 QUOTA_EXCEEDED", async () => {
    await k.client.auth.roleAdd('watcher');
    await k.client.auth.roleGrantPermission('watcher', 'lock', 'app/');
    await k.client.auth.roleSetQuota('watcher', 'watch_streams', 1);
    await k.client.auth.userAdd('wes');
    await k.client.auth.userGrantRole('wes', 'watcher');
    const wes = await k.client.auth.tokenIssue('wes');
    const first = await openEvents(await k.leaderHttp(), certsDir, '/v1/locks/watch?lock=app%2Fa', { token: wes.token });
    try {
      expect(first.status).toBe(200);
      const second = await openEvents(await k.leaderHttp(), certsDir, '/v1/locks/watch?lock=app%2Fb', { token: wes.token });
      expect(second.status).toBe(429);
      await second.ended;
      expect(second.body).toMatchObject({ status: 'RESOURCE_EXHAUSTED', reason: 'QUOTA_EXCEEDED' });
    } finally {
      first.close();
    }
    // Once the first stream is gone, its count is released.
    await eventually(async () => {
      const again = await openEvents(await k.leaderHttp(), certsDir, '/v1/locks/watch?lock=app%2Fb', { token: wes.token });
      again.close();
      return again.status === 200 ? true : undefined;
    }, 10_000, 'the quota released');
  });

  it('a client that drips its headers is cut off at the header deadline, and the listener keeps serving', async () => {
    const [host, port] = leader.split(':');
    const socket = tls.connect({ host, port: Number(port), ca: readFileSync(path.join(certsDir, 'ca.pem')) });
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.on('error', () => undefined);
    await new Promise<void>((resolve) => socket.once('secureConnect', () => resolve()));
    socket.write('GET /v1/cluster/status HTTP/1.1\r\nHost: x\r\n');
    // One header byte a second, forever: never a whole header block.
    const drip = setInterval(() => socket.write('X'), 1_000);
    try {
      expect(await within(closed, 20_000)).not.toBe('pending');
    } finally {
      clearInterval(drip);
      socket.destroy();
    }
    expect((await asAdmin('/v1/cluster/status')).status).toBe(200);
  });
});

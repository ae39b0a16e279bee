// The HTTP gateway's edges (issue 35), over real HTTPS connections to a real 3-node cluster with auth on: a
// body that drips in is cut at the request deadline with nothing applied; a client that goes away while its
// blocking acquire waits withdraws the wait as a cancelled gRPC call does (never granted to the gone caller,
// its session left open); forged, revoked and foreign-CA credentials on mutating routes are 401 with nothing
// applied.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as https from 'node:https';
import * as os from 'node:os';
import * as path from 'node:path';
import * as tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateDevCerts } from '../../src/certs/generate';
import { ROOT_ROLE } from '../../src/state';
import { eventually } from '../integration/harness';
import { atLeader, httpCluster, tlsOf, within, type HttpCluster } from '../integration/httpGateway';
import type { Pem } from './certs';

let k: HttpCluster;
let certsDir: string;
let admin: Pem;

beforeAll(async () => {
  k = await httpCluster({ authAdmin: 'test' });
  certsDir = k.cluster.certsDir!;
  admin = { certPem: readFileSync(path.join(certsDir, 'client.pem'), 'utf8'), keyPem: readFileSync(path.join(certsDir, 'client-key.pem'), 'utf8') };
  await eventually(async () => ((await k.client.auth.whoAmI()).authEnabled ? true : undefined), 30_000, 'auth on');
}, 120_000);

afterAll(async () => {
  await k?.client.close();
  await k?.cluster.destroy();
});

const clientNames = async (): Promise<string[]> => (await k.client.auth.sessionList()).map((s) => s.clientName);

/** A session opened over the gateway as the admin (by its client certificate). */
async function openHttpSession(clientName: string): Promise<string> {
  const opened = await atLeader(k, '/v1/sessions/open', { cert: admin, json: { header: { clientId: clientName, requestId: '1' }, ttlMs: '60000', clientName } });
  expect(opened.status).toBe(200);
  return opened.body.sessionId as string;
}

describe('HTTP gateway edges', () => {
  it('a body dripping one byte a second is cut at the request deadline (408) and nothing of it is applied', async () => {
    const [host, port] = (await k.leaderHttp()).split(':');
    const body = JSON.stringify({ header: { clientId: 'slow-drip', requestId: '1' }, ttlMs: '60000', clientName: 'slow-drip' });
    expect(body.length, 'the drip would outlast the 15 s request deadline').toBeGreaterThan(40);
    const socket = tls.connect({ host, port: Number(port), ca: readFileSync(path.join(certsDir, 'ca.pem')), cert: admin.certPem, key: admin.keyPem });
    let answer = '';
    socket.on('data', (c: Buffer) => (answer += c.toString()));
    socket.on('error', () => undefined);
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    await new Promise<void>((resolve) => socket.once('secureConnect', () => resolve()));
    socket.write(`POST /v1/sessions/open HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`);
    let sent = 0;
    const drip = setInterval(() => {
      if (sent < body.length && !socket.destroyed) socket.write(body[sent++]!);
    }, 1_000);
    try {
      expect(await within(closed, 40_000)).not.toBe('pending');
    } finally {
      clearInterval(drip);
      socket.destroy();
    }
    expect(sent, 'cut before the whole body arrived').toBeLessThan(body.length);
    expect(answer).toMatch(/^HTTP\/1.1 408 /);
    expect(await clientNames()).not.toContain('slow-drip');
    // The listener goes on serving.
    expect((await atLeader(k, '/v1/cluster/status', { cert: admin })).status).toBe(200);
  }, 60_000);

  it('a client that disconnects while its blocking acquire waits withdraws the wait, as a cancelled gRPC call: the lock never goes to it', async () => {
    const lock = 'edges/busy';
    const holder = await k.client.openSession({ ttlMs: 60_000 });
    const held = await holder.acquire(lock, { waitTimeoutMs: 0 });
    const sessionId = await openHttpSession('gone-waiter');
    const [host, port] = (await k.leaderHttp()).split(':');
    const payload = JSON.stringify({ header: { clientId: 'gone-waiter', requestId: '2' }, lock, sessionId, waitTimeoutMs: '60000' });
    const waiting = https.request({ host, port: Number(port), path: '/v1/locks/acquire', method: 'POST', headers: { 'content-type': 'application/json' }, ...tlsOf(certsDir, { cert: admin }) });
    const answered = new Promise<'answered' | 'gone'>((resolve) => {
      waiting.on('response', () => resolve('answered'));
      waiting.on('error', () => resolve('gone'));
    });
    waiting.end(payload);
    await eventually(async () => ((await k.client.describe(lock)).waiters.length === 1 ? true : undefined), 15_000, 'the HTTP caller queued');
    waiting.destroy();
    expect(await answered).toBe('gone');
    // The node keeps the place for a retry a short while (as for gRPC), then withdraws it.
    await eventually(async () => ((await k.client.describe(lock)).waiters.length === 0 ? true : undefined), 20_000, 'the wait withdrawn');
    await held.release();
    const after = await k.client.describe(lock);
    expect(after.held, 'not granted to the caller that went away').toBe(false);
    // Only the wait ended: the caller's session is still open, as after a cancelled gRPC acquire.
    expect(await clientNames()).toContain('gone-waiter');
    await holder.close();
  }, 60_000);

  it('a forged token, a revoked admin token and a certificate from another CA are 401 on mutating routes, with nothing applied', async () => {
    const lock = 'edges/guarded';
    const holder = await k.client.openSession({ ttlMs: 60_000 });
    const held = await holder.acquire(lock, { waitTimeoutMs: 0 });
    await k.client.auth.userAdd('rex');
    await k.client.auth.userGrantRole('rex', ROOT_ROLE);
    const rex = await k.client.auth.tokenIssue('rex');
    // Rex's token works until revoked: the refusals below are the credentials', not the routes'.
    expect((await atLeader(k, '/v1/auth/whoami', { token: rex.token })).status).toBe(200);
    await k.client.auth.tokenRevoke(rex.tokenId);
    const forged = `${rex.token.slice(0, 'flt_0123456789abcdef_'.length)}${'B'.repeat(43)}`;
    expect(forged).not.toBe(rex.token);
    const foreignDir = mkdtempSync(path.join(os.tmpdir(), 'fencelock-foreign-'));
    await generateDevCerts(foreignDir, { nodes: ['x'], client: 'test' });
    const foreign: Pem = { certPem: readFileSync(path.join(foreignDir, 'client.pem'), 'utf8'), keyPem: readFileSync(path.join(foreignDir, 'client-key.pem'), 'utf8') };
    rmSync(foreignDir, { recursive: true, force: true });

    const callers = [
      ['revoked token', { token: rex.token }],
      ['forged token', { token: forged }],
      ['foreign-CA certificate', { cert: foreign }],
    ] as const;
    for (const [who, creds] of callers) {
      const open = await atLeader(k, '/v1/sessions/open', { ...creds, json: { header: { clientId: `intruder-${who}`, requestId: '1' }, ttlMs: '60000', clientName: `intruder ${who}` } });
      expect(open.status, who).toBe(401);
      expect(open.body.status, who).toBe('UNAUTHENTICATED');
      const revoke = await atLeader(k, '/v1/locks/revoke', { ...creds, json: { header: { clientId: `intruder-${who}`, requestId: '2' }, lock, reason: 'intrusion' } });
      expect(revoke.status, who).toBe(401);
    }
    expect((await clientNames()).filter((n) => n.startsWith('intruder'))).toEqual([]);
    const after = await k.client.describe(lock);
    expect(after).toMatchObject({ held: true, token: held.token });
    await held.release();
    await holder.close();
  }, 60_000);
});

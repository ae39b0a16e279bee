// The HTTP convention and the middleware (src/fencing/http): each rule a named test, on both engines.
import * as net from 'node:net';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { lockFencing } from '../../src/client';
import { FENCING_REPLAYED_HEADER, FENCING_WATERMARK_HEADER, IDEMPOTENCY_KEY_HEADER, WATERMARKS_TABLE, ensureFencingSchema } from '../../src/fencing';
import { EngineHost, ENGINES, type Engine } from './engines';
import { ACCOUNT_TABLES, startAccountService, type AccountService } from './service';

/**
 * Sends a write with a body of `size` bytes over a raw socket, all of it, as a client that does not wait for
 * an early answer does (curl, most libraries), and returns what it read and how the connection ended.
 */
async function postHuge(url: string, size: number, chunked: boolean): Promise<{ answer: string; error?: string }> {
  const { hostname, port } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  let answer = '';
  let error: string | undefined;
  socket.on('data', (d: Buffer) => (answer += d.toString('latin1')));
  socket.on('error', (err: NodeJS.ErrnoException) => (error = err.code ?? err.message));
  const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  const framing = chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${size}`;
  socket.write(`POST /accounts/1 HTTP/1.1\r\nHost: x\r\nFencing-Token: 50\r\nFencing-Lock: acct/1\r\n${framing}\r\n\r\n`);
  const piece = Buffer.alloc(64 * 1024, 0x61);
  for (let sent = 0; sent < size && error === undefined && !socket.destroyed; sent += piece.length) {
    const data = chunked ? Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]) : piece;
    if (!socket.write(data)) await new Promise<void>((resolve) => { socket.once('drain', resolve); socket.once('close', resolve); });
  }
  if (!socket.destroyed) socket.end(chunked ? '0\r\n\r\n' : '');
  await ended;
  return { answer, error };
}

/** Sends one small fenced write with `target` exactly as given (fetch would normalise it) and returns the status. */
async function rawPost(url: string, target: string, token: string): Promise<number> {
  const { hostname, port } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  let answer = '';
  socket.on('data', (d: Buffer) => (answer += d.toString('latin1')));
  const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  const body = JSON.stringify({ balance: 7 });
  socket.write(`POST ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nFencing-Token: ${token}\r\nFencing-Lock: acct/1\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
  await ended;
  return Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1]);
}

describe.each(ENGINES)('fenced HTTP middleware on %s', (engineName) => {
  const host = new EngineHost(engineName);
  let e: Engine;
  let svc: AccountService;

  beforeEach(async () => {
    e = await host.open();
    for (const t of ACCOUNT_TABLES) await e.sql(t);
    await ensureFencingSchema(e.db);
    await e.sql('INSERT INTO account (id, balance) VALUES (1, 100), (2, 100)');
    svc = await startAccountService(e.db);
  });
  afterEach(async () => {
    await svc.close();
    await e.close();
  });
  afterAll(async () => host.shutdown());

  const post = (path: string, balance: number, headers: Record<string, string>) =>
    fetch(`${svc.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ balance }) });
  const balance = async (id = 1): Promise<number> => Number((await e.sql('SELECT balance FROM account WHERE id = $1', [id]))[0]!.balance);
  const watermark = async (resource = '/accounts/1'): Promise<string | undefined> =>
    (await e.sql(`SELECT fence::text AS fence FROM ${WATERMARKS_TABLE} WHERE resource = $1`, [resource]))[0]?.fence as string | undefined;

  it('a malformed Fencing-Token gets 400, a missing one 428; neither reaches the handler', async () => {
    for (const bad of ['abc', '-1', '01', '0', '1.5', '9223372036854775808', '1, 2']) {
      const r = await post('/accounts/1', 5, { 'Fencing-Token': bad, 'Fencing-Lock': 'acct/1' });
      expect(r.status, bad).toBe(400);
      expect(((await r.json()) as { error: string }).error).toBe('MALFORMED_CLAIM');
    }
    expect((await post('/accounts/1', 5, { 'Fencing-Token': '5', 'Fencing-Lock': 'acct/1', 'Fencing-Step': 'x' })).status).toBe(400);
    expect((await post('/accounts/1', 5, { 'Fencing-Lock': 'acct/1' })).status).toBe(428);
    expect((await post('/accounts/1', 5, { 'Fencing-Token': '5' })).status).toBe(428);
    expect(svc.handled).toBe(0);
    expect(await balance()).toBe(100);
  });

  it('lock.fencing.headers() is what the middleware takes; a newer token advances the watermark', async () => {
    const a = lockFencing('acct/1', 41n);
    expect(a.headers()).toEqual({ 'Fencing-Token': '41', 'Fencing-Lock': 'acct/1' });
    expect((await post('/accounts/1', 150, a.headers())).status).toBe(200);
    expect((await post('/accounts/1', 120, lockFencing('acct/1', 42n).headers())).status).toBe(200);
    expect(await balance()).toBe(120);
    expect(await watermark()).toBe('42');
  });

  it('no other spelling of a fenced path opens a second watermark: non-canonical targets get 400 and never reach the handler', async () => {
    expect((await post('/accounts/1', 150, lockFencing('acct/1', 10n).headers())).status).toBe(200);
    const handled = svc.handled;
    for (const target of ['//accounts/1', '///accounts/1', '/accounts//1', '/%61ccounts/1', '/accounts/%31', '/x/../accounts/1', '/accounts/./1', '/accounts/%2e%2e/accounts/1', '/accounts%2F1', 'http://x/accounts/1']) {
      expect(await rawPost(svc.url, target, '5'), target).toBe(400);
    }
    expect(svc.handled).toBe(handled);
    expect(await balance()).toBe(150);
    // The canonical spellings of the same path are the same resource: token 5 is stale there.
    expect(await rawPost(svc.url, '/accounts/1/', '5')).toBe(409);
    expect(await rawPost(svc.url, '/accounts/1?x=1', '5')).toBe(409);
    expect(await watermark()).toBe('10');
  });

  it('a stale token gets 409 Conflict with the current watermark, and the handler never runs', async () => {
    await post('/accounts/1', 120, lockFencing('acct/1', 42n).headers());
    const r = await post('/accounts/1', 999, lockFencing('acct/1', 41n).headers());
    expect(r.status).toBe(409);
    expect(r.headers.get(FENCING_WATERMARK_HEADER)).toBe('42');
    expect(await r.json()).toMatchObject({ error: 'STALE', watermark: '42', lock: 'acct/1' });
    expect(svc.handled).toBe(1);
    expect(await balance()).toBe(120);
  });

  it('the change and the watermark are one transaction: a 4xx answer or a failing handler rolls both back', async () => {
    await post('/accounts/1', 120, lockFencing('acct/1', 42n).headers());
    expect((await post('/accounts/1', -5, lockFencing('acct/1', 43n).headers())).status).toBe(422);
    expect((await post('/accounts/1', 13, lockFencing('acct/1', 43n).headers())).status).toBe(500);
    expect((await post('/accounts/1', 14, lockFencing('acct/1', 43n).headers())).status).toBe(500);
    expect(await watermark()).toBe('42');
    expect(await balance()).toBe(120);
    expect(Number((await e.sql('SELECT count(*)::int AS n FROM audit'))[0]!.n)).toBe(1);
    // Nothing of token 43 was recorded, so it still applies.
    expect((await post('/accounts/1', 130, lockFencing('acct/1', 43n).headers())).status).toBe(200);
    expect(await watermark()).toBe('43');
  });

  it('a retry with the same token and Idempotency-Key gets the stored response, marked Fencing-Replayed, applied once', async () => {
    const h = { ...lockFencing('acct/1', 50n).headers(), [IDEMPOTENCY_KEY_HEADER]: 'set-150' };
    const first = await post('/accounts/1', 150, h);
    expect(first.status).toBe(200);
    expect(first.headers.get(FENCING_REPLAYED_HEADER)).toBeNull();
    const again = await post('/accounts/1', 150, h);
    expect(again.status).toBe(200);
    expect(again.headers.get(FENCING_REPLAYED_HEADER)).toBe('true');
    expect(await again.json()).toEqual({ id: 1, balance: 150 });
    expect(svc.handled).toBe(1);
  });

  it('a further step under the same token needs a higher Fencing-Step', async () => {
    const f = lockFencing('acct/1', 60n);
    expect((await post('/accounts/1', 110, f.headers(1n))).status).toBe(200);
    expect((await post('/accounts/1', 120, f.headers(2n))).status).toBe(200);
    const r = await post('/accounts/1', 777, { ...f.headers(2n), [IDEMPOTENCY_KEY_HEADER]: 'another' });
    expect(r.status).toBe(409);
    expect(await r.json()).toMatchObject({ error: 'STALE_STEP', lastStep: '2', watermark: '60' });
    // Without a step it is step 1 again: a retry of the first request, answered from the stored response.
    const retry = await post('/accounts/1', 777, f.headers());
    expect(retry.headers.get(FENCING_REPLAYED_HEADER)).toBe('true');
    expect(await retry.json()).toEqual({ id: 1, balance: 110 });
    expect(await balance()).toBe(120);
    expect(svc.handled).toBe(2);
  });

  it('a token of another lock gets 409 WRONG_LOCK; each resource has its own watermark', async () => {
    await post('/accounts/1', 150, lockFencing('acct/1', 100n).headers());
    const r = await post('/accounts/1', 1, lockFencing('acct/2', 200n).headers());
    expect(r.status).toBe(409);
    expect(await r.json()).toMatchObject({ error: 'WRONG_LOCK', lock: 'acct/1' });
    expect((await post('/accounts/2', 90, lockFencing('acct/2', 5n).headers())).status).toBe(200);
    expect(await balance(1)).toBe(150);
    expect(await balance(2)).toBe(90);
  });

  it('a body over the limit gets 413 before the connection closes, declared or streamed; the client reads it instead of a reset, and nothing is written', async () => {
    for (const chunked of [false, true]) {
      const r = await postHuge(svc.url, 4 << 20, chunked);
      expect(r.error, `chunked=${chunked}`).toBeUndefined();
      expect(r.answer, `chunked=${chunked}`).toMatch(/^HTTP\/1\.1 413 /);
      expect(r.answer).toMatch(/"error":"TOO_LARGE".*1048576 bytes/);
    }
    expect(svc.handled).toBe(0);
    expect(await watermark()).toBeUndefined();
    // The service still answers.
    expect((await post('/accounts/1', 150, lockFencing('acct/1', 51n).headers())).status).toBe(200);
  });
});

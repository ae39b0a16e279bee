// `fencelock proxy` (src/fencing/proxy) as a real process in front of a service that checks nothing.
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { lockFencing } from '../../src/client';
import { eventually, runNode } from '../integration/harness';
import { CLI_MAIN, startBlindService, startProxy, UNCHECKED, type ProxyProcess } from './proxyProcess';

// These tests are about the watermark rules, with made-up locks and tokens: claims are not checked against a
// cluster here (proxyClaims.test.ts checks them against a real one).
describe('fencelock proxy', () => {
  let dir: string;
  let svc: Awaited<ReturnType<typeof startBlindService>>;
  let proxy: ProxyProcess | undefined;
  let state: string;

  beforeEach(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'fencelock-proxy-'));
    state = path.join(dir, 'watermarks.log');
    svc = await startBlindService((p) => (p.includes('slow') ? 400 : 0));
  });
  afterEach(async () => {
    await proxy?.stop('SIGKILL');
    proxy = undefined;
    await svc.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const send = (url: string, p: string, body: string, headers: Record<string, string>, method = 'POST') => fetch(`${url}${p}`, { method, headers, body: method === 'GET' ? undefined : body });

  it('a stale request gets 409 with the watermark and never reaches the service', async () => {
    proxy = await startProxy(svc.url, state, UNCHECKED);
    expect((await send(proxy.url, '/accounts/1', 'B', lockFencing('acct', 42n).headers())).status).toBe(200);
    const r = await send(proxy.url, '/accounts/1', 'A-late', lockFencing('acct', 41n).headers());
    expect(r.status).toBe(409);
    expect(r.headers.get('fencing-watermark')).toBe('42');
    expect(await r.json()).toMatchObject({ error: 'STALE', watermark: '42' });
    expect(svc.received.map((x) => x.body)).toEqual(['B']);
  });

  it('a missing token gets 428, a malformed one 400, a token of another lock 409: none is forwarded; reads pass unchecked', async () => {
    proxy = await startProxy(svc.url, state, UNCHECKED);
    expect((await send(proxy.url, '/a/1', 'x', {})).status).toBe(428);
    expect((await send(proxy.url, '/a/1', 'x', { 'Fencing-Token': '12abc', 'Fencing-Lock': 'l' })).status).toBe(400);
    expect((await send(proxy.url, '/a/1', 'x', { 'Fencing-Token': '18446744073709551616', 'Fencing-Lock': 'l' })).status).toBe(400);
    expect((await send(proxy.url, '/a/1', 'ok', lockFencing('l', 5n).headers())).status).toBe(200);
    const other = await send(proxy.url, '/a/2', 'x', lockFencing('other', 9n).headers());
    expect(other.status).toBe(409);
    expect(await other.json()).toMatchObject({ error: 'WRONG_LOCK', lock: 'l' });
    expect((await send(proxy.url, '/a/1', '', {}, 'GET')).status).toBe(200);
    expect(svc.received.map((x) => `${x.method} ${x.body}`)).toEqual(['POST ok', 'GET ']);
  });

  it('the same token passes again only with a higher Fencing-Step', async () => {
    proxy = await startProxy(svc.url, state, UNCHECKED);
    const f = lockFencing('l', 7n);
    expect((await send(proxy.url, '/r', 's1', f.headers(1n))).status).toBe(200);
    expect((await send(proxy.url, '/r', 's1-again', f.headers(1n))).status).toBe(409);
    expect((await send(proxy.url, '/r', 's2', f.headers(2n))).status).toBe(200);
    expect(svc.received.map((x) => x.body)).toEqual(['s1', 's2']);
  });

  it('resources by path prefix or by header: each has its own watermark', async () => {
    proxy = await startProxy(svc.url, state, [...UNCHECKED, '--resource-segments', '2']);
    expect((await send(proxy.url, '/accounts/1/deposit', 'a1', lockFencing('l', 50n).headers())).status).toBe(200);
    expect((await send(proxy.url, '/accounts/2/deposit', 'a2', lockFencing('l', 10n).headers())).status).toBe(200);
    expect((await send(proxy.url, '/accounts/1/withdraw', 'a1-old', lockFencing('l', 10n).headers())).status).toBe(409);
    await proxy.stop();
    proxy = await startProxy(svc.url, path.join(dir, 'by-header.log'), [...UNCHECKED, '--resource-header', 'X-Resource']);
    expect((await send(proxy.url, '/any', 'h1', { ...lockFencing('l', 50n).headers(), 'X-Resource': 'inv-1' })).status).toBe(200);
    expect((await send(proxy.url, '/other', 'h1-old', { ...lockFencing('l', 49n).headers(), 'X-Resource': 'inv-1' })).status).toBe(409);
    expect((await send(proxy.url, '/other', 'h2', { ...lockFencing('l', 49n).headers(), 'X-Resource': 'inv-2' })).status).toBe(200);
    expect((await send(proxy.url, '/other', 'none', lockFencing('l', 60n).headers())).status).toBe(400);
    expect(svc.received.map((x) => x.body)).toEqual(['a1', 'a2', 'h1', 'h2']);
  });

  it('requests for one resource are serialized: a newer token is checked only after the older request has finished at the service', async () => {
    proxy = await startProxy(svc.url, state, UNCHECKED);
    const older = send(proxy.url, '/slow/1', 'older', lockFencing('l', 1n).headers());
    await new Promise((r) => setTimeout(r, 100));
    const newer = send(proxy.url, '/slow/1', 'newer', lockFencing('l', 2n).headers());
    expect((await older).status).toBe(200);
    expect((await newer).status).toBe(200);
    const [a, b] = svc.received;
    expect([a!.body, b!.body]).toEqual(['older', 'newer']);
    expect(b!.start).toBeGreaterThanOrEqual(a!.end);
  });

  it('the watermark survives a crash (SIGKILL) and restart; a torn last record is dropped, a damaged one refuses to start', async () => {
    proxy = await startProxy(svc.url, state, UNCHECKED);
    expect((await send(proxy.url, '/r', 'x', lockFencing('l', 42n).headers())).status).toBe(200);
    await proxy.stop('SIGKILL');
    // A crash in the middle of an append leaves a line without its newline: that claim was never forwarded.
    appendFileSync(state, '{"r":"/r","l":"l","t":"9');
    proxy = await startProxy(svc.url, state, UNCHECKED);
    const p = proxy;
    await eventually(() => /dropped a torn last record/.test(p.stderr()), 5_000, 'the note about the torn record');
    expect((await send(proxy.url, '/r', 'stale', lockFencing('l', 41n).headers())).status).toBe(409);
    expect((await send(proxy.url, '/r', 'y', lockFencing('l', 43n).headers())).status).toBe(200);
    await proxy.stop();
    expect(readFileSync(state, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { t: string }).map((l) => l.t)).toEqual(['42', '43']);
    writeFileSync(state, '{"r":"/r","l":"l","t":"43","s":"1"}\nnot json\n{"r":"/r","l":"l","t":"44","s":"1"}\n');
    await expect(startProxy(svc.url, state, UNCHECKED)).rejects.toThrow(/line 2|:2: not a watermark record/);
    expect(svc.received.map((x) => x.body)).toEqual(['x', 'y']);
  });

  it('usage errors exit 1 with a message', async () => {
    const both = await runNode([CLI_MAIN, 'proxy', '--target', svc.url, '--state', state, '--resource-header', 'X', '--resource-segments', '1']);
    expect(both.code).toBe(1);
    expect(both.stderr).toMatch(/not both/);
    const badTarget = await runNode([CLI_MAIN, 'proxy', '--target', 'ftp://x', '--state', state, '--listen', '127.0.0.1:0']);
    expect(badTarget.code).toBe(1);
    expect(badTarget.stderr).toMatch(/http:\/\/ URL/);
  });
});

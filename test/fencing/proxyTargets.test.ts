// The proxy judges the path the service will see (issue 29, defect 3) and answers 413 before it closes
// (defect 7): hostile request targets and bodies sent over real sockets to a real proxy process, with a
// service behind it that records everything that reaches it.
import * as http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { lockFencing } from '../../src/client';
import { eventually } from '../integration/harness';
import { startBlindService, startProxy, UNCHECKED, type ProxyProcess } from './proxyProcess';

/** Sends the request target exactly as given (fetch would normalise it first). */
function rawRequest(base: string, target: string, headers: Record<string, string>, method = 'POST', body = 'x'): Promise<{ status: number; body: string }> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, method, path: target, headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Writes `head` and then `bodyBytes` of body on a plain socket, and returns everything the proxy answered. */
function socketExchange(base: string, head: string, bodyBytes: number, chunked: boolean): Promise<{ answer: string; error?: string }> {
  const u = new URL(base);
  return new Promise((resolve) => {
    let answer = '';
    const s = net.connect(Number(u.port), u.hostname, () => {
      s.write(head);
      const chunk = Buffer.alloc(16 << 10, 0x61);
      let sent = 0;
      const pump = (): void => {
        while (sent < bodyBytes) {
          sent += chunk.length;
          const ok = s.write(chunked ? Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]) : chunk);
          if (!ok) return void s.once('drain', pump);
        }
        if (chunked) s.write('0\r\n\r\n');
      };
      pump();
    });
    s.on('data', (d: Buffer) => (answer += d.toString('latin1')));
    s.on('error', (err: NodeJS.ErrnoException) => resolve({ answer, error: err.code ?? err.message }));
    s.on('close', () => resolve({ answer }));
    // The answer comes before the connection ends; stop waiting once it has arrived in full.
    const timer = setInterval(() => {
      if (/\r\n\r\n[\s\S]*\}$/.test(answer)) {
        clearInterval(timer);
        s.destroy();
        resolve({ answer });
      }
    }, 20);
    s.on('close', () => clearInterval(timer));
  });
}

/** Sends a chunked body that never ends until the proxy cuts the connection (or CAP bytes); what came back. */
function endlessBody(base: string, head: string): Promise<{ answer: string; sent: number; cut: boolean }> {
  const CAP = 256 << 20;
  const u = new URL(base);
  return new Promise((resolve) => {
    let answer = '';
    let sent = 0;
    let done = false;
    const finish = (cut: boolean): void => {
      if (done) return;
      done = true;
      s.destroy();
      resolve({ answer, sent, cut });
    };
    const chunk = Buffer.concat([Buffer.from(`${(64 << 10).toString(16)}\r\n`), Buffer.alloc(64 << 10, 0x62), Buffer.from('\r\n')]);
    const s = net.connect(Number(u.port), u.hostname, () => {
      s.write(head);
      const pump = (): void => {
        while (!done && sent < CAP) {
          sent += chunk.length;
          if (!s.write(chunk)) return void s.once('drain', pump);
        }
        if (sent >= CAP) finish(false);
      };
      pump();
    });
    s.on('data', (d: Buffer) => (answer += d.toString('latin1')));
    s.on('error', () => finish(true));
    s.on('close', () => finish(true));
  });
}

describe('fencelock proxy: only canonical request targets, 413 before closing', () => {
  let dir: string;
  let svc: Awaited<ReturnType<typeof startBlindService>>;
  let proxy: ProxyProcess | undefined;

  beforeEach(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'fencelock-proxy-targets-'));
    svc = await startBlindService();
  });
  afterEach(async () => {
    await proxy?.stop('SIGKILL');
    proxy = undefined;
    await svc.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('with /a at watermark 10, no other spelling of /a lets token 5 through: each gets 400 and the service receives nothing', async () => {
    proxy = await startProxy(svc.url, path.join(dir, 'w.log'), UNCHECKED);
    expect((await rawRequest(proxy.url, '/a/x', lockFencing('l', 10n).headers(), 'POST', 'ten')).status).toBe(200);
    const stale = lockFencing('l', 5n).headers();
    const bypasses = [
      '//a/x', // Node's URL parser reads host "a", path "/x"
      '///a/x',
      '//a',
      '/a//x',
      '/%61/x', // a service that decodes paths sees /a
      '/%61',
      '/x/../a/y', // a service that resolves dot segments sees /a/y
      '/x/./../a',
      '/x/%2e%2e/a',
      '/x/%2E%2E/a',
      '/.%2e/a',
      '/a%2Fx', // a service that decodes %2F sees /a/x
      '/a%2fx',
      '/x%5C..%5Ca', // backslash, encoded
      '/x\\..\\a', // backslash, as is
      '/a;x/y', // servlet containers strip ";x" from the segment
      '/%7ea', // "~" is unreserved: must be written as itself
      '/a%3a', // ":" needs no encoding (and hex is upper case): "/a:" is its one spelling
      '/a%c3%a9', // lower-case hex: "%C3%A9" is the one spelling
      `http://127.0.0.1:${new URL(svc.url).port}/a/x`, // absolute-form
      '*',
    ];
    for (const target of bypasses) {
      const r = await rawRequest(proxy.url, target, stale, target === '*' ? 'OPTIONS' : 'POST', 'five');
      expect(r.status, target).toBe(400);
      // Node's own parser refuses some spellings before the proxy sees them; every other one is the proxy's.
      if (r.body !== '') expect(JSON.parse(r.body), target).toMatchObject({ error: 'NON_CANONICAL_TARGET', message: expect.stringContaining('not canonical') });
    }
    // Reads are held to the same rule: the service never acts on a spelling the proxy did not judge.
    expect((await rawRequest(proxy.url, '//a/x', {}, 'GET', '')).status).toBe(400);
    // A trailing slash is the same resource, and the canonical spelling still works for the holder.
    expect(JSON.parse((await rawRequest(proxy.url, '/a/', stale, 'POST', 'five')).body)).toMatchObject({ error: 'STALE', watermark: '10' });
    expect((await rawRequest(proxy.url, '/a/x?q=%2F..', lockFencing('l', 11n).headers(), 'POST', 'eleven')).status).toBe(200);
    expect(svc.received.map((x) => `${x.path} ${x.body}`)).toEqual(['/a/x ten', '/a/x?q=%2F.. eleven']);
  });

  it('with two segments per resource, /a/%62 does not open a second watermark beside /a/b', async () => {
    proxy = await startProxy(svc.url, path.join(dir, 'w.log'), [...UNCHECKED, '--resource-segments', '2']);
    expect((await rawRequest(proxy.url, '/a/b', lockFencing('l', 10n).headers(), 'POST', 'ten')).status).toBe(200);
    expect((await rawRequest(proxy.url, '/a/b:c', lockFencing('l', 10n).headers(), 'POST', 'colon')).status).toBe(200);
    // "%3A" is ":" to a service that decodes the path: a character allowed as itself has no other spelling.
    for (const target of ['/a/%62', '/a/%62/c', '/a//b', '/a/./b', '/a/b/../b', '/a/b%3Ac', '/a/b%3ac', '/a/%62:c']) {
      expect((await rawRequest(proxy.url, target, lockFencing('l', 5n).headers(), 'POST', 'five')).status, target).toBe(400);
    }
    expect((await rawRequest(proxy.url, '/a/b/c', lockFencing('l', 5n).headers(), 'POST', 'five')).status).toBe(409);
    // Bytes that may not stand as themselves are encoded, upper case: their one spelling.
    expect((await rawRequest(proxy.url, '/a/b%20c%3F%C3%A9', lockFencing('l', 5n).headers(), 'POST', 'other')).status).toBe(200);
    expect(svc.received.map((x) => `${x.path} ${x.body}`)).toEqual(['/a/b ten', '/a/b:c colon', '/a/b%20c%3F%C3%A9 other']);
  });

  it('--case-insensitive-paths (a service that routes as Express does by default): /A/x is the resource /a', async () => {
    proxy = await startProxy(svc.url, path.join(dir, 'w.log'), [...UNCHECKED, '--case-insensitive-paths']);
    expect((await rawRequest(proxy.url, '/a/x', lockFencing('l', 10n).headers(), 'POST', 'ten')).status).toBe(200);
    const r = await rawRequest(proxy.url, '/A/x', lockFencing('l', 5n).headers(), 'POST', 'five');
    expect(JSON.parse(r.body)).toMatchObject({ error: 'STALE', watermark: '10' });
    // Non-ASCII letters: the proxy cannot fold their case as the service would, so it refuses them.
    const e = await rawRequest(proxy.url, '/%C3%89t%C3%A9/x', lockFencing('l', 5n).headers(), 'POST', 'accent');
    expect(e.status).toBe(400);
    expect(JSON.parse(e.body)).toMatchObject({ error: 'NO_RESOURCE', message: expect.stringContaining('non-ASCII') });
    expect(svc.received.map((x) => x.body)).toEqual(['ten']);
  });

  it('a body over the limit gets 413, read by the client before the connection closes; nothing is forwarded', async () => {
    proxy = await startProxy(svc.url, path.join(dir, 'w.log'), [...UNCHECKED, '--max-body-bytes', '1000']);
    const claim = Object.entries(lockFencing('l', 7n).headers()).map(([k, v]) => `${k}: ${v}\r\n`).join('');
    // Declared up front (Content-Length), and found out while reading (chunked): the client keeps sending.
    const declared = await socketExchange(proxy.url, `POST /big HTTP/1.1\r\nHost: x\r\n${claim}Content-Length: ${512 << 10}\r\n\r\n`, 512 << 10, false);
    expect(declared.answer, declared.error).toMatch(/^HTTP\/1\.1 413 /);
    expect(declared.answer).toContain('"TOO_LARGE"');
    const streamed = await socketExchange(proxy.url, `POST /big HTTP/1.1\r\nHost: x\r\n${claim}Transfer-Encoding: chunked\r\n\r\n`, 512 << 10, true);
    expect(streamed.answer, streamed.error).toMatch(/^HTTP\/1\.1 413 /);
    // At the limit it passes.
    expect((await rawRequest(proxy.url, '/big', lockFencing('l', 8n).headers(), 'POST', 'y'.repeat(1000))).status).toBe(200);
    expect(svc.received.map((x) => x.body.length)).toEqual([1000]);
  });

  it('a refused request whose body never ends: the client reads the answer, then the proxy cuts the connection within its bound', async () => {
    proxy = await startProxy(svc.url, path.join(dir, 'w.log'), UNCHECKED);
    // No claim: 428 before the body is read; the proxy drops at most 8 MiB (or 5 s) more of it, then cuts.
    const r = await endlessBody(proxy.url, 'POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n');
    expect(r.answer).toMatch(/^HTTP\/1\.1 428 /);
    expect(r.cut).toBe(true);
    expect(r.sent).toBeLessThan(64 << 20);
    expect(svc.received).toEqual([]);
  });

  it('--unchecked-claims says loudly on stderr what it gives up', async () => {
    proxy = await startProxy(svc.url, path.join(dir, 'w.log'), UNCHECKED);
    const p = proxy;
    await eventually(() => /WARNING: --unchecked-claims: claims are NOT checked/.test(p.stderr()), 5_000, 'the warning');
    expect(p.stderr()).toContain('2^63-1');
  });
});

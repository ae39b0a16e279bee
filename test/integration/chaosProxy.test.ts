// The fault-injecting TCP proxy of the chaos tests (faultProxy.ts), against a plain echo-ish server: B sends
// back what A sends, upper-cased, so each direction can be watched on its own.
import * as net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { FaultProxy } from './faultProxy';

const closers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

/** B: records what it receives, answers it upper-cased. */
async function upperServer(): Promise<{ address: string; received: () => string; sockets: net.Socket[] }> {
  let got = '';
  const sockets: net.Socket[] = [];
  const server = net.createServer((s) => {
    sockets.push(s);
    s.on('data', (d) => {
      got += d.toString();
      s.write(d.toString().toUpperCase());
    });
    s.on('error', () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(() => {
    for (const s of sockets) s.destroy();
    return new Promise<void>((r) => server.close(() => r()));
  });
  return { address: `127.0.0.1:${(server.address() as net.AddressInfo).port}`, received: () => got, sockets };
}

/** A: a connection through the proxy that collects what comes back. */
async function dial(proxy: FaultProxy): Promise<{ socket: net.Socket; got: () => string; closed: () => boolean }> {
  const socket = net.connect(proxy.port, '127.0.0.1');
  let got = '';
  let closed = false;
  socket.on('data', (d) => (got += d.toString()));
  socket.on('close', () => (closed = true));
  socket.on('error', () => undefined);
  await new Promise<void>((r) => socket.once('connect', () => r()));
  closers.push(() => void socket.destroy());
  return { socket, got: () => got, closed: () => closed };
}

async function until(what: string, fn: () => boolean, ms = 2_000): Promise<void> {
  const end = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

async function proxyTo(address: string): Promise<FaultProxy> {
  const p = await FaultProxy.start({ name: 'a->b', target: address });
  closers.push(() => p.close());
  return p;
}

describe('FaultProxy', () => {
  it('forwards both directions and counts bytes', async () => {
    const b = await upperServer();
    const p = await proxyTo(b.address);
    const a = await dial(p);
    a.socket.write('hello');
    await until('the echo', () => a.got() === 'HELLO');
    expect(b.received()).toBe('hello');
    expect(p.stats).toMatchObject({ accepted: 1, forwardBytes: 5, backwardBytes: 5 });
  });

  it('cut(): existing connections freeze (bytes held, delivered after heal), new ones are blackholed', async () => {
    const b = await upperServer();
    const p = await proxyTo(b.address);
    const a = await dial(p);
    a.socket.write('x');
    await until('the first echo', () => a.got() === 'X');
    p.cut();
    expect(p.describe()).toBe('a->b: cut');
    a.socket.write('held');
    const fresh = await dial(p); // accepted (a SYN is not refused)...
    fresh.socket.write('lost');
    await sleep(150);
    expect(b.received()).toBe('x'); // ...but nothing moves
    expect(a.got()).toBe('X');
    expect(p.stats.blackholed).toBe(1);
    p.heal();
    await until('the held bytes', () => a.got() === 'XHELD');
    await until('the blackholed connection to be closed', () => fresh.closed());
    expect(b.received()).toBe('xheld');
  });

  it("cut({ existing: 'reset' }) closes established connections at once", async () => {
    const b = await upperServer();
    const p = await proxyTo(b.address);
    const a = await dial(p);
    a.socket.write('x');
    await until('the echo', () => a.got() === 'X');
    p.cut({ existing: 'reset' });
    await until('the connection to close', () => a.closed());
    expect(p.stats.reset).toBe(1);
  });

  it('block(direction) stops one direction and keeps the other', async () => {
    const b = await upperServer();
    const p = await proxyTo(b.address);
    const a = await dial(p);
    a.socket.write('x');
    await until('the echo', () => a.got() === 'X');
    p.block('backward'); // B -> A held; A -> B flows
    a.socket.write('y');
    await until('B to receive', () => b.received() === 'xy');
    await sleep(100);
    expect(a.got()).toBe('X');
    p.heal();
    await until('the held answer', () => a.got() === 'XY');
    p.block('forward');
    a.socket.write('z');
    await sleep(100);
    expect(b.received()).toBe('xy');
    p.heal();
    await until('the held request', () => b.received() === 'xyz');
  });

  it('delay(ms) holds every chunk, in order', async () => {
    const b = await upperServer();
    const p = await proxyTo(b.address);
    const a = await dial(p);
    p.delay(120);
    const t0 = Date.now();
    a.socket.write('ab');
    await sleep(30);
    a.socket.write('cd');
    await until('both chunks, both ways', () => a.got() === 'ABCD', 3_000);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(2 * 120 + 25);
    p.delay(0);
    expect(p.describe()).toBe('a->b: ok');
  });

  it('a target that is down closes the dialer, as a refused connection would', async () => {
    const server = net.createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const address = `127.0.0.1:${(server.address() as net.AddressInfo).port}`;
    await new Promise<void>((r) => server.close(() => r()));
    const p = await proxyTo(address);
    const a = await dial(p);
    await until('the dialer to be closed', () => a.closed());
  });
});

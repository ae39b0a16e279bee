import * as net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { TestNode, appMsg, freePort, nextTurn, sleep, waitFor } from './helpers';

const started: TestNode[] = [];
function track(n: TestNode): TestNode {
  started.push(n);
  return n;
}

afterEach(async () => {
  await Promise.all(started.splice(0).map((n) => n.stop()));
});

describe('GrpcPeerTransport with a peer that is down', () => {
  it('send() neither throws nor blocks, drops the oldest past the bound, and recovers when the peer starts', async () => {
    const a = track(new TestNode('a'));
    const bPort = await freePort(); // nothing listens here yet
    const ta = a.start({ b: `127.0.0.1:${bPort}` }, { maxQueuedMessagesPerPeer: 10 });

    const t0 = performance.now();
    for (let i = 0; i < 100; i++) {
      expect(() => ta.send([appMsg('a', 'b', i)])).not.toThrow();
    }
    expect(performance.now() - t0).toBeLessThan(500); // a blocked send would take seconds
    await nextTurn();
    await waitFor('unreachable reported', () => a.unreachable.includes('b'));
    await sleep(300); // several failed attempts with backoff
    const down = ta.stats().b!;
    expect(down).toMatchObject({ connected: false, sentBatches: 0, sentMessages: 0, dropped: 90 });
    expect(down.reconnects).toBeGreaterThan(0);

    // The peer starts on the same port; the queued (newest) messages flow without any new send().
    const b = track(new TestNode('b'));
    await b.listen(bPort);
    b.start({});
    const t1 = Date.now();
    await waitFor('queued messages delivered', () => b.received.length === 10, 5_000);
    expect(Date.now() - t1).toBeLessThan(3_000);
    expect(b.received.map((m) => m.index)).toEqual([90, 91, 92, 93, 94, 95, 96, 97, 98, 99]);
    expect(ta.stats().b).toMatchObject({ connected: true, sentMessages: 10, dropped: 90 });

    ta.send([appMsg('a', 'b', 100)]);
    await waitFor('new message', () => b.received.length === 11);
  });

  it('a peer that restarts on the same port: the stream breaks, is reported, and comes back', async () => {
    const a = track(new TestNode('a'));
    let b = track(new TestNode('b'));
    const bPort = await b.listen();
    b.start({});
    const ta = a.start({ b: `127.0.0.1:${bPort}` });
    ta.send([appMsg('a', 'b', 1)]);
    await waitFor('first delivery', () => b.received.length === 1);

    await b.stop();
    await waitFor('disconnected', () => !ta.stats().b!.connected);
    await waitFor('unreachable reported', () => a.unreachable.includes('b'));

    // While it is down, sends keep working (queued, bounded).
    for (let i = 2; i < 50; i++) ta.send([appMsg('a', 'b', i)]);
    await sleep(200);

    b = track(new TestNode('b'));
    await b.listen(bPort);
    b.start({});
    const t1 = Date.now();
    await waitFor('reconnected and delivered', () => b.received.length === 48, 5_000);
    expect(Date.now() - t1).toBeLessThan(3_000);
    expect(b.received.map((m) => m.index)).toEqual(Array.from({ length: 48 }, (_, i) => i + 2));
    const s = ta.stats().b!;
    expect(s.connected).toBe(true);
    expect(s.reconnects).toBeGreaterThan(0);
  });

  it('a message from a peer it is backing off from makes it redial at once, once per outage', async () => {
    const a = track(new TestNode('a'));
    const aPort = await a.listen();
    const bPort = await freePort();
    // A backoff far longer than the test: only the early redial can reconnect in time.
    const ta = a.start({ b: `127.0.0.1:${bPort}` }, { reconnectBackoffMinMs: 30_000, reconnectBackoffMaxMs: 30_000 });
    ta.send([appMsg('a', 'b', 1)]);
    await waitFor('unreachable reported', () => a.unreachable.includes('b'));
    expect(ta.stats().b!.reconnects).toBe(0);

    const b = track(new TestNode('b'));
    await b.listen(bPort);
    const tb = b.start({ a: `127.0.0.1:${aPort}` });
    tb.send([appMsg('b', 'a', 7)]); // b restarted and talks to a first, as a new follower answering a heartbeat would
    await waitFor('a hears from b', () => a.received.length === 1);
    await waitFor('a reaches b again', () => b.received.length === 1, 3_000);
    expect(b.received[0]!.index).toBe(1);
    expect(ta.stats().b).toMatchObject({ connected: true, reconnects: 1 });
  });

  it('a peer that restarts and dials at once (connectAll) is redialled at once, before it says anything', async () => {
    const a = track(new TestNode('a'));
    const aPort = await a.listen();
    const bPort = await freePort();
    const ta = a.start({ b: `127.0.0.1:${bPort}` }, { reconnectBackoffMinMs: 30_000, reconnectBackoffMaxMs: 30_000 });
    ta.send([appMsg('a', 'b', 1)]);
    await waitFor('unreachable reported', () => a.unreachable.includes('b'));

    const b = track(new TestNode('b'));
    await b.listen(bPort);
    const tb = b.start({ a: `127.0.0.1:${aPort}` });
    tb.connectAll(); // as a node does once it listens: no message yet
    ta.send([appMsg('a', 'b', 2)]);
    await waitFor('a reaches b again without hearing a message from it', () => b.received.length >= 1, 3_000);
    expect(a.received).toEqual([]);
    expect(ta.stats().b).toMatchObject({ connected: true, reconnects: 1 });
  });

  it('a peer reachable one way only: hearing from it redials once, then the backoff holds', async () => {
    const a = track(new TestNode('a'));
    const aPort = await a.listen();
    const deadPort = await freePort(); // a dials b here, where nothing listens; b reaches a fine
    const ta = a.start({ b: `127.0.0.1:${deadPort}` }, { reconnectBackoffMinMs: 30_000, reconnectBackoffMaxMs: 30_000 });
    ta.send([appMsg('a', 'b', 1)]);
    await waitFor('unreachable reported', () => a.unreachable.includes('b'));
    const b = track(new TestNode('b'));
    await b.listen();
    const tb = b.start({ a: `127.0.0.1:${aPort}` });
    for (let i = 0; i < 5; i++) {
      tb.send([appMsg('b', 'a', i)]);
      await waitFor(`a hears message ${i}`, () => a.received.length === i + 1);
      await sleep(100);
    }
    expect(ta.stats().b).toMatchObject({ connected: false, reconnects: 1 });
  });

  it('a peer that accepts TCP but never answers (hung process) is reported and redialled on fresh channels', async () => {
    const sockets = new Set<net.Socket>();
    let accepted = 0;
    const silent = net.createServer((sock) => {
      accepted++;
      sockets.add(sock);
      sock.on('close', () => sockets.delete(sock));
      sock.on('error', () => {});
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as net.AddressInfo).port;
    try {
      const a = track(new TestNode('a'));
      const ta = a.start({ b: `127.0.0.1:${port}` }, { connectTimeoutMs: 300 });
      ta.send([appMsg('a', 'b', 1)]);
      await waitFor('unreachable reported twice', () => a.unreachable.length >= 2, 5_000);
      const s = ta.stats().b!;
      expect(s).toMatchObject({ connected: false, sentMessages: 0 });
      expect(s.reconnects).toBeGreaterThanOrEqual(1);
      // Each timed-out attempt redials on a new channel (the old one is stuck in the HTTP/2 handshake).
      expect(accepted).toBeGreaterThanOrEqual(2);
      expect(accepted).toBeLessThanOrEqual(s.reconnects + 1);
      await a.stop();
    } finally {
      // The hung "peer" dies: the abandoned handshakes end with it.
      for (const sock of sockets) sock.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  it('a server without the RaftPeer service counts as unreachable and is retried', async () => {
    const a = track(new TestNode('a'));
    const b = track(new TestNode('b'));
    const bPort = await b.listen(); // listening, but no transport registered yet: UNIMPLEMENTED
    const ta = a.start({ b: `127.0.0.1:${bPort}` });
    ta.send([appMsg('a', 'b', 1)]);
    await waitFor('unreachable reported', () => a.unreachable.includes('b'));
    expect(ta.stats().b!.connected).toBe(false);
    b.start({}); // registers the service on the running server
    await waitFor('delivered after registration', () => b.received.length === 1, 5_000);
  });
});

// The TLS framing carrier (src/transport/tlsCarrier.ts) under the shipped peer policy, over real mutual-TLS
// connections on loopback: delivery, the admission checks, and hostile framing from a peer that holds a
// certificate of the cluster's CA (the worst case: it passes the handshake). After each attack the listener
// still takes the honest peer's messages, nothing of the attack reached the handler, and the attacker's
// connection is closed.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import * as tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateDevCerts } from '../../src/certs/generate';
import { encodeMessageBatch } from '../../src/codec/raftCodec';
import type { Message } from '../../src/raft/types';
import { encodeFrame, FrameKind } from '../../src/transport/frames';
import { PeerPolicy } from '../../src/transport/peerPolicy';
import { TlsCarrier, type TlsPem } from '../../src/transport/tlsCarrier';
import { appMsg, memoryLogger, seq, sleep, waitFor } from './helpers';

const CLUSTER = 'cluster-tls-test';
const READ_DEADLINE_MS = 600;
let dir = '';

function pem(name: string): TlsPem {
  return { ca: readFileSync(path.join(dir, 'ca.pem')), cert: readFileSync(path.join(dir, `${name}.pem`)), key: readFileSync(path.join(dir, `${name}-key.pem`)) };
}

interface Node {
  policy: PeerPolicy;
  carrier: TlsCarrier;
  got: Message[];
  address: string;
}

const started: Node[] = [];

async function node(id: string, peers: Record<string, string>, port = 0): Promise<Node> {
  const carrier = new TlsCarrier({ credentials: () => pem(id), readDeadlineMs: READ_DEADLINE_MS, pingEveryMs: 200 });
  const bound = await carrier.bind(`127.0.0.1:${port}`);
  const address = `127.0.0.1:${bound}`;
  const policy = new PeerPolicy({ selfId: id, peers, clusterId: CLUSTER, selfAddress: address, logger: memoryLogger() }, carrier);
  const got: Message[] = [];
  policy.onMessages((ms) => got.push(...ms));
  const n = { policy, carrier, got, address };
  started.push(n);
  return n;
}

/** A raw mutual-TLS connection to `address` with `name`'s certificate, as an attacker of the cluster's CA holds. */
function rawConnect(address: string, name: string): Promise<tls.TLSSocket> {
  const [host, port] = address.split(':');
  const p = pem(name);
  return new Promise((resolve, reject) => {
    const s = tls.connect({ host, port: Number(port), ca: p.ca, cert: p.cert, key: p.key, checkServerIdentity: () => undefined }, () => resolve(s));
    s.once('error', reject);
  });
}

function closedWithin(socket: tls.TLSSocket, ms: number): Promise<boolean> {
  if (socket.destroyed) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(true);
    });
    socket.on('error', () => undefined);
    socket.resume();
  });
}

function hello(nodeId: string, clusterId = CLUSTER): Buffer {
  return encodeFrame(FrameKind.Hello, Buffer.from(JSON.stringify({ clusterId, nodeId, address: '' })));
}

let a: Node;
let b: Node;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'fencelock-tlscarrier-'));
  await generateDevCerts(dir, { nodes: ['a', 'b', 'c'] });
  b = await node('b', {});
  a = await node('a', { b: b.address });
  b.policy.setPeers({ a: a.address });
});

afterAll(async () => {
  for (const n of started) {
    await n.policy.close();
    await n.carrier.close();
  }
  rmSync(dir, { recursive: true, force: true });
});

/** The honest peer still gets through: a sends one more message and b takes it. */
async function stillServes(index: number): Promise<void> {
  a.policy.send([appMsg('a', 'b', index)]);
  await waitFor(`b receives message ${index}`, () => b.got.some((m) => seq(m) === index));
}

describe('TlsCarrier under the peer policy', () => {
  it('carries batches both ways between two members, in order', async () => {
    a.policy.send([appMsg('a', 'b', 1), appMsg('a', 'b', 2)]);
    b.policy.send([appMsg('b', 'a', 3)]);
    await waitFor('both delivered', () => b.got.length >= 2 && a.got.length >= 1);
    expect(b.got.map(seq)).toEqual([1, 2]);
    expect(a.got.map(seq)).toEqual([3]);
    expect(a.policy.stats().b?.connected).toBe(true);
  });

  it('refuses a stream of another cluster and one whose certificate names no node', async () => {
    const foreign = await rawConnect(b.address, 'c');
    const refusals: Buffer[] = [];
    foreign.on('data', (d: Buffer) => refusals.push(d));
    foreign.write(hello('c', 'another-cluster'));
    expect(await closedWithin(foreign, 5_000)).toBe(true);
    expect(Buffer.concat(refusals).toString('utf8')).toContain('is not this cluster');

    const client = await rawConnect(b.address, 'client');
    const answer: Buffer[] = [];
    client.on('data', (d: Buffer) => answer.push(d));
    client.write(hello('a'));
    expect(await closedWithin(client, 5_000)).toBe(true);
    expect(Buffer.concat(answer).toString('utf8')).toContain('certificate names no other node');
    await stillServes(10);
  });

  it('drops messages on a member\'s stream whose sender is not that member', async () => {
    const c = await rawConnect(b.address, 'c');
    c.write(hello('c'));
    c.write(encodeFrame(FrameKind.Batch, encodeMessageBatch([appMsg('a', 'b', 20), appMsg('c', 'b', 21)])));
    await stillServes(22);
    await sleep(100);
    expect(b.got.some((m) => seq(m) === 20)).toBe(false); // forged as from a
    c.destroy();
  });

  const hostile: Array<{ name: string; bytes: () => Buffer[] }> = [
    { name: 'a length prefix of 4 GiB', bytes: () => [hello('c'), Buffer.from([0xff, 0xff, 0xff, 0xff, FrameKind.Batch])] },
    { name: 'a length prefix of 4 GiB instead of HELLO', bytes: () => [Buffer.from([0xff, 0xff, 0xff, 0xff])] },
    { name: 'a frame that is not a message', bytes: () => [hello('c'), encodeFrame(FrameKind.Batch, Buffer.from('this is no MessageBatch at all'))] },
    { name: 'garbage after the handshake', bytes: () => [Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n')] },
    { name: 'a frame kind a dialler never sends', bytes: () => [hello('c'), encodeFrame(FrameKind.Accept)] },
  ];
  for (const { name, bytes } of hostile) {
    it(`closes the connection on ${name}; nothing reaches the log; the node keeps serving`, async () => {
      const before = b.got.length;
      const s = await rawConnect(b.address, 'c');
      for (const chunk of bytes()) s.write(chunk);
      expect(await closedWithin(s, 5_000)).toBe(true);
      expect(b.got.slice(before).filter((m) => m.from === 'c')).toEqual([]);
      await stillServes(100 + hostile.findIndex((h) => h.name === name));
    });
  }

  it('closes a truncated frame (the peer hangs up mid-frame) and a slow drip of bytes within the read deadline', async () => {
    const truncated = await rawConnect(b.address, 'c');
    truncated.write(hello('c'));
    const frame = encodeFrame(FrameKind.Batch, encodeMessageBatch([appMsg('c', 'b', 30)]));
    truncated.write(frame.subarray(0, frame.byteLength - 3));
    expect(await closedWithin(truncated, READ_DEADLINE_MS * 5)).toBe(true);

    const drip = await rawConnect(b.address, 'c');
    drip.write(hello('c'));
    const slow = encodeFrame(FrameKind.Batch, encodeMessageBatch([appMsg('c', 'b', 31)]));
    let i = 0;
    const timer = setInterval(() => {
      if (i < slow.byteLength && !drip.destroyed) drip.write(slow.subarray(i, ++i));
    }, 50);
    const closed = await closedWithin(drip, READ_DEADLINE_MS * 5);
    clearInterval(timer);
    expect(closed).toBe(true);
    expect(i).toBeLessThan(slow.byteLength); // cut off before the frame completed
    expect(b.got.some((m) => seq(m) === 30 || seq(m) === 31)).toBe(false);
    await stillServes(32);
  });

  it('a peer that stops reading: the sender\'s queue stays bounded (the oldest are dropped)', async () => {
    // A rogue listener with c's certificate that completes the handshake, accepts, and then never reads.
    const p = pem('c');
    const sockets: tls.TLSSocket[] = [];
    const rogue = tls.createServer({ ca: p.ca, cert: p.cert, key: p.key, requestCert: true }, (s) => {
      sockets.push(s);
      s.write(encodeFrame(FrameKind.Accept));
      s.pause();
    });
    await new Promise<void>((r) => rogue.listen(0, '127.0.0.1', () => r()));
    const port = (rogue.address() as { port: number }).port;
    const sender = await node('a', { c: `127.0.0.1:${port}` });
    const big = 256 * 1024;
    for (let i = 0; i < 400; i++) sender.policy.send([appMsg('a', 'c', 1000 + i, big)]);
    await waitFor('the stream opens and fills', () => (sender.policy.stats().c?.sentBatches ?? 0) > 0);
    for (let i = 0; i < 2_000; i++) sender.policy.send([appMsg('a', 'c', 2000 + i, big)]);
    await sleep(200);
    const stats = sender.policy.stats().c;
    expect(stats?.dropped).toBeGreaterThan(0); // the bound held: 64 MiB of queue, not 600 MiB
    await sender.policy.close();
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => rogue.close(() => r()));
  });
});

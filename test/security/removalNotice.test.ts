// The removal notice (src/transport/removalNotice.ts) makes a node stop, so it is attacked here the way it
// would be: n3 is killed and a rogue TLS server takes its peer address, answering every peer stream of n1 and
// n2 with a forged notice naming the caller, in the carrier the cluster runs (frames: a REFUSE "removed";
// gRPC: FAILED_PRECONDITION, `fencelock-removed: <caller>`). With a certificate that is not n3's (another
// CA's "n3", this CA's client certificate, this CA's n2) nobody may stop and the cluster keeps serving. With
// n3's own certificate, a member's word is believed: that is the trust the notice rests on
// (docs/membership.md), shown last, as the control that the attack reached the nodes.
import * as grpc from '@grpc/grpc-js';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as tls from 'node:tls';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateDevCerts } from '../../src/certs/generate';
import { FenceLockClient } from '../../src/client';
import type { PeerCarrierName } from '../../src/node/config';
import { encodeFrame, FrameKind, FrameReader, MAX_CONTROL_FRAME_BYTES } from '../../src/transport/frames';
import { PEER_ID_METADATA } from '../../src/transport/grpcPeerTransport';
import { removedRefusal } from '../../src/transport/removalNotice';
import { RAFT_PEER_SERVICE } from '../../src/transport/service';
import { eventually, LocalCluster } from '../integration/harness';
import { PEER_CARRIERS } from './forge';

let cluster: LocalCluster;
let client: FenceLockClient;
let otherCa: string;

async function startCluster(carrier: PeerCarrierName): Promise<void> {
  cluster = await LocalCluster.create({ size: 3, stablePorts: true, peerCarrier: carrier });
  cluster.startAll();
  client = new FenceLockClient({ endpoints: cluster.endpoints.slice(0, 2), requestTimeoutMs: 2_000, totalTimeoutMs: 15_000 });
  await eventually(async () => (await client.status().catch(() => undefined))?.leader || undefined, 20_000, 'a leader');
  await cluster.kill('n3');
  await eventually(async () => {
    const st = await client.status().catch(() => undefined);
    return st !== undefined && st.leader !== '' && st.leader !== 'n3' ? true : undefined;
  }, 20_000, 'a leader among n1 and n2');
  otherCa = mkdtempSync(path.join(os.tmpdir(), 'fencelock-other-ca-'));
  await generateDevCerts(otherCa, { nodes: ['n3'], client: 'test' });
}

async function stopCluster(): Promise<void> {
  await client?.close();
  await cluster?.destroy();
  if (otherCa) rmSync(otherCa, { recursive: true, force: true });
}

interface Rogue {
  streams: () => number;
  stop: () => void;
}

/** A server of `carrier` on n3's peer address that ends every peer stream with a notice naming its caller. */
function rogueAsN3(carrier: PeerCarrierName, certDir: string, name: string): Promise<Rogue> {
  return carrier === 'tls' ? framedRogue(certDir, name) : grpcRogue(certDir, name);
}

/** Frames: reads the dialler's HELLO and answers REFUSE "removed" naming the id it claims. */
async function framedRogue(certDir: string, name: string): Promise<Rogue> {
  let streams = 0;
  const sockets = new Set<tls.TLSSocket>();
  const server = tls.createServer({
    ca: readFileSync(path.join(certDir, 'ca.pem')),
    key: readFileSync(path.join(certDir, `${name}-key.pem`)),
    cert: readFileSync(path.join(certDir, `${name}.pem`)),
    requestCert: true,
    rejectUnauthorized: false,
  }, (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    const reader = new FrameReader(MAX_CONTROL_FRAME_BYTES);
    socket.on('data', (chunk: Buffer) => {
      const hello = reader.push(chunk).find((f) => f.kind === FrameKind.Hello);
      if (!hello) return;
      streams++;
      const caller = String((JSON.parse(hello.payload.toString('utf8')) as { nodeId?: string }).nodeId || 'n1');
      socket.end(encodeFrame(FrameKind.Refuse, Buffer.from(JSON.stringify({ kind: 'removed', id: caller, by: 'n3' }))));
    });
  });
  const [host, port] = cluster.node('n3').peerAddress.split(':');
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(Number(port), host, () => resolve());
  });
  return {
    streams: () => streams,
    stop: () => {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}

/** gRPC: ends every RaftPeer stream with FAILED_PRECONDITION and the caller in `fencelock-removed`. */
async function grpcRogue(certDir: string, name: string): Promise<Rogue> {
  const server = new grpc.Server();
  let streams = 0;
  server.addService(RAFT_PEER_SERVICE, {
    Stream: (call: grpc.ServerDuplexStream<Buffer, Buffer>) => {
      streams++;
      const caller = String(call.metadata.get(PEER_ID_METADATA)[0] ?? 'n1');
      call.emit('error', removedRefusal(caller, 'n3'));
    },
  });
  const creds = grpc.ServerCredentials.createSsl(
    readFileSync(path.join(certDir, 'ca.pem')),
    [{ private_key: readFileSync(path.join(certDir, `${name}-key.pem`)), cert_chain: readFileSync(path.join(certDir, `${name}.pem`)) }],
    false,
  );
  await new Promise<void>((resolve, reject) => server.bindAsync(cluster.node('n3').peerAddress, creds, (err) => (err ? reject(err) : resolve())));
  return { streams: () => streams, stop: () => server.forceShutdown() };
}

function removalLines(): string[] {
  return readFileSync(path.join(cluster.dir, 'cluster.log'), 'utf8').split('\n').filter((l) => l.includes('says this node was removed'));
}

describe.each(PEER_CARRIERS)('peerCarrier "%s"', (carrier) => {
  describe('a forged removal notice from a server that is not the member dialled', () => {
    beforeAll(() => startCluster(carrier), 60_000);
    afterAll(stopCluster);

    const impostors = [
      { what: "another CA's certificate naming n3", dir: () => otherCa, name: 'n3' },
      { what: "this CA's client certificate", dir: () => cluster.certsDir!, name: 'client' },
      { what: "this CA's certificate of n2 (a member, but not the one dialled)", dir: () => cluster.certsDir!, name: 'n2' },
    ];
    for (const { what, dir, name } of impostors) {
      it(`with ${what}: n1 and n2 ignore it, keep running and serving`, async () => {
        const before = await client.status();
        const rogue = await rogueAsN3(carrier, dir(), name);
        try {
          await sleep(3_000); // n1 and n2 redial n3 at least every second
        } finally {
          rogue.stop();
        }
        expect(rogue.streams(), 'the TLS identity check stops the dial before any stream reaches the impostor').toBe(0);
        expect(cluster.isRunning('n1') && cluster.isRunning('n2'), 'n1 and n2 still run').toBe(true);
        expect(removalLines()).toEqual([]);
        const holder = await client.openSession({ ttlMs: 10_000 });
        const { token } = await holder.acquire(`after-${name}`);
        expect(token).toBeGreaterThan(0n);
        await holder.close();
        expect((await client.status()).term, 'no election was caused').toBe(before.term);
      }, 30_000);
    }

    it("control: with n3's own certificate the notice is believed (a member's word), so the attack did reach the nodes", async () => {
      const rogue = await rogueAsN3(carrier, cluster.certsDir!, 'n3');
      try {
        await eventually(() => (!cluster.isRunning('n1') || !cluster.isRunning('n2') ? true : undefined), 15_000, 'a node told by "n3" to stop');
      } finally {
        rogue.stop();
      }
      expect(rogue.streams()).toBeGreaterThan(0);
      expect(removalLines().some((l) => l.includes('member n3 says'))).toBe(true);
    }, 30_000);
  });
});

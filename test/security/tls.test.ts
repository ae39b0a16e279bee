// TLS on the client and peer listeners, over real node processes: who is refused at the handshake, that
// certificates rotate on SIGHUP without a restart, and that plaintext is refused off loopback.
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateDevCerts } from '../../src/certs/generate';
import { clientIdentityUri, nodeIdentityUri } from '../../src/certs/identity';
import { protoFile } from '../../src/codec/protoPath';
import { FenceLockClient } from '../../src/client';
import { CONFIG_DEFAULTS } from '../../src/node/config';
import { eventually, freePorts, LocalCluster, NODE_MAIN, runNode } from '../integration/harness';
import { FOREIGN_CLUSTER_ID } from './attackKit';
import { expiredLeaf, issueFromCa, serialOf, type Pem } from './certs';
import { openPeerStream, sslCredentials, type PeerCredentials } from './forge';

/** The carrier this file's cluster runs (the default): the one its peer-listener refusals speak. */
const PEER_CARRIER = CONFIG_DEFAULTS.peerCarrier;

const def = protoLoader.loadSync(protoFile('fencelock/v1/lock.proto'), { keepCase: false, longs: String, enums: String, defaults: true });
const Cluster = (grpc.loadPackageDefinition(def) as unknown as { fencelock: { v1: { Cluster: grpc.ServiceClientConstructor } } }).fencelock.v1.Cluster;

interface Creds {
  ca?: Buffer;
  cert?: Buffer | string;
  key?: Buffer | string;
}

/** Cluster.Status on one node with exactly these credentials (plaintext when `creds` is null). */
function status(address: string, creds: Creds | null, options: grpc.ChannelOptions = {}): Promise<{ ok: true; res: { id: string } } | { ok: false; err: grpc.ServiceError }> {
  const channel = creds
    ? sslCredentials(creds.ca!, creds.key ? Buffer.from(creds.key) : undefined, creds.cert ? Buffer.from(creds.cert) : undefined)
    : grpc.credentials.createInsecure();
  const client = new Cluster(address, channel, options) as unknown as grpc.Client & {
    Status(req: object, opts: object, cb: (err: grpc.ServiceError | null, res: { id: string }) => void): void;
  };
  return new Promise((resolve) => {
    client.Status({}, { deadline: Date.now() + 3_000 }, (err, res) => {
      client.close();
      resolve(err ? { ok: false, err } : { ok: true, res });
    });
  });
}

function expectRefused(r: Awaited<ReturnType<typeof status>>, what: string): void {
  expect(r.ok, `${what}: expected the call to be refused`).toBe(false);
  if (!r.ok) expect(grpc.status[r.err.code], `${what}: ${r.err.details}`).toBe('UNAVAILABLE');
}

function expectServed(r: Awaited<ReturnType<typeof status>>, what: string): void {
  expect(r.ok, `${what}: ${r.ok ? '' : r.err.details}`).toBe(true);
}

function file(dir: string, name: string): Buffer {
  return readFileSync(path.join(dir, name));
}

/** The certificate a TLS server presents to a new connection. */
function servedCertificate(address: string, ca: Buffer, clientCert?: { cert: Buffer; key: Buffer }): Promise<tls.PeerCertificate> {
  const [host, port] = [address.slice(0, address.lastIndexOf(':')), Number(address.slice(address.lastIndexOf(':') + 1))];
  return new Promise((resolve, reject) => {
    // Only reads what is served: the host name is not checked here (the gRPC calls check it).
    const socket = tls.connect({ host, port, ca, servername: 'localhost', ALPNProtocols: ['h2'], checkServerIdentity: () => undefined, ...clientCert }, () => {
      const cert = socket.getPeerCertificate();
      socket.destroy();
      resolve(cert);
    });
    socket.once('error', reject);
  });
}

/** A running TLS cluster with a leader, its certificates, and the same identities from another CA. */
async function startTlsCluster(opts: { clientCertAuth?: boolean }): Promise<{ cluster: LocalCluster; certs: string; foreign: string }> {
  const cluster = await LocalCluster.create(opts);
  cluster.startAll();
  const foreign = path.join(cluster.dir, 'foreign-certs');
  await generateDevCerts(foreign, { nodes: cluster.nodes.map((n) => n.id), client: 'test' });
  const client = new FenceLockClient({ endpoints: cluster.endpoints });
  await eventually(async () => (await client.status()).leader !== '', 20_000, 'a leader');
  await client.close();
  return { cluster, certs: cluster.certsDir!, foreign };
}

describe('TLS on the listeners (clientCertAuth off)', () => {
  let cluster: LocalCluster;
  let certs: string;
  let foreign: string;

  beforeAll(async () => {
    ({ cluster, certs, foreign } = await startTlsCluster({}));
  });

  afterAll(async () => {
    await cluster?.destroy();
  });

  it('serves a client that trusts the cluster CA (the baseline of the refusals below)', async () => {
    expectServed(await status(cluster.nodes[0]!.address, { ca: file(certs, 'ca.pem') }), 'cluster CA');
  });

  it('refuses a plaintext client when TLS is on', async () => {
    for (const n of cluster.nodes) {
      expectRefused(await status(n.address, null), `plaintext to ${n.id}'s client listener`);
      // And the peer listener.
      const r = await openPeerStream(PEER_CARRIER, n.peerAddress, null, undefined).finish();
      expect(r.admitted, `plaintext to ${n.id}'s peer listener`).toBe(false);
      expect(r.outcome, r.details).toBe('closed');
    }
  });

  it('refuses a client that trusts another CA (the node\'s certificate does not verify)', async () => {
    expectRefused(await status(cluster.nodes[0]!.address, { ca: file(foreign, 'ca.pem') }), 'another CA');
  });

  it('refuses a peer stream with an expired member certificate from the cluster CA', async () => {
    const n1 = cluster.node('n1');
    const expired = expiredLeaf(certs, { commonName: 'n2', uri: nodeIdentityUri('n2'), hosts: ['n2', 'localhost', '127.0.0.1'], server: true });
    const creds: PeerCredentials = { ca: file(certs, 'ca.pem'), cert: Buffer.from(expired.certPem), key: Buffer.from(expired.keyPem), label: 'expired n2' };
    const r = await openPeerStream(PEER_CARRIER, n1.peerAddress, creds, undefined).finish();
    expect(r.admitted, 'an expired certificate is refused at the handshake').toBe(false);
    expect(r.outcome, r.details).toBe('closed');
    // The same identity with a valid certificate gets past the handshake (refused later only for the
    // missing cluster id): the expiry, not the identity, is what the handshake refused.
    const valid = issueFromCa(certs, { commonName: 'n2', uri: nodeIdentityUri('n2'), hosts: ['n2', 'localhost', '127.0.0.1'], server: true, days: 1 });
    const ok = await openPeerStream(PEER_CARRIER, n1.peerAddress, { ...creds, cert: Buffer.from(valid.certPem), key: Buffer.from(valid.keyPem) }, FOREIGN_CLUSTER_ID, { claimedId: 'n2' }).finish();
    expect(ok.outcome, ok.details).toBe('denied');
  });

  it('refuses a node whose certificate does not name the host the client dialled', async () => {
    const n = cluster.nodes[0]!;
    const ca = file(certs, 'ca.pem');
    expectServed(await status(n.address, { ca }, { 'grpc.ssl_target_name_override': 'localhost' }), 'a name in the certificate');
    expectRefused(await status(n.address, { ca }, { 'grpc.ssl_target_name_override': 'not-in-the-cert.example' }), 'a name not in the certificate');
  });

  it('a node certificate whose names lack 127.0.0.1 is refused by a client dialling 127.0.0.1', async () => {
    // Rotate n3 onto a certificate valid only for "elsewhere.example": clients dialling 127.0.0.1 must refuse it.
    const n3 = cluster.node('n3');
    const pem = issueFromCa(certs, { commonName: 'n3', uri: nodeIdentityUri('n3'), hosts: ['elsewhere.example'], server: true, days: 1 });
    const certFile = path.join(certs, 'n3.pem');
    const keyFile = path.join(certs, 'n3-key.pem');
    const saved = { cert: readFileSync(certFile), key: readFileSync(keyFile) };
    try {
      writeFileSync(certFile, pem.certPem);
      writeFileSync(keyFile, pem.keyPem);
      n3.process!.kill('SIGHUP');
      const ca = file(certs, 'ca.pem');
      await eventually(async () => served(await servedCertificate(n3.address, ca)) === serialOf(pem.certPem), 10_000, 'n3 serving the new certificate');
      expectRefused(await status(n3.address, { ca }), 'a certificate without 127.0.0.1');
    } finally {
      writeFileSync(certFile, saved.cert);
      writeFileSync(keyFile, saved.key);
      n3.process!.kill('SIGHUP');
    }
    await eventually(async () => ((await status(n3.address, { ca: file(certs, 'ca.pem') })).ok ? true : undefined), 10_000, 'n3 back on its own certificate');
  });

  it('rotates certificates on SIGHUP: new connections see the new serial, calls and replication go on', async () => {
    const n1 = cluster.node('n1');
    const ca = file(certs, 'ca.pem');
    const old = served(await servedCertificate(n1.address, ca));
    const fresh: Pem = issueFromCa(certs, { commonName: 'n1', uri: nodeIdentityUri('n1'), hosts: ['n1', 'localhost', '127.0.0.1'], server: true, days: 30 });
    expect(serialOf(fresh.certPem)).not.toBe(old);
    writeFileSync(path.join(certs, 'n1.pem'), fresh.certPem);
    writeFileSync(path.join(certs, 'n1-key.pem'), fresh.keyPem, { mode: 0o600 });
    n1.process!.kill('SIGHUP');
    await eventually(async () => served(await servedCertificate(n1.address, ca)) === serialOf(fresh.certPem), 10_000, 'the new serial on a new connection');
    expect(cluster.isRunning('n1')).toBe(true);
    expectServed(await status(n1.address, { ca }), 'a call after the rotation');
    // The peer listener serves the new certificate too, and the cluster still commits.
    const peerServed = await servedCertificate(n1.peerAddress, ca, { cert: file(certs, 'n2.pem'), key: file(certs, 'n2-key.pem') });
    expect(served(peerServed)).toBe(serialOf(fresh.certPem));
    const client = new FenceLockClient({ endpoints: [n1.address, ...cluster.endpoints.filter((e) => e !== n1.address)] });
    try {
      const session = await client.openSession({ ttlMs: 10_000 });
      const lock = await session.acquire('rotation');
      await lock.write([{ put: 'rotation/k', value: Buffer.from('after SIGHUP') }]);
      await lock.release();
      await session.close();
    } finally {
      await client.close();
    }
  });

  it('a node refuses "insecure": true on a listen address that is not loopback', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'fencelock-insecure-'));
    try {
      const [a, b] = await freePorts(2);
      const config = {
        id: 'n1',
        listen: `0.0.0.0:${a}`,
        peerListen: `127.0.0.1:${b}`,
        members: { n1: { client: `127.0.0.1:${a}`, peer: `127.0.0.1:${b}` } },
        insecure: true,
        auth: { enabled: false },
        dataDir: path.join(dir, 'data'),
      };
      const file = path.join(dir, 'n1.json');
      writeFileSync(file, JSON.stringify(config));
      const r = await runNode([NODE_MAIN, '--config', file], { timeoutMs: 30_000 });
      expect(r.code, r.stdout + r.stderr).toBe(1);
      expect(r.stderr).toContain('field "listen" is not a loopback address');
      expect(r.stderr).toContain('"insecure": true');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('TLS with clientCertAuth on', () => {
  let cluster: LocalCluster;
  let certs: string;
  let foreign: string;

  beforeAll(async () => {
    ({ cluster, certs, foreign } = await startTlsCluster({ clientCertAuth: true }));
  });

  afterAll(async () => {
    await cluster?.destroy();
  });

  it('requires a client certificate from the cluster CA', async () => {
    const ca = file(certs, 'ca.pem');
    for (const n of cluster.nodes) {
      expectServed(await status(n.address, { ca, cert: file(certs, 'client.pem'), key: file(certs, 'client-key.pem') }), `${n.id} with the client certificate`);
      expectRefused(await status(n.address, { ca }), `${n.id} without a client certificate`);
      expectRefused(await status(n.address, { ca, cert: file(foreign, 'client.pem'), key: file(foreign, 'client-key.pem') }), `${n.id} with another CA's client certificate`);
    }
  });

  it('refuses an expired client certificate from the cluster CA', async () => {
    const expired = expiredLeaf(certs, { commonName: 'old', uri: clientIdentityUri('old'), hosts: [], server: false });
    expectRefused(await status(cluster.nodes[0]!.address, { ca: file(certs, 'ca.pem'), cert: expired.certPem, key: expired.keyPem }), 'an expired client certificate');
  });
});

/** The serial of a served certificate, comparable with serialOf(pem). */
function served(cert: tls.PeerCertificate): bigint {
  return BigInt(`0x${cert.serialNumber}`);
}

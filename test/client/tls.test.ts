import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { chooseCredentials, FenceLockClient, FenceLockError, resolveCredentials, type LockEvent } from '../../src/client';
import { startFakeCluster, type FakeNode, type FakeState, type FakeTls } from './fakeServer';
import { testPki, writePem, type TestPki } from './testCerts';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  vi.unstubAllEnvs();
  while (cleanups.length > 0) await cleanups.pop()!();
});

let pki: TestPki;
beforeAll(() => {
  pki = testPki();
});

async function cluster(tls: FakeTls | undefined, n = 1): Promise<{ state: FakeState; nodes: FakeNode[] }> {
  const c = await startFakeCluster(n, undefined, { tls });
  cleanups.push(c.stop);
  return c;
}

function client(opts: ConstructorParameters<typeof FenceLockClient>[0]): FenceLockClient {
  const c = new FenceLockClient({ requestTimeoutMs: 500, totalTimeoutMs: 1_500, ...opts });
  cleanups.push(() => c.close());
  return c;
}

function tmpDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fencelock-tls-'));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function refusal(p: Promise<unknown>): Promise<FenceLockError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(FenceLockError);
    return err as FenceLockError;
  }
  throw new Error('expected the call to be refused');
}

/** A refused connection: the call fails as unreachable (UNAVAILABLE, or DEADLINE_EXCEEDED on a busy machine). */
async function refused(p: Promise<unknown>): Promise<void> {
  expect(['UNAVAILABLE', 'DEADLINE_EXCEEDED']).toContain((await refusal(p)).code);
}

const serverTls = (): FakeTls => ({ cert: pki.node.cert, key: pki.node.key });
const mutualTls = (): FakeTls => ({ cert: pki.node.cert, key: pki.node.key, ca: pki.ca.cert, requireClientCert: true });

describe('TLS between the client library and a node', () => {
  it('verifies the node against the configured CA and works over TLS', async () => {
    const { state, nodes } = await cluster(serverTls());
    const c = client({ endpoints: [nodes[0]!.address], tls: { ca: pki.ca.cert } });
    expect(c.credentialSource).toBe('options');
    const s = await c.openSession();
    await (await s.acquire('tls')).release();
    expect(state.callsOf('Acquire')).toHaveLength(1);
    // "localhost" is in the certificate too.
    const byName = client({ endpoints: [nodes[0]!.address.replace('127.0.0.1', 'localhost')], tls: { ca: Buffer.from(pki.ca.cert) } });
    expect((await byName.status()).id).toBe('n1');
  });

  it('a plaintext client is refused by a TLS node, and a TLS client refuses a plaintext node', async () => {
    const { state, nodes } = await cluster(serverTls());
    const plain = client({ endpoints: [nodes[0]!.address], insecure: true });
    await refused(plain.openSession());
    expect(state.calls).toEqual([]);

    const { state: plainState, nodes: plainNodes } = await cluster(undefined);
    const tlsClient = client({ endpoints: [plainNodes[0]!.address], tls: { ca: pki.ca.cert } });
    await refused(tlsClient.openSession());
    expect(plainState.calls).toEqual([]);
  });

  it('refuses a node whose certificate comes from another CA', async () => {
    const { state, nodes } = await cluster({ cert: pki.foreignNode.cert, key: pki.foreignNode.key });
    const c = client({ endpoints: [nodes[0]!.address], tls: { ca: pki.ca.cert } });
    const err = await refusal(c.openSession());
    // Not retried (no "gave up after"): the first handshake's verdict is final, naming the CA trusted.
    expect(err).toMatchObject({ code: 'UNAVAILABLE', reason: 'UNTRUSTED_CERTIFICATE', indeterminate: false });
    expect(err.message).not.toContain('gave up after');
    expect(err.message).toContain('it trusts the CA given as PEM text in tls.ca');
    expect(state.calls).toEqual([]);
  });

  it('refuses a node whose certificate does not name the host dialled; tls.serverName names it instead', async () => {
    const { state, nodes } = await cluster({ cert: pki.misnamedNode.cert, key: pki.misnamedNode.key });
    const c = client({ endpoints: [nodes[0]!.address], tls: { ca: pki.ca.cert } });
    const err = await refusal(c.openSession());
    expect(err).toMatchObject({ code: 'UNAVAILABLE', reason: 'UNTRUSTED_CERTIFICATE' });
    expect(err.message).toMatch(/does not name the host dialled .*tls\.serverName/);
    expect(err.message).not.toContain('gave up after');
    expect(state.calls).toEqual([]);
    // The override changes which name is verified, not whether: a wrong override fails as well.
    const wrong = client({ endpoints: [nodes[0]!.address], tls: { ca: pki.ca.cert, serverName: 'third.example' } });
    await refused(wrong.status());
    const right = client({ endpoints: [nodes[0]!.address], tls: { ca: pki.ca.cert, serverName: 'other.example' } });
    expect((await right.status()).id).toBe('n1');
  });

  it('presents the client certificate when configured; a node that requires one refuses a client without', async () => {
    const { state, nodes } = await cluster(mutualTls());
    const anonymous = client({ endpoints: [nodes[0]!.address], tls: { ca: pki.ca.cert } });
    await refused(anonymous.openSession());
    expect(state.calls).toEqual([]);
    // A certificate from another CA is no better.
    const stranger = pki.otherCa.issue({ commonName: 'x', uris: ['urn:fencelock:client:tester'], client: true });
    const foreign = client({ endpoints: [nodes[0]!.address], tls: { ca: pki.ca.cert, cert: stranger.cert, key: stranger.key } });
    await refused(foreign.openSession());
    expect(state.calls).toEqual([]);

    const c = client({ endpoints: [nodes[0]!.address], tls: { ca: pki.ca.cert, cert: pki.client.cert, key: pki.client.key } });
    await c.openSession();
    expect(state.callsOf('Open')[0]!.peerSan).toContain('URI:urn:fencelock:client:tester');
  });

  it('every channel (unary, pipeline, keepalive, watch) uses the credentials', async () => {
    const { state, nodes } = await cluster(mutualTls(), 2);
    // Start at the follower: the hint to the (configured) leader is followed over TLS as well.
    const c = client({ endpoints: [nodes[1]!.address, nodes[0]!.address], tls: { ca: pki.ca.cert, cert: pki.client.cert, key: pki.client.key } });
    const events: LockEvent[] = [];
    const w = c.watch('ch', (ev) => events.push(ev));
    cleanups.push(() => w.cancel());
    const s = await c.openSession({ ttlMs: 600 });
    const lock = await s.acquire('ch'); // pipeline
    await lock.write([{ put: 'ch/k', value: 'v' }]); // pipeline
    expect((await c.get('ch/k')).found).toBe(true); // pipeline
    expect((await c.list('ch/')).items).toHaveLength(1); // unary
    await new Promise((r) => setTimeout(r, 500));
    await lock.release();
    await new Promise((r) => setTimeout(r, 100));
    expect(events.map((e) => e.kind)).toEqual(['GRANTED', 'RELEASED']);
    expect(s.isLost()).toBe(false);
    for (const method of ['Open', 'Acquire', 'Write', 'Get', 'List', 'KeepAliveRenewal', 'Watch']) {
      const calls = state.callsOf(method);
      expect(calls.length, method).toBeGreaterThan(0);
      for (const call of calls) expect(call.peerSan, method).toContain('urn:fencelock:client:tester');
    }
  });
});

describe('where the credentials come from', () => {
  it('explicit options first, then FENCELOCK_* env, then ./data/certs, then the system roots', () => {
    const dir = tmpDir();
    const files = writePem(dir, { 'ca.pem': pki.ca.cert, 'client.pem': pki.client.cert, 'client-key.pem': pki.client.key });
    const env = { FENCELOCK_CACERT: files['ca.pem'], FENCELOCK_CERT: files['client.pem'], FENCELOCK_KEY: files['client-key.pem'] };
    const cwdWithCerts = tmpDir();
    fs.mkdirSync(path.join(cwdWithCerts, 'data', 'certs'), { recursive: true });
    writePem(path.join(cwdWithCerts, 'data', 'certs'), { 'ca.pem': pki.ca.cert });
    const empty = tmpDir();

    expect(chooseCredentials({ tls: { ca: pki.ca.cert } }, env, cwdWithCerts).source).toBe('options');
    expect(chooseCredentials({ insecure: true }, env, cwdWithCerts).source).toBe('insecure-option');
    expect(chooseCredentials({}, env, cwdWithCerts)).toMatchObject({ source: 'env', tls: { ca: files['ca.pem'], cert: files['client.pem'] } });
    expect(chooseCredentials({}, { FENCELOCK_INSECURE: '1' }, cwdWithCerts).source).toBe('insecure-env');
    expect(chooseCredentials({}, { FENCELOCK_INSECURE: '0' }, cwdWithCerts).source).toBe('local-cluster');
    // insecure: false said explicitly means TLS whatever the environment says.
    expect(chooseCredentials({ insecure: false }, { FENCELOCK_INSECURE: '1' }, cwdWithCerts).source).toBe('local-cluster');
    expect(chooseCredentials({}, {}, cwdWithCerts)).toMatchObject({ source: 'local-cluster', tls: { ca: path.join(cwdWithCerts, 'data', 'certs', 'ca.pem') } });
    const caOnly = chooseCredentials({}, {}, cwdWithCerts);
    expect(caOnly.insecure ? 'plaintext' : caOnly.tls.cert).toBeUndefined(); // no client.pem there yet
    expect(chooseCredentials({}, {}, empty)).toMatchObject({ source: 'system-roots', insecure: false });

    // The local cluster's client certificate is used when both halves are there.
    writePem(path.join(cwdWithCerts, 'data', 'certs'), { 'client.pem': pki.client.cert, 'client-key.pem': pki.client.key });
    const local = resolveCredentials({}, {}, cwdWithCerts);
    expect(local).toMatchObject({ source: 'local-cluster', clientCert: true, insecure: false });
    expect(resolveCredentials({}, env, empty)).toMatchObject({ source: 'env', clientCert: true, files: { ca: files['ca.pem'] } });
    expect(resolveCredentials({ tls: { ca: pki.ca.cert, serverName: 'n1' } }, {}, empty).channelOptions).toEqual({ 'grpc.ssl_target_name_override': 'n1' });
    expect(resolveCredentials({ tls: { ca: pki.ca.cert } }, {}, empty).channelOptions).toEqual({});
  });

  it('refuses contradictions, half a key pair, unreadable files and unknown FENCELOCK_INSECURE values', () => {
    const dir = tmpDir();
    const files = writePem(dir, { 'ca.pem': pki.ca.cert, 'client.pem': pki.client.cert });
    const empty = tmpDir();
    expect(() => resolveCredentials({ insecure: true, tls: {} }, {}, empty)).toThrow(/contradict/);
    expect(() => resolveCredentials({}, { FENCELOCK_INSECURE: '1', FENCELOCK_CACERT: files['ca.pem'] }, empty)).toThrow(/FENCELOCK_INSECURE=1 contradicts/);
    expect(() => resolveCredentials({}, { FENCELOCK_INSECURE: 'yes' }, empty)).toThrow(/FENCELOCK_INSECURE: "yes"/);
    expect(() => resolveCredentials({}, { FENCELOCK_CERT: files['client.pem'] }, empty)).toThrow(/FENCELOCK_CERT and FENCELOCK_KEY go together/);
    expect(() => resolveCredentials({ tls: { cert: pki.client.cert } }, {}, empty)).toThrow(/tls.cert and tls.key/);
    expect(() => resolveCredentials({}, { FENCELOCK_CACERT: path.join(dir, 'missing.pem') }, empty)).toThrow(/FENCELOCK_CACERT: cannot read .*missing\.pem/);
    expect(() => resolveCredentials({ tls: { ca: '-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n' } }, {}, empty)).toThrow(/tls.ca: certificate 1 cannot be parsed/);
    expect(() => resolveCredentials({ tls: { ca: Buffer.from('hello') } }, {}, empty)).toThrow(/tls.ca: no PEM certificate/);
    expect(() => resolveCredentials({ tls: { cert: pki.client.cert, key: pki.node.key } }, {}, empty)).toThrow(/tls.key is not the private key of tls.cert/);
    expect(() => resolveCredentials({ tls: { cert: pki.client.cert, key: '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n' } }, {}, empty)).toThrow(/tls.key: not a PEM private key/);
  });

  it('FenceLockClient reads FENCELOCK_CACERT / FENCELOCK_CERT / FENCELOCK_KEY and FENCELOCK_INSECURE from process.env', async () => {
    const dir = tmpDir();
    const files = writePem(dir, { 'ca.pem': pki.ca.cert, 'client.pem': pki.client.cert, 'client-key.pem': pki.client.key });
    const { state, nodes } = await cluster(mutualTls());
    vi.stubEnv('FENCELOCK_INSECURE', '');
    vi.stubEnv('FENCELOCK_CACERT', files['ca.pem']!);
    vi.stubEnv('FENCELOCK_CERT', files['client.pem']!);
    vi.stubEnv('FENCELOCK_KEY', files['client-key.pem']!);
    const c = client({ endpoints: [nodes[0]!.address] });
    expect(c.credentialSource).toBe('env');
    await c.openSession();
    expect(state.callsOf('Open')[0]!.peerSan).toContain('urn:fencelock:client:tester');

    vi.unstubAllEnvs();
    vi.stubEnv('FENCELOCK_CACERT', '');
    vi.stubEnv('FENCELOCK_CERT', '');
    vi.stubEnv('FENCELOCK_KEY', '');
    vi.stubEnv('FENCELOCK_INSECURE', '1');
    const { nodes: plainNodes } = await cluster(undefined);
    const plain = client({ endpoints: [plainNodes[0]!.address] });
    expect(plain.credentialSource).toBe('insecure-env');
    expect((await plain.status()).id).toBe('n1');
    // ...and a client of a TLS node then fails rather than falling back.
    const toTlsNode = client({ endpoints: [nodes[0]!.address] });
    await refused(toTlsNode.status());
  });

  it('warns when talking plaintext to an endpoint that is not loopback', () => {
    const warnings: string[] = [];
    const logger = { debug: () => {}, info: () => {}, error: () => {}, warn: (_o: object, msg?: string) => void warnings.push(msg ?? '') };
    client({ endpoints: ['127.0.0.1:1', 'localhost:2', '[::1]:3'], insecure: true, logger });
    expect(warnings).toEqual([]);
    client({ endpoints: ['10.0.0.7:7001'], insecure: true, logger });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/plaintext/);
  });
});

import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateDevCerts, newSerialHex } from '../../src/certs/generate';
import { nodeIdOf, uriNames } from '../../src/certs/identity';

describe('development certificates', () => {
  let dir: string;
  beforeAll(async () => {
    dir = path.join(mkdtempSync(path.join(os.tmpdir(), 'fencelock-certs-')), 'certs');
    await generateDevCerts(dir, { nodes: ['n1', 'n2'], client: 'alice', hosts: ['db.example', '10.1.2.3'] });
  });
  afterAll(() => rmSync(path.dirname(dir), { recursive: true, force: true }));

  const cert = (name: string): X509Certificate => new X509Certificate(readFileSync(path.join(dir, name)));

  it('signs every leaf with the CA', () => {
    const ca = cert('ca.pem');
    expect(ca.ca).toBe(true);
    for (const leaf of ['n1.pem', 'n2.pem', 'client.pem']) expect(cert(leaf).verify(ca.publicKey)).toBe(true);
  });

  it('names each node by its URI, with the hosts clients verify', () => {
    const n1 = cert('n1.pem');
    expect(nodeIdOf({ subjectaltname: n1.subjectAltName })).toBe('n1');
    expect(n1.checkHost('localhost')).toBe('localhost');
    expect(n1.checkHost('db.example')).toBe('db.example');
    expect(n1.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(n1.checkIP('10.1.2.3')).toBe('10.1.2.3');
    expect(n1.checkHost('other.example')).toBeUndefined();
  });

  it('gives the client certificate a client identity and no node identity', () => {
    const client = cert('client.pem');
    expect(uriNames({ subjectaltname: client.subjectAltName })).toEqual(['urn:fencelock:client:alice']);
    expect(nodeIdOf({ subjectaltname: client.subjectAltName })).toBeUndefined();
    expect(client.keyUsage).toEqual(['1.3.6.1.5.5.7.3.2']);
  });

  it('keeps private keys and the folder readable by the owner only', () => {
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    for (const key of ['ca-key.pem', 'n1-key.pem', 'client-key.pem']) expect(statSync(path.join(dir, key)).mode & 0o777).toBe(0o600);
  });

  it('reads no identity from a certificate naming two nodes', () => {
    expect(nodeIdOf({ subjectaltname: 'URI:urn:fencelock:node:n1, URI:urn:fencelock:node:n2' })).toBeUndefined();
  });
});

describe('certificate serial numbers', () => {
  it('regression: always a minimal positive DER INTEGER (an odd-length serial once made OpenSSL refuse some certificates)', () => {
    for (let i = 0; i < 5_000; i++) {
      const hex = newSerialHex();
      expect(hex).toMatch(/^[0-9a-f]{32}$/);
      const first = parseInt(hex.slice(0, 2), 16);
      expect(first).toBeGreaterThanOrEqual(0x01);
      expect(first).toBeLessThanOrEqual(0x7f);
    }
  });

  it('every certificate of many generations parses', async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'fencelock-serials-'));
    try {
      for (let i = 0; i < 20; i++) {
        const dir = path.join(root, String(i));
        await generateDevCerts(dir, { nodes: ['n1'] });
        for (const f of ['ca.pem', 'n1.pem', 'client.pem']) expect(() => new X509Certificate(readFileSync(path.join(dir, f)))).not.toThrow();
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

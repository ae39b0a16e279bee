/**
 * Certificates for the TLS tests, made at runtime: keys by node:crypto (fast, native), certificates by
 * node-forge. Identities follow docs/security.md (URI SANs urn:fencelock:node:ID / urn:fencelock:client:NAME).
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import forge from 'node-forge';

export interface Pem {
  cert: string;
  key: string;
}

export interface TestCa extends Pem {
  issue(opts: IssueOptions): Pem;
}

export interface IssueOptions {
  commonName: string;
  dns?: string[];
  ips?: string[];
  uris?: string[];
  server?: boolean;
  client?: boolean;
}

function keyPair(): { privateKey: forge.pki.rsa.PrivateKey; publicKey: forge.pki.rsa.PublicKey; pem: string } {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
  const priv = forge.pki.privateKeyFromPem(pem) as forge.pki.rsa.PrivateKey;
  return { privateKey: priv, publicKey: forge.pki.setRsaPublicKey(priv.n, priv.e), pem };
}

function baseCert(publicKey: forge.pki.rsa.PublicKey, commonName: string): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = publicKey;
  cert.serialNumber = `01${randomBytes(8).toString('hex')}`;
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = new Date(Date.now() + 24 * 3600_000);
  cert.setSubject([{ name: 'commonName', value: commonName }]);
  return cert;
}

/** A self-signed CA that issues leaf certificates. */
export function makeCa(commonName: string): TestCa {
  const k = keyPair();
  const caCert = baseCert(k.publicKey, commonName);
  caCert.setIssuer(caCert.subject.attributes);
  caCert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  caCert.sign(k.privateKey, forge.md.sha256.create());
  return {
    cert: forge.pki.certificateToPem(caCert),
    key: k.pem,
    issue(opts: IssueOptions): Pem {
      const leaf = keyPair();
      const cert = baseCert(leaf.publicKey, opts.commonName);
      cert.setIssuer(caCert.subject.attributes);
      const altNames = [
        ...(opts.dns ?? []).map((value) => ({ type: 2, value })),
        ...(opts.ips ?? []).map((ip) => ({ type: 7, ip })),
        ...(opts.uris ?? []).map((value) => ({ type: 6, value })),
      ];
      cert.setExtensions([
        { name: 'basicConstraints', cA: false },
        { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
        { name: 'extKeyUsage', serverAuth: opts.server ?? false, clientAuth: opts.client ?? false },
        ...(altNames.length > 0 ? [{ name: 'subjectAltName', altNames }] : []),
        { name: 'authorityKeyIdentifier', keyIdentifier: caCert.generateSubjectKeyIdentifier().getBytes() },
      ]);
      cert.sign(k.privateKey, forge.md.sha256.create());
      return { cert: forge.pki.certificateToPem(cert), key: leaf.pem };
    },
  };
}

/** The set every TLS test uses, made once per test file. */
export interface TestPki {
  ca: TestCa;
  /** Another CA: certificates from it must be refused. */
  otherCa: TestCa;
  /** Node n1, reachable as localhost / 127.0.0.1 (the names a real node certificate carries). */
  node: Pem;
  /** Node n1 from the other CA. */
  foreignNode: Pem;
  /** Signed by the right CA, but only for the name other.example (hostname mismatch on 127.0.0.1). */
  misnamedNode: Pem;
  /** Client identity urn:fencelock:client:tester. */
  client: Pem;
}

let cached: TestPki | undefined;

export function testPki(): TestPki {
  if (cached) return cached;
  const ca = makeCa('fencelock test CA');
  const otherCa = makeCa('some other CA');
  const nodeOpts: IssueOptions = { commonName: 'n1', dns: ['localhost', 'n1'], ips: ['127.0.0.1'], uris: ['urn:fencelock:node:n1'], server: true, client: true };
  cached = {
    ca,
    otherCa,
    node: ca.issue(nodeOpts),
    foreignNode: otherCa.issue(nodeOpts),
    misnamedNode: ca.issue({ commonName: 'other.example', dns: ['other.example'], uris: ['urn:fencelock:node:n1'], server: true }),
    client: ca.issue({ commonName: 'tester', uris: ['urn:fencelock:client:tester'], client: true }),
  };
  return cached;
}

/** Writes PEM files into dir and returns their paths. */
export function writePem(dir: string, files: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, pem] of Object.entries(files)) {
    const file = path.join(dir, name);
    fs.writeFileSync(file, pem, { mode: 0o600 });
    out[name] = file;
  }
  return out;
}

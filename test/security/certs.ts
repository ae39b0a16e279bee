// Certificates the security tests need beyond generateDevCerts: new leaves from a cluster's own CA (for
// rotation), and expired ones.
import { generateKeyPairSync, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import forge from 'node-forge';
import { issueLeaf, newSerialHex, type LeafRequest } from '../../src/certs/generate';

export interface Pem {
  certPem: string;
  keyPem: string;
}

interface LoadedCa {
  cert: forge.pki.Certificate;
  key: { privateKey: forge.pki.rsa.PrivateKey; publicKey: forge.pki.rsa.PublicKey; pem: string };
}

/** The cluster CA from `<dir>/ca.pem` and `<dir>/ca-key.pem`. */
export function loadCa(certsDir: string): LoadedCa {
  const cert = forge.pki.certificateFromPem(readFileSync(path.join(certsDir, 'ca.pem'), 'utf8'));
  const pem = readFileSync(path.join(certsDir, 'ca-key.pem'), 'utf8');
  const privateKey = forge.pki.privateKeyFromPem(pem) as forge.pki.rsa.PrivateKey;
  return { cert, key: { privateKey, publicKey: forge.pki.setRsaPublicKey(privateKey.n, privateKey.e), pem } };
}

/** A new leaf from the cluster's CA (what an operator rotating certificates would issue). */
export function issueFromCa(certsDir: string, req: LeafRequest): Pem {
  return issueLeaf(loadCa(certsDir), req);
}

/**
 * A leaf signed by the cluster CA whose validity ended yesterday (it began ten days ago); otherwise the same
 * as issueLeaf makes.
 */
export function expiredLeaf(certsDir: string, req: Omit<LeafRequest, 'days'>): Pem {
  const ca = loadCa(certsDir);
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const keyPem = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
  const key = forge.pki.privateKeyFromPem(keyPem) as forge.pki.rsa.PrivateKey;
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.setRsaPublicKey(key.n, key.e);
  cert.serialNumber = newSerialHex();
  const day = 86_400_000;
  cert.validity.notBefore = new Date(Date.now() - 10 * day);
  cert.validity.notAfter = new Date(Date.now() - day);
  cert.setSubject([{ name: 'commonName', value: req.commonName }, { name: 'organizationName', value: 'fencelock' }]);
  cert.setIssuer(ca.cert.subject.attributes);
  const names: object[] = [{ type: 6, value: req.uri }, ...req.hosts.map((h) => (/^\d+\.\d+\.\d+\.\d+$/.test(h) ? { type: 7, ip: h } : { type: 2, value: h }))];
  cert.setExtensions([
    { name: 'basicConstraints', cA: false, critical: true },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: req.server, clientAuth: true },
    { name: 'subjectAltName', altNames: names },
  ]);
  cert.sign(ca.key.privateKey, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem };
}

/** The serial number of a PEM certificate, as a number (Node and forge spell it differently). */
export function serialOf(certPem: string): bigint {
  return BigInt(`0x${new X509Certificate(certPem).serialNumber}`);
}

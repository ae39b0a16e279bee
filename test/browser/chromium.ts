// Headless Chromium (Debian's /usr/bin/chromium, scripts/ensure-chromium.sh) for the dashboard's tests and the
// screenshot script. The cluster's certificates come from its own CA, which Chromium does not know: it is told
// to accept exactly the nodes' public keys (their SPKI hashes), not every certificate. --no-sandbox because
// tests and CI run as root, where Chromium's sandbox refuses to start.
import { X509Certificate, createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import puppeteer, { type Browser } from 'puppeteer-core';

export const CHROMIUM = '/usr/bin/chromium';

/** The base64 SHA-256 of a certificate's SubjectPublicKeyInfo, as --ignore-certificate-errors-spki-list takes it. */
export function spkiHash(certFile: string): string {
  const der = new X509Certificate(readFileSync(certFile)).publicKey.export({ type: 'spki', format: 'der' });
  return createHash('sha256').update(der).digest('base64');
}

/** Launches headless Chromium trusting the certificates of these nodes (`<certsDir>/<id>.pem`). */
export function launchChromium(certsDir: string, nodeIds: string[]): Promise<Browser> {
  const pins = nodeIds.map((id) => spkiHash(path.join(certsDir, `${id}.pem`)));
  return puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', `--ignore-certificate-errors-spki-list=${pins.join(',')}`],
  });
}

// Issue 30, item 1: an application (or the CLI) run from a folder other than the checkout finds no
// data/certs/ca.pem there and trusts the system's roots, which do not know the local cluster's CA. That is no
// passing outage: the call fails at once (not after the 10 s retry budget), naming the CA trusted, where it came
// from, and FENCELOCK_CACERT / --cacert as the fix; following the hint then works.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateDevCerts } from '../../src/certs/generate';
import { FenceLockClient } from '../../src/client';
import { eventually, LocalCluster, PROJECT_ROOT, runNode } from '../integration/harness';

const CLIENT = path.join(PROJECT_ROOT, 'dist', 'src', 'client', 'index.js');
const CLI = path.join(PROJECT_ROOT, 'dist', 'src', 'cli', 'main.js');

/** An application: opens a session with the default retry budget (10 s), prints the outcome as JSON. */
const APP = `
const { FenceLockClient } = require(${JSON.stringify(CLIENT)});
const client = new FenceLockClient({ endpoints: process.env.FENCELOCK_ENDPOINTS.split(',') });
const start = performance.now();
client.withLock('untrusted', async (token) => token).then(
  (token) => console.log(JSON.stringify({ ok: true, token: String(token), source: client.credentialSource })),
  (err) => console.log(JSON.stringify({ ok: false, ms: performance.now() - start, code: err.code, reason: err.reason, indeterminate: err.indeterminate, message: err.message, source: client.credentialSource })),
).finally(() => client.close({ timeoutMs: 500 }));
`;

interface Outcome {
  ok: boolean;
  ms: number;
  code?: string;
  reason?: string;
  indeterminate?: boolean;
  message: string;
  source: string;
}

describe('a server certificate the client does not trust (a real TLS cluster, run from another folder)', () => {
  let cluster: LocalCluster | undefined;
  let elsewhere: string;
  let otherCa: string;
  // Nothing inherited from the harness: the application finds its CA by itself, as a newcomer's would.
  const clean = { FENCELOCK_CACERT: '', FENCELOCK_CERT: '', FENCELOCK_KEY: '', FENCELOCK_INSECURE: '' };

  beforeAll(async () => {
    elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'fencelock-app-'));
    fs.writeFileSync(path.join(elsewhere, 'app.cjs'), APP);
    const other = path.join(elsewhere, 'other-ca');
    await generateDevCerts(other, { nodes: ['x'], client: 'x' });
    otherCa = path.join(other, 'ca.pem');
    cluster = await LocalCluster.create();
    cluster.startAll();
    // Up and led first, so that the outcomes below come from TLS alone, not from a cluster still starting.
    const c = new FenceLockClient({ endpoints: cluster.endpoints, tls: { ca: path.join(cluster.certsDir!, 'ca.pem') }, totalTimeoutMs: 5_000 });
    try {
      await eventually(async () => (await c.status()).leader !== '' || undefined, 20_000, 'a leader');
    } finally {
      await c.close({ timeoutMs: 0 });
    }
  }, 120_000);

  afterAll(async () => {
    await cluster?.destroy();
    fs.rmSync(elsewhere, { recursive: true, force: true });
  });

  const run = async (env: Record<string, string>): Promise<Outcome & { stderr: string }> => {
    const r = await runNode(['app.cjs'], { cwd: elsewhere, env: { ...clean, FENCELOCK_ENDPOINTS: cluster!.endpoints.join(','), ...env }, timeoutMs: 30_000 });
    expect(r.code, r.stderr).toBe(0);
    return { ...(JSON.parse(r.stdout.trim().split('\n').pop()!) as Outcome), stderr: r.stderr };
  };

  it('with the system roots (no CA configured, none in the folder): fails in under a second, says so and names FENCELOCK_CACERT', async () => {
    const out = await run({});
    expect(out.ok).toBe(false);
    expect(out).toMatchObject({ code: 'UNAVAILABLE', reason: 'UNTRUSTED_CERTIFICATE', indeterminate: false, source: 'system-roots' });
    expect(out.ms).toBeLessThan(1_000);
    expect(out.message).toContain("it trusts the system's root CAs");
    expect(out.message).toContain('FENCELOCK_CACERT=');
    expect(out.message).toContain('--cacert');
    expect(out.message).toMatch(/self[- ]signed certificate|unable to (verify|get)/);
    process.stdout.write(`[untrusted] ${Math.round(out.ms)} ms: ${out.message}\n`);
  });

  it("with another cluster's CA in FENCELOCK_CACERT: names that file and the variable", async () => {
    const out = await run({ FENCELOCK_CACERT: otherCa });
    expect(out).toMatchObject({ ok: false, reason: 'UNTRUSTED_CERTIFICATE', source: 'env' });
    expect(out.ms).toBeLessThan(1_000);
    expect(out.message).toContain(`it trusts the CA in ${otherCa} (from FENCELOCK_CACERT)`);
  });

  it('following the hint (FENCELOCK_CACERT = the cluster CA) works from the same folder, without a DEP0123 warning', async () => {
    const out = await run({ FENCELOCK_CACERT: path.join(cluster!.certsDir!, 'ca.pem') });
    expect(out).toMatchObject({ ok: true, source: 'env' });
    // Issue 30, item 4: dialling 127.0.0.1 over TLS sets no server name, so Node has no DEP0123 to warn about.
    expect(out.stderr).not.toContain('DEP0123');
    expect(out.stderr).toBe('');
  });

  it('the CLI from that folder: exit 3 at once, the hint names --cacert and FENCELOCK_CACERT, not --endpoints', async () => {
    const started = performance.now();
    const r = await runNode([CLI, 'kv', 'get', 'x', '--endpoints', cluster!.endpoints.join(',')], { cwd: elsewhere, env: clean, timeoutMs: 30_000 });
    const ms = performance.now() - started;
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toContain("it trusts the system's root CAs");
    expect(r.stderr).toContain('--cacert FILE');
    expect(r.stderr).toContain('FENCELOCK_CACERT=');
    expect(r.stderr).not.toContain('--endpoints');
    expect(r.stderr).not.toContain('Resolution note');
    // A process start and a handshake, no retry budget (--timeout is 10 s by default).
    expect(ms).toBeLessThan(5_000);
    const viaFlag = await runNode([CLI, 'kv', 'get', 'x', '--cacert', otherCa, '--endpoints', cluster!.endpoints.join(',')], { cwd: elsewhere, env: clean, timeoutMs: 30_000 });
    expect(viaFlag.code).toBe(3);
    expect(viaFlag.stderr).toContain(`it trusts the CA in ${otherCa} (from --cacert)`);
    process.stdout.write(`[untrusted] CLI in ${Math.round(ms)} ms: ${r.stderr.trim()}\n`);
  });
});

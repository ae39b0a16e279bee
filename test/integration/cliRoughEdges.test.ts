// The `fencelock` command's failures and answers a person reads (issue 14): a stopped cluster or a lone node
// fails fast with which nodes answered and why the others did not; lock reports in JSON; describe says when
// the server keeps no record of a lock; `lock NAME cmd -l` hints at `--`; --version; `npx fencelock`.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FenceLockClient } from '../../src/client';
import { clusterWithLeader } from './clusterWithLeader';
import { eventually, LocalCluster, PROJECT_ROOT, runNode } from './harness';

const CLI = path.join(PROJECT_ROOT, 'dist/src/cli/main.js');
const GRPC_NOISE = /Resolution note|No connection established|Last error/;

/** Runs the CLI as a process; `ms`: how long it took, start to exit. */
async function fencelock(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  const start = Date.now();
  const res = await runNode([CLI, ...args], { timeoutMs: 30_000 });
  return { ...res, ms: Date.now() - start };
}

describe('a stopped cluster', () => {
  let cluster: LocalCluster;
  beforeAll(async () => {
    // Created, never started: every endpoint refuses connections.
    cluster = await LocalCluster.create();
  });
  afterAll(async () => {
    await cluster?.destroy();
  });

  it('fails within the deadline, saying every node refused the connection, in text and in JSON', async () => {
    const ep = cluster.endpoints.join(',');
    const text = await fencelock(['--endpoints', ep, '--timeout', '2000', 'describe', 'x']);
    expect(text.code).toBe(3);
    expect(text.stderr).toMatch(/^fencelock: describe lock "x": no leader: 0 of 3 nodes reachable; all refused connections \(/);
    for (const e of cluster.endpoints) expect(text.stderr).toContain(e);
    expect(text.stderr).toContain('Is the cluster running');
    expect(text.stderr).not.toMatch(GRPC_NOISE);
    // 2 s of retries, plus the process's own start (well under a second on an idle machine; generous here).
    expect(text.ms).toBeLessThan(2_000 + 2_500);

    const json = await fencelock(['--endpoints', ep, '--json', 'kv', 'get', 'k']);
    expect(json.code).toBe(3);
    expect(json.stderr).toBe('');
    const { error } = JSON.parse(json.stdout) as { error: Record<string, unknown> };
    expect(error).toMatchObject({ code: 'UNAVAILABLE', exitCode: 3 });
    expect(error.endpoints).toEqual(cluster.endpoints.map((endpoint) => ({ endpoint, fate: 'refused', detail: 'connection refused' })));
    // A read that failed changed nothing: no "indeterminate" for it.
    expect(error).not.toHaveProperty('indeterminate');
    // The default deadline is 3 s.
    expect(json.ms).toBeGreaterThanOrEqual(3_000);
    expect(json.ms).toBeLessThan(3_000 + 2_500);
  });

  it('a write refused by every node did not happen, and says so (indeterminate: false)', async () => {
    const res = await fencelock(['--endpoints', cluster.endpoints.join(','), '--timeout', '500', '--json', 'kv', 'put', 'k', 'v', '--lock', 'l', '--token', '5', '--session', 's']);
    expect(res.code).toBe(3);
    expect(JSON.parse(res.stdout).error).toMatchObject({ code: 'UNAVAILABLE', indeterminate: false });
  });
});

describe('a running cluster', () => {
  let cluster: LocalCluster;
  let client: FenceLockClient;
  let ep: string;

  beforeAll(async () => {
    ({ cluster, client } = await clusterWithLeader({}, 15_000));
    ep = cluster.endpoints.join(',');
  });

  afterAll(async () => {
    await client?.close();
    await cluster?.destroy();
  });

  it('lock --json prints one object after CMD: the token and CMD\'s exit code; a held lock and a missing CMD are JSON errors', async () => {
    const ran = await fencelock(['--endpoints', ep, '--json', 'lock', 'rough-json', '--', 'sh', '-c', 'exit 3']);
    expect(ran.code).toBe(3);
    const done = JSON.parse(ran.stdout) as { lock: string; token: string; exitCode: number };
    expect(done).toMatchObject({ lock: 'rough-json', exitCode: 3 });
    expect(BigInt(done.token)).toBeGreaterThan(0n);

    const session = await client.openSession({ ttlMs: 10_000 });
    const held = await session.acquire('rough-held');
    const busy = await fencelock(['--endpoints', ep, '--json', 'lock', 'rough-held', '--wait', '0', '--', 'sh', '-c', 'echo ran']);
    expect(busy.code).toBe(3);
    expect(busy.stderr).toBe('');
    // The holder is named by its public handle, client name ('-': none) and labels (host and pid by default).
    const holder = `session ${session.publicId} (- host=${os.hostname()} pid=${process.pid})`;
    expect(JSON.parse(busy.stdout)).toEqual({ error: { code: 'LOCK_HELD', reason: null, message: `lock "rough-held" is held by ${holder} (--wait 0); CMD was not run`, exitCode: 3 } });
    await held.release();
    await session.close();

    const missing = await fencelock(['--endpoints', ep, '--json', 'lock', 'rough-missing', '--', '/nonexistent/fencelock-cmd']);
    expect(missing.code).toBe(127);
    expect(JSON.parse(missing.stdout).error).toMatchObject({ code: 'CMD_NOT_FOUND', exitCode: 127 });
    expect((await client.describe('rough-missing')).held).toBe(false);
  });

  it('describe says when the server keeps no record (free, no waiters, no keys) and keeps the token of a lock that owns keys', async () => {
    const session = await client.openSession({ ttlMs: 10_000 });
    const idle = await session.acquire('rough-idle');
    const heldText = await fencelock(['--endpoints', ep, 'describe', 'rough-idle']);
    expect(heldText.stdout).toMatch(new RegExp(`^latest token: +${idle.token}\n`, 'm')); // values aligned after the longest label
    await idle.release();
    const gone = await fencelock(['--endpoints', ep, 'describe', 'rough-idle']);
    expect(gone.code).toBe(0);
    expect(gone.stdout).toContain('latest token: none kept: no record of this lock (never granted, or free, without waiters or keys, and forgotten; its last token is not kept)');
    expect(gone.stdout).not.toContain('never granted)');
    expect(JSON.parse((await fencelock(['--endpoints', ep, '--json', 'describe', 'rough-idle'])).stdout)).toMatchObject({ held: false, recorded: false, latestToken: '0' });

    const owner = await session.acquire('rough-owner');
    await owner.write([{ put: 'rough-owner/k', value: 'v' }]);
    await owner.release();
    const kept = await fencelock(['--endpoints', ep, '--json', 'describe', 'rough-owner']);
    expect(JSON.parse(kept.stdout)).toMatchObject({ held: false, recorded: true, latestToken: owner.token.toString() });
    await session.close();
  });

  it('a write under the wrong lock names the lock that owns the key', async () => {
    const session = await client.openSession({ ttlMs: 10_000 });
    const a = await session.acquire('rough-a');
    await a.write([{ put: 'rough-a/k', value: 'v' }]);
    const b = await session.acquire('rough-b');
    const res = await fencelock(['--endpoints', ep, 'kv', 'put', 'rough-a/k', 'w', '--lock', 'rough-b', '--token', b.token.toString(), '--session', session.id]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('WRONG_LOCK');
    expect(res.stderr).toContain('key "rough-a/k" belongs to lock "rough-a"');
    await session.close();
  });

  it('one node of three up: "no leader: 1 of 3 nodes reachable (n1)", the others refused, within the deadline', async () => {
    await cluster.kill('n2');
    await cluster.kill('n3');
    const n1 = cluster.node('n1').address;
    // n1 must know it leads no one (check-quorum) before the CLI asks, else it may still take the call.
    await eventually(async () => ((await client.status(n1)).leader === '' ? true : undefined), 15_000, 'n1 without a leader');
    const res = await fencelock(['--endpoints', ep, '--timeout', '2000', 'kv', 'get', 'k']);
    expect(res.code).toBe(3);
    const others = [cluster.node('n2').address, cluster.node('n3').address].join(', ');
    expect(res.stderr).toBe(`fencelock: get "k": no leader: 1 of 3 nodes reachable (n1); the others refused connections (${others}); gave up after 2000 ms (--timeout)\n`);
    expect(res.ms).toBeLessThan(2_000 + 2_500);
    const json = JSON.parse((await fencelock(['--endpoints', ep, '--timeout', '1000', '--json', 'describe', 'x'])).stdout) as { error: { endpoints: unknown[] } };
    expect(json.error.endpoints[0]).toEqual({ endpoint: n1, fate: 'answered', node: 'n1', detail: 'NOT_LEADER' });
  });

  it('a paused node (SIGSTOP) did not answer in time, the stopped ones refused: one phrase per endpoint', async () => {
    cluster.pause('n1');
    try {
      const [a, b, c] = cluster.endpoints;
      const res = await fencelock(['--endpoints', ep, '--timeout', '1500', 'describe', 'x']);
      expect(res.code).toBe(3);
      expect(res.stderr).toContain(`no leader: 0 of 3 nodes reachable; ${a} did not answer in time, ${b} refused the connection, ${c} refused the connection;`);
      // The connection still opening to the paused node does not keep the process alive after the answer.
      expect(res.ms).toBeLessThan(1_500 + 2_500);
    } finally {
      cluster.resume('n1');
    }
  });
});

describe('the command line itself', () => {
  it('--version prints the package version, also as `npx fencelock` from the clone', async () => {
    const { version } = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string };
    expect((await fencelock(['--version'])).stdout).toBe(`${version}\n`);
    const { stdout } = await promisify(execFile)('npx', ['--offline', '--no-install', 'fencelock', '--version'], { cwd: PROJECT_ROOT, timeout: 60_000 });
    expect(stdout).toBe(`${version}\n`);
  });

  it('lock NAME cmd -l: the unknown option belongs to CMD, and the error says to put -- before it', async () => {
    const res = await fencelock(['lock', 'invoices', 'ls', '-l']);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain("error: unknown option '-l'\nput -- before the command: fencelock lock invoices -- ls -l\n");
    const withOptions = await fencelock(['--json', 'lock', 'invoices', '--wait', '0', 'grep', '-r', 'x y']);
    expect(JSON.parse(withOptions.stdout).error.message).toBe("unknown option '-r'\nput -- before the command: fencelock lock invoices --json --wait 0 -- grep -r 'x y'");
  });

  it('--help says how to run it from a clone', async () => {
    const help = await fencelock(['--help']);
    expect(help.stdout).toContain('`npx fencelock ...`');
    expect(help.stdout).toContain('`node dist/src/cli/main.js ...`');
  });
});

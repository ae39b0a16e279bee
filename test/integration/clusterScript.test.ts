// `npm run cluster` (scripts/cluster.ts) over real node processes, in a folder and on ports of its own
// (FENCELOCK_CLUSTER_ROOT): arguments checked before anything happens, a node that cannot start reported
// with its log, status from the nodes themselves, and a clean stop of the whole cluster.
import { execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FenceLockClient } from '../../src/client';
import { ensureDevCerts } from '../../src/certs/devCluster';
import { eventually, PROJECT_ROOT, stablePorts } from './harness';

const SCRIPT = path.join(PROJECT_ROOT, 'dist/scripts/cluster.js');
const IDS = ['n1', 'n2', 'n3'];

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

let root: string;
let ports: number[];

function cluster(...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, [SCRIPT, ...args], { env: { ...process.env, FENCELOCK_CLUSTER_ROOT: root }, timeout: 90_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** cluster/node1..3.json as the shipped ones are, on this test's ports. */
function writeConfigs(): void {
  const members = Object.fromEntries(IDS.map((id, i) => [id, { client: `127.0.0.1:${ports[i]}`, peer: `127.0.0.1:${ports[i + 3]}` }]));
  mkdirSync(path.join(root, 'cluster'), { recursive: true });
  IDS.forEach((id, i) => {
    const tls = { ca: '../data/certs/ca.pem', cert: `../data/certs/${id}.pem`, key: `../data/certs/${id}-key.pem` };
    const config = { id, listen: members[id]!.client, peerListen: members[id]!.peer, members, tls, auth: { enabled: false }, dataDir: `../data/${id}`, logLevel: 'debug' };
    writeFileSync(path.join(root, 'cluster', `node${i + 1}.json`), JSON.stringify(config, null, 2));
  });
}

const log = (id: string): string => readFileSync(path.join(root, 'data', 'run', `${id}.log`), 'utf8');

beforeAll(async () => {
  root = mkdtempSync(path.join(os.tmpdir(), 'fencelock-cluster-script-'));
  ports = await stablePorts(6);
  writeConfigs();
  await ensureDevCerts(root);
});

afterEach(async () => {
  // Whatever a test started is stopped (SIGKILL of what a failed stop left behind).
  await cluster('stop');
  await Promise.all(IDS.map((id) => cluster('kill', id)));
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('npm run cluster: arguments', () => {
  it('pause without an id is a usage error (exit 2), not "undefined is not running"', async () => {
    const r = await cluster('pause');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('pause needs a node id (n1, n2, n3)');
    expect(r.stderr).toContain('usage: npm run cluster');
    expect(r.stdout).not.toContain('undefined');
  });

  it('an unknown id, an unknown command, a stray argument or option: exit 2', async () => {
    const unknownId = await cluster('kill', 'n9');
    expect(unknownId.code).toBe(2);
    expect(unknownId.stderr).toContain('unknown node "n9": this cluster has n1, n2, n3');
    for (const args of [['frobnicate'], ['status', 'n1'], ['stop', 'n1', 'n2'], ['start', '--fast']]) {
      const r = await cluster(...args);
      expect({ args, code: r.code }).toEqual({ args, code: 2 });
    }
  });
});

describe('npm run cluster: real processes', () => {
  it('start waits until every node serves; status shows the roles the nodes report; stop is clean', async () => {
    const started = await cluster('start');
    expect(started.stderr).toBe('');
    expect(started.code).toBe(0);
    for (const id of IDS) expect(started.stdout).toMatch(new RegExp(`^${id} serving \\(pid \\d+\\)`, 'm'));

    const status = await cluster('status');
    expect(status.code).toBe(0);
    const roles = IDS.map((id) => new RegExp(`^${id} +\\S+ +(leader|follower) +\\d+ +(n\\d)`, 'm').exec(status.stdout));
    expect(roles.map((m) => m?.[1]).sort()).toEqual(['follower', 'follower', 'leader']);
    const leader = IDS[roles.findIndex((m) => m?.[1] === 'leader')]!;
    expect(new Set(roles.map((m) => m?.[2]))).toEqual(new Set([leader]));

    // A paused node answers nothing: status says so instead of "running".
    const follower = IDS.find((id) => id !== leader)!;
    expect((await cluster('pause', follower)).code).toBe(0);
    const paused = await cluster('status');
    expect(paused.stdout).toMatch(new RegExp(`^- +127\\.0\\.0\\.1:${ports[IDS.indexOf(follower)]} +unreachable`, 'm'));
    expect(paused.stdout).toMatch(new RegExp(`^${follower} \\S+ paused \\(pid \\d+\\)`, 'm'));
    expect((await cluster('resume', follower)).code).toBe(0);

    const stopped = await cluster('stop');
    expect(stopped.code).toBe(0);
    // Followers first, the leader last: it hands leadership to nobody who is stopping, and nobody warns.
    expect(stopped.stdout.trim().split('\n').at(-1)).toBe(`${leader} stopped`);
    expect(log(leader)).not.toContain('transferring leadership before shutdown');
    for (const id of IDS) expect(log(id)).not.toContain('peer stream broke');
    expect(log(leader)).toContain('peer ended its stream (it is stopping)');
    const after = await cluster('status');
    expect(after.code).toBe(1);
    for (const id of IDS) expect(after.stdout).toMatch(new RegExp(`^${id} \\S+ not running`, 'm'));
  });

  it('start fails (exit 1) when a node dies at once, and shows the cause from its log', async () => {
    // Holds n1's client port; connections are dropped at once (an unread socket would keep close() waiting).
    const squatter = net.createServer((socket) => socket.destroy());
    await new Promise<void>((resolve, reject) => {
      squatter.once('error', reject);
      squatter.listen(ports[0], '127.0.0.1', resolve);
    });
    try {
      const r = await cluster('start');
      expect(r.code).toBe(1);
      expect(r.stdout).not.toMatch(/^n1 serving/m);
      expect(r.stderr).toMatch(/^n1 did not start: exited with code \d+; the last lines of data\/run\/n1\.log:/m);
      expect(r.stderr).toMatch(/EADDRINUSE|address already in use/);
      // The other two are a majority: they came up, and say so.
      expect(r.stdout).toMatch(/^n2 serving/m);
      expect(r.stdout).toMatch(/^n3 serving/m);
    } finally {
      await new Promise((resolve) => squatter.close(resolve));
    }
  });

  it('in the foreground: plain text into a pipe (no colours); Ctrl-C stops the followers, then the leader, with no handover', async () => {
    const child = spawn(process.execPath, [SCRIPT], { env: { ...process.env, FENCELOCK_CLUSTER_ROOT: root, NO_COLOR: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    const client = new FenceLockClient({ endpoints: ports.slice(0, 3).map((p) => `127.0.0.1:${p}`), tls: { ca: path.join(root, 'data', 'certs', 'ca.pem') }, totalTimeoutMs: 2_000 });
    try {
      const leader = await eventually(async () => (await client.statusAll()).find((r) => r.ok && r.status.role === 'leader'), 30_000, 'a leader');
      const leaderId = leader.ok ? leader.status.id : '';
      // What a terminal's Ctrl-C does to the script (the nodes are in process groups of their own).
      child.kill('SIGINT');
      expect(await exited).toBe(0);
      expect(out).not.toContain('\x1b[');
      expect(out).toMatch(/^\[n1\] /m);
      expect(out).not.toContain('transferring leadership before shutdown');
      const exits = [...out.matchAll(/^\[(n\d)\] exited/gm)].map((m) => m[1]);
      expect(exits.sort()).toEqual([...IDS].sort());
      expect([...out.matchAll(/^\[(n\d)\] exited/gm)].at(-1)?.[1]).toBe(leaderId);
    } finally {
      await client.close({ timeoutMs: 0 });
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }, 60_000);
});

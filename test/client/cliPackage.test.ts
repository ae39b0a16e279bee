// Issue 30, item 2: the CLI is a package of its own. `npm pack` in packages/cli builds it (prepack) with its
// runtime dependencies bundled; `npm install -g --prefix DIR --offline` from the tarball puts `fencelock` on
// PATH with no registry; that installed command makes the certificates, runs all three nodes (`fencelock
// serve`) and takes a lock around a command that writes under it, from a folder of its own.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, freePorts, PROJECT_ROOT } from '../integration/harness';

const PACKAGE_DIR = path.join(PROJECT_ROOT, 'packages', 'cli');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

describe('the @fencelock/cli package, installed from its tarball into a fresh prefix', () => {
  let tmp: string;
  let prefix: string;
  let home: string;
  let env: NodeJS.ProcessEnv;
  let endpoints: string;
  let packed: { filename: string; entryCount: number; bundled: string[] };
  const nodes: ChildProcess[] = [];

  /** The installed `fencelock`, found on PATH like any command, run in the operator's folder. */
  const fencelock = (args: string[], timeoutMs = 30_000): Promise<Run> =>
    new Promise((resolve, reject) => {
      const child = spawn('fencelock', args, { cwd: home, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`timed out: fencelock ${args.join(' ')}\n${stdout}\n${stderr}`));
      }, timeoutMs);
      child.on('error', reject);
      child.on('exit', (code) => {
        clearTimeout(timer);
        resolve({ code, stdout, stderr });
      });
    });

  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'fencelock-clipkg-'));
    const out = execFileSync('npm', ['pack', '--json', '--pack-destination', tmp], { cwd: PACKAGE_DIR, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 240_000 });
    [packed] = JSON.parse(out) as [typeof packed];
    prefix = path.join(tmp, 'prefix');
    // --offline: anything not in the tarball would fail the install instead of being fetched.
    execFileSync('npm', ['install', '-g', '--prefix', prefix, '--offline', '--no-audit', '--no-fund', path.join(tmp, packed.filename)], {
      cwd: tmp,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 180_000,
    });
    home = path.join(tmp, 'ops');
    fs.mkdirSync(home);
    // Only the prefix and node itself on PATH; no FENCELOCK_* inherited from other tests of this process.
    const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('FENCELOCK_') && k !== 'PATH'));
    env = { ...inherited, PATH: [path.join(prefix, 'bin'), path.dirname(process.execPath), '/usr/bin', '/bin'].join(path.delimiter) };
  }, 480_000);

  afterAll(async () => {
    await Promise.all(
      nodes.map(
        (n) =>
          new Promise<void>((resolve) => {
            if (n.exitCode !== null || n.signalCode !== null) return resolve();
            const t = setTimeout(() => n.kill('SIGKILL'), 5_000);
            n.once('exit', () => {
              clearTimeout(t);
              resolve();
            });
            n.kill('SIGTERM');
          }),
      ),
    );
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
    // The tree holds the installed package with its bundled dependencies: removing it took 12 s on a loaded
    // machine (the nodes had stopped in 0.25 s), past the default 10 s hook timeout.
  }, 60_000);

  it('packs as fencelock-cli-X.tgz with its dependencies bundled, and `fencelock --version` runs from PATH', async () => {
    expect(packed.filename).toMatch(/^fencelock-cli-\d+\.\d+\.\d+\.tgz$/);
    expect(packed.bundled).toEqual(expect.arrayContaining(['@grpc/grpc-js', 'commander', 'level', 'pino']));
    expect(fs.existsSync(path.join(prefix, 'bin', 'fencelock'))).toBe(true);
    const v = await fencelock(['--version']);
    expect(v.code).toBe(0);
    expect(v.stdout.trim()).toBe(JSON.parse(fs.readFileSync(path.join(PACKAGE_DIR, 'package.json'), 'utf8')).version);
  });

  it('runs a cluster (`certs init`, three `serve`) and a lock cycle with a fenced write, all by the installed command', async () => {
    const certs = path.join(home, 'data', 'certs');
    const init = await fencelock(['certs', 'init', certs, '--nodes', 'n1,n2,n3', '--client', 'ops']);
    expect(init.code, init.stderr).toBe(0);
    const ports = await freePorts(6);
    const members = Object.fromEntries(['n1', 'n2', 'n3'].map((id, i) => [id, { client: `127.0.0.1:${ports[i]}`, peer: `127.0.0.1:${ports[i + 3]}` }]));
    endpoints = Object.values(members).map((m) => m.client).join(',');
    for (const [i, id] of ['n1', 'n2', 'n3'].entries()) {
      const config = {
        id,
        listen: members[id]!.client,
        peerListen: members[id]!.peer,
        members,
        tls: { ca: 'data/certs/ca.pem', cert: `data/certs/${id}.pem`, key: `data/certs/${id}-key.pem` },
        dataDir: `data/${id}`,
        logLevel: 'warn',
        auth: { enabled: false },
      };
      const file = path.join(home, `node${i + 1}.json`);
      fs.writeFileSync(file, JSON.stringify(config, null, 2));
      nodes.push(spawn('fencelock', ['serve', '--config', file], { cwd: home, env, stdio: 'ignore' }));
    }
    // The CLI finds data/certs/ca.pem (and the client certificate) under its working folder by itself.
    await eventually(async () => ((await fencelock(['status', '--endpoints', endpoints, '--json'])).code === 0 ? true : undefined), 60_000, 'a leader');

    const job = await fencelock(['lock', 'nightly', '--endpoints', endpoints, '--', 'sh', '-c', 'fencelock kv put nightly/last "token $FENCELOCK_TOKEN"']);
    expect(job.code, job.stderr).toBe(0);
    const got = await fencelock(['kv', 'get', 'nightly/last', '--endpoints', endpoints, '--json']);
    expect(got.code, got.stderr).toBe(0);
    const value = JSON.parse(got.stdout) as { key: string; lock: string; token: string; value: string };
    expect(value).toMatchObject({ key: 'nightly/last', lock: 'nightly', value: `token ${value.token}` });
    const described = await fencelock(['describe', 'nightly', '--endpoints', endpoints, '--json']);
    expect(described.code, described.stderr).toBe(0);
    expect(JSON.parse(described.stdout)).toMatchObject({ held: false, latestToken: value.token });
    process.stdout.write(`[cli package] ${packed.filename} (${packed.entryCount} files): fencelock kv get -> ${got.stdout.trim()}\n`);
  }, 180_000);
});

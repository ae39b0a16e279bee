// Temporary MariaDB and Redis servers for the fencing tests' global setup, like its PostgreSQL: installed by
// scripts/ensure-mariadb.sh and scripts/ensure-redis.sh when missing, started on 127.0.0.1 and a free port
// with their data in a temp dir of their own, stopped and removed at teardown. Fail loudly, never skip.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import mysql from 'mysql2/promise';
import { freePorts } from '../integration/harness';

export interface Daemon {
  url: string;
  stop(): Promise<void>;
}

const SBIN_PATH = `${process.env.PATH ?? ''}:/usr/local/sbin:/usr/sbin:/sbin`;

export function runEnsureScript(name: string, what: string): void {
  const script = path.resolve(__dirname, '../../scripts', name);
  try {
    execFileSync('bash', [script], { stdio: ['ignore', 'inherit', 'inherit'] });
  } catch (err) {
    throw new Error(`the fencing tests need ${what}: scripts/${name} failed (${(err as Error).message.split('\n')[0]})`);
  }
}

function which(cmd: string): string {
  for (const dir of SBIN_PATH.split(':')) if (dir && existsSync(path.join(dir, cmd))) return path.join(dir, cmd);
  throw new Error(`${cmd} is not installed (looked in ${SBIN_PATH})`);
}

function tail(file: string): string {
  return existsSync(file) ? readFileSync(file, 'utf8').slice(-2000) : '(no log)';
}

async function waitUntil(what: string, child: ChildProcess, logFile: string, probe: () => Promise<void>): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${what} exited (${child.exitCode ?? child.signalCode}):\n${tail(logFile)}`);
    try {
      return await probe();
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`${what} did not accept connections within 60 s: ${(err as Error).message}\n${tail(logFile)}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

async function stopChild(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

/** Runs `start` and, when it throws, the cleanup it registered before failing. */
async function startOrClean(dir: string, child: () => ChildProcess | undefined, start: () => Promise<Daemon>): Promise<Daemon> {
  try {
    return await start();
  } catch (err) {
    const c = child();
    if (c) await stopChild(c, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

/**
 * mariadb-install-db into a temp dir, then mariadbd on 127.0.0.1 (as the `mysql` user when we are root).
 * Grant tables are skipped: the server listens on loopback only, lives for one test run, and the tests connect
 * as root without a password.
 */
export async function startMariaDb(): Promise<Daemon> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'fencelock-mariadb-'));
  let child: ChildProcess | undefined;
  return startOrClean(dir, () => child, async () => {
    const root = process.getuid?.() === 0;
    const user = root ? { uid: Number(execFileSync('id', ['-u', 'mysql']).toString()), gid: Number(execFileSync('id', ['-g', 'mysql']).toString()) } : undefined;
    if (user) chownSync(dir, user.uid, user.gid);
    chmodSync(dir, 0o700);
    const data = path.join(dir, 'data');
    const userArgs = root ? ['--user=mysql'] : [];
    execFileSync(which('mariadb-install-db'), ['--no-defaults', `--datadir=${data}`, '--auth-root-authentication-method=normal', '--skip-test-db', ...userArgs], {
      cwd: dir,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const [port] = await freePorts(1);
    const logFile = path.join(dir, 'mariadb.log');
    const log = openSync(logFile, 'a');
    if (user) chownSync(logFile, user.uid, user.gid);
    child = spawn(
      which('mariadbd'),
      [
        '--no-defaults',
        `--datadir=${data}`,
        `--socket=${path.join(dir, 'mariadb.sock')}`,
        `--pid-file=${path.join(dir, 'mariadb.pid')}`,
        '--bind-address=127.0.0.1',
        `--port=${port}`,
        '--skip-grant-tables',
        '--skip-name-resolve',
        '--skip-log-bin',
        '--innodb-buffer-pool-size=64M',
        '--max-connections=300',
        `--log-error=${logFile}`,
        ...userArgs,
      ],
      { cwd: dir, stdio: ['ignore', log, log] },
    );
    closeSync(log);
    const url = `mysql://root@127.0.0.1:${port}/mysql`;
    const server = child;
    await waitUntil('mariadbd', server, logFile, async () => {
      const c = await mysql.createConnection({ uri: url });
      await c.query('SELECT 1');
      await c.end();
    });
    return {
      url,
      stop: async () => {
        await stopChild(server, 'SIGTERM');
        rmSync(dir, { recursive: true, force: true });
      },
    };
  });
}

/** One PING over a plain socket: the setup needs no Redis client for it. */
function redisPing(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1');
    let got = '';
    s.setTimeout(2_000, () => s.destroy(new Error('PING timed out')));
    s.on('connect', () => s.write('PING\r\n'));
    s.on('data', (d) => {
      got += d.toString();
      if (got.includes('\r\n')) {
        s.end();
        if (got.startsWith('+PONG')) resolve();
        else reject(new Error(`PING answered ${JSON.stringify(got)}`));
      }
    });
    s.on('error', reject);
  });
}

/** redis-server on 127.0.0.1, no persistence, its working dir a temp dir. */
export async function startRedis(): Promise<Daemon> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'fencelock-redis-'));
  let child: ChildProcess | undefined;
  return startOrClean(dir, () => child, async () => {
    const [port] = await freePorts(1);
    const logFile = path.join(dir, 'redis.log');
    const log = openSync(logFile, 'a');
    child = spawn(which('redis-server'), ['--bind', '127.0.0.1', '--port', String(port), '--dir', dir, '--save', '', '--appendonly', 'no', '--daemonize', 'no'], {
      cwd: dir,
      stdio: ['ignore', log, log],
    });
    closeSync(log);
    const server = child;
    await waitUntil('redis-server', server, logFile, () => redisPing(port));
    return {
      url: `redis://127.0.0.1:${port}`,
      stop: async () => {
        await stopChild(server, 'SIGTERM');
        rmSync(dir, { recursive: true, force: true });
      },
    };
  });
}

// Global setup of the vitest 'fencing' project: real PostgreSQL, MariaDB and Redis servers for the tests to run
// every rule against (besides PGlite); MariaDB and Redis are started by ./daemons.ts the same way. scripts/ensure-postgres.sh installs Debian's postgresql when missing; this initdb's
// a temporary cluster and starts `postgres` on 127.0.0.1 and a free port, as the `postgres` system user when
// run as root (postgres refuses to run as root). Fails loudly, never skips. Teardown stops it and removes it.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, closeSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { freePorts } from '../integration/harness';
import { runEnsureScript, startMariaDb, startRedis, type Daemon } from './daemons';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The temporary server's superuser URL. */
    postgresUrl: string;
    /** The temporary MariaDB server's root URL (test/fencing/daemons.ts). */
    mariadbUrl: string;
    /** The temporary Redis server's URL. */
    redisUrl: string;
  }
}

function pgBin(): string {
  const base = '/usr/lib/postgresql';
  const versions = readdirSync(base).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a));
  if (versions.length === 0) throw new Error(`no PostgreSQL under ${base}`);
  return path.join(base, versions[0]!, 'bin');
}

/** Who runs the server: the current user, or `postgres` when we are root. */
function serverUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
  return { uid, gid };
}

async function waitReady(url: string, child: ChildProcess, logFile: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`postgres exited (${child.exitCode ?? child.signalCode}):\n${readFileSync(logFile, 'utf8').slice(-2000)}`);
    const c = new pg.Client({ connectionString: url });
    try {
      await c.connect();
      await c.query('SELECT 1');
      await c.end();
      return;
    } catch (err) {
      await c.end().catch(() => undefined);
      if (Date.now() > deadline) throw new Error(`postgres did not accept connections within 30 s: ${(err as Error).message}\n${readFileSync(logFile, 'utf8').slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const script = path.resolve(__dirname, '../../scripts/ensure-postgres.sh');
  try {
    execFileSync('bash', [script], { stdio: ['ignore', 'inherit', 'inherit'] });
  } catch (err) {
    throw new Error(`the fencing tests need PostgreSQL: scripts/ensure-postgres.sh failed (${(err as Error).message.split('\n')[0]})`);
  }
  const bin = pgBin();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'fencelock-pg-'));
  const user = serverUser();
  if (user) chownSync(dir, user.uid, user.gid);
  chmodSync(dir, 0o700);
  const data = path.join(dir, 'data');
  const asUser = user ? { uid: user.uid, gid: user.gid } : {};
  execFileSync(path.join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync'], {
    ...asUser,
    cwd: dir,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const [port] = await freePorts(1);
  const logFile = path.join(dir, 'postgres.log');
  const log = openSync(logFile, 'a');
  if (user) chownSync(logFile, user.uid, user.gid);
  // Loopback TCP only; the unix socket goes into our own folder. fsync stays on (the server's default).
  const child = spawn(path.join(bin, 'postgres'), ['-D', data, '-h', '127.0.0.1', '-p', String(port), '-k', dir, '-c', 'max_connections=200'], {
    ...asUser,
    cwd: dir,
    stdio: ['ignore', log, log],
  });
  closeSync(log);
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGINT'); // fast shutdown
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitReady(url, child, logFile);
  } catch (err) {
    await stop();
    throw err;
  }
  project.provide('postgresUrl', url);
  const others: Daemon[] = [];
  const stopAll = async (): Promise<void> => {
    await Promise.all(others.map((d) => d.stop()));
    await stop();
  };
  try {
    runEnsureScript('ensure-mariadb.sh', 'MariaDB');
    runEnsureScript('ensure-redis.sh', 'Redis');
    const started = await Promise.allSettled([startMariaDb(), startRedis()]);
    for (const s of started) if (s.status === 'fulfilled') others.push(s.value);
    const failed = started.find((s) => s.status === 'rejected');
    if (failed) throw failed.reason;
    const [mariadb, redis] = others as [Daemon, Daemon];
    project.provide('mariadbUrl', mariadb.url);
    project.provide('redisUrl', redis.url);
  } catch (err) {
    await stopAll();
    throw err;
  }
  return stopAll;
}

// `fencelock check-resource` against MariaDB rows and Redis keys, as a real process with real tokens from a
// real fencelock cluster, on the servers of the fencing project's global setup: every rule holds against a
// correct resource (exit 0, nothing but the fencing state changed) and a broken one is named (exit 9).
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { FenceLockClient } from '../../src/client';
import { mysqlFencing, redisFencing } from '../../src/fencing';
import { clusterWithLeader } from '../integration/clusterWithLeader';
import { freePorts, LocalCluster, runNode } from '../integration/harness';
import { CLI_MAIN } from './proxyProcess';

const BASE_CHECKS = ['tokens', 'newer-applies', 'stale-refused', 'retry-replayed', 'higher-step', 'same-step-refused', 'lower-step-refused', 'other-lock-refused'];
const RESTORE_CHECKS = ['restore-raise', 'after-raise-next-grant'];

interface Row {
  check: string;
  claim?: { lock: string; token: string; step: string; operationId: string };
  observed: string;
  held: boolean;
}
interface Report {
  target: { kind: string; resource: string };
  held: boolean;
  checks: Row[];
}

let cluster: LocalCluster;
let client: FenceLockClient;
/** A database of this file's own on the MariaDB server, and a pool on it. */
let dbName: string;
let dbUrl: string;
let pool: mysql.Pool;
let redis: Redis;
/** This file's Redis keys all start with it. */
const prefix = `check_${randomBytes(6).toString('hex')}:`;

beforeAll(async () => {
  ({ cluster, client } = await clusterWithLeader({ size: 1 }, 30_000));
  dbName = `check_${randomBytes(6).toString('hex')}`;
  const admin = await mysql.createConnection({ uri: inject('mariadbUrl') });
  await admin.query(`CREATE DATABASE ${dbName}`);
  await admin.end();
  const url = new URL(inject('mariadbUrl'));
  url.pathname = `/${dbName}`;
  dbUrl = url.href;
  pool = mysql.createPool({ uri: dbUrl, connectionLimit: 4 });
  redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 });
});
afterAll(async () => {
  await pool?.query(`DROP DATABASE ${dbName}`);
  await pool?.end();
  if (redis) {
    const keys = [...(await redis.keys(`${prefix}*`)), ...(await redis.keys(`fencing:*${prefix}*`))];
    if (keys.length) await redis.del(...keys);
    await redis.quit();
  }
  await client?.close();
  await cluster?.destroy();
});

const sql = async (text: string, params: unknown[] = []): Promise<Record<string, unknown>[]> => (await pool.query(text, params))[0] as Record<string, unknown>[];

function checkResource(lock: string, args: string[], opts: { json?: boolean; env?: Record<string, string> } = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const globals = ['--endpoints', cluster.endpoints.join(','), '--timeout', '10000', ...(opts.json === false ? [] : ['--json'])];
  return runNode([CLI_MAIN, ...globals, 'check-resource', '--lock', lock, ...args], { timeoutMs: 120_000, env: opts.env });
}

const report = (stdout: string): Report => JSON.parse(stdout) as Report;
const byName = (r: Report): Record<string, Row> => Object.fromEntries(r.checks.map((c) => [c.check, c]));
const failing = (r: Report): string[] => r.checks.filter((c) => !c.held).map((c) => c.check);

/** The tokens of the grants the checks used, in the order the cluster issued them; the last is the row's watermark. */
function grantTokens(r: Report): bigint[] {
  const c = byName(r);
  const tokens = ['stale-refused', 'newer-applies', 'other-lock-refused', 'after-raise-next-grant'].map((n) => BigInt(c[n]!.claim!.token));
  expect([...tokens].sort((a, b) => (a < b ? -1 : 1))).toEqual(tokens);
  expect(new Set(tokens).size).toBe(4);
  return tokens;
}

async function mariadbTable(name: string): Promise<void> {
  await sql(`CREATE TABLE ${name} (id INT PRIMARY KEY, owner VARCHAR(40) NOT NULL, balance BIGINT NOT NULL)`);
  await mysqlFencing.ensureFencingSchema(mysqlFencing.mysqlPoolDatabase(pool), [name]);
  // Row 0 is the dedicated row of the checks; row 1 is the application's and must stay as it is.
  await sql(`INSERT INTO ${name} (id, owner, balance) VALUES (0, 'check', 0), (1, 'ann', 100)`);
}

describe('check-resource --mysql and --redis against correct resources: every rule holds, exit 0', () => {
  it('a MariaDB row through the mysql2 helpers, with the restore raise; its business columns and the other rows untouched', async () => {
    await mariadbTable('account');
    const res = await checkResource('check/mysql', ['--mysql', dbUrl, '--table', 'account', '--row', '0', '--include-restore']);
    expect(res.code, res.stderr + res.stdout).toBe(0);
    const r = report(res.stdout);
    expect(r.target).toEqual({ kind: 'mysql', resource: 'table account, id = 0' });
    expect(r.checks.map((c) => c.check)).toEqual([...BASE_CHECKS, ...RESTORE_CHECKS]);
    expect(failing(r)).toEqual([]);
    const c = byName(r);
    expect(c['stale-refused']!.observed).toMatch(/^STALE \(watermark \d+\)$/);
    expect(c['retry-replayed']!.observed).toMatch(/^REPLAYED \(fence \d+, step 1\)$/);
    expect(c['other-lock-refused']!.observed).toBe('WRONG_LOCK (bound to check/mysql)');
    expect(c['restore-raise']!.observed).toMatch(/^STALE/);
    const last = grantTokens(r)[3]!;
    expect(await sql('SELECT id, owner, balance, CAST(fence AS CHAR) AS fence, fence_lock, CAST(fence_step AS CHAR) AS step FROM account ORDER BY id')).toEqual([
      { id: 0, owner: 'check', balance: 0, fence: last.toString(), fence_lock: 'check/mysql', step: '1' },
      { id: 1, owner: 'ann', balance: 100, fence: '0', fence_lock: null, step: '0' },
    ]);
    expect(await sql('SELECT DISTINCT resource FROM fencing_operations')).toEqual([{ resource: 'row:account:id:0' }]);

    // Again, as a table, the key spelled as MariaDB also reads it: the same row, later grants.
    const text = await checkResource('check/mysql', ['--mysql', dbUrl, '--table', 'account', '--row', '00', '--include-restore'], { json: false });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^CHECK +TOKEN\/STEP +EXPECTED +OBSERVED +HELD$/m);
    expect(text.stdout).toMatch(/all 10 checks held/);
    expect(await sql('SELECT DISTINCT resource FROM fencing_operations')).toEqual([{ resource: 'row:account:id:0' }]);
    console.log(`mysql:\n${text.stdout}`);
  });

  it('a Redis key through the fencing script, with the restore raise; its value and the other keys untouched', async () => {
    const key = `${prefix}account:0`;
    const other = `${prefix}account:1`;
    await redis.set(key, 'balance=0');
    await redis.set(other, 'balance=100');
    const res = await checkResource('check/redis', ['--redis', inject('redisUrl'), '--redis-key', key, '--include-restore']);
    expect(res.code, res.stderr + res.stdout).toBe(0);
    const r = report(res.stdout);
    expect(r.target).toEqual({ kind: 'redis', resource: `key ${JSON.stringify(key)}` });
    expect(r.checks.map((c) => c.check)).toEqual([...BASE_CHECKS, ...RESTORE_CHECKS]);
    expect(failing(r)).toEqual([]);
    const c = byName(r);
    expect(c['stale-refused']!.observed).toMatch(/^STALE \(watermark \d+\)$/);
    expect(c['retry-replayed']!.observed).toMatch(/^REPLAYED \(fence \d+, step 1\)$/);
    expect(c['other-lock-refused']!.observed).toBe('WRONG_LOCK (bound to check/redis)');
    const last = grantTokens(r)[3]!;
    expect(await redis.get(key)).toBe('balance=0');
    expect(await redis.hgetall(redisFencing.markKey(key))).toEqual({ lock: 'check/redis', fence: last.toString(), step: '1' });
    expect(await redis.get(other)).toBe('balance=100');
    expect(await redis.exists(redisFencing.markKey(other))).toBe(0);

    const text = await checkResource('check/redis', ['--redis', inject('redisUrl'), '--redis-key', key, '--include-restore'], { json: false });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/all 10 checks held/);
    expect(await redis.get(key)).toBe('balance=0');
    console.log(`redis:\n${text.stdout}`);
  });
});

describe('check-resource --mysql and --redis against broken resources: the rules that did not hold are named, exit 9', () => {
  it('a MariaDB table whose trigger puts the fence back (as an ORM saving a stale copy of the row would): stale writes get through', async () => {
    await mariadbTable('ledger');
    await sql('CREATE TRIGGER ledger_orm_save BEFORE UPDATE ON ledger FOR EACH ROW SET NEW.fence = 0, NEW.fence_step = 0');
    const res = await checkResource('check/mysql-broken', ['--mysql', dbUrl, '--table', 'ledger', '--row', '0', '--include-restore']);
    expect(res.code, res.stderr + res.stdout).toBe(9);
    const r = report(res.stdout);
    expect(r.held).toBe(false);
    expect(failing(r)).toEqual(['stale-refused', 'same-step-refused', 'lower-step-refused', 'restore-raise']);
    expect(byName(r)['stale-refused']!.observed).toMatch(/^APPLIED/);
    const text = await checkResource('check/mysql-broken', ['--mysql', dbUrl, '--table', 'ledger', '--row', '0'], { json: false });
    expect(text.code).toBe(9);
    expect(text.stdout).toMatch(/3 of 8 checks did NOT hold: stale-refused, same-step-refused, lower-step-refused/);
    console.log(`mysql (trigger resets the fence):\n${text.stdout}`);
  });

  it('a Redis user whose ACL denies HSET: the key is written but its watermark never moves; every write is an ERROR (the script stops at HSET after its SET)', async () => {
    const key = `${prefix}nohset`;
    await redis.set(key, 'v');
    const user = `check_${randomBytes(4).toString('hex')}`;
    const password = randomBytes(12).toString('hex');
    await redis.call('ACL', 'SETUSER', user, 'on', `>${password}`, '~*', '&*', '+@all', '-hset');
    try {
      const url = new URL(inject('redisUrl'));
      url.username = user;
      // The password through REDISCLI_AUTH, as the help says, not on the command line.
      const res = await checkResource('check/redis-broken', ['--redis', url.href, '--redis-key', key], { env: { REDISCLI_AUTH: password } });
      expect(res.code, res.stderr + res.stdout).toBe(9);
      const r = report(res.stdout);
      expect(failing(r)).toEqual(BASE_CHECKS.slice(1));
      expect(byName(r)['newer-applies']!.observed).toMatch(/^ERROR \(.*can't run this command/);
      expect(await redis.exists(redisFencing.markKey(key))).toBe(0);
    } finally {
      await redis.call('ACL', 'DELUSER', user);
    }
  });
});

describe('check-resource --mysql and --redis: arguments, resources not ready or unreachable', () => {
  it('a missing row or key, a table without fencing, a bad key: exit 1 before any grant', async () => {
    // The test holds the lock: a command that asked for a grant first would wait for it and fail LOCK_HELD instead.
    const holder = await client.openSession({ ttlMs: 10_000 });
    await holder.acquire('check/args');
    try {
      await sql('CREATE TABLE plain (id INT PRIMARY KEY)');
      await sql('INSERT INTO plain (id) VALUES (0)');
      const cases: Array<[string[], string, RegExp]> = [
        [['--mysql', dbUrl, '--table', 'account', '--row', '99'], 'RESOURCE_NOT_READY', /no such row/],
        [['--mysql', dbUrl, '--table', 'account', '--row', 'abc'], 'RESOURCE_NOT_READY', /is not an integer/],
        [['--mysql', dbUrl, '--table', 'plain', '--row', '0'], 'RESOURCE_NOT_READY', /does not exist: run ensureFencingSchema/],
        [['--mysql', dbUrl, '--table', 'nosuch', '--row', '0'], 'RESOURCE_NOT_READY', /no such table/],
        [['--redis', inject('redisUrl'), '--redis-key', `${prefix}missing`], 'RESOURCE_NOT_READY', /no such key/],
        [['--redis', inject('redisUrl'), '--redis-key', 'fencing:mark:x'], 'USAGE', /may not start with/],
        [['--redis', inject('redisUrl'), '--table', 'account'], 'USAGE', /--table is for --postgres or --mysql, not --redis/],
        [['--mysql', dbUrl, '--redis-key', 'k', '--table', 'account', '--row', '0'], 'USAGE', /--redis-key is for --redis, not --mysql/],
        [['--mysql', dbUrl, '--redis', inject('redisUrl')], 'USAGE', /give one target/],
        [['--mysql', 'postgres://x@127.0.0.1/db', '--table', 'account', '--row', '0'], 'USAGE', /not a mysql:\/\/ URL/],
      ];
      for (const [args, code, message] of cases) {
        const res = await checkResource('check/args', args);
        expect(res.code, `${args.join(' ')}: ${res.stdout}${res.stderr}`).toBe(1);
        const error = (JSON.parse(res.stdout) as { error: { code: string; message: string } }).error;
        if (code !== 'USAGE') expect(error.code, args.join(' ')).toBe(code);
        expect(error.message, args.join(' ')).toMatch(message);
      }
    } finally {
      await holder.close();
    }
  });

  it('a MariaDB or Redis nobody listens on: exit 3, RESOURCE_UNREACHABLE, before any grant', async () => {
    const [port] = await freePorts(1);
    const holder = await client.openSession({ ttlMs: 10_000 });
    await holder.acquire('check/down');
    try {
      for (const args of [
        ['--mysql', `mysql://root@127.0.0.1:${port}/db`, '--table', 'account', '--row', '0'],
        ['--redis', `redis://127.0.0.1:${port}`, '--redis-key', 'k'],
      ]) {
        const res = await checkResource('check/down', args);
        expect(res.code, res.stdout + res.stderr).toBe(3);
        expect(JSON.parse(res.stdout)).toMatchObject({ error: { code: 'RESOURCE_UNREACHABLE' } });
      }
    } finally {
      await holder.close();
    }
  });
});

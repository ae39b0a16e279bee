// The concurrency test of concurrency.test.ts on MariaDB and Redis: holder processes with real locks from a
// real fencelock cluster, some frozen (SIGSTOP) past their lease, write shared rows (keys) through the
// adapters. The audit trail each store writes atomically with the change (an audit row alongside; an XADD in
// the fencing script) must show per row strictly increasing tokens except further steps of one grant, only
// tokens granted for that row's lock, every STALE refusal justified, every APPLIED answer exactly once.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { mysqlFencing } from '../../src/fencing';
import { LocalCluster } from '../integration/harness';
import type { WorkerConfig } from './workerProtocol';
import { checkHistory, runWorkers, type Accepted, type HistoryStats } from './workers';

const ROWS = 3;
const WORKERS = 5;
const DURATION_MS = 12_000;
const TTL_MS = 3_000; // the cluster's minimum session TTL
const FREEZE = { freezeChance: 0.3, freezeMs: TTL_MS + 2_000 };

let cluster: LocalCluster;
const figures: Record<string, HistoryStats> = {};

beforeAll(async () => {
  cluster = await LocalCluster.create({ size: 3 });
  cluster.startAll();
});
afterAll(async () => {
  await cluster?.destroy();
  console.log(JSON.stringify(figures, null, 1));
});

const run = (target: WorkerConfig['target']) => runWorkers({ workers: WORKERS, config: { endpoints: cluster.endpoints, rows: ROWS, durationMs: DURATION_MS, ttlMs: TTL_MS, target }, ...FREEZE });

function expectExercised(name: string, s: HistoryStats): void {
  figures[name] = s;
  expect(s.freezes).toBeGreaterThan(0);
  // A floor that shows the run did real work, well below what a loaded machine gives (21 and 29 in one run).
  expect(s.accepted).toBeGreaterThan(10);
  expect(s.refusedStale).toBeGreaterThan(0);
  expect(s.replayed).toBeGreaterThan(0);
}

describe('concurrent holders on other stores', () => {
  it('MariaDB: accepted tokens strictly increase per row (except steps of one grant), no stale write applied, retries applied once', async () => {
    const base = inject('mariadbUrl');
    const name = `c_${randomBytes(6).toString('hex')}`;
    const admin = await mysql.createConnection({ uri: base });
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    const url = base.replace(/\/mysql$/, `/${name}`);
    const pool = mysql.createPool({ uri: url, connectionLimit: 2, supportBigNumbers: true, bigNumberStrings: true });
    try {
      await pool.query('CREATE TABLE account (id INT PRIMARY KEY, balance INT NOT NULL)');
      await pool.query('CREATE TABLE audit (n INT AUTO_INCREMENT PRIMARY KEY, account INT NOT NULL, lock_name VARCHAR(512) NOT NULL, token BIGINT NOT NULL, step BIGINT NOT NULL, balance INT NOT NULL, writer VARCHAR(40))');
      await mysqlFencing.ensureFencingSchema(mysqlFencing.mysqlPoolDatabase(pool), ['account']);
      await pool.query('INSERT INTO account (id, balance) VALUES (1, 0), (2, 0), (3, 0)');
      const result = await run({ kind: 'mysql', url });
      const [rows] = await pool.query('SELECT account, token, step FROM audit ORDER BY n');
      const accepted: Accepted[] = (rows as Array<{ account: number; token: string; step: string }>).map((r) => ({ row: r.account, token: BigInt(r.token), step: BigInt(r.step) }));
      expectExercised('mariadb', checkHistory(accepted, result, 'REPLAYED'));
      const [finals] = await pool.query('SELECT a.id, a.balance, (SELECT balance FROM audit WHERE account = a.id ORDER BY n DESC LIMIT 1) AS last FROM account a');
      for (const f of finals as Array<{ balance: number; last: number | null }>) expect(f.balance).toBe(f.last ?? 0);
    } finally {
      await pool.query(`DROP DATABASE ${name}`);
      await pool.end();
    }
  });

  it('Redis: the same history rules hold for the fencing script', async () => {
    const url = inject('redisUrl');
    const prefix = `c_${randomBytes(6).toString('hex')}:`;
    const redis = new Redis(url);
    try {
      for (let row = 1; row <= ROWS; row++) await redis.set(`${prefix}row:${row}`, '0');
      const result = await run({ kind: 'redis', url, prefix });
      const entries = await redis.xrange(`${prefix}audit`, '-', '+');
      const field = (fields: string[], f: string): string => fields[fields.indexOf(f) + 1] ?? '';
      const accepted: Accepted[] = entries.map(([, f]) => ({ row: Number(field(f, 'row')), token: BigInt(field(f, 'token')), step: BigInt(field(f, 'step')) }));
      expectExercised('redis', checkHistory(accepted, result, 'REPLAYED'));
      for (let row = 1; row <= ROWS; row++) {
        const last = [...entries].reverse().find(([, f]) => field(f, 'row') === String(row));
        expect(await redis.get(`${prefix}row:${row}`)).toBe(last ? field(last[1], 'balance') : '0');
      }
    } finally {
      const keys = [...(await redis.keys(`${prefix}*`)), ...(await redis.keys(`fencing:*${prefix}*`))];
      if (keys.length) await redis.del(...keys);
      await redis.quit();
    }
  });
});

// The fencing rules (ruleMatrix.ts) on a real MariaDB server through the mysql2 helpers (src/fencing/mysql),
// then what is MariaDB's own: keys as MariaDB reads them (integer spellings, text under the column's collation),
// exact BIGINTs, and the schema helper's checks.
import { randomBytes } from 'node:crypto';
import mysql from 'mysql2/promise';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { mysqlFencing, type FencingClaim } from '../../src/fencing';
import { defineRuleMatrix, type Key, type MatrixSubject, type Outcome } from './ruleMatrix';

const { ensureFencingSchema, fencedDelete, fencedUpdate, fencedUpsert, mysqlPoolDatabase, raiseWatermarks, withFence } = mysqlFencing;
type Db = mysqlFencing.MysqlDatabase;

interface Scratch {
  name: string;
  pool: mysql.Pool;
  db: Db;
  sql(text: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
  pool2(n: number): mysql.Pool;
  drop(): Promise<void>;
}

/** A database of the test's own on the server the global setup started. */
async function scratchDatabase(): Promise<Scratch> {
  const url = inject('mariadbUrl');
  const name = `t_${randomBytes(6).toString('hex')}`;
  const admin = await mysql.createConnection({ uri: url });
  await admin.query(`CREATE DATABASE ${name} CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci`);
  await admin.end();
  const pool2 = (n: number): mysql.Pool => mysql.createPool({ uri: url, database: name, connectionLimit: n, supportBigNumbers: true, bigNumberStrings: true });
  const pool = pool2(20);
  return {
    name,
    pool,
    db: mysqlPoolDatabase(pool),
    pool2,
    sql: async (text, params) => (await pool.query(text, params ?? []))[0] as Record<string, unknown>[],
    drop: async () => {
      await pool.query(`DROP DATABASE ${name}`);
      await pool.end();
    },
  };
}

async function accountSubject(): Promise<MatrixSubject> {
  const d = await scratchDatabase();
  await d.sql('CREATE TABLE account (id INT PRIMARY KEY, owner VARCHAR(40) NOT NULL, balance BIGINT NOT NULL)');
  await d.sql('CREATE TABLE audit (n INT AUTO_INCREMENT PRIMARY KEY, token BIGINT NOT NULL, step BIGINT NOT NULL)');
  await ensureFencingSchema(d.db, ['account']);
  await d.sql("INSERT INTO account (id, owner, balance) VALUES (1, 'ann', 100), (2, 'bob', 100)");
  const update = (db: Db) => (key: Key, value: number, c: FencingClaim) =>
    fencedUpdate(db, { table: 'account', key, set: { balance: value } }, c, {
      alongside: async (tx) => void (await tx.execute('INSERT INTO audit (token, step) VALUES (CAST(? AS SIGNED), CAST(? AS SIGNED))', [c.token.toString(), String(c.step ?? 1n)])),
    }) as Promise<Outcome>;
  return {
    update: update(d.db),
    upsert: (key, value, c) => fencedUpsert(d.db, { table: 'account', key, values: { owner: 'new', balance: value } }, c) as Promise<Outcome>,
    remove: (key, c) => fencedDelete(d.db, { table: 'account', key }, c) as Promise<Outcome>,
    value: async (key) => {
      const rows = await d.sql('SELECT balance FROM account WHERE id = ?', [String(key)]);
      return rows[0] ? Number(rows[0].balance) : undefined;
    },
    auditTokens: async () => (await d.sql('SELECT token FROM audit ORDER BY n')).map((r) => BigInt(r.token as string)),
    raise: (min) => raiseWatermarks(d.db, min, ['account']),
    rewind: async (key, fence, value) => void (await d.sql('UPDATE account SET fence = ?, fence_step = 1, balance = ? WHERE id = ?', [fence.toString(), value, String(key)])),
    racers: async (n) => {
      // A pool of n connections: the n writers' transactions run on n connections at once.
      const pool = d.pool2(n);
      const db = mysqlPoolDatabase(pool);
      return { writers: Array.from({ length: n }, () => (value: number, c: FencingClaim) => update(db)(1, value, c)), close: () => pool.end() };
    },
    // MariaDB reads all of these as the INT 1 (`WHERE id = '01'` finds row 1).
    spellingsOfOne: ['01', '+1', ' 1', '1 ', '001 ', 1n, '1'],
    close: () => d.drop(),
  };
}

defineRuleMatrix('MariaDB', { open: accountSubject });

describe('MariaDB: what is its own', () => {
  let d: Scratch;
  beforeEach(async () => {
    d = await scratchDatabase();
  });
  afterEach(async () => d.drop());
  const LOCK = 'k';

  it('text keys are one resource per key as the column compares them (case and trailing spaces under a _ci collation)', async () => {
    await d.sql('CREATE TABLE doc (name VARCHAR(40) COLLATE utf8mb4_general_ci PRIMARY KEY, body TEXT)');
    await ensureFencingSchema(d.db, [{ table: 'doc', keyColumn: 'name' }]);
    const put = (key: string, body: string, token: bigint) => fencedUpsert(d.db, { table: 'doc', keyColumn: 'name', key, values: { body } }, { lock: LOCK, token, operationId: `put-${key}-${body}` });
    expect((await put('Report', 'v1', 10n)).status).toBe('APPLIED');
    expect(await put('REPORT', 'v0', 9n)).toEqual({ status: 'STALE', watermark: 10n, lock: LOCK });
    expect((await fencedDelete(d.db, { table: 'doc', keyColumn: 'name', key: 'report  ' }, { lock: LOCK, token: 11n })).status).toBe('APPLIED');
    for (const k of ['Report', 'report', 'REPORT ', 'rEpOrT']) expect(await put(k, 'back', 10n), k).toEqual({ status: 'STALE', watermark: 11n, lock: LOCK });
    expect(await d.sql('SELECT * FROM doc')).toEqual([]);
    // The tombstone keeps the key as the row stored it; the table it lives in compares like the doc table.
    expect(await d.sql('SELECT name, fence FROM fencing_tomb_doc')).toEqual([{ name: 'Report', fence: '11' }]);
    expect((await put('rePORT', 'v2', 12n)).status).toBe('APPLIED');
    expect(await d.sql('SELECT name, body FROM doc')).toEqual([{ name: 'rePORT', body: 'v2' }]);
    expect(await d.sql('SELECT * FROM fencing_tomb_doc')).toEqual([]);
  });

  it('without strict mode, a key MariaDB would truncate on insert cannot re-create a deleted row: the change is rolled back', async () => {
    await d.sql('CREATE TABLE doc (name VARCHAR(8) PRIMARY KEY, body TEXT)');
    await ensureFencingSchema(d.db, [{ table: 'doc', keyColumn: 'name' }]);
    // A pool whose sessions truncate over-long strings with a warning instead of refusing them.
    const lax = d.pool2(2);
    lax.on('connection', (conn) => void conn.query("SET SESSION sql_mode = ''"));
    const db = mysqlPoolDatabase(lax);
    try {
      const put = (key: string, token: bigint) => fencedUpsert(db, { table: 'doc', keyColumn: 'name', key, values: { body: key } }, { lock: LOCK, token, operationId: key });
      expect((await put('abcdefgh', 10n)).status).toBe('APPLIED');
      expect((await fencedDelete(db, { table: 'doc', keyColumn: 'name', key: 'abcdefgh' }, { lock: LOCK, token: 11n })).status).toBe('APPLIED');
      // 'abcdefghXYZ' finds no row and no tombstone, but MariaDB would store it as 'abcdefgh', the deleted row.
      await expect(put('abcdefghXYZ', 5n)).rejects.toThrow(/vanished inside its own transaction/);
      expect(await d.sql('SELECT * FROM doc')).toEqual([]);
      expect(await put('abcdefgh', 5n)).toEqual({ status: 'STALE', watermark: 11n, lock: LOCK });
    } finally {
      await lax.end();
    }
  });

  it('under a binary collation, keys differing in case are different rows, as MariaDB keeps them', async () => {
    await d.sql('CREATE TABLE doc (name VARCHAR(40) COLLATE utf8mb4_bin PRIMARY KEY, body TEXT)');
    await ensureFencingSchema(d.db, [{ table: 'doc', keyColumn: 'name' }]);
    const put = (key: string, token: bigint) => fencedUpsert(d.db, { table: 'doc', keyColumn: 'name', key, values: { body: key } }, { lock: LOCK, token });
    expect((await put('a', 10n)).status).toBe('APPLIED');
    expect((await put('A', 5n)).status).toBe('APPLIED');
    expect(await d.sql('SELECT name FROM doc ORDER BY name')).toEqual([{ name: 'A' }, { name: 'a' }]);
  });

  it('integer keys: spellings MariaDB reads only with a warning, or out of the column type, are refused with a clear error', async () => {
    await d.sql('CREATE TABLE t (id TINYINT UNSIGNED PRIMARY KEY, v INT)');
    await ensureFencingSchema(d.db, ['t']);
    const put = (key: Key) => fencedUpsert(d.db, { table: 't', key, values: { v: 1 } }, { lock: LOCK, token: 1n });
    for (const bad of ['1abc', '1.0', '1e0', '0x1', '', ' ']) await expect(put(bad), bad).rejects.toThrow(/is not an integer/);
    await expect(put(256)).rejects.toThrow(/outside t\.id's range 0\.\.255/);
    await expect(put(-1n)).rejects.toThrow(/outside/);
    await expect(put(1.5)).rejects.toThrow(/not a safe integer/);
    expect((await put('255')).status).toBe('APPLIED');
    expect(await d.sql('SELECT id FROM t')).toEqual([{ id: 255 }]);
  });

  it('BIGINT keys and values above 2^53 are exact: rows one apart stay apart, the returned row has bigints', async () => {
    await d.sql('CREATE TABLE big (id BIGINT PRIMARY KEY, n BIGINT NOT NULL)');
    await ensureFencingSchema(d.db, ['big']);
    const k = (1n << 53n) + 1n;
    await d.sql('INSERT INTO big (id, n) VALUES (?, 0), (?, 0)', [k.toString(), (k + 1n).toString()]);
    const r = await fencedUpdate(d.db, { table: 'big', key: k, set: { n: (k + 2n).toString() } }, { lock: LOCK, token: k + 4n });
    expect(r).toMatchObject({ status: 'APPLIED', result: { id: k, n: k + 2n, fence: k + 4n, fence_step: 1n, fence_lock: LOCK } });
    expect(await d.sql('SELECT id, n FROM big ORDER BY id')).toEqual([
      { id: k.toString(), n: (k + 2n).toString() },
      { id: (k + 1n).toString(), n: '0' },
    ]);
    const retry = await fencedUpdate(d.db, { table: 'big', key: k.toString(), set: { n: '1' } }, { lock: LOCK, token: k + 4n });
    expect(retry).toEqual({ status: 'REPLAYED', result: (r as { result: unknown }).result, token: k + 4n, step: 1n });
  });

  it('withFence: a named resource for several statements, once per operation; racing callers take turns', async () => {
    await d.sql('CREATE TABLE ledger (n INT AUTO_INCREMENT PRIMARY KEY, amount INT)');
    await ensureFencingSchema(d.db);
    const post = (token: bigint, op: string) =>
      withFence(d.db, 'ledger:day-1', { lock: 'ledger', token, operationId: op }, async (tx) => {
        await tx.execute('INSERT INTO ledger (amount) VALUES (10)');
        await tx.execute('INSERT INTO ledger (amount) VALUES (-10)');
        return { posted: 2, at: token };
      });
    const first = await Promise.all(Array.from({ length: 6 }, () => post(5n, 'a')));
    expect(first.filter((o) => o.status === 'APPLIED')).toHaveLength(1);
    expect(first.filter((o) => o.status === 'REPLAYED').map((o) => (o as { result: unknown }).result)).toEqual(Array(5).fill({ posted: 2, at: 5n }));
    expect(await post(4n, 'b')).toEqual({ status: 'STALE', watermark: 5n, lock: 'ledger' });
    expect(await withFence(d.db, 'ledger:day-1', { lock: 'other', token: 9n }, async () => 1)).toEqual({ status: 'WRONG_LOCK', watermark: 5n, lock: 'ledger' });
    expect(await d.sql('SELECT amount FROM ledger ORDER BY n')).toEqual([{ amount: 10 }, { amount: -10 }]);
  });

  it('fencedUpdate naming only the key column moves only the fence (as check-resource writes); an empty set is refused', async () => {
    await d.sql('CREATE TABLE item (id INT PRIMARY KEY, qty INT NOT NULL)');
    await ensureFencingSchema(d.db, ['item']);
    await d.sql('INSERT INTO item (id, qty) VALUES (4, 7)');
    const touch = (token: bigint) => fencedUpdate(d.db, { table: 'item', key: '04', set: { id: 4 } }, { lock: LOCK, token });
    expect(await touch(5n)).toMatchObject({ status: 'APPLIED', result: { id: 4, qty: 7, fence: 5n, fence_lock: LOCK, fence_step: 1n } });
    expect(await touch(4n)).toEqual({ status: 'STALE', watermark: 5n, lock: LOCK });
    expect(await d.sql('SELECT id, qty, CAST(fence AS CHAR) AS fence FROM item')).toEqual([{ id: 4, qty: 7, fence: '5' }]);
    await expect(fencedUpdate(d.db, { table: 'item', key: 4, set: {} }, { lock: LOCK, token: 6n })).rejects.toThrow(/set names no column/);
  });

  it('a change that fails rolls back with its watermark and its operation record', async () => {
    await d.sql('CREATE TABLE account (id INT PRIMARY KEY, balance INT NOT NULL)');
    await ensureFencingSchema(d.db, ['account']);
    await d.sql('INSERT INTO account VALUES (1, 100, 0, NULL, 0)');
    const failing = fencedUpdate(d.db, { table: 'account', key: 1, set: { balance: 0 } }, { lock: LOCK, token: 42n }, {
      alongside: async () => {
        throw new Error('outbox is down');
      },
    });
    await expect(failing).rejects.toThrow('outbox is down');
    expect(await d.sql('SELECT balance, fence FROM account')).toEqual([{ balance: 100, fence: '0' }]);
    expect(await d.sql('SELECT * FROM fencing_operations')).toEqual([]);
    expect((await fencedUpdate(d.db, { table: 'account', key: 1, set: { balance: 1 } }, { lock: LOCK, token: 42n })).status).toBe('APPLIED');
  });

  it('the schema: a nullable or default-less fence column becomes BIGINT NOT NULL DEFAULT 0 (NULLs 0); one of another type is refused with what to run', async () => {
    await d.sql('CREATE TABLE a (id INT PRIMARY KEY, v INT, fence BIGINT NULL, fence_step BIGINT NOT NULL)');
    await d.sql('INSERT INTO a (id, v, fence, fence_step) VALUES (1, 0, NULL, 0), (2, 0, 7, 0)');
    await ensureFencingSchema(d.db, ['a']);
    expect(await d.sql('SELECT id, fence FROM a ORDER BY id')).toEqual([
      { id: 1, fence: '0' },
      { id: 2, fence: '7' },
    ]);
    const cols = await d.sql("SELECT COLUMN_NAME AS c, IS_NULLABLE AS nullable, COLUMN_DEFAULT AS def FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'a' AND COLUMN_NAME IN ('fence', 'fence_step') ORDER BY c");
    expect(cols).toEqual([
      { c: 'fence', nullable: 'NO', def: '0' },
      { c: 'fence_step', nullable: 'NO', def: '0' },
    ]);
    expect((await fencedUpdate(d.db, { table: 'a', key: 1, set: { v: 1 } }, { lock: LOCK, token: 1n })).status).toBe('APPLIED');
    await d.sql('CREATE TABLE b (id INT PRIMARY KEY, fence VARCHAR(20))');
    await expect(ensureFencingSchema(d.db, ['b'])).rejects.toThrow(/b\.fence is VARCHAR; it must be BIGINT NOT NULL DEFAULT 0: ALTER TABLE b MODIFY fence BIGINT NOT NULL DEFAULT 0/);
  });

  it('the schema: BIGINT NOT NULL DEFAULT 0 columns, idempotent; a key that is not the whole primary key is refused', async () => {
    await d.sql('CREATE TABLE pair (a INT, b INT, PRIMARY KEY (a, b))');
    await d.sql('CREATE TABLE nokey (id INT)');
    await d.sql('CREATE TABLE fl (id DOUBLE PRIMARY KEY)');
    await expect(ensureFencingSchema(d.db, [{ table: 'pair', keyColumn: 'a' }])).rejects.toThrow(/must be the whole primary key of pair \(its primary key is a, b\)/);
    await expect(ensureFencingSchema(d.db, ['nokey'])).rejects.toThrow(/primary key is missing/);
    await expect(ensureFencingSchema(d.db, ['fl'])).rejects.toThrow(/supported key types are integers and CHAR\/VARCHAR/);
    await expect(ensureFencingSchema(d.db, ['no_such_table'])).rejects.toThrow(/has no column id \(or no such table\)/);
    await d.sql('CREATE TABLE account (id INT PRIMARY KEY)');
    await ensureFencingSchema(d.db, ['account']);
    await ensureFencingSchema(d.db, ['account']);
    const cols = await d.sql(
      "SELECT COLUMN_NAME AS c, COLUMN_TYPE AS t, IS_NULLABLE AS nullable, COLUMN_DEFAULT AS def FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'account' ORDER BY ORDINAL_POSITION",
    );
    expect(cols).toEqual([
      { c: 'id', t: 'int(11)', nullable: 'NO', def: null },
      { c: 'fence', t: 'bigint(20)', nullable: 'NO', def: '0' },
      { c: 'fence_lock', t: 'varchar(512)', nullable: 'YES', def: 'NULL' },
      { c: 'fence_step', t: 'bigint(20)', nullable: 'NO', def: '0' },
    ]);
  });
});

// check-resource against one row of a MariaDB/MySQL table, written through the fencing helpers
// (src/fencing/mysql fencedUpdate). The write names only the key column, which the helper never changes: the
// row's business columns stay as they are, only fence, fence_lock and fence_step change (and the operation
// records in fencing_operations).
import mysql from 'mysql2/promise';
import { mysqlPoolDatabase, type MysqlDatabase, type MysqlSession } from '../mysql/db';
import { fencedUpdate } from '../mysql/fenced';
import { keyExpr, keyParam, readKeyColumn, type KeyColumn } from '../mysql/key';
import { FENCE_COLUMN, FENCE_LOCK_COLUMN, FENCE_STEP_COLUMN, ident, OPERATIONS_TABLE, tombstoneTable } from '../mysql/names';
import type { CheckedClaim } from '../token';
import { ResourceNotReady, type CheckTarget, type WriteOutcome } from './target';
import { refusedOutcome } from './outcome';

export interface MysqlTargetOptions {
  /** A connection URL (mysql://user@host:port/database). */
  url: string;
  /** Used when the URL has none (the command passes MYSQL_PWD), so that no password shows in `ps`. */
  password?: string;
  table: string;
  /** The primary-key column; default `id`. */
  keyColumn?: string;
  /** The dedicated row's key. */
  key: string;
}

const ER_BAD_FIELD = 1054;
const ER_NO_SUCH_TABLE = 1146;

/** A driver error without a SQLSTATE (refused, reset, unknown host, timeout) means the server was not reached. */
function notReady(err: unknown, what: string): ResourceNotReady {
  const e = err as { sqlState?: string; message?: string };
  return new ResourceNotReady(`${what}: ${e.message ?? String(err)}`, typeof e.sqlState !== 'string');
}

function parseUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new RangeError(`--mysql: ${JSON.stringify(text)} is not a URL (mysql://user@host:port/database)`);
  }
  if (url.protocol !== 'mysql:' && url.protocol !== 'mariadb:') throw new RangeError(`--mysql: ${JSON.stringify(text)} is not a mysql:// URL`);
  if (url.pathname.length < 2) throw new RangeError(`--mysql: ${JSON.stringify(text)} names no database (mysql://user@host:port/database)`);
  return url;
}

export class MysqlTarget implements CheckTarget {
  readonly kind = 'mysql';
  readonly storesAnswers = true;
  readonly resource: string;
  private readonly pool: mysql.Pool;
  private readonly db: MysqlDatabase;
  private readonly keyColumn: string;
  /** The key column as the table has it, read by prepare. */
  private k: KeyColumn | undefined;

  constructor(private readonly o: MysqlTargetOptions) {
    this.keyColumn = o.keyColumn ?? 'id';
    // Refuse names that are not plain identifiers, and a bad URL, before connecting.
    ident(o.table);
    ident(this.keyColumn);
    const url = parseUrl(o.url);
    url.protocol = 'mysql:';
    this.resource = `table ${o.table}, ${this.keyColumn} = ${o.key}`;
    this.pool = mysql.createPool({ uri: url.href, password: url.password === '' ? o.password : undefined, connectionLimit: 2, connectTimeout: 10_000 });
    // An idle connection that breaks must not crash the command; the next query reports it.
    this.pool.on('connection', (conn) => conn.on('error', () => undefined));
    this.db = mysqlPoolDatabase(this.pool);
  }

  async prepare(lock: string): Promise<void> {
    try {
      (await this.pool.getConnection()).release();
    } catch (err) {
      throw notReady(err, 'cannot connect to MariaDB/MySQL');
    }
    try {
      await this.db.transaction((tx) => this.inspect(tx, lock));
    } catch (err) {
      if (err instanceof ResourceNotReady) throw err;
      if (err instanceof RangeError) throw new ResourceNotReady(err.message, false);
      throw notReady(err, `cannot read ${this.resource}`);
    }
  }

  /** The key column, the fencing tables and the dedicated row, bound to no other lock; reads only. */
  private async inspect(tx: MysqlSession, lock: string): Promise<void> {
    const setUp = `run ensureFencingSchema(db, [${JSON.stringify(this.o.table)}]) first (docs/fencing-downstream.md, 2a)`;
    const k = await readKeyColumn(tx, this.o.table, this.keyColumn);
    for (const t of [OPERATIONS_TABLE, tombstoneTable(this.o.table)]) {
      await tx.query(`SELECT 1 FROM ${ident(t)} LIMIT 0`).catch((err: { errno?: number }) => {
        if (err.errno === ER_NO_SUCH_TABLE) throw new ResourceNotReady(`table ${t} does not exist: ${setUp}`, false);
        throw err;
      });
    }
    const rows = await tx
      .query(`SELECT ${FENCE_LOCK_COLUMN} AS fence_lock, ${FENCE_COLUMN}, ${FENCE_STEP_COLUMN} FROM ${ident(this.o.table)} WHERE ${ident(this.keyColumn)} = ${keyExpr(k)}`, [
        keyParam(k, this.o.key, this.o.table),
      ])
      .catch((err: { errno?: number }) => {
        if (err.errno === ER_BAD_FIELD) throw new ResourceNotReady(`table ${this.o.table} has no fence columns: ${setUp}`, false);
        throw err;
      });
    const row = rows[0];
    if (!row) throw new ResourceNotReady(`${this.resource}: no such row. Create the dedicated row first; check-resource only updates it`, false);
    const bound = row.fence_lock as string | null;
    if (bound !== null && bound !== lock) {
      throw new ResourceNotReady(`${this.resource} is bound to lock ${JSON.stringify(bound)}, not ${JSON.stringify(lock)}: give a row of its own to check with --lock ${JSON.stringify(lock)}`, false);
    }
    this.k = k;
  }

  async write(claim: CheckedClaim): Promise<WriteOutcome> {
    const o = await fencedUpdate(this.db, { table: this.o.table, keyColumn: this.keyColumn, key: this.o.key, set: { [this.keyColumn]: this.o.key } }, claim);
    switch (o.status) {
      case 'APPLIED':
      case 'REPLAYED':
        return { status: o.status, detail: `fence ${String(o.result[FENCE_COLUMN])}, step ${String(o.result[FENCE_STEP_COLUMN])}` };
      default:
        return refusedOutcome(o, 'row');
    }
  }

  /** What raiseWatermarks does after a restore, for the dedicated row only: other rows are left alone. */
  async raise(minToken: bigint): Promise<void> {
    const k = this.k;
    if (!k) throw new Error('check-resource: raise before prepare');
    const min = minToken.toString();
    await this.db.transaction((tx) =>
      tx.execute(
        `UPDATE ${ident(this.o.table)} SET ${FENCE_COLUMN} = CAST(? AS SIGNED), ${FENCE_STEP_COLUMN} = 0 WHERE ${ident(this.keyColumn)} = ${keyExpr(k)} AND ${FENCE_COLUMN} < CAST(? AS SIGNED)`,
        [min, keyParam(k, this.o.key, this.o.table), min],
      ),
    );
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

// check-resource against one row of a PostgreSQL table, written through the fencing helpers (fencedUpdate).
// The write sets the key column to its own value: the row's business columns stay as they are, only its
// fence, fence_lock and fence_step change (and the operation records in fencing_operations).
import pg from 'pg';
import { pgPoolDatabase, type SqlDatabase } from '../sql/db';
import { fencedUpdate } from '../sql/fenced';
import { FENCE_COLUMN, FENCE_LOCK_COLUMN, FENCE_STEP_COLUMN, ident, OPERATIONS_TABLE, WATERMARKS_TABLE } from '../sql/names';
import type { CheckedClaim } from '../token';
import { ResourceNotReady, type CheckTarget, type WriteOutcome } from './target';
import { refusedOutcome } from './outcome';

export interface PostgresTargetOptions {
  /** A connection string (postgres://user@host:port/db). */
  url: string;
  table: string;
  /** The primary-key column; default `id`. */
  keyColumn?: string;
  /** The dedicated row's key. */
  key: string;
}

/** A driver error without a SQLSTATE (refused, reset, unknown host) means the server was not reached. */
function notReady(err: unknown, what: string): ResourceNotReady {
  const e = err as { code?: string; message?: string };
  const sqlState = typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code);
  return new ResourceNotReady(`${what}: ${e.message ?? String(err)}`, !sqlState);
}

export class PostgresTarget implements CheckTarget {
  readonly kind = 'postgres';
  readonly storesAnswers = true;
  readonly resource: string;
  private readonly pool: pg.Pool;
  private readonly db: SqlDatabase;
  private readonly keyColumn: string;

  constructor(private readonly o: PostgresTargetOptions) {
    this.keyColumn = o.keyColumn ?? 'id';
    // Refuse names that are not plain identifiers before connecting.
    ident(o.table);
    ident(this.keyColumn);
    this.resource = `table ${o.table}, ${this.keyColumn} = ${o.key}`;
    this.pool = new pg.Pool({ connectionString: o.url, max: 2, connectionTimeoutMillis: 10_000 });
    // An idle connection that breaks must not crash the command; the next query reports it.
    this.pool.on('error', () => undefined);
    this.db = pgPoolDatabase(this.pool);
  }

  async prepare(lock: string): Promise<void> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw notReady(err, 'cannot connect to PostgreSQL');
    }
    try {
      for (const t of [this.o.table, OPERATIONS_TABLE, WATERMARKS_TABLE]) {
        const { rows } = await client.query<{ ok: boolean }>('SELECT to_regclass($1) IS NOT NULL AS ok', [ident(t)]);
        if (!rows[0]?.ok) throw new ResourceNotReady(`table ${t} does not exist: run ensureFencingSchema(db, [${JSON.stringify(this.o.table)}]) first (docs/fencing-downstream.md)`, false);
      }
      const { rows } = await client
        .query<{ lock: string | null }>(`SELECT ${FENCE_LOCK_COLUMN} AS lock, ${FENCE_COLUMN}, ${FENCE_STEP_COLUMN} FROM ${ident(this.o.table)} WHERE ${ident(this.keyColumn)} = $1`, [this.o.key])
        .catch((err: { code?: string }) => {
          if (err.code === '42703') throw new ResourceNotReady(`table ${this.o.table} has no fence columns: run ensureFencingSchema(db, [${JSON.stringify(this.o.table)}]) first`, false);
          throw err;
        });
      const row = rows[0];
      if (!row) throw new ResourceNotReady(`${this.resource}: no such row. Create the dedicated row first; check-resource only updates it`, false);
      if (row.lock !== null && row.lock !== lock) {
        throw new ResourceNotReady(`${this.resource} is bound to lock ${JSON.stringify(row.lock)}, not ${JSON.stringify(lock)}: give a row of its own to check with --lock ${JSON.stringify(lock)}`, false);
      }
    } catch (err) {
      throw err instanceof ResourceNotReady ? err : notReady(err, `cannot read ${this.resource}`);
    } finally {
      client.release();
    }
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
    await this.pool.query(
      `UPDATE ${ident(this.o.table)} SET ${FENCE_COLUMN} = $1::bigint, ${FENCE_STEP_COLUMN} = 0 WHERE ${ident(this.keyColumn)} = $2 AND ${FENCE_COLUMN} < $1::bigint`,
      [minToken.toString(), this.o.key],
    );
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

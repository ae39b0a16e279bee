// Creates what fencing needs in a database: the fence, lock and step columns of each fenced table, and the
// operations and watermarks tables. Idempotent.
import type { SqlDatabase, SqlSession } from './db';
import { FENCE_COLUMN, FENCE_LOCK_COLUMN, FENCE_STEP_COLUMN, ident, OPERATIONS_TABLE, WATERMARKS_TABLE } from './names';

/**
 * The watermark is BIGINT NOT NULL DEFAULT 0: with NULL allowed, the first `fence < token` would be UNKNOWN and
 * never update. BIGINT holds tokens up to 2^63-1 (MAX_FENCING_TOKEN).
 */
export function fencedColumnsSql(table: string): string {
  return `ALTER TABLE ${ident(table)}
    ADD COLUMN IF NOT EXISTS ${FENCE_COLUMN} BIGINT NOT NULL DEFAULT 0 CHECK (${FENCE_COLUMN} >= 0),
    ADD COLUMN IF NOT EXISTS ${FENCE_LOCK_COLUMN} TEXT,
    ADD COLUMN IF NOT EXISTS ${FENCE_STEP_COLUMN} BIGINT NOT NULL DEFAULT 0`;
}

export const FENCING_TABLES_SQL = [
  `CREATE TABLE IF NOT EXISTS ${OPERATIONS_TABLE} (
    resource TEXT NOT NULL,
    token BIGINT NOT NULL,
    operation_id TEXT NOT NULL,
    step BIGINT NOT NULL,
    result JSONB,
    applied_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (resource, token, operation_id))`,
  `CREATE TABLE IF NOT EXISTS ${WATERMARKS_TABLE} (
    resource TEXT PRIMARY KEY,
    lock TEXT,
    fence BIGINT NOT NULL DEFAULT 0 CHECK (fence >= 0),
    step BIGINT NOT NULL DEFAULT 0)`,
];

/** A fenced table whose columns the helper cannot bring to the right shape itself: the message says what to run. */
export class FencingSchemaError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FencingSchemaError';
  }
}

interface ColumnShape {
  name: string;
  type: string;
  not_null: boolean;
  default_sql: string | null;
}

/** The fencing columns a table already has, as the catalog describes them. */
async function fencingColumns(tx: SqlSession, table: string): Promise<ColumnShape[]> {
  const { rows } = await tx.query(
    `SELECT a.attname AS name, a.atttypid::regtype::text AS type, a.attnotnull AS not_null, pg_get_expr(d.adbin, d.adrelid) AS default_sql
     FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
     WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped AND a.attname = ANY ($2::text[])`,
    [table, [FENCE_COLUMN, FENCE_LOCK_COLUMN, FENCE_STEP_COLUMN]],
  );
  return rows as ColumnShape[];
}

/** Refuses a fencing column of a type the helpers cannot use; converting it is the owner's decision. */
function checkType(table: string, tableSql: string, c: ColumnShape): void {
  const wanted = c.name === FENCE_LOCK_COLUMN ? ['text', 'character varying'] : ['bigint'];
  if (wanted.includes(c.type)) return;
  const target = c.name === FENCE_LOCK_COLUMN ? 'TEXT' : 'BIGINT';
  throw new FencingSchemaError(
    `${table}.${c.name} is ${c.type}, not ${target.toLowerCase()}: the fencing helpers need ${c.name} ${target}${target === 'BIGINT' ? ' (tokens go up to 2^63-1)' : ''}. ` +
      `Convert it, then run ensureFencingSchema again: ALTER TABLE ${tableSql} ALTER COLUMN ${c.name} TYPE ${target} USING ${c.name}::${target.toLowerCase()};`,
  );
}

/**
 * A watermark column (fence, fence_step) that allows NULL or lacks DEFAULT 0 is brought to NOT NULL DEFAULT 0,
 * its NULLs set to 0 first: a NULL watermark makes `fence < token` UNKNOWN, and no write would ever pass.
 */
async function normalizeWatermarkColumn(tx: SqlSession, table: string, c: ColumnShape): Promise<void> {
  if (c.name === FENCE_LOCK_COLUMN) return;
  const col = ident(c.name);
  if (!c.not_null) await tx.query(`UPDATE ${table} SET ${col} = 0 WHERE ${col} IS NULL`);
  if (c.default_sql !== '0' && c.default_sql !== "'0'::bigint") await tx.query(`ALTER TABLE ${table} ALTER COLUMN ${col} SET DEFAULT 0`);
  if (!c.not_null) await tx.query(`ALTER TABLE ${table} ALTER COLUMN ${col} SET NOT NULL`);
}

/**
 * Adds the fencing columns to each table in `tables` and creates the fencing tables, in one transaction. An
 * existing `fence`/`fence_step` column that is nullable or has no DEFAULT 0 is brought to NOT NULL DEFAULT 0
 * (NULLs become 0); one of another type is refused with a FencingSchemaError that says what to run, and
 * nothing is changed.
 */
export async function ensureFencingSchema(db: SqlDatabase, tables: readonly string[] = []): Promise<void> {
  await db.transaction(async (tx) => {
    for (const sql of FENCING_TABLES_SQL) await tx.query(sql);
    for (const t of tables) {
      const table = ident(t);
      const existing = await fencingColumns(tx, table);
      for (const c of existing) checkType(t, table, c);
      await tx.query(fencedColumnsSql(t));
      for (const c of existing) await normalizeWatermarkColumn(tx, table, c);
    }
  });
}

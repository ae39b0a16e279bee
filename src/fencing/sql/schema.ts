// Creates what fencing needs in a database: the fence, lock and step columns of each fenced table, and the
// operations and watermarks tables. Idempotent.
import type { SqlDatabase } from './db';
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

/** Adds the fencing columns to each table in `tables` and creates the fencing tables, in one transaction. */
export async function ensureFencingSchema(db: SqlDatabase, tables: readonly string[] = []): Promise<void> {
  await db.transaction(async (tx) => {
    for (const sql of FENCING_TABLES_SQL) await tx.query(sql);
    for (const t of tables) await tx.query(fencedColumnsSql(t));
  });
}

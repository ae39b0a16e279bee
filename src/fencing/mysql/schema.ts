// Creates what fencing needs in a MariaDB/MySQL database: the fence, lock and step columns of each fenced table,
// each fenced table's tombstone table, and the operations and watermarks tables. Idempotent.
//
// MariaDB commits DDL implicitly, so this is not one transaction: rerun it after a failure.
import type { MysqlDatabase, MysqlSession } from './db';
import { readKeyColumn, type KeyColumn } from './key';
import { FENCE_COLUMN, FENCE_LOCK_COLUMN, FENCE_STEP_COLUMN, ident, OPERATIONS_TABLE, splitTable, tombstoneTable, WATERMARKS_TABLE } from './names';

/** A fenced table and its one-column primary key (default `id`). */
export type FencedTable = string | { table: string; keyColumn?: string };

/**
 * Tokens and steps are BIGINT (signed, like PostgreSQL's): 1..2^63-1 is MAX_FENCING_TOKEN, and signed keeps
 * `fence - 1` and comparisons with negative test values free of UNSIGNED's wrap-around errors. NOT NULL DEFAULT
 * 0: a NULL watermark would never compare below a token. Lock names and operation ids compare byte for byte
 * (utf8mb4_bin), never under a case-insensitive collation.
 */
const LOCK_TYPE = 'VARCHAR(512) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin';
const MARK_COLUMNS = `${FENCE_COLUMN} BIGINT NOT NULL DEFAULT 0 CHECK (${FENCE_COLUMN} >= 0),
    ${FENCE_LOCK_COLUMN} ${LOCK_TYPE} NULL,
    ${FENCE_STEP_COLUMN} BIGINT NOT NULL DEFAULT 0`;

export const MYSQL_FENCING_TABLES_SQL = [
  // Resources are keyed by the SHA-256 of their name: InnoDB keys are limited to 3072 bytes.
  `CREATE TABLE IF NOT EXISTS ${OPERATIONS_TABLE} (
    resource_sha BINARY(32) NOT NULL,
    resource TEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    token BIGINT NOT NULL,
    operation_id VARCHAR(200) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    step BIGINT NOT NULL,
    result LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    applied_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
    PRIMARY KEY (resource_sha, token, operation_id)) ENGINE=InnoDB`,
  `CREATE TABLE IF NOT EXISTS ${WATERMARKS_TABLE} (
    resource_sha BINARY(32) NOT NULL PRIMARY KEY,
    resource TEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    ${MARK_COLUMNS}) ENGINE=InnoDB`,
];

function tableRef(t: FencedTable): { table: string; keyColumn: string } {
  return typeof t === 'string' ? { table: t, keyColumn: 'id' } : { table: t.table, keyColumn: t.keyColumn ?? 'id' };
}

interface ExistingColumn {
  dataType: string;
  nullable: boolean;
  def: string | null;
}

async function existingColumns(tx: MysqlSession, table: string): Promise<Map<string, ExistingColumn>> {
  const { schema, name } = splitTable(table);
  const rows = await tx.query(
    'SELECT COLUMN_NAME AS name, DATA_TYPE AS dataType, IS_NULLABLE AS nullable, COLUMN_DEFAULT AS def FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = COALESCE(?, DATABASE()) AND TABLE_NAME = ?',
    [schema ?? null, name],
  );
  return new Map(rows.map((r) => [String(r.name).toLowerCase(), { dataType: String(r.dataType).toLowerCase(), nullable: r.nullable === 'YES', def: r.def === null ? null : String(r.def) }]));
}

/**
 * A watermark column the table already has must be BIGINT NOT NULL DEFAULT 0: a NULL watermark never compares
 * below a token (and is no number to judge). A nullable or default-less BIGINT column is brought to it (NULLs
 * become 0); a column of another type is refused with the statement to run.
 */
async function fixWatermarkColumn(tx: MysqlSession, table: string, column: string, have: ExistingColumn): Promise<void> {
  const target = 'BIGINT NOT NULL DEFAULT 0';
  if (have.dataType !== 'bigint') {
    throw new RangeError(`fencing: ${table}.${column} is ${have.dataType.toUpperCase()}; it must be ${target}: ALTER TABLE ${table} MODIFY ${column} ${target} (after checking its values fit)`);
  }
  if (!have.nullable && have.def === '0') return;
  await tx.execute(`UPDATE ${ident(table)} SET ${ident(column)} = 0 WHERE ${ident(column)} IS NULL`);
  await tx.execute(`ALTER TABLE ${ident(table)} MODIFY ${ident(column)} ${target}`);
}

/** The tombstone table: the key column exactly as the fenced table has it (type, charset, collation), and the watermark. */
export function tombstoneTableSql(table: string, k: KeyColumn): string {
  const name = /^[A-Za-z0-9_]+$/;
  if ((k.charset && !name.test(k.charset)) || (k.collation && !name.test(k.collation))) throw new RangeError(`fencing: unexpected character set ${k.charset} or collation ${k.collation}`);
  const collate = k.charset && k.collation ? ` CHARACTER SET ${k.charset} COLLATE ${k.collation}` : '';
  return `CREATE TABLE IF NOT EXISTS ${ident(tombstoneTable(table))} (
    ${ident(k.column)} ${k.columnType}${collate} NOT NULL PRIMARY KEY,
    ${MARK_COLUMNS}) ENGINE=InnoDB`;
}

/** Adds the fencing columns to each fenced table, creates its tombstone table and the fencing tables. */
export async function ensureFencingSchema(db: MysqlDatabase, tables: readonly FencedTable[] = []): Promise<void> {
  await db.transaction(async (tx) => {
    for (const sql of MYSQL_FENCING_TABLES_SQL) await tx.execute(sql);
    for (const t of tables.map(tableRef)) {
      const k = await readKeyColumn(tx, t.table, t.keyColumn);
      const have = await existingColumns(tx, t.table);
      for (const c of [FENCE_COLUMN, FENCE_STEP_COLUMN]) {
        const existing = have.get(c);
        if (existing) await fixWatermarkColumn(tx, t.table, c, existing);
      }
      const columns: Array<[string, string]> = [
        [FENCE_COLUMN, `BIGINT NOT NULL DEFAULT 0 CHECK (${FENCE_COLUMN} >= 0)`],
        [FENCE_LOCK_COLUMN, `${LOCK_TYPE} NULL`],
        [FENCE_STEP_COLUMN, 'BIGINT NOT NULL DEFAULT 0'],
      ];
      const add = columns.filter(([c]) => !have.has(c));
      if (add.length) await tx.execute(`ALTER TABLE ${ident(t.table)} ${add.map(([c, type]) => `ADD COLUMN ${c} ${type}`).join(', ')}`);
      await tx.execute(tombstoneTableSql(t.table, k));
    }
  });
}

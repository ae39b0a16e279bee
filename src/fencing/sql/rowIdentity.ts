// Which row a fenced change means, as the database sees it. PostgreSQL finds a row by casting the caller's
// key to the column's type, so '03', '+3', ' 3' and 3 are all row 3; a watermark, tombstone or operation record
// kept under the caller's spelling would let a deleted row come back under another spelling. So every record
// is keyed by the key cast through the column's type and printed back (the database's own spelling), and the
// table by its schema-qualified name.
import type { SqlSession } from './db';
import { ident, quoteLiteral, rawIdent } from './names';

/**
 * Key types whose printed form is one per value (equal values print the same, whatever the input spelling).
 * numeric (3.0 = 3.00), floats (-0 = 0), dates and times (DateStyle) and citext are not: refused.
 */
const CANONICAL_KEY_TYPES = new Set(['smallint', 'integer', 'bigint', 'text', 'character varying', 'uuid']);

/** A fenced table as the catalog describes it. */
export interface FencedTable {
  /** The quoted name as given (for SQL text). */
  sql: string;
  /** `schema.table` as the catalog names it: part of every row's resource name. */
  name: string;
  keyColumn: string;
  /** The quoted key column. */
  keySql: string;
  /** The key column's type, without modifiers (a cast to it never truncates). */
  keyType: string;
  /** BIGINT columns: read as text and returned as bigint. */
  int8Columns: string[];
  /** The table's oid and the xmin of its pg_class row: an ALTER that adds a column or rewrites the table changes them. */
  version: string;
}

interface TableRow {
  version: string;
  schema: string;
  name: string;
  key_type: string | null;
  key_deterministic: boolean | null;
  primary_key: string | null;
  int8: string;
}

/** A clear refusal of a table or key the helpers cannot fence safely. */
export class FencedTableError extends RangeError {
  constructor(message: string) {
    super(message);
    this.name = 'FencedTableError';
  }
}

/** Reads the table's identity, its key column's type and its BIGINT columns (one catalog query). */
export async function describeTable(tx: SqlSession, table: string, keyColumn: string): Promise<FencedTable> {
  const sql = ident(table);
  const keySql = ident(keyColumn);
  const { rows } = await tx.query(
    `SELECT n.nspname AS schema, c.relname AS name, c.oid::text || '/' || c.xmin::text AS version,
       a.atttypid::regtype::text AS key_type,
       CASE WHEN a.attcollation = 0 THEN true ELSE (SELECT co.collisdeterministic FROM pg_collation co WHERE co.oid = a.attcollation) END AS key_deterministic,
       (SELECT string_agg(pa.attname, ',' ORDER BY pa.attnum) FROM pg_index i JOIN pg_attribute pa ON pa.attrelid = i.indrelid AND pa.attnum = ANY (i.indkey)
          WHERE i.indrelid = c.oid AND i.indisprimary) AS primary_key,
       COALESCE((SELECT json_agg(b.attname ORDER BY b.attnum) FROM pg_attribute b
          WHERE b.attrelid = c.oid AND b.attnum > 0 AND NOT b.attisdropped AND b.atttypid = 'int8'::regtype), '[]')::text AS int8
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = $2 AND a.attnum > 0 AND NOT a.attisdropped
     WHERE c.oid = $1::regclass`,
    [sql, keyColumn],
  );
  const row = rows[0] as TableRow;
  const name = `${row.schema}.${row.name}`;
  if (row.key_type === null) throw new FencedTableError(`${name} has no column ${JSON.stringify(keyColumn)} (keyColumn)`);
  const pk = row.primary_key?.split(',') ?? [];
  if (pk.length > 1) {
    throw new FencedTableError(`${name} has a composite primary key (${pk.join(', ')}): the row helpers fence tables with a one-column primary key; use withFence with a resource name of your own`);
  }
  if (pk[0] !== keyColumn) throw new FencedTableError(`${name}.${keyColumn} is not the table's primary key${pk[0] ? ` (${pk[0]} is)` : ' (it has none)'}: a fenced row must be one row`);
  if (!CANONICAL_KEY_TYPES.has(row.key_type)) {
    throw new FencedTableError(`${name}.${keyColumn} is ${row.key_type}: the row helpers take integer, text or uuid keys, whose equal values have one spelling`);
  }
  if (row.key_deterministic === false) throw new FencedTableError(`${name}.${keyColumn} has a nondeterministic collation: keys that compare equal may be spelled apart`);
  return { sql, name, keyColumn, keySql, keyType: row.key_type, int8Columns: JSON.parse(row.int8) as string[], version: row.version };
}

/**
 * Casts a key as the key column's type and prints it back (one statement), with the table's current version.
 * A key the type does not accept (a data exception, SQLSTATE class 22) is refused naming the column.
 */
async function castKey(tx: SqlSession, t: FencedTable, text: string): Promise<{ key: string; version: string }> {
  try {
    const { rows } = await tx.query(`SELECT CAST($2::text AS ${t.keyType})::text AS key, c.oid::text || '/' || c.xmin::text AS version FROM pg_class c WHERE c.oid = $1::regclass`, [t.sql, text]);
    return rows[0] as { key: string; version: string };
  } catch (err) {
    if (!String((err as { code?: unknown }).code ?? '').startsWith('22')) throw err;
    throw new FencedTableError(`key ${JSON.stringify(text)} is not a valid ${t.keyType} for ${t.name}.${t.keyColumn}: ${(err as Error).message}`);
  }
}

/**
 * Descriptions per database and table, reused while the table's version stays: describing costs a catalog
 * join per change (7 ms of PGlite's 28 ms). Adding a column or changing a type changes the version; a primary
 * key added or dropped on its own may not, and is seen at the next other change of the table or restart.
 */
const described = new WeakMap<object, Map<string, FencedTable>>();
const MAX_DESCRIBED = 1_000;

/**
 * The table's description and the key as the database holds it: cast through the column's type and printed
 * back ('03' -> '3', an upper-case or braced uuid -> its lower-case hyphenated form). A key the type does not
 * accept is refused here. One statement when the table is described already and unchanged since.
 */
export async function resolveRow(db: object, tx: SqlSession, table: string, keyColumn: string, key: string | number | bigint): Promise<{ t: FencedTable; key: string }> {
  const text = typeof key === 'number' ? String(key) : typeof key === 'bigint' ? key.toString() : key;
  const cache = described.get(db) ?? new Map<string, FencedTable>();
  described.set(db, cache);
  const id = `${table}\u0000${keyColumn}`;
  const cached = cache.get(id);
  // A failed statement ends the transaction: nothing is retried after one, and the entry is dropped.
  cache.delete(id);
  let t = cached ?? (await describeTable(tx, table, keyColumn));
  let cast = await castKey(tx, t, text);
  if (cast.version !== t.version) {
    // Altered since it was described (or another search_path resolved the name): describe it again.
    t = await describeTable(tx, table, keyColumn);
    cast = await castKey(tx, t, text);
  }
  if (cache.size >= MAX_DESCRIBED) cache.clear();
  cache.set(id, t);
  return { t, key: cast.key };
}

/** The checked key of a RowTarget: a string, a safe-integer number or a bigint. */
export function checkKey(key: unknown): string | number | bigint {
  if (typeof key === 'number' && !Number.isSafeInteger(key)) throw new RangeError(`key ${key} is not a safe integer: pass it as a bigint or a string`);
  if (!['string', 'number', 'bigint'].includes(typeof key)) throw new RangeError('key must be a string, number or bigint');
  return key as string | number | bigint;
}

/** What every row's resource name starts with (withFence refuses names that do). */
export const ROW_PREFIX = 'row:';

/** The resource name of a row: `row:schema.table:column:key`, the key as the database prints it. */
export function rowResource(t: FencedTable, key: string): string {
  return `${ROW_PREFIX}${t.name}:${t.keyColumn}:${key}`;
}

/**
 * The SQL of a row as JSON with each BIGINT column as decimal text (JSON numbers are doubles: 2^53+1 would come
 * back as 2^53). `alias` is the row's alias in the statement.
 */
export function rowJsonSql(t: FencedTable, alias: string): string {
  return [`to_jsonb(${alias})`, ...t.int8Columns.map((c) => `jsonb_build_object(${quoteLiteral(c)}, ${alias}.${rawIdent(c)}::text)`)].join(' || ');
}

/** A row read with rowJsonSql (or stored as JSON): its BIGINT columns back to bigint. */
export function reviveRow(t: FencedTable, row: Record<string, unknown>): Record<string, unknown> {
  const out = { ...row };
  for (const c of t.int8Columns) {
    const v = out[c];
    if (typeof v === 'string' || typeof v === 'number') out[c] = BigInt(v);
  }
  return out;
}

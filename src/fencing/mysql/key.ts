// The identity of a fenced row is its primary key as MariaDB holds it, never the caller's spelling of it.
//
// Integer keys: the caller may spell 3 as 3, 3n, '3', '03', '+3' or ' 3 ' (as MariaDB's own conversion reads
// them); the helpers pass MariaDB one canonical decimal, range-checked against the column's type, so every
// spelling finds the same row and the same tombstone. Spellings MariaDB would only read with a warning
// ('3abc', '3.0', '1e3') are refused instead of guessed. Text keys (CHAR/VARCHAR) are compared by MariaDB
// under the column's collation (case, trailing spaces), in the row's table and in its tombstone table, whose
// key column has the same type and collation; operation records use the key as the row stores it.
import type { MysqlSession } from './db';
import { splitTable } from './names';

interface ColumnInfo {
  column: string;
  /** The column's full type as MariaDB spells it (`int(11) unsigned`, `varchar(40)`), for the tombstone table. */
  columnType: string;
  charset: string | null;
  collation: string | null;
}

/** A fenced table's key column, as information_schema describes it; integers with their type's range. */
export type KeyColumn = ColumnInfo & ({ kind: 'text' } | { kind: 'integer'; min: bigint; max: bigint });

const INTEGER_BITS: Record<string, number> = { tinyint: 8, smallint: 16, mediumint: 24, int: 32, bigint: 64 };
const TEXT_TYPES = new Set(['char', 'varchar']);
const INTEGER_SPELLING = /^[ \t\n\r]*([+-]?)([0-9]+)[ \t\n\r]*$/;

/** Reads the key column of a fenced table; refuses a key that is not the table's whole primary key, or of a type not supported. */
export async function readKeyColumn(tx: MysqlSession, table: string, column: string): Promise<KeyColumn> {
  const { schema, name } = splitTable(table);
  const where = 'TABLE_SCHEMA = COALESCE(?, DATABASE()) AND TABLE_NAME = ?';
  const cols = await tx.query(
    `SELECT DATA_TYPE AS dataType, COLUMN_TYPE AS columnType, CHARACTER_SET_NAME AS charset, COLLATION_NAME AS collation FROM information_schema.COLUMNS WHERE ${where} AND COLUMN_NAME = ?`,
    [schema ?? null, name, column],
  );
  const col = cols[0] as { dataType: string; columnType: string; charset: string | null; collation: string | null } | undefined;
  if (!col) throw new RangeError(`fencing: table ${table} has no column ${column} (or no such table)`);
  const pk = await tx.query(`SELECT COLUMN_NAME AS name FROM information_schema.KEY_COLUMN_USAGE WHERE ${where} AND CONSTRAINT_NAME = 'PRIMARY'`, [schema ?? null, name]);
  if (pk.length !== 1 || (pk[0] as { name: string }).name !== column) {
    throw new RangeError(`fencing: ${column} must be the whole primary key of ${table} (its primary key is ${pk.length ? pk.map((r) => (r as { name: string }).name).join(', ') : 'missing'})`);
  }
  const dataType = col.dataType.toLowerCase();
  const base = { column, columnType: col.columnType, charset: col.charset, collation: col.collation };
  const bits = INTEGER_BITS[dataType];
  if (bits !== undefined) {
    const unsigned = /unsigned/i.test(col.columnType);
    const span = 1n << BigInt(bits);
    return { ...base, kind: 'integer', min: unsigned ? 0n : -(span / 2n), max: unsigned ? span - 1n : span / 2n - 1n };
  }
  if (TEXT_TYPES.has(dataType)) return { ...base, kind: 'text' };
  throw new RangeError(`fencing: the key column ${table}.${column} is ${col.columnType}; supported key types are integers and CHAR/VARCHAR`);
}

/** The key as the parameter MariaDB compares with the column: a canonical decimal for integers, the string for text. */
export function keyParam(k: KeyColumn, key: unknown, table: string): string {
  if (k.kind === 'text') {
    if (typeof key !== 'string') throw new RangeError(`fencing: the key of ${table}.${k.column} (${k.columnType}) must be a string`);
    return key;
  }
  let n: bigint;
  if (typeof key === 'bigint') n = key;
  else if (typeof key === 'number') {
    if (!Number.isSafeInteger(key)) throw new RangeError(`fencing: key ${key} of ${table}.${k.column} is not a safe integer; pass a bigint or a decimal string`);
    n = BigInt(key);
  } else if (typeof key === 'string') {
    const m = INTEGER_SPELLING.exec(key);
    if (!m?.[2]) throw new RangeError(`fencing: key ${JSON.stringify(key)} of ${table}.${k.column} (${k.columnType}) is not an integer`);
    n = BigInt(m[2]) * (m[1] === '-' ? -1n : 1n);
  } else throw new RangeError(`fencing: the key of ${table}.${k.column} must be an integer, a bigint or a decimal string`);
  if (n < k.min || n > k.max) throw new RangeError(`fencing: key ${n} is outside ${table}.${k.column}'s range ${k.min}..${k.max} (${k.columnType})`);
  return n.toString();
}

/** The expression a key parameter is compared through: exact integers, not doubles. */
export function keyExpr(k: KeyColumn): string {
  if (k.kind === 'text') return '?';
  return k.min < 0n ? 'CAST(? AS SIGNED)' : 'CAST(? AS UNSIGNED)';
}

/** The key of a stored row (or tombstone) as text: the identity its operation records use. */
export function storedKey(value: unknown): string {
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'bigint') return String(value);
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  throw new Error(`fencing: unexpected key value ${String(value)}`);
}

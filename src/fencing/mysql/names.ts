// Identifiers the MariaDB/MySQL helpers put into SQL text, and the fencing tables' names.

export const FENCE_COLUMN = 'fence';
export const FENCE_LOCK_COLUMN = 'fence_lock';
export const FENCE_STEP_COLUMN = 'fence_step';

/** Applied operations, for same-token retries (their stored results). */
export const OPERATIONS_TABLE = 'fencing_operations';
/** Watermarks of named resources (withFence). */
export const WATERMARKS_TABLE = 'fencing_watermarks';
/** Each fenced table's tombstones live in a table of their own with the same key column (type and collation). */
export const TOMBSTONES_PREFIX = 'fencing_tomb_';

const IDENT = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const MAX_IDENT = 64;

function parts(name: string): string[] {
  const p = typeof name === 'string' ? name.split('.') : [];
  if (p.length < 1 || p.length > 2 || !p.every((s) => IDENT.test(s))) {
    throw new RangeError(`not a plain SQL identifier: ${JSON.stringify(name)} (letters, digits, _; optionally database.name)`);
  }
  return p;
}

/** Quotes an identifier, optionally database-qualified (`db.table`), in backticks; anything else is refused. */
export function ident(name: string): string {
  return parts(name)
    .map((p) => `\`${p}\``)
    .join('.');
}

/** The table's name and its database (undefined: the connection's current database). */
export function splitTable(table: string): { schema: string | undefined; name: string } {
  const [first, second] = parts(table) as [string, string | undefined];
  return second === undefined ? { schema: undefined, name: first } : { schema: first, name: second };
}

/** The tombstone table of a fenced table, in the same database. */
export function tombstoneTable(table: string): string {
  const { schema, name } = splitTable(table);
  const tomb = `${TOMBSTONES_PREFIX}${name}`;
  if (tomb.length > MAX_IDENT) throw new RangeError(`table name ${name} is too long for its tombstone table ${tomb} (at most ${MAX_IDENT - TOMBSTONES_PREFIX.length} characters)`);
  return schema === undefined ? tomb : `${schema}.${tomb}`;
}

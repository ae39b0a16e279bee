// Identifiers the helpers put into SQL text (tables, columns) and the fencing tables' names.

/** The columns the schema helper adds to a fenced table. */
export const FENCE_COLUMN = 'fence';
export const FENCE_LOCK_COLUMN = 'fence_lock';
export const FENCE_STEP_COLUMN = 'fence_step';

/** Applied operations, for same-token retries (their stored results). */
export const OPERATIONS_TABLE = 'fencing_operations';
/** Watermarks of resources that are not rows: HTTP resources, and deleted rows (tombstones). */
export const WATERMARKS_TABLE = 'fencing_watermarks';

const IDENT = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** Quotes an identifier, optionally schema-qualified (`schema.table`); anything else is refused. */
export function ident(name: string): string {
  const parts = typeof name === 'string' ? name.split('.') : [];
  if (parts.length < 1 || parts.length > 2 || !parts.every((p) => IDENT.test(p))) {
    throw new RangeError(`not a plain SQL identifier: ${JSON.stringify(name)} (letters, digits, _; optionally schema.name)`);
  }
  return parts.map((p) => `"${p}"`).join('.');
}

/** A name read from the catalog, quoted for SQL text whatever it holds. */
export function rawIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** A string as an SQL literal (for names from the catalog; values are always parameters). */
export function quoteLiteral(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

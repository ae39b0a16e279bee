// Fenced changes in PostgreSQL: the token check and the business change in one transaction, with a typed
// outcome instead of a row count.
//
// Every change takes a transaction-scoped advisory lock on its resource first. That serializes the writers of
// one resource even when its row does not exist (yet, or any more: an insert racing a delete), and it makes
// the lookup of a stored operation see every operation committed before: two racing retries of one operation
// apply it once and the second gets the stored result. Under READ COMMITTED each statement after the lock
// reads the latest committed state. The UPDATE/DELETE still carries the fence condition, so that even a writer
// that skips the helper can never be overwritten by an older token.
import { checkClaim, type CheckedClaim, type FencingClaim } from '../token';
import { advanced, judge, UNFENCED, type Refusal, type Watermark } from '../watermark';
import type { SqlDatabase, SqlSession } from './db';
import { FENCE_COLUMN, FENCE_LOCK_COLUMN, FENCE_STEP_COLUMN, ident, OPERATIONS_TABLE, WATERMARKS_TABLE } from './names';
import { checkKey, resolveRow, reviveRow, ROW_PREFIX, rowJsonSql, rowResource, type FencedTable } from './rowIdentity';

/** The result of a fenced change: never a row count. */
export type FencedOutcome<R> =
  /** Checked and applied; the resource's watermark is now the token (and step). */
  | { status: 'APPLIED'; result: R; token: bigint; step: bigint }
  /** A retry of an operation already applied under this token: its stored result; nothing applied again. */
  | { status: 'REPLAYED'; result: R; token: bigint; step: bigint }
  | Refusal
  /** No such row (update, delete); `watermark` is 0 or, for a deleted row, the token that deleted it. */
  | { status: 'NOT_FOUND'; watermark: bigint };

export interface RowTarget {
  table: string;
  /** The primary-key column (one column); default `id`. */
  keyColumn?: string;
  key: string | number | bigint;
}

export interface FencedOptions<R> {
  /** More statements of the same transaction, run after the change (an audit row, an outbox message); a throw rolls everything back. */
  alongside?: (tx: SqlSession, result: R) => Promise<void>;
}

/** A change's outcome when it found nothing to change. */
const NOT_FOUND = Symbol('not found');

interface Found {
  mark: Watermark;
  exists: boolean;
}

type Row = Record<string, unknown>;

function toJsonValue<R>(value: R): R {
  if (value === undefined) return null as R;
  return JSON.parse(JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))) as R;
}

function markOf(row: { fence: string; lock: string | null; step: string }): Watermark {
  return { lock: row.lock, fence: BigInt(row.fence), step: BigInt(row.step) };
}

async function storedOperation(tx: SqlSession, resource: string, c: CheckedClaim): Promise<{ step: bigint; result: unknown } | undefined> {
  const { rows } = await tx.query(`SELECT step::text AS step, result FROM ${OPERATIONS_TABLE} WHERE resource = $1 AND token = $2::bigint AND operation_id = $3`, [
    resource,
    c.token.toString(),
    c.operationId,
  ]);
  const row = rows[0] as { step: string; result: unknown } | undefined;
  return row && { step: BigInt(row.step), result: row.result };
}

/** The check-and-apply of one claim on one resource, inside the caller's transaction. */
async function fencedStep<R>(
  tx: SqlSession,
  resource: string,
  claim: CheckedClaim,
  read: () => Promise<Found>,
  apply: (found: Found) => Promise<R | typeof NOT_FOUND>,
  opts: FencedOptions<R>,
  revive: (stored: R) => R = (r) => r,
): Promise<FencedOutcome<R>> {
  await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [resource]);
  const prior = await storedOperation(tx, resource, claim);
  if (prior) return { status: 'REPLAYED', result: revive(prior.result as R), token: claim.token, step: prior.step };
  const found = await read();
  const refusal = judge(found.mark, claim);
  if (refusal) return refusal;
  const done = await apply(found);
  if (done === NOT_FOUND) return { status: 'NOT_FOUND', watermark: found.mark.fence };
  // Stored as JSON (bigints as text); the caller gets it as a retry would, with its bigints revived.
  const result = toJsonValue(done);
  if (opts.alongside) await opts.alongside(tx, revive(result));
  await tx.query(`INSERT INTO ${OPERATIONS_TABLE} (resource, token, operation_id, step, result) VALUES ($1, $2::bigint, $3, $4::bigint, $5::jsonb)`, [
    resource,
    claim.token.toString(),
    claim.operationId,
    claim.step.toString(),
    JSON.stringify(result),
  ]);
  return { status: 'APPLIED', result: revive(result), token: claim.token, step: claim.step };
}

// ----- resources that are not rows (HTTP resources, tombstones of deleted rows) -----

async function readWatermark(tx: SqlSession, resource: string): Promise<Watermark | undefined> {
  const { rows } = await tx.query(`SELECT fence::text AS fence, lock, step::text AS step FROM ${WATERMARKS_TABLE} WHERE resource = $1`, [resource]);
  const row = rows[0] as { fence: string; lock: string | null; step: string } | undefined;
  return row && markOf(row);
}

async function writeWatermark(tx: SqlSession, resource: string, mark: Watermark): Promise<void> {
  await tx.query(
    `INSERT INTO ${WATERMARKS_TABLE} (resource, lock, fence, step) VALUES ($1, $2, $3::bigint, $4::bigint)
     ON CONFLICT (resource) DO UPDATE SET lock = EXCLUDED.lock, fence = EXCLUDED.fence, step = EXCLUDED.step`,
    [resource, mark.lock, mark.fence.toString(), mark.step.toString()],
  );
}

/**
 * Runs fn (the business change) only if the claim passes the named resource's watermark, and records the new
 * watermark and the operation in the same transaction. For changes that are not one row's update: several
 * statements, another table, a file path's metadata. fn's result must be JSON-serializable (it is stored for
 * retries, bigints as decimal strings).
 */
export async function withFence<R>(db: SqlDatabase, resource: string, claim: FencingClaim, fn: (tx: SqlSession) => Promise<R>, opts: FencedOptions<R> = {}): Promise<FencedOutcome<R>> {
  const c = checkClaim(claim);
  return db.transaction((tx) => withFenceIn(tx, resource, c, fn, opts));
}

/** withFence inside a transaction the caller already holds (the HTTP middleware's). */
export function withFenceIn<R>(tx: SqlSession, resource: string, c: CheckedClaim, fn: (tx: SqlSession) => Promise<R>, opts: FencedOptions<R> = {}): Promise<FencedOutcome<R>> {
  if (typeof resource !== 'string' || resource === '') throw new RangeError('resource must be a non-empty string');
  // Row resources are named by the row helpers; a name of that shape here would share a row's watermark.
  if (resource.startsWith(ROW_PREFIX)) throw new RangeError(`resource names starting with ${JSON.stringify(ROW_PREFIX)} are the row helpers' own: ${JSON.stringify(resource)}`);
  return fencedStep(
    tx,
    resource,
    c,
    async () => ({ mark: (await readWatermark(tx, resource)) ?? UNFENCED, exists: true }),
    async () => {
      const result = await fn(tx);
      await writeWatermark(tx, resource, advanced(c));
      return result;
    },
    opts,
  );
}

// ----- rows of a fenced table -----

/** A row change's table and key as the database names them. */
interface RowSql {
  t: FencedTable;
  /** The key as the database prints it; every statement finds the row by it. */
  key: string;
  resource: string;
}

async function rowSql(db: SqlDatabase, tx: SqlSession, target: RowTarget): Promise<RowSql> {
  const { t, key } = await resolveRow(db, tx, target.table, target.keyColumn ?? 'id', checkKey(target.key));
  return { t, key, resource: rowResource(t, key) };
}

function checkColumns(values: Row, what: string): string[] {
  const cols = Object.keys(values ?? {});
  for (const c of cols) {
    ident(c);
    if (c === FENCE_COLUMN || c === FENCE_LOCK_COLUMN || c === FENCE_STEP_COLUMN) throw new RangeError(`${what}: ${c} is set by the fence, not by the caller`);
  }
  return cols;
}

async function readRow(tx: SqlSession, s: RowSql): Promise<Found> {
  const { rows } = await tx.query(
    `SELECT ${FENCE_COLUMN}::text AS fence, ${FENCE_LOCK_COLUMN} AS lock, ${FENCE_STEP_COLUMN}::text AS step FROM ${s.t.sql} WHERE ${s.t.keySql} = $1 FOR UPDATE`,
    [s.key],
  );
  const row = rows[0] as { fence: string; lock: string | null; step: string } | undefined;
  if (row) return { mark: markOf(row), exists: true };
  return { mark: (await readWatermark(tx, s.resource)) ?? UNFENCED, exists: false };
}

/** The fence condition, with the token and step in these parameters. */
function fenceGuard(token: string, step: string): string {
  return `(${FENCE_COLUMN} < ${token}::bigint OR (${FENCE_COLUMN} = ${token}::bigint AND ${FENCE_STEP_COLUMN} < ${step}::bigint))`;
}

async function updateRow(tx: SqlSession, s: RowSql, cols: string[], values: Row, c: CheckedClaim): Promise<Row> {
  // $1 token, $2 lock, $3 step, $4 key, then the values.
  const sets = cols.map((col, i) => `${ident(col)} = $${i + 5}`);
  const { rows } = await tx.query(
    `UPDATE ${s.t.sql} AS t SET ${[...sets, `${FENCE_COLUMN} = $1::bigint`, `${FENCE_LOCK_COLUMN} = $2`, `${FENCE_STEP_COLUMN} = $3::bigint`].join(', ')}
     WHERE ${s.t.keySql} = $4 AND ${fenceGuard('$1', '$3')} RETURNING ${rowJsonSql(s.t, 't')} AS row`,
    [c.token.toString(), c.lock, c.step.toString(), s.key, ...cols.map((col) => values[col])],
  );
  const row = rows[0] as { row: Row } | undefined;
  // The row is locked and was judged: only a bug gets here.
  if (!row) throw new Error(`fencing: the guarded UPDATE of ${s.resource} changed no row after its check passed`);
  return row.row;
}

/** A fenced change of one row: the claim checked against the row (or its tombstone), then `apply`. */
function rowChange(
  db: SqlDatabase,
  target: RowTarget,
  claim: FencingClaim,
  opts: FencedOptions<Row>,
  apply: (tx: SqlSession, s: RowSql, c: CheckedClaim, f: Found) => Promise<Row | typeof NOT_FOUND>,
): Promise<FencedOutcome<Row>> {
  const c = checkClaim(claim);
  checkKey(target.key);
  return db.transaction(async (tx) => {
    const s = await rowSql(db, tx, target);
    return fencedStep(tx, s.resource, c, () => readRow(tx, s), (f) => apply(tx, s, c, f), opts, (r) => reviveRow(s.t, r));
  });
}

/**
 * `UPDATE table SET ... , fence = token WHERE key = ... AND fence < token` (or the same token at a later step):
 * APPLIED with the updated row, or why not (STALE with the watermark, STALE_STEP, WRONG_LOCK, NOT_FOUND), or
 * REPLAYED with the row as the first attempt returned it. The row's BIGINT columns are bigints.
 */
export async function fencedUpdate(db: SqlDatabase, target: RowTarget & { set: Row }, claim: FencingClaim, opts: FencedOptions<Row> = {}): Promise<FencedOutcome<Row>> {
  const cols = checkColumns(target.set, 'fencedUpdate');
  if (cols.length === 0) throw new RangeError('fencedUpdate: set names no column');
  return rowChange(db, target, claim, opts, async (tx, s, c, f) => (f.exists ? updateRow(tx, s, cols, target.set, c) : NOT_FOUND));
}

/** Inserts the row with the token as its watermark, or updates it like fencedUpdate. A deleted row's watermark still holds. */
export async function fencedUpsert(db: SqlDatabase, target: RowTarget & { values: Row }, claim: FencingClaim, opts: FencedOptions<Row> = {}): Promise<FencedOutcome<Row>> {
  const cols = checkColumns(target.values, 'fencedUpsert').filter((col) => col !== (target.keyColumn ?? 'id'));
  return rowChange(db, target, claim, opts, async (tx, s, c, f) => {
    if (f.exists) return updateRow(tx, s, cols, target.values, c);
    const names = [s.t.keySql, ...cols.map(ident), FENCE_COLUMN, FENCE_LOCK_COLUMN, FENCE_STEP_COLUMN];
    const params = [s.key, ...cols.map((col) => target.values[col]), c.token.toString(), c.lock, c.step.toString()];
    const n = cols.length;
    const placeholders = params.map((_, i) => (i === n + 1 || i === n + 3 ? `$${i + 1}::bigint` : `$${i + 1}`));
    const { rows } = await tx.query(`INSERT INTO ${s.t.sql} AS t (${names.join(', ')}) VALUES (${placeholders.join(', ')}) RETURNING ${rowJsonSql(s.t, 't')} AS row`, params);
    await tx.query(`DELETE FROM ${WATERMARKS_TABLE} WHERE resource = $1`, [s.resource]);
    return (rows[0] as { row: Row }).row;
  });
}

/**
 * Deletes the row if the claim passes, keeping its watermark as a tombstone (in fencing_watermarks, under the
 * key as the database spells it): an older token can neither update nor re-create it, however it spells the
 * key. Returns the deleted row.
 */
export async function fencedDelete(db: SqlDatabase, target: RowTarget, claim: FencingClaim, opts: FencedOptions<Row> = {}): Promise<FencedOutcome<Row>> {
  return rowChange(db, target, claim, opts, async (tx, s, c, f) => {
    if (!f.exists) return NOT_FOUND;
    const { rows } = await tx.query(`DELETE FROM ${s.t.sql} AS t WHERE ${s.t.keySql} = $3 AND ${fenceGuard('$1', '$2')} RETURNING ${rowJsonSql(s.t, 't')} AS row`, [
      c.token.toString(),
      c.step.toString(),
      s.key,
    ]);
    const row = rows[0] as { row: Row } | undefined;
    if (!row) throw new Error(`fencing: the guarded DELETE of ${s.resource} removed no row after its check passed`);
    await writeWatermark(tx, s.resource, advanced(c));
    return row.row;
  });
}

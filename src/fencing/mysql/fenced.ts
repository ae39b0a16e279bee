// Fenced changes in MariaDB/MySQL: the token check and the business change in one transaction, with a typed
// outcome instead of a row count.
//
// Writers of one row take turns on InnoDB's row lock: the row is read `FOR UPDATE` (or, when it is gone, its
// tombstone; a named resource's watermark row is created first so there is always a row to lock). Only then
// is the operation record looked up, so racing retries of one operation apply it once. Two writers racing to
// create the same row (no row, no tombstone to lock) both insert; the loser fails on the primary key and its
// whole transaction is run again, this time finding the row. The UPDATE/DELETE still carries the fence
// condition, so a writer that skips the helpers is never overwritten by an older token.
import { checkClaim, type CheckedClaim, type FencingClaim } from '../token';
import { advanced, judge, UNFENCED, type Refusal, type Watermark } from '../watermark';
import { asStored, decodeResult, encodeResult } from '../storedResult';
import type { MysqlDatabase, MysqlRow, MysqlSession } from './db';
import { keyExpr, keyParam, readKeyColumn, storedKey, type KeyColumn } from './key';
import { FENCE_COLUMN, FENCE_LOCK_COLUMN, FENCE_STEP_COLUMN, ident, OPERATIONS_TABLE, tombstoneTable, WATERMARKS_TABLE } from './names';

/** The result of a fenced change: never a row count. */
export type FencedOutcome<R> =
  | { status: 'APPLIED'; result: R; token: bigint; step: bigint }
  | { status: 'REPLAYED'; result: R; token: bigint; step: bigint }
  | Refusal
  /** No such row (update, delete); `watermark` is 0 or, for a deleted row, the token that deleted it. */
  | { status: 'NOT_FOUND'; watermark: bigint };

export interface RowTarget {
  table: string;
  /** The primary-key column (the table's whole primary key); default `id`. */
  keyColumn?: string;
  /** Integer keys: a number, bigint or decimal string; text keys: a string (compared under the column's collation). */
  key: string | number | bigint;
}

export interface FencedOptions<R> {
  /** More statements of the same transaction, run after the change; a throw rolls everything back. */
  alongside?: (tx: MysqlSession, result: R) => Promise<void>;
}

/** How often a transaction that lost a race (a deadlock, or a row created under it) is run again. */
const MAX_ATTEMPTS = 8;
const ER_DUP_ENTRY = 1062;
const ER_LOCK_DEADLOCK = 1213;

const NOT_FOUND = Symbol('not found');

class LostRace extends Error {}

function isRetryable(err: unknown): boolean {
  return err instanceof LostRace || (err as { errno?: number }).errno === ER_LOCK_DEADLOCK;
}

async function retrying<T>(db: MysqlDatabase, fn: (tx: MysqlSession) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction(fn);
    } catch (err) {
      if (!isRetryable(err) || attempt >= MAX_ATTEMPTS) throw err;
    }
  }
}

/** Runs one of the helper's own INSERTs; a duplicate key there means another writer got in first: run again. */
async function insertOrLose(tx: MysqlSession, sql: string, params: unknown[]): Promise<void> {
  try {
    await tx.execute(sql, params);
  } catch (err) {
    if ((err as { errno?: number }).errno === ER_DUP_ENTRY) throw new LostRace('fencing: lost a race to create a row');
    throw err;
  }
}

function markOf(row: MysqlRow): Watermark {
  return { lock: (row[FENCE_LOCK_COLUMN] as string | null) ?? null, fence: BigInt(row[FENCE_COLUMN] as bigint), step: BigInt(row[FENCE_STEP_COLUMN] as bigint) };
}

const SHA = 'UNHEX(SHA2(?, 256))';

async function storedOperation(tx: MysqlSession, resource: string, c: CheckedClaim): Promise<{ step: bigint; result: unknown } | undefined> {
  const rows = await tx.query(`SELECT step, result FROM ${OPERATIONS_TABLE} WHERE resource_sha = ${SHA} AND token = CAST(? AS SIGNED) AND operation_id = ?`, [
    resource,
    c.token.toString(),
    c.operationId,
  ]);
  const row = rows[0] as { step: bigint; result: string } | undefined;
  return row && { step: row.step, result: decodeResult(row.result) };
}

async function recordOperation(tx: MysqlSession, resource: string, c: CheckedClaim, result: unknown): Promise<void> {
  await insertOrLose(tx, `INSERT INTO ${OPERATIONS_TABLE} (resource_sha, resource, token, operation_id, step, result) VALUES (${SHA}, ?, CAST(? AS SIGNED), ?, CAST(? AS SIGNED), ?)`, [
    resource,
    resource,
    c.token.toString(),
    c.operationId,
    c.step.toString(),
    encodeResult(result),
  ]);
}

/** What a change found: the watermark, the row (if any), and the resource name its operations are kept under. */
interface Found {
  mark: Watermark;
  row: MysqlRow | undefined;
  resource: string | undefined;
}

/** Judges the claim against what was found, applies, records: the part every change shares. */
async function decide<R>(
  tx: MysqlSession,
  c: CheckedClaim,
  found: Found,
  apply: () => Promise<{ result: R; resource: string } | typeof NOT_FOUND>,
  opts: FencedOptions<R>,
): Promise<FencedOutcome<R>> {
  if (found.resource !== undefined) {
    const prior = await storedOperation(tx, found.resource, c);
    if (prior) return { status: 'REPLAYED', result: prior.result as R, token: c.token, step: prior.step };
  }
  const refusal = judge(found.mark, c);
  if (refusal) return refusal;
  const done = await apply();
  if (done === NOT_FOUND) return { status: 'NOT_FOUND', watermark: found.mark.fence };
  const result = asStored(done.result);
  if (opts.alongside) await opts.alongside(tx, result);
  await recordOperation(tx, done.resource, c, result);
  return { status: 'APPLIED', result, token: c.token, step: c.step };
}

// ----- named resources -----

async function lockWatermark(tx: MysqlSession, resource: string): Promise<Watermark> {
  // INSERT IGNORE waits on a racing transaction's insert of the same row, so there is always a row to lock.
  await tx.execute(`INSERT IGNORE INTO ${WATERMARKS_TABLE} (resource_sha, resource) VALUES (${SHA}, ?)`, [resource, resource]);
  const rows = await tx.query(`SELECT ${FENCE_COLUMN}, ${FENCE_LOCK_COLUMN}, ${FENCE_STEP_COLUMN} FROM ${WATERMARKS_TABLE} WHERE resource_sha = ${SHA} FOR UPDATE`, [resource]);
  return rows[0] ? markOf(rows[0]) : UNFENCED;
}

/**
 * Runs fn (the business change) only if the claim passes the named resource's watermark, and records the new
 * watermark and the operation in the same transaction. fn's result must be JSON-serializable (bigints allowed).
 * fn may run more than once if the transaction loses a deadlock; only the committed run counts.
 */
export async function withFence<R>(db: MysqlDatabase, resource: string, claim: FencingClaim, fn: (tx: MysqlSession) => Promise<R>, opts: FencedOptions<R> = {}): Promise<FencedOutcome<R>> {
  const c = checkClaim(claim);
  if (typeof resource !== 'string' || resource === '') throw new RangeError('resource must be a non-empty string');
  return retrying(db, async (tx) => {
    const mark = await lockWatermark(tx, resource);
    return decide(tx, c, { mark, row: undefined, resource }, async () => {
      const result = await fn(tx);
      const next = advanced(c);
      await tx.execute(`UPDATE ${WATERMARKS_TABLE} SET ${FENCE_LOCK_COLUMN} = ?, ${FENCE_COLUMN} = CAST(? AS SIGNED), ${FENCE_STEP_COLUMN} = CAST(? AS SIGNED) WHERE resource_sha = ${SHA}`, [
        next.lock,
        next.fence.toString(),
        next.step.toString(),
        resource,
      ]);
      return { result, resource };
    }, opts);
  });
}

// ----- rows of a fenced table -----

type Row = Record<string, unknown>;

interface RowCtx {
  tx: MysqlSession;
  table: string;
  tomb: string;
  k: KeyColumn;
  /** The key column, quoted, and the comparison of it with a key parameter. */
  keyCol: string;
  where: string;
  key: string;
  c: CheckedClaim;
}

const keyCache = new WeakMap<MysqlDatabase, Map<string, KeyColumn>>();

async function keyColumnOf(db: MysqlDatabase, tx: MysqlSession, table: string, column: string): Promise<KeyColumn> {
  let cache = keyCache.get(db);
  if (!cache) keyCache.set(db, (cache = new Map()));
  const id = `${table}\u0000${column}`;
  let k = cache.get(id);
  if (!k) cache.set(id, (k = await readKeyColumn(tx, table, column)));
  return k;
}

function resourceOf(ctx: RowCtx, stored: unknown): string {
  return `row:${ctx.table}:${ctx.k.column}:${storedKey(stored)}`;
}

async function readRow(ctx: RowCtx): Promise<Found> {
  const rows = await ctx.tx.query(`SELECT * FROM ${ident(ctx.table)} WHERE ${ctx.where} FOR UPDATE`, [ctx.key]);
  const row = rows[0];
  if (row) return { mark: markOf(row), row, resource: resourceOf(ctx, row[ctx.k.column]) };
  const tombs = await ctx.tx.query(`SELECT * FROM ${ident(ctx.tomb)} WHERE ${ctx.where} FOR UPDATE`, [ctx.key]);
  const tomb = tombs[0];
  return tomb ? { mark: markOf(tomb), row: undefined, resource: resourceOf(ctx, tomb[ctx.k.column]) } : { mark: UNFENCED, row: undefined, resource: undefined };
}

async function rereadRow(ctx: RowCtx): Promise<Row> {
  const rows = await ctx.tx.query(`SELECT * FROM ${ident(ctx.table)} WHERE ${ctx.where}`, [ctx.key]);
  if (!rows[0]) throw new Error(`fencing: row ${ctx.key} of ${ctx.table} vanished inside its own transaction`);
  return rows[0];
}

/** The fence condition; parameters: token, token, step. */
const FENCE_GUARD = `(${FENCE_COLUMN} < CAST(? AS SIGNED) OR (${FENCE_COLUMN} = CAST(? AS SIGNED) AND ${FENCE_STEP_COLUMN} < CAST(? AS SIGNED)))`;
const guardParams = (c: CheckedClaim): string[] => [c.token.toString(), c.token.toString(), c.step.toString()];

function checkColumns(values: Row, what: string, keyColumn: string): string[] {
  const cols = Object.keys(values ?? {});
  for (const col of cols) {
    ident(col);
    if (col === FENCE_COLUMN || col === FENCE_LOCK_COLUMN || col === FENCE_STEP_COLUMN) throw new RangeError(`${what}: ${col} is set by the fence, not by the caller`);
  }
  return cols.filter((col) => col !== keyColumn);
}

async function updateRow(ctx: RowCtx, row: MysqlRow, cols: string[], values: Row): Promise<{ result: Row; resource: string }> {
  const sets = [...cols.map((col) => `${ident(col)} = ?`), `${FENCE_COLUMN} = CAST(? AS SIGNED)`, `${FENCE_LOCK_COLUMN} = ?`, `${FENCE_STEP_COLUMN} = CAST(? AS SIGNED)`];
  const { affectedRows } = await ctx.tx.execute(`UPDATE ${ident(ctx.table)} SET ${sets.join(', ')} WHERE ${ctx.where} AND ${FENCE_GUARD}`, [
    ...cols.map((col) => values[col]),
    ctx.c.token.toString(),
    ctx.c.lock,
    ctx.c.step.toString(),
    ctx.key,
    ...guardParams(ctx.c),
  ]);
  // The row is locked and was judged: only a bug gets here.
  if (affectedRows !== 1) throw new Error(`fencing: the guarded UPDATE of ${ctx.table} ${ctx.key} changed ${affectedRows} rows after its check passed`);
  return { result: await rereadRow(ctx), resource: resourceOf(ctx, row[ctx.k.column]) };
}

function rowChange(
  db: MysqlDatabase,
  target: RowTarget,
  claim: FencingClaim,
  opts: FencedOptions<Row>,
  apply: (ctx: RowCtx, found: Found) => Promise<{ result: Row; resource: string } | typeof NOT_FOUND>,
): Promise<FencedOutcome<Row>> {
  const c = checkClaim(claim);
  const table = target.table;
  const tomb = tombstoneTable(table);
  const column = target.keyColumn ?? 'id';
  ident(column);
  return retrying(db, async (tx) => {
    const k = await keyColumnOf(db, tx, table, column);
    const ctx: RowCtx = { tx, table, tomb, k, keyCol: ident(column), where: `${ident(column)} = ${keyExpr(k)}`, key: keyParam(k, target.key, table), c };
    const found = await readRow(ctx);
    return decide(tx, c, found, () => apply(ctx, found), opts);
  });
}

/**
 * `UPDATE table SET ..., fence = token WHERE key = ... AND fence < token` (or the same token at a later step):
 * APPLIED with the updated row (BIGINT columns as bigint), or why not (STALE, STALE_STEP, WRONG_LOCK,
 * NOT_FOUND), or REPLAYED with the row as the first attempt returned it.
 */
export async function fencedUpdate(db: MysqlDatabase, target: RowTarget & { set: Row }, claim: FencingClaim, opts: FencedOptions<Row> = {}): Promise<FencedOutcome<Row>> {
  const cols = checkColumns(target.set, 'fencedUpdate', target.keyColumn ?? 'id');
  // The key column is never changed; naming only it (`set: { id: key }`) moves just the fence, like the
  // PostgreSQL helper's `SET id = id` (check-resource writes a row that way).
  if (Object.keys(target.set ?? {}).length === 0) throw new RangeError('fencedUpdate: set names no column');
  return rowChange(db, target, claim, opts, async (ctx, f) => (f.row ? updateRow(ctx, f.row, cols, target.set) : NOT_FOUND));
}

/** Inserts the row with the token as its watermark, or updates it like fencedUpdate. A deleted row's tombstone still holds. */
export async function fencedUpsert(db: MysqlDatabase, target: RowTarget & { values: Row }, claim: FencingClaim, opts: FencedOptions<Row> = {}): Promise<FencedOutcome<Row>> {
  const cols = checkColumns(target.values, 'fencedUpsert', target.keyColumn ?? 'id');
  return rowChange(db, target, claim, opts, async (ctx, f) => {
    if (f.row) return updateRow(ctx, f.row, cols, target.values);
    const names = [ctx.keyCol, ...cols.map(ident), FENCE_COLUMN, FENCE_LOCK_COLUMN, FENCE_STEP_COLUMN];
    const placeholders = [keyExpr(ctx.k), ...cols.map(() => '?'), 'CAST(? AS SIGNED)', '?', 'CAST(? AS SIGNED)'];
    await insertOrLose(ctx.tx, `INSERT INTO ${ident(ctx.table)} (${names.join(', ')}) VALUES (${placeholders.join(', ')})`, [
      ctx.key,
      ...cols.map((col) => target.values[col]),
      ctx.c.token.toString(),
      ctx.c.lock,
      ctx.c.step.toString(),
    ]);
    await ctx.tx.execute(`DELETE FROM ${ident(ctx.tomb)} WHERE ${ctx.where}`, [ctx.key]);
    // Read back by the key as given: if MariaDB stored another key (a non-strict sql_mode truncates an
    // over-long key, maybe onto a deleted row's), this throws and the insert is rolled back.
    const row = await rereadRow(ctx);
    return { result: row, resource: resourceOf(ctx, row[ctx.k.column]) };
  });
}

/**
 * Deletes the row if the claim passes, keeping its watermark in the table's tombstone table: an older token
 * can neither update nor re-create it, under any spelling of its key. Returns the deleted row.
 */
export async function fencedDelete(db: MysqlDatabase, target: RowTarget, claim: FencingClaim, opts: FencedOptions<Row> = {}): Promise<FencedOutcome<Row>> {
  return rowChange(db, target, claim, opts, async (ctx, f) => {
    if (!f.row) return NOT_FOUND;
    const { affectedRows } = await ctx.tx.execute(`DELETE FROM ${ident(ctx.table)} WHERE ${ctx.where} AND ${FENCE_GUARD}`, [ctx.key, ...guardParams(ctx.c)]);
    if (affectedRows !== 1) throw new Error(`fencing: the guarded DELETE of ${ctx.table} ${ctx.key} removed ${affectedRows} rows after its check passed`);
    // The tombstone keeps the key as the row stored it.
    const stored = storedKey(f.row[ctx.k.column]);
    await ctx.tx.execute(
      `INSERT INTO ${ident(ctx.tomb)} (${ctx.keyCol}, ${FENCE_COLUMN}, ${FENCE_LOCK_COLUMN}, ${FENCE_STEP_COLUMN}) VALUES (${keyExpr(ctx.k)}, CAST(? AS SIGNED), ?, CAST(? AS SIGNED))
       ON DUPLICATE KEY UPDATE ${FENCE_COLUMN} = VALUES(${FENCE_COLUMN}), ${FENCE_LOCK_COLUMN} = VALUES(${FENCE_LOCK_COLUMN}), ${FENCE_STEP_COLUMN} = VALUES(${FENCE_STEP_COLUMN})`,
      [stored, ctx.c.token.toString(), ctx.c.lock, ctx.c.step.toString()],
    );
    return { result: f.row, resource: resourceOf(ctx, f.row[ctx.k.column]) };
  });
}

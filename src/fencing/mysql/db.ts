// The smallest database interface the MariaDB/MySQL helpers need, over a mysql2 (promise) pool.
//
// Every statement the helpers run reads BIGINT exactly: the per-query typeCast returns BIGINT columns as
// bigint, without changing the pool's own options for the application's other queries. mysql2 is described
// here by the few members the helpers use, not imported: the fencing code depends on no driver.

/** The part of mysql2's per-query options the helpers set. */
interface QueryOptions {
  sql: string;
  values: unknown[];
  typeCast: TypeCast;
  supportBigNumbers: boolean;
  bigNumberStrings: boolean;
}

/** mysql2's typeCast callback, as far as the helpers use it. */
export type TypeCast = (field: { type: string; string(): string | null }, next: () => unknown) => unknown;

/** A connection of a mysql2 promise pool (`PoolConnection`). */
export interface MysqlPoolConnection {
  query(options: QueryOptions): Promise<[unknown, unknown]>;
  release(): void;
  destroy(): void;
}

/** A mysql2 promise pool (`mysql.createPool(...)` from 'mysql2/promise'). */
export interface MysqlPool {
  getConnection(): Promise<MysqlPoolConnection>;
}

export type MysqlRow = Record<string, unknown>;

/** One connection inside a transaction: run a statement with `?` parameters. */
export interface MysqlSession {
  /** Rows of a SELECT; BIGINT columns are bigints. */
  query(sql: string, params?: unknown[]): Promise<MysqlRow[]>;
  /** An INSERT/UPDATE/DELETE: how many rows it matched or changed. */
  execute(sql: string, params?: unknown[]): Promise<{ affectedRows: number }>;
}

/** Runs fn inside one READ COMMITTED transaction: committed when fn resolves, rolled back when it throws. */
export interface MysqlDatabase {
  transaction<T>(fn: (tx: MysqlSession) => Promise<T>): Promise<T>;
}

/** BIGINT (8-byte integer) columns as bigint, from their exact text; everything else as mysql2 gives it. */
export const exactBigints: TypeCast = (field, next) => {
  if (field.type !== 'LONGLONG') return next();
  const text = field.string();
  return text === null ? null : BigInt(text);
};

function options(sql: string, params: unknown[] | undefined): QueryOptions {
  return { sql, values: params ?? [], typeCast: exactBigints, supportBigNumbers: true, bigNumberStrings: true };
}

export function mysqlSession(conn: Pick<MysqlPoolConnection, 'query'>): MysqlSession {
  return {
    async query(sql, params) {
      const [rows] = await conn.query(options(sql, params));
      return rows as MysqlRow[];
    },
    async execute(sql, params) {
      const [header] = await conn.query(options(sql, params));
      return { affectedRows: (header as { affectedRows: number }).affectedRows };
    },
  };
}

/**
 * A mysql2 promise Pool as a MysqlDatabase: each transaction on a connection of its own, at READ COMMITTED (each
 * statement reads the latest committed state, and a locking read of a missing key takes no gap lock). A
 * connection whose ROLLBACK failed is destroyed, not handed to the next caller.
 */
export function mysqlPoolDatabase(pool: MysqlPool): MysqlDatabase {
  return {
    async transaction<T>(fn: (tx: MysqlSession) => Promise<T>): Promise<T> {
      const conn = await pool.getConnection();
      let broken = false;
      try {
        await conn.query(options('SET TRANSACTION ISOLATION LEVEL READ COMMITTED', []));
        await conn.query(options('START TRANSACTION', []));
        try {
          const result = await fn(mysqlSession(conn));
          await conn.query(options('COMMIT', []));
          return result;
        } catch (err) {
          await conn.query(options('ROLLBACK', [])).catch(() => (broken = true));
          throw err;
        }
      } finally {
        if (broken) conn.destroy();
        else conn.release();
      }
    },
  };
}

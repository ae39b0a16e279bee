// The smallest database interface the fencing helpers need, so that the same code runs on node-postgres
// (a Pool or a Client) and on PGlite (whose own `transaction` already has this shape). node-postgres is
// described by the shapes used here, not imported: an application that uses PGlite needs no `pg` (its types
// included), and the package takes `pg` as an optional peer.

/** What the helpers use of a node-postgres Client or PoolClient. */
interface PgConnection {
  query(text: string, params?: unknown[]): Promise<{ rows: unknown[] }>;
}

/** What the helpers use of a node-postgres PoolClient. */
interface PgPooledConnection extends PgConnection {
  release(err?: Error | boolean): void;
}

/** What the helpers use of a node-postgres Pool. */
export interface PgPoolLike {
  connect(): Promise<PgPooledConnection>;
}

/** What the helpers use of a node-postgres Client. */
export type PgClientLike = PgConnection;

/** One connection inside a transaction: run a statement with $1.. parameters. */
export interface SqlSession {
  query(text: string, params?: unknown[]): Promise<{ rows: unknown[] }>;
}

/** Runs fn inside one transaction (READ COMMITTED or stricter): committed when fn resolves, rolled back when it throws. */
export interface SqlDatabase {
  transaction<T>(fn: (tx: SqlSession) => Promise<T>): Promise<T>;
}

/** BEGIN, fn, COMMIT; ROLLBACK when anything throws. Resolves `unusable` when even the ROLLBACK failed. */
async function inTransaction<T>(conn: PgConnection, fn: (tx: SqlSession) => Promise<T>, unusable: (err: Error) => void = () => undefined): Promise<T> {
  await conn.query('BEGIN');
  try {
    const result = await fn(conn);
    await conn.query('COMMIT');
    return result;
  } catch (err) {
    await conn.query('ROLLBACK').catch((rollbackErr: Error) => unusable(rollbackErr));
    throw err;
  }
}

/** A node-postgres Pool as a SqlDatabase: each transaction on a connection of its own. */
export function pgPoolDatabase(pool: PgPoolLike): SqlDatabase {
  return {
    async transaction<T>(fn: (tx: SqlSession) => Promise<T>): Promise<T> {
      const conn = await pool.connect();
      let broken: Error | undefined;
      try {
        return await inTransaction(conn, fn, (err) => (broken = err));
      } finally {
        // A connection left in an unknown transaction state is destroyed, not handed to the next caller.
        conn.release(broken);
      }
    },
  };
}

/**
 * One node-postgres Client as a SqlDatabase. A connection runs one transaction at a time, so transactions
 * queue here instead of interleaving their statements.
 */
export function pgClientDatabase(client: PgClientLike): SqlDatabase {
  let tail: Promise<unknown> = Promise.resolve();
  return {
    transaction<T>(fn: (tx: SqlSession) => Promise<T>): Promise<T> {
      const run = tail.then(() => inTransaction(client, fn));
      tail = run.catch(() => undefined);
      return run;
    },
  };
}

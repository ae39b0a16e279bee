// The two real PostgreSQL engines every fencing rule runs against: PGlite in this process, and the server the
// global setup started. Each test gets a schema of its own (search_path), so tests never see each other's rows.
import { randomBytes } from 'node:crypto';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { inject } from 'vitest';
import { pgPoolDatabase, type SqlDatabase } from '../../src/fencing';

export const ENGINES = ['pglite', 'postgres'] as const;
export type EngineName = (typeof ENGINES)[number];

export interface Engine {
  name: EngineName;
  /** Transactions on a schema of this test's own. */
  db: SqlDatabase;
  /** One statement outside the helpers (set-up, assertions), in the same schema. */
  sql(text: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
  /** Connection settings of the schema, for worker processes (postgres only). */
  url?: string;
  schema: string;
  close(): Promise<void>;
}

/** One engine per test file and name: PGlite takes seconds to start. */
export class EngineHost {
  private pglite: PGlite | undefined;

  constructor(readonly name: EngineName) {}

  async open(): Promise<Engine> {
    const schema = `t_${randomBytes(6).toString('hex')}`;
    if (this.name === 'pglite') {
      this.pglite ??= await PGlite.create();
      const db = this.pglite;
      await db.exec(`CREATE SCHEMA ${schema}; SET search_path TO ${schema}`);
      return {
        name: 'pglite',
        db,
        schema,
        sql: async (text, params) => (await db.query<Record<string, unknown>>(text, params)).rows,
        close: async () => {
          await db.exec(`DROP SCHEMA ${schema} CASCADE`);
        },
      };
    }
    const base = inject('postgresUrl');
    const admin = new pg.Client({ connectionString: base });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
    await admin.end();
    const url = `${base}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
    const pool = new pg.Pool({ connectionString: url, max: 20 });
    return {
      name: 'postgres',
      db: pgPoolDatabase(pool),
      schema,
      url,
      sql: async (text, params) => (await pool.query(text, params)).rows as Record<string, unknown>[],
      close: async () => {
        await pool.query(`DROP SCHEMA ${schema} CASCADE`);
        await pool.end();
      },
    };
  }

  async shutdown(): Promise<void> {
    await this.pglite?.close();
    this.pglite = undefined;
  }
}

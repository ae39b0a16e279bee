// The fencing rule matrix (ruleMatrix.ts) on the PostgreSQL helpers, on PGlite and on the server the global setup
// started, so that the matrix has the same rows for every store. sqlRules.test.ts keeps PostgreSQL's own tests.
import pg from 'pg';
import { ensureFencingSchema, fencedDelete, fencedUpdate, fencedUpsert, pgPoolDatabase, raiseWatermarks, type FencingClaim, type SqlDatabase } from '../../src/fencing';
import { EngineHost, ENGINES, type EngineName } from './engines';
import { defineRuleMatrix, type Key, type MatrixSubject, type Outcome } from './ruleMatrix';

function host(engineName: EngineName): { open(): Promise<MatrixSubject>; shutdown(): Promise<void> } {
  const engines = new EngineHost(engineName);
  return {
    shutdown: () => engines.shutdown(),
    open: async () => {
      const e = await engines.open();
      await e.sql('CREATE TABLE account (id INT PRIMARY KEY, owner TEXT NOT NULL, balance INT NOT NULL)');
      await e.sql('CREATE TABLE audit (n SERIAL PRIMARY KEY, token BIGINT NOT NULL, step BIGINT NOT NULL)');
      await ensureFencingSchema(e.db, ['account']);
      await e.sql("INSERT INTO account (id, owner, balance) VALUES (1, 'ann', 100), (2, 'bob', 100)");
      const update = (db: SqlDatabase) => (key: Key, value: number, c: FencingClaim) =>
        fencedUpdate(db, { table: 'account', key, set: { balance: value } }, c, {
          alongside: async (tx) => void (await tx.query('INSERT INTO audit (token, step) VALUES ($1::bigint, $2::bigint)', [c.token.toString(), String(c.step ?? 1n)])),
        }) as Promise<Outcome>;
      return {
        update: update(e.db),
        upsert: (key, value, c) => fencedUpsert(e.db, { table: 'account', key, values: { owner: 'new', balance: value } }, c) as Promise<Outcome>,
        remove: (key, c) => fencedDelete(e.db, { table: 'account', key }, c) as Promise<Outcome>,
        value: async (key) => {
          const rows = await e.sql('SELECT balance FROM account WHERE id = $1', [String(key)]);
          return rows[0] ? Number(rows[0].balance) : undefined;
        },
        auditTokens: async () => (await e.sql('SELECT token::text AS token FROM audit ORDER BY n')).map((r) => BigInt(r.token as string)),
        raise: (min) => raiseWatermarks(e.db, min, ['account']),
        rewind: async (key, fence, value) => void (await e.sql('UPDATE account SET fence = $1::bigint, fence_step = 1, balance = $2 WHERE id = $3', [fence.toString(), value, String(key)])),
        racers: async (n) => {
          // The server: n pools of one connection each. PGlite is one connection in this process: its writers
          // share it, and its transactions take turns.
          const pools = e.url ? Array.from({ length: n }, () => new pg.Pool({ connectionString: e.url, max: 1 })) : [];
          const dbs = pools.length ? pools.map(pgPoolDatabase) : Array.from({ length: n }, () => e.db);
          return { writers: dbs.map((db) => (value: number, c: FencingClaim) => update(db)(1, value, c)), close: async () => void (await Promise.all(pools.map((p) => p.end()))) };
        },
        // PostgreSQL reads '01', '+1', ' 1' and '1 ' as the INT 1 too: the helpers key a row as the database keys it.
        spellingsOfOne: [1n, '1', '01', '+1', ' 1', '1 '],
        close: () => e.close(),
      };
    },
  };
}

for (const engineName of ENGINES) defineRuleMatrix(`PostgreSQL (${engineName})`, host(engineName));

// ensureFencingSchema against each shape a user's table may already have (issue 29, defect 5): the watermark
// columns end NOT NULL DEFAULT 0, or the call is refused with what to run and nothing changes. Both engines.
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ensureFencingSchema, fencedUpdate, fencedUpsert, FencingSchemaError } from '../../src/fencing';
import { EngineHost, ENGINES, type Engine } from './engines';

describe.each(ENGINES)('ensureFencingSchema on %s', (engineName) => {
  const host = new EngineHost(engineName);
  let e: Engine;

  beforeEach(async () => {
    e = await host.open();
  });
  afterEach(async () => e.close());
  afterAll(async () => host.shutdown());

  const columns = async (table = 'account'): Promise<Record<string, unknown>[]> =>
    e.sql(
      `SELECT column_name, data_type, is_nullable, column_default FROM information_schema.columns
       WHERE table_schema = $1 AND table_name = $2 AND column_name LIKE 'fence%' ORDER BY column_name`,
      [e.schema, table],
    );
  const RIGHT = [
    { column_name: 'fence', data_type: 'bigint', is_nullable: 'NO', column_default: '0' },
    { column_name: 'fence_lock', data_type: 'text', is_nullable: 'YES', column_default: null },
    { column_name: 'fence_step', data_type: 'bigint', is_nullable: 'NO', column_default: '0' },
  ];
  const write = (token: bigint, id = 1) => fencedUpdate(e.db, { table: 'account', key: id, set: { balance: Number(token) } }, { lock: 'l', token });

  it('a table without fencing columns gets them, BIGINT NOT NULL DEFAULT 0', async () => {
    await e.sql('CREATE TABLE account (id INT PRIMARY KEY, balance INT)');
    await e.sql('INSERT INTO account VALUES (1, 5)');
    await ensureFencingSchema(e.db, ['account']);
    expect(await columns()).toEqual(RIGHT);
    expect((await write(3n)).status).toBe('APPLIED');
  });

  it('a nullable fence column with NULL rows is brought to NOT NULL DEFAULT 0, its NULLs to 0, and a write to such a row passes', async () => {
    await e.sql('CREATE TABLE account (id INT PRIMARY KEY, balance INT, fence BIGINT, fence_lock TEXT, fence_step BIGINT)');
    await e.sql("INSERT INTO account VALUES (1, 5, NULL, NULL, NULL), (2, 6, 7, 'l', 1)");
    await ensureFencingSchema(e.db, ['account']);
    expect(await columns()).toEqual(RIGHT);
    expect(await e.sql('SELECT id, fence::text AS fence, fence_step::text AS step FROM account ORDER BY id')).toEqual([
      { id: 1, fence: '0', step: '0' },
      { id: 2, fence: '7', step: '1' },
    ]);
    expect(await write(3n)).toMatchObject({ status: 'APPLIED', result: { fence: 3n } });
    expect(await write(6n, 2)).toEqual({ status: 'STALE', watermark: 7n, lock: 'l' });
    await expect(e.sql('INSERT INTO account (id, balance, fence) VALUES (3, 1, NULL)')).rejects.toThrow(/null value/);
  });

  it('a NOT NULL fence column without a default gets DEFAULT 0, so that rows inserted by the application start unfenced', async () => {
    await e.sql('CREATE TABLE account (id INT PRIMARY KEY, balance INT, fence BIGINT NOT NULL, fence_step BIGINT NOT NULL DEFAULT 0)');
    await ensureFencingSchema(e.db, ['account']);
    expect(await columns()).toEqual(RIGHT);
    await e.sql('INSERT INTO account (id, balance) VALUES (1, 5)');
    expect((await write(1n)).status).toBe('APPLIED');
  });

  for (const [type, shown] of [['INTEGER', 'integer'], ['TEXT', 'text'], ['NUMERIC', 'numeric']] as const) {
    it(`a fence column of type ${shown} is refused with the statement to run, and nothing changes`, async () => {
      await e.sql(`CREATE TABLE account (id INT PRIMARY KEY, balance INT, fence ${type})`);
      const err = await ensureFencingSchema(e.db, ['account']).catch((x: unknown) => x);
      expect(err).toBeInstanceOf(FencingSchemaError);
      expect((err as Error).message).toContain(`account.fence is ${shown}, not bigint`);
      expect((err as Error).message).toContain('ALTER TABLE "account" ALTER COLUMN fence TYPE BIGINT USING fence::bigint;');
      // One transaction: no fencing table, no added column.
      expect(await columns()).toEqual([{ column_name: 'fence', data_type: shown, is_nullable: 'YES', column_default: null }]);
      expect(await e.sql("SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_name LIKE 'fencing_%'", [e.schema])).toEqual([]);
    });
  }

  it('a fence_lock column of another type than text is refused with the statement to run', async () => {
    await e.sql('CREATE TABLE account (id INT PRIMARY KEY, balance INT, fence_lock INT)');
    await expect(ensureFencingSchema(e.db, ['account'])).rejects.toThrow(/account\.fence_lock is integer, not text.*ALTER COLUMN fence_lock TYPE TEXT/);
  });

  it('a table already right is left as it is, and the call is idempotent', async () => {
    await e.sql('CREATE TABLE account (id INT PRIMARY KEY, balance INT)');
    await ensureFencingSchema(e.db, ['account']);
    await e.sql('INSERT INTO account (id, balance) VALUES (1, 5)');
    expect((await fencedUpsert(e.db, { table: 'account', key: 1, values: { balance: 9 } }, { lock: 'l', token: 4n })).status).toBe('APPLIED');
    await ensureFencingSchema(e.db, ['account']);
    await ensureFencingSchema(e.db, ['account']);
    expect(await columns()).toEqual(RIGHT);
    expect(await e.sql('SELECT fence::text AS fence, fence_lock FROM account')).toEqual([{ fence: '4', fence_lock: 'l' }]);
  });
});

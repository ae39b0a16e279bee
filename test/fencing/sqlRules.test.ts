// The fencing rules of the PostgreSQL helpers (src/fencing/sql), each a named test, on both engines.
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ensureFencingSchema,
  fencedDelete,
  fencedUpdate,
  fencedUpsert,
  FencingClaimError,
  MAX_FENCING_TOKEN,
  raiseWatermarks,
  withFence,
  type FencedOutcome,
  type FencingClaim,
  type SqlSession,
} from '../../src/fencing';
import { EngineHost, ENGINES, type Engine } from './engines';

const LOCK = 'acct/1';
/** Distinct operation ids, for writes that must be judged rather than replayed. */
let opSeq = 0;
const claim = (token: bigint, more: Partial<FencingClaim> = {}): FencingClaim => ({ lock: LOCK, token, ...more });

describe.each(ENGINES)('fenced SQL on %s', (engineName) => {
  const host = new EngineHost(engineName);
  let e: Engine;

  beforeEach(async () => {
    e = await host.open();
    await e.sql('CREATE TABLE account (id INT PRIMARY KEY, owner TEXT NOT NULL, balance INT NOT NULL)');
    await e.sql('CREATE TABLE audit (n SERIAL PRIMARY KEY, account INT NOT NULL, token BIGINT NOT NULL, step BIGINT NOT NULL, balance INT NOT NULL)');
    await ensureFencingSchema(e.db, ['account']);
    await e.sql("INSERT INTO account (id, owner, balance) VALUES (1, 'ann', 100), (2, 'bob', 100)");
  });
  afterEach(async () => e.close());
  afterAll(async () => host.shutdown());

  /** Sets account 1's balance under a claim, recording an audit row in the same transaction. */
  const setBalance = (balance: number, c: FencingClaim, id = 1): Promise<FencedOutcome<Record<string, unknown>>> =>
    fencedUpdate(e.db, { table: 'account', key: id, set: { balance } }, c, {
      alongside: (tx: SqlSession, row) => tx.query('INSERT INTO audit (account, token, step, balance) VALUES ($1, $2::bigint, $3::bigint, $4)', [id, c.token.toString(), String(c.step ?? 1n), row.balance]).then(() => undefined),
    });
  const row = async (id = 1): Promise<{ balance: number; fence: string; fence_lock: string | null; fence_step: string }> =>
    (await e.sql('SELECT balance, fence::text AS fence, fence_lock, fence_step::text AS fence_step FROM account WHERE id = $1', [id]))[0] as never;
  const audits = async (): Promise<number> => Number((await e.sql('SELECT count(*)::int AS n FROM audit'))[0]!.n);

  it('the watermark column is BIGINT NOT NULL DEFAULT 0, so the first token applies (no NULL comparison)', async () => {
    const cols = await e.sql(
      "SELECT column_name, data_type, is_nullable, column_default FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'account' AND column_name = 'fence'",
      [e.schema],
    );
    expect(cols).toEqual([{ column_name: 'fence', data_type: 'bigint', is_nullable: 'NO', column_default: '0' }]);
    expect((await row()).fence).toBe('0');
    const r = await setBalance(150, claim(41n));
    expect(r).toMatchObject({ status: 'APPLIED', token: 41n, step: 1n, result: { id: 1, balance: 150, fence: 41n, fence_step: 1n } });
    expect(await row()).toEqual({ balance: 150, fence: '41', fence_lock: LOCK, fence_step: '1' });
  });

  it('token above the watermark: applied, and the watermark moves to the token with the change', async () => {
    expect((await setBalance(150, claim(41n))).status).toBe('APPLIED');
    expect((await setBalance(120, claim(42n))).status).toBe('APPLIED');
    expect(await row()).toMatchObject({ balance: 120, fence: '42' });
    expect(await audits()).toBe(2);
  });

  it('token below the watermark: STALE with the current watermark, nothing applied', async () => {
    await setBalance(120, claim(42n));
    const r = await setBalance(999, claim(41n, { operationId: 'late' }));
    expect(r).toEqual({ status: 'STALE', watermark: 42n, lock: LOCK });
    expect(await row()).toMatchObject({ balance: 120, fence: '42' });
    expect(await audits()).toBe(1);
    expect(await e.sql("SELECT * FROM fencing_operations WHERE operation_id = 'late'")).toEqual([]);
  });

  it('same token, same operation retried: the stored result of the first attempt, nothing applied twice', async () => {
    const first = await setBalance(150, claim(41n, { operationId: 'deposit-50' }));
    expect(first.status).toBe('APPLIED');
    // Even after a newer holder wrote, the retry gets what its first attempt returned.
    await setBalance(120, claim(42n));
    const retry = await setBalance(150, claim(41n, { operationId: 'deposit-50' }));
    expect(retry).toEqual({ status: 'REPLAYED', token: 41n, step: 1n, result: (first as { result: unknown }).result });
    expect(await row()).toMatchObject({ balance: 120, fence: '42' });
    expect(await audits()).toBe(2);
  });

  it('same token, a further step: accepted only with a higher step than the last applied (never fence <= token)', async () => {
    expect((await setBalance(110, claim(50n, { step: 1n }))).status).toBe('APPLIED');
    expect((await setBalance(120, claim(50n, { step: 2n }))).status).toBe('APPLIED');
    // Another operation at a step already passed, or with the default step 1 again: refused.
    expect(await setBalance(777, claim(50n, { step: 2n, operationId: 'other' }))).toEqual({ status: 'STALE_STEP', watermark: 50n, lastStep: 2n, lock: LOCK });
    expect((await setBalance(777, claim(50n, { operationId: 'again' }))).status).toBe('STALE_STEP');
    expect((await setBalance(130, claim(50n, { step: 5n }))).status).toBe('APPLIED');
    expect(await row()).toEqual({ balance: 130, fence: '50', fence_lock: LOCK, fence_step: '5' });
    expect(await audits()).toBe(3);
  });

  it("a token of one lock never suppresses a row bound to another lock (WRONG_LOCK); watermarks are per row", async () => {
    await setBalance(150, claim(100n));
    expect(await setBalance(1, claim(200n, { lock: 'acct/2' }))).toEqual({ status: 'WRONG_LOCK', watermark: 100n, lock: LOCK });
    // Account 2 is fenced by acct/2: its low token is fine though account 1 is at 100.
    expect((await setBalance(90, { lock: 'acct/2', token: 5n }, 2)).status).toBe('APPLIED');
    expect((await setBalance(80, { lock: 'acct/2', token: 6n }, 2)).status).toBe('APPLIED');
    expect(await row()).toMatchObject({ balance: 150, fence: '100' });
    expect(await row(2)).toMatchObject({ balance: 80, fence: '6', fence_lock: 'acct/2' });
  });

  it('a missing row is NOT_FOUND, told apart from STALE and from a retry', async () => {
    expect(await fencedUpdate(e.db, { table: 'account', key: 999, set: { balance: 1 } }, claim(7n))).toEqual({ status: 'NOT_FOUND', watermark: 0n });
    expect(await fencedDelete(e.db, { table: 'account', key: 999 }, claim(7n))).toEqual({ status: 'NOT_FOUND', watermark: 0n });
    expect(await e.sql('SELECT * FROM fencing_operations')).toEqual([]);
  });

  it('delete keeps the watermark: an older token can neither update nor re-create the row', async () => {
    await setBalance(150, claim(40n));
    const del = await fencedDelete(e.db, { table: 'account', key: 1 }, claim(50n));
    expect(del).toMatchObject({ status: 'APPLIED', result: { id: 1, balance: 150 } });
    expect(await e.sql('SELECT * FROM account WHERE id = 1')).toEqual([]);
    expect(await setBalance(1, claim(49n))).toEqual({ status: 'STALE', watermark: 50n, lock: LOCK });
    expect(await fencedUpsert(e.db, { table: 'account', key: 1, values: { owner: 'old', balance: 1 } }, claim(49n))).toEqual({ status: 'STALE', watermark: 50n, lock: LOCK });
    expect(await fencedUpdate(e.db, { table: 'account', key: 1, set: { balance: 1 } }, claim(51n))).toEqual({ status: 'NOT_FOUND', watermark: 50n });
    const back = await fencedUpsert(e.db, { table: 'account', key: 1, values: { owner: 'new', balance: 5 } }, claim(52n));
    expect(back).toMatchObject({ status: 'APPLIED', result: { owner: 'new', balance: 5, fence: 52n } });
    expect(await e.sql('SELECT * FROM fencing_watermarks')).toEqual([]);
    expect((await setBalance(1, claim(51n))).status).toBe('STALE');
  });

  it('upsert inserts a new row with the token as its watermark and binds it to the lock, then updates like fencedUpdate', async () => {
    const ins = await fencedUpsert(e.db, { table: 'account', key: 3, values: { owner: 'cat', balance: 10 } }, { lock: 'acct/3', token: 9n });
    expect(ins).toMatchObject({ status: 'APPLIED', result: { id: 3, owner: 'cat', balance: 10, fence: 9n, fence_lock: 'acct/3' } });
    expect((await fencedUpsert(e.db, { table: 'account', key: 3, values: { owner: 'cat', balance: 11 } }, { lock: 'acct/3', token: 8n })).status).toBe('STALE');
    expect((await fencedUpsert(e.db, { table: 'account', key: 3, values: { owner: 'cat', balance: 12 } }, { lock: 'acct/3', token: 10n })).status).toBe('APPLIED');
    expect(await row(3)).toMatchObject({ balance: 12, fence: '10', fence_lock: 'acct/3' });
  });

  it('tokens are bigints end to end: up to 2^63-1 stored and compared exactly, beyond it (or 0, or a number) refused', async () => {
    const big = 1n << 53n;
    // 2^53+1 and 2^53+2 are one double apart: a comparison through numbers would see them equal.
    expect((await setBalance(1, claim(big + 2n))).status).toBe('APPLIED');
    expect(await setBalance(2, claim(big + 1n))).toEqual({ status: 'STALE', watermark: big + 2n, lock: LOCK });
    expect((await setBalance(3, claim(MAX_FENCING_TOKEN))).status).toBe('APPLIED');
    expect((await row()).fence).toBe('9223372036854775807');
    await expect(setBalance(4, claim(MAX_FENCING_TOKEN + 1n))).rejects.toThrow(FencingClaimError);
    await expect(setBalance(4, claim(0n))).rejects.toThrow(/1\.\.9223372036854775807/);
    await expect(setBalance(4, { lock: LOCK, token: 5 as unknown as bigint })).rejects.toThrow(/must be a bigint/);
    await expect(setBalance(4, claim(5n, { lock: '' }))).rejects.toThrow(/lock must be a non-empty string/);
    expect(await row()).toMatchObject({ balance: 3, fence: '9223372036854775807' });
  });

  it('after a restore from an old backup, raiseWatermarks refuses every token below the minimum and accepts the minimum', async () => {
    await setBalance(150, claim(10n));
    await fencedDelete(e.db, { table: 'account', key: 2 }, { lock: 'acct/2', token: 11n });
    // The live system had reached token 60 when the database was restored to this state (fence 10).
    expect((await setBalance(0, claim(59n, { operationId: 'replayed-from-the-past' }))).status).toBe('APPLIED');
    await e.sql('UPDATE account SET fence = 10, balance = 150 WHERE id = 1');
    const raised = await raiseWatermarks(e.db, 61n, ['account']);
    expect(raised).toBe(2); // account 1 and account 2's tombstone
    expect(await setBalance(1, claim(60n))).toEqual({ status: 'STALE', watermark: 61n, lock: LOCK });
    expect(await fencedUpsert(e.db, { table: 'account', key: 2, values: { owner: 'bob', balance: 1 } }, { lock: 'acct/2', token: 60n })).toMatchObject({ status: 'STALE', watermark: 61n });
    expect((await setBalance(170, claim(61n))).status).toBe('APPLIED');
    expect(await raiseWatermarks(e.db, 61n, ['account'])).toBe(0);
    expect(await row()).toMatchObject({ balance: 170, fence: '61' });
  });

  it('a change that fails rolls back with its watermark and its operation record', async () => {
    await setBalance(150, claim(41n));
    const failing = fencedUpdate(e.db, { table: 'account', key: 1, set: { balance: 0 } }, claim(42n), {
      alongside: async () => {
        throw new Error('outbox is down');
      },
    });
    await expect(failing).rejects.toThrow('outbox is down');
    expect(await row()).toMatchObject({ balance: 150, fence: '41' });
    expect((await setBalance(160, claim(42n))).status).toBe('APPLIED');
  });

  it('racing transactions on one row: the newest token wins in any order, every older one is refused or came first', async () => {
    const tokens = [3n, 8n, 1n, 6n, 2n, 7n, 5n, 4n];
    const outcomes = await Promise.all(tokens.map((t) => setBalance(Number(t), claim(t))));
    const accepted = (await e.sql('SELECT token::text AS token FROM audit ORDER BY n')).map((r) => BigInt(r.token as string));
    for (let i = 1; i < accepted.length; i++) expect(accepted[i]! > accepted[i - 1]!).toBe(true);
    expect(accepted[accepted.length - 1]).toBe(8n);
    outcomes.forEach((o, i) => {
      if (o.status === 'STALE') expect(o.watermark > tokens[i]!).toBe(true);
      else expect(o.status).toBe('APPLIED');
    });
    expect(outcomes.filter((o) => o.status === 'APPLIED').length).toBe(accepted.length);
    expect(await row()).toMatchObject({ balance: 8, fence: '8' });
  });

  it('racing retries of one operation apply it once; the others get its stored result', async () => {
    const outcomes = await Promise.all(Array.from({ length: 10 }, () => setBalance(175, claim(77n, { operationId: 'pay-invoice-9' }))));
    expect(outcomes.filter((o) => o.status === 'APPLIED')).toHaveLength(1);
    expect(outcomes.filter((o) => o.status === 'REPLAYED')).toHaveLength(9);
    expect(await audits()).toBe(1);
  });

  it('withFence checks a named resource for a change of several statements, and the schema helper is idempotent', async () => {
    await ensureFencingSchema(e.db, ['account']);
    const transfer = (token: bigint, opId: string) =>
      withFence(e.db, 'transfer:ann->bob', { lock: 'transfers', token, operationId: opId }, async (tx) => {
        await tx.query('UPDATE account SET balance = balance - 10 WHERE id = 1');
        await tx.query('UPDATE account SET balance = balance + 10 WHERE id = 2');
        return { moved: 10 };
      });
    expect(await transfer(5n, 'a')).toEqual({ status: 'APPLIED', result: { moved: 10 }, token: 5n, step: 1n });
    expect(await transfer(5n, 'a')).toEqual({ status: 'REPLAYED', result: { moved: 10 }, token: 5n, step: 1n });
    expect(await transfer(4n, 'b')).toEqual({ status: 'STALE', watermark: 5n, lock: 'transfers' });
    expect((await row(1)).balance).toBe(90);
    expect((await row(2)).balance).toBe(110);
  });

  // ----- the identity of a row is the database's, never the caller's spelling of its key -----

  const upsert = (key: string | number | bigint, token: bigint, table = 'account', lock = LOCK): Promise<FencedOutcome<Record<string, unknown>>> =>
    fencedUpsert(e.db, { table, key, values: { owner: `w${token}`, balance: Number(token) } }, { lock, token, operationId: `up-${String(key)}-${token}` });
  const exists = async (id: number): Promise<boolean> => (await e.sql('SELECT 1 FROM account WHERE id = $1', [id])).length === 1;

  it('a deleted row cannot come back under another spelling of its key', async () => {
    for (const id of [3, 4, 5]) expect((await upsert(id, 20n)).status).toBe('APPLIED');
    for (const id of [3, 4, 5]) expect((await fencedDelete(e.db, { table: 'account', key: id }, claim(31n))).status).toBe('APPLIED');
    const spellings: Array<[number, string | number | bigint]> = [
      [3, '03'], [3, '3'], [3, 3], [3, 3n], [3, '003'], [3, '+3'], [3, ' 3'], [3, '3 '],
      [4, '+4'], [4, '04'], [4, ' 4 '], [5, ' 5'], [5, '+05'], [5, '5\n'],
    ];
    for (const [id, key] of spellings) {
      expect(await upsert(key, 30n), `upsert ${JSON.stringify(String(key))} at 30`).toEqual({ status: 'STALE', watermark: 31n, lock: LOCK });
      expect(await fencedUpdate(e.db, { table: 'account', key, set: { balance: 1 } }, claim(30n)), `update ${JSON.stringify(String(key))}`).toEqual({ status: 'STALE', watermark: 31n, lock: LOCK });
      expect(await fencedUpdate(e.db, { table: 'account', key, set: { balance: 1 } }, claim(32n))).toEqual({ status: 'NOT_FOUND', watermark: 31n });
      expect(await exists(id)).toBe(false);
    }
    // One tombstone per row, under the key as PostgreSQL prints it.
    const tombstones = await e.sql('SELECT resource, fence::text AS fence FROM fencing_watermarks ORDER BY resource');
    expect(tombstones).toEqual([3, 4, 5].map((id) => ({ resource: `row:${e.schema}.account:id:${id}`, fence: '31' })));
    // A newer token may re-create it, under any spelling; the tombstone goes with the re-creation.
    expect(await upsert(' +03 ', 32n)).toMatchObject({ status: 'APPLIED', result: { id: 3, fence: 32n } });
    expect(await e.sql("SELECT * FROM fencing_watermarks WHERE resource LIKE '%:3'")).toEqual([]);
    expect((await upsert('3', 31n)).status).toBe('STALE');
  });

  it('a retry under another spelling of the key is the same operation: replayed, not applied twice', async () => {
    const first = await fencedUpdate(e.db, { table: 'account', key: '1', set: { balance: 150 } }, claim(41n, { operationId: 'pay' }));
    expect(first.status).toBe('APPLIED');
    const retry = await fencedUpdate(e.db, { table: 'account', key: ' 01', set: { balance: 150 } }, claim(41n, { operationId: 'pay' }));
    expect(retry).toEqual({ ...first, status: 'REPLAYED' });
    expect(await e.sql('SELECT resource FROM fencing_operations')).toEqual([{ resource: `row:${e.schema}.account:id:1` }]);
  });

  it('text keys are exact: a key with another case or a trailing space is another row', async () => {
    await e.sql('CREATE TABLE doc (name TEXT PRIMARY KEY, owner TEXT, balance INT)');
    await ensureFencingSchema(e.db, ['doc']);
    const put = (key: string, token: bigint): Promise<FencedOutcome<Record<string, unknown>>> =>
      fencedUpsert(e.db, { table: 'doc', keyColumn: 'name', key, values: { owner: 'x', balance: 1 } }, { lock: 'docs', token, operationId: `put-${++opSeq}` });
    expect((await put('ann', 10n)).status).toBe('APPLIED');
    expect((await fencedDelete(e.db, { table: 'doc', keyColumn: 'name', key: 'ann' }, { lock: 'docs', token: 11n })).status).toBe('APPLIED');
    expect(await put('ann', 10n)).toEqual({ status: 'STALE', watermark: 11n, lock: 'docs' });
    for (const other of ['Ann', 'ann ', ' ann']) expect((await put(other, 5n)).status, other).toBe('APPLIED');
    expect((await e.sql('SELECT name FROM doc ORDER BY name')).map((r) => r.name)).toEqual([' ann', 'Ann', 'ann '].sort());
  });

  it('uuid keys: upper case, braces and no hyphens name one row', async () => {
    await e.sql('CREATE TABLE job (id UUID PRIMARY KEY, owner TEXT, balance INT)');
    await ensureFencingSchema(e.db, ['job']);
    const lower = 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11';
    const put = (key: string, token: bigint): Promise<FencedOutcome<Record<string, unknown>>> =>
      fencedUpsert(e.db, { table: 'job', key, values: { owner: 'x', balance: Number(token) } }, { lock: 'jobs', token, operationId: `put-${++opSeq}` });
    expect(await put(lower.toUpperCase(), 10n)).toMatchObject({ status: 'APPLIED', result: { id: lower } });
    expect((await fencedDelete(e.db, { table: 'job', key: `{${lower}}` }, { lock: 'jobs', token: 11n })).status).toBe('APPLIED');
    for (const key of [lower, lower.toUpperCase(), `{${lower.toUpperCase()}}`, lower.replace(/-/g, ''), lower.replace(/-/g, '').toUpperCase()]) {
      expect(await put(key, 10n), key).toEqual({ status: 'STALE', watermark: 11n, lock: 'jobs' });
    }
    expect(await e.sql('SELECT * FROM job')).toEqual([]);
    expect((await e.sql('SELECT resource FROM fencing_watermarks')).map((r) => r.resource)).toEqual([`row:${e.schema}.job:id:${lower}`]);
  });

  it('bigint keys: the bigint, its decimal text and a safe number are one row; an unsafe number is refused', async () => {
    await e.sql('CREATE TABLE big (id BIGINT PRIMARY KEY, owner TEXT, balance INT)');
    await ensureFencingSchema(e.db, ['big']);
    const id = (1n << 53n) + 1n;
    const put = (key: string | number | bigint, token: bigint) =>
      fencedUpsert(e.db, { table: 'big', key, values: { owner: 'x', balance: 1 } }, { lock: 'big', token, operationId: `put-${++opSeq}` });
    expect(await put(id, 10n)).toMatchObject({ status: 'APPLIED', result: { id } });
    expect((await fencedDelete(e.db, { table: 'big', key: `0${id}` }, { lock: 'big', token: 11n })).status).toBe('APPLIED');
    expect(await put(id.toString(), 10n)).toEqual({ status: 'STALE', watermark: 11n, lock: 'big' });
    await expect(put(Number(id), 12n)).rejects.toThrow(/not a safe integer/);
    expect(await put(7, 3n)).toMatchObject({ status: 'APPLIED', result: { id: 7n } });
  });

  it('composite keys, keys that are not the primary key and keys of a type with several spellings of one value are refused clearly', async () => {
    await e.sql('CREATE TABLE pair (a INT, b INT, owner TEXT, balance INT, PRIMARY KEY (a, b))');
    await e.sql('CREATE TABLE amount (id NUMERIC PRIMARY KEY, owner TEXT, balance INT)');
    await ensureFencingSchema(e.db, ['pair', 'amount']);
    await expect(fencedUpsert(e.db, { table: 'pair', keyColumn: 'a', key: 1, values: { b: 1 } }, claim(5n))).rejects.toThrow(/composite primary key \(a, b\).*use withFence/);
    await expect(upsert('1.0', 5n, 'amount')).rejects.toThrow(/amount\.id is numeric: the row helpers take integer, text or uuid keys/);
    await expect(fencedUpdate(e.db, { table: 'account', keyColumn: 'owner', key: 'ann', set: { balance: 1 } }, claim(5n))).rejects.toThrow(/account\.owner is not the table's primary key \(id is\)/);
    await expect(fencedUpdate(e.db, { table: 'account', keyColumn: 'nope', key: 1, set: { balance: 1 } }, claim(5n))).rejects.toThrow(/has no column "nope"/);
    await expect(fencedUpdate(e.db, { table: 'account', key: 'one', set: { balance: 1 } }, claim(5n))).rejects.toThrow(/key "one" is not a valid integer for .*account\.id/);
    expect(await e.sql('SELECT * FROM fencing_operations')).toEqual([]);
    expect(await e.sql('SELECT * FROM fencing_watermarks')).toEqual([]);
  });

  it("withFence refuses resource names of the row helpers' shape, so that no name shares a row's watermark", async () => {
    await fencedDelete(e.db, { table: 'account', key: 2 }, claim(31n));
    const resource = `row:${e.schema}.account:id:2`;
    await expect(withFence(e.db, resource, claim(30n), async () => 'x')).rejects.toThrow(/are the row helpers' own/);
    expect((await e.sql('SELECT fence::text AS fence FROM fencing_watermarks'))).toEqual([{ fence: '31' }]);
  });

  // ----- exact integers -----

  it("every BIGINT of a returned row is an exact bigint (the fence at 2^53+1 and the table's own BIGINT column), without touching the application's parsers", async () => {
    await e.sql('CREATE TABLE ledger (id INT PRIMARY KEY, total BIGINT NOT NULL, note TEXT)');
    await ensureFencingSchema(e.db, ['ledger']);
    const before = typeof (await e.sql('SELECT 9007199254740993::bigint AS n'))[0]!.n;
    const token = (1n << 53n) + 1n;
    const total = (1n << 62n) + 3n;
    const applied = await fencedUpsert(e.db, { table: 'ledger', key: 1, values: { total, note: 'n' } }, claim(token, { operationId: 'big' }));
    expect(applied).toEqual({ status: 'APPLIED', token, step: 1n, result: { id: 1, total, note: 'n', fence: token, fence_lock: LOCK, fence_step: 1n } });
    const replayed = await fencedUpsert(e.db, { table: 'ledger', key: 1, values: { total, note: 'n' } }, claim(token, { operationId: 'big' }));
    expect(replayed).toEqual({ ...applied, status: 'REPLAYED' });
    // A BIGINT column added after the helpers described the table comes back as a bigint too.
    await e.sql('ALTER TABLE ledger ADD COLUMN extra BIGINT NOT NULL DEFAULT 9007199254740993');
    const updated = await fencedUpdate(e.db, { table: 'ledger', key: 1, set: { total: total + 1n } }, claim(token + 1n));
    expect(updated).toMatchObject({ status: 'APPLIED', result: { total: total + 1n, fence: token + 1n, extra: 9007199254740993n } });
    const deleted = await fencedDelete(e.db, { table: 'ledger', key: 1 }, claim(token + 2n));
    // The deleted row as it was: written at token + 1.
    expect(deleted).toMatchObject({ status: 'APPLIED', result: { total: total + 1n, fence: token + 1n } });
    // The application's own queries read int8 as they did before.
    expect(typeof (await e.sql('SELECT 9007199254740993::bigint AS n'))[0]!.n).toBe(before);
  });
});

// The multi-downstream pattern of examples/multi-downstream.ts: one token to two downstreams that each check
// it, a job state machine for partial success, on both engines. Tokens here are given (lockFencing): which
// grant they come from does not change what the resources do (the concurrency tests use a real cluster).
import * as http from 'node:http';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { INVOICE_TABLES, settleInvoice } from '../../examples/multi-downstream';
import { lockFencing } from '../../src/client';
import { ensureFencingSchema, fencedHttpHandler } from '../../src/fencing';
import { EngineHost, ENGINES, type Engine } from './engines';

describe.each(ENGINES)('one job, two fenced downstreams, on %s', (engineName) => {
  const host = new EngineHost(engineName);
  let jobs: Engine;
  let billing: Engine;
  let server: http.Server | undefined;
  let billingUrl: string;
  let billingPort: number;
  let dropNextAnswer = false;

  const startBilling = async (): Promise<void> => {
    // Billing's own service and database: it checks the token against its own watermark.
    const fenced = fencedHttpHandler({ db: billing.db }, async ({ tx, resource, claim, body }) => {
      await tx.query('INSERT INTO notice (resource, token, body) VALUES ($1, $2::bigint, $3)', [resource, claim.token.toString(), body.toString()]);
      return { status: 201, body: { noted: resource } };
    });
    server = http.createServer((req, res) => {
      if (dropNextAnswer) {
        // The change commits, then the connection dies before the answer: the caller cannot know.
        dropNextAnswer = false;
        res.writeHead = (() => (res.socket?.destroy(), res)) as never;
      }
      fenced(req, res);
    });
    await new Promise<void>((r) => server!.listen(billingPort, '127.0.0.1', () => r()));
    billingPort = (server.address() as { port: number }).port;
    billingUrl = `http://127.0.0.1:${billingPort}`;
  };
  const stopBilling = (): Promise<void> =>
    new Promise<void>((r) => {
      server!.close(() => r());
      server!.closeAllConnections();
    });

  beforeEach(async () => {
    // On the server each service has a schema of its own; PGlite is one connection (one search_path), so there
    // the two share one schema, their resources told apart by name.
    jobs = await host.open();
    for (const t of INVOICE_TABLES) await jobs.sql(t);
    await ensureFencingSchema(jobs.db);
    await jobs.sql('INSERT INTO invoice_job (invoice) VALUES (9)');
    billing = engineName === 'pglite' ? jobs : await host.open();
    await billing.sql('CREATE TABLE notice (resource TEXT NOT NULL, token BIGINT NOT NULL, body TEXT NOT NULL)');
    await ensureFencingSchema(billing.db);
    billingPort = 0;
    await startBilling();
  });
  afterEach(async () => {
    await stopBilling();
    if (billing !== jobs) await billing.close();
    await jobs.close();
  });
  afterAll(async () => host.shutdown());

  it('partial success is finished by the next holder from the recorded state; the late holder is refused everywhere and nothing runs twice', async () => {
    const a = lockFencing('invoices/9', 10n);
    const b = lockFencing('invoices/9', 11n);
    // A writes the ledger, then billing is down: the job stops part-way, and says where.
    await stopBilling();
    expect(await settleInvoice(jobs.db, billingUrl, a, 9, 500)).toEqual({ result: 'INCOMPLETE', state: 'LEDGER_DONE', why: 'billing did not answer' });
    await startBilling();
    // A lost its lock meanwhile; B carries on from LEDGER_DONE: no second ledger entry, billing gets B's token.
    expect(await settleInvoice(jobs.db, billingUrl, b, 9, 500)).toEqual({ result: 'SETTLED', state: 'NOTIFIED' });
    // A's late run: back at billing with its old token after resetting its view, it is refused there.
    await jobs.sql("UPDATE invoice_job SET state = 'LEDGER_DONE' WHERE invoice = 9");
    expect(await settleInvoice(jobs.db, billingUrl, a, 9, 500)).toEqual({ result: 'SUPERSEDED', watermark: '11', at: 'billing' });
    expect(await jobs.sql('SELECT amount, token::text AS token FROM ledger')).toEqual([{ amount: 500, token: '10' }]);
    expect(await billing.sql('SELECT resource, token::text AS token FROM notice')).toEqual([{ resource: '/invoices/9', token: '11' }]);
  });

  it('a retry after a lost answer is idempotent at each downstream', async () => {
    const a = lockFencing('invoices/9', 20n);
    dropNextAnswer = true;
    // Billing applies the first request and its answer is lost; the job sends it again (same key): replayed.
    expect(await settleInvoice(jobs.db, billingUrl, a, 9, 70)).toEqual({ result: 'SETTLED', state: 'NOTIFIED' });
    expect(dropNextAnswer).toBe(false);
    // The whole job again under the same token (as after a crash before it saw its answers): nothing new.
    expect(await settleInvoice(jobs.db, billingUrl, a, 9, 70)).toEqual({ result: 'SETTLED', state: 'NOTIFIED' });
    expect(await jobs.sql('SELECT count(*)::int AS n FROM ledger')).toEqual([{ n: 1 }]);
    expect(await billing.sql('SELECT count(*)::int AS n FROM notice')).toEqual([{ n: 1 }]);
  });
});

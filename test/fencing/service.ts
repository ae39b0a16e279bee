// A small account service built on the fencing HTTP middleware, for the tests: POST /accounts/<id> with
// {"balance": n} sets the balance, recording an audit row in the same transaction as the watermark.
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fencedHttpHandler, type SqlDatabase } from '../../src/fencing';

export const ACCOUNT_TABLES = [
  'CREATE TABLE account (id INT PRIMARY KEY, balance INT NOT NULL)',
  'CREATE TABLE audit (n SERIAL PRIMARY KEY, account INT NOT NULL, lock TEXT NOT NULL, token BIGINT NOT NULL, step BIGINT NOT NULL, balance INT NOT NULL, writer TEXT)',
];

export interface AccountService {
  url: string;
  /** How many times the handler ran (a refused or replayed request does not run it). */
  handled: number;
  close(): Promise<void>;
}

export async function startAccountService(db: SqlDatabase): Promise<AccountService> {
  const svc = { handled: 0 } as AccountService;
  const handler = fencedHttpHandler({ db }, async ({ body, tx, resource, claim, req }) => {
    svc.handled++;
    const id = Number(resource.split('/')[2]);
    const { balance } = JSON.parse(body.toString() || '{}') as { balance?: number };
    if (!Number.isInteger(balance) || (balance as number) < 0) return { status: 422, body: { error: 'balance must be a non-negative integer' } };
    if (balance === 13) throw new Error('unlucky balance: the handler fails after its change');
    const { rows } = await tx.query('UPDATE account SET balance = $1 WHERE id = $2 RETURNING balance', [balance, id]);
    if (rows.length === 0) return { status: 404, body: { error: `no account ${id}` } };
    await tx.query('INSERT INTO audit (account, lock, token, step, balance, writer) VALUES ($1, $2, $3::bigint, $4::bigint, $5, $6)', [
      id,
      claim.lock,
      claim.token.toString(),
      claim.step.toString(),
      balance,
      req.headers['x-writer'] ?? null,
    ]);
    if (balance === 14) throw new Error('unlucky balance: the handler fails after its audit row');
    return { status: 200, body: { id, balance } };
  });
  const server = http.createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  svc.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  svc.close = () =>
    new Promise<void>((r) => {
      server.close(() => r());
      server.closeAllConnections();
    });
  return svc;
}

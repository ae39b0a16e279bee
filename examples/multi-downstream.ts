// One job, several downstreams: settle an invoice by writing the ledger in our PostgreSQL and telling the
// billing service over HTTP. The same token goes to each, and each checks it on its own (fencedUpdate /
// withFence in the database, the fenced middleware or `fencelock proxy` in front of billing).
//
// Fencing does not make the two writes one transaction: the job can stop between them (a crash, a pause that
// cost it the lock, billing down). So the job's progress is itself a fenced resource, a small state machine
// (PENDING -> LEDGER_DONE -> NOTIFIED), and every step is idempotent:
//   - a lost answer is retried with the same token, step and Idempotency-Key: applied at most once;
//   - a new holder reads the recorded state and carries on from it (reconciliation), with its higher token;
//   - a late old holder is refused everywhere (STALE) and stops: it never undoes or repeats the new holder's work.
// Where a downstream cannot take back a step that must be undone, add a compensating step to the state
// machine (e.g. a ledger reversal) instead of hoping both writes succeed.
//
// Run by test/fencing/multiDownstream.test.ts.
import type { LockFencing } from '../src/client';
import { IDEMPOTENCY_KEY_HEADER, withFence, type SqlDatabase } from '../src/fencing';

export const INVOICE_TABLES = [
  "CREATE TABLE invoice_job (invoice INT PRIMARY KEY, state TEXT NOT NULL DEFAULT 'PENDING')",
  'CREATE TABLE ledger (invoice INT NOT NULL, amount INT NOT NULL, token BIGINT NOT NULL)',
];

export type SettleReport =
  /** Both downstreams have it. */
  | { result: 'SETTLED'; state: 'NOTIFIED' }
  /** Stopped part-way (billing unreachable): the next run, by this holder or a newer one, continues from `state`. */
  | { result: 'INCOMPLETE'; state: string; why: string }
  /** A newer holder has taken over: this one stops and leaves the job to it. */
  | { result: 'SUPERSEDED'; watermark: string; at: string };

async function stateOf(db: SqlDatabase, invoice: number): Promise<string> {
  return db.transaction(async (tx) => ((await tx.query('SELECT state FROM invoice_job WHERE invoice = $1', [invoice])).rows[0] as { state: string }).state);
}

/** Settles `invoice` under the lock whose token `fencing` carries (e.g. inside client.withLock: lock.fencing). */
export async function settleInvoice(db: SqlDatabase, billingUrl: string, fencing: LockFencing, invoice: number, amount: number): Promise<SettleReport> {
  const job = `invoice-job:${invoice}`;
  // Step 1, in our database: the ledger entry and the job's new state in one fenced transaction.
  if ((await stateOf(db, invoice)) === 'PENDING') {
    const o = await withFence(db, job, fencing.claim(1n, 'ledger'), async (tx) => {
      await tx.query('INSERT INTO ledger (invoice, amount, token) VALUES ($1, $2, $3::bigint)', [invoice, amount, fencing.tokenString]);
      await tx.query("UPDATE invoice_job SET state = 'LEDGER_DONE' WHERE invoice = $1", [invoice]);
      return 'LEDGER_DONE';
    });
    if (o.status !== 'APPLIED' && o.status !== 'REPLAYED') return { result: 'SUPERSEDED', watermark: 'watermark' in o ? o.watermark.toString() : '?', at: 'ledger' };
  }
  // Step 2, at billing: the same token; billing checks it against its own watermark. Retried on a lost answer.
  if ((await stateOf(db, invoice)) === 'LEDGER_DONE') {
    let answer: Response | undefined;
    for (let attempt = 0; attempt < 3 && answer === undefined; attempt++) {
      answer = await fetch(`${billingUrl}/invoices/${invoice}`, {
        method: 'POST',
        headers: { ...fencing.headers(), [IDEMPOTENCY_KEY_HEADER]: `invoice-${invoice}-notify`, 'content-type': 'application/json' },
        body: JSON.stringify({ amount }),
      }).catch(() => undefined);
    }
    if (answer === undefined) return { result: 'INCOMPLETE', state: 'LEDGER_DONE', why: 'billing did not answer' };
    if (answer.status === 409) return { result: 'SUPERSEDED', watermark: answer.headers.get('fencing-watermark') ?? '?', at: 'billing' };
    if (!answer.ok) return { result: 'INCOMPLETE', state: 'LEDGER_DONE', why: `billing answered ${answer.status}` };
    // Step 3: record the progress, fenced like step 1 (a later step of the same grant).
    const done = await withFence(db, job, fencing.claim(3n, 'notified'), async (tx) => {
      await tx.query("UPDATE invoice_job SET state = 'NOTIFIED' WHERE invoice = $1", [invoice]);
      return 'NOTIFIED';
    });
    if (done.status !== 'APPLIED' && done.status !== 'REPLAYED') return { result: 'SUPERSEDED', watermark: 'watermark' in done ? done.watermark.toString() : '?', at: 'job state' };
  }
  const state = await stateOf(db, invoice);
  return state === 'NOTIFIED' ? { result: 'SETTLED', state } : { result: 'INCOMPLETE', state, why: 'a step was replayed but its state is not recorded' };
}

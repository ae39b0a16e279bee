// `npm run demo:sql`: the fencing timeline against PostgreSQL (PGlite, embedded: nothing to install), with
// real locks from a fresh local 3-node cluster.
//
// Worker A (a process of its own) takes the lock of account 1 and deposits 50 (100 -> 150, fence = A's token).
// A freezes (SIGSTOP) while computing its next step, past its lease; its session expires. B takes the lock with
// a higher token and withdraws 30 (150 -> 120). A wakes and writes 200 with its old token: the UPDATE is
// refused STALE with B's token as the watermark, B's balance stays. A then retries its first deposit, as after
// a lost answer: it gets the stored result of the first attempt, and nothing is applied twice.
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { FenceLockClient } from '../src/client';
import { ensureFencingSchema, fencedUpdate, type FencedOutcome } from '../src/fencing';
import { bold, info, lines, nextEvent, ROOT, startDemoCluster, step, type DemoCluster } from './demoCluster';

const LOCK = 'demo/account-1';
let cluster: DemoCluster | undefined;

const show = (o: FencedOutcome<Record<string, unknown>> | Record<string, string>): string => JSON.stringify(o, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));

async function main(): Promise<void> {
  const c = (cluster = await startDemoCluster(path.join(ROOT, 'data', 'demo-sql'), '7221,7222,7223,7231,7232,7233'));
  step(`Start a 3-node cluster on ${c.endpoints.join(', ')}, and PostgreSQL (PGlite, in this process)`);
  const client = new FenceLockClient({ endpoints: c.endpoints, clientId: 'demo-sql-b' });
  info(`leader: ${(await c.leader(client)).id}`);
  const db = await PGlite.create();
  await db.exec("CREATE TABLE account (id INT PRIMARY KEY, owner TEXT NOT NULL, balance INT NOT NULL); INSERT INTO account VALUES (1, 'ann', 100)");
  await ensureFencingSchema(db, ['account']);
  const account = async (): Promise<{ balance: number; fence: string }> =>
    (await db.query<{ balance: number; fence: string }>('SELECT balance, fence::text AS fence FROM account WHERE id = 1')).rows[0]!;
  info(`account 1: balance ${(await account()).balance}, fence ${(await account()).fence} (fence BIGINT NOT NULL DEFAULT 0)`);

  step('Worker A (its own process) acquires the lock of account 1 (TTL 3 s) and deposits 50');
  const a = spawn(process.execPath, [path.join(ROOT, 'dist/scripts/demo-sql-worker.js'), c.endpoints.join(','), LOCK], { stdio: ['pipe', 'pipe', 'inherit'] });
  const events = lines(a);
  // A's SQL intents run here, under A's claim, exactly as A sent them.
  const next = async (): Promise<Record<string, string>> => {
    for (;;) {
      const ev = await nextEvent(events, 'worker A');
      if (ev.event === 'error') throw new Error(`worker A: ${ev.message}`);
      if (ev.event !== 'sql') return ev;
      const i = ev as unknown as { id: number; key: number; set: Record<string, unknown>; claim: { lock: string; token: string; step: string; operationId: string } };
      const claim = { lock: i.claim.lock, token: BigInt(i.claim.token), step: BigInt(i.claim.step), operationId: i.claim.operationId };
      const outcome = await fencedUpdate(db, { table: 'account', key: i.key, set: i.set }, claim);
      a.stdin!.write(`${show(outcome)}\n`);
    }
  };
  const tokenA = BigInt((await next()).token!);
  info(`A holds "${LOCK}" with fencing token ${bold(String(tokenA))}`);
  const first = await next();
  const firstOutcome = first.outcome as unknown as { status: string; result?: { balance: number; fence: number } };
  if (firstOutcome.status !== 'APPLIED') throw new Error(`A's first write: ${show(first.outcome as never)}`);
  info(`A: UPDATE account SET balance = 150, fence = ${tokenA} WHERE id = 1 AND fence < ${tokenA}: ${firstOutcome.status} (balance ${firstOutcome.result?.balance}, fence ${firstOutcome.result?.fence})`);

  step('A freezes (SIGSTOP) while computing its next step: its keepalives stop, its lease runs out');
  a.kill('SIGSTOP');
  const frozenAt = Date.now();

  step('Worker B acquires the lock once A\'s session has expired, and withdraws 30');
  const sessionB = await client.openSession({ ttlMs: 10_000, name: 'worker B' });
  const lockB = await sessionB.acquire(LOCK, { waitTimeoutMs: 20_000 });
  info(`A's session expired after ${((Date.now() - frozenAt) / 1000).toFixed(1)} s; B holds "${LOCK}" with token ${bold(String(lockB.token))} (> ${tokenA})`);
  const b = await fencedUpdate(db, { table: 'account', key: 1, set: { balance: (await account()).balance - 30 } }, lockB.fencing.claim(1n, 'withdraw-30'));
  if (b.status !== 'APPLIED') throw new Error(`B's write: ${show(b)}`);
  info(`B: balance ${b.result.balance}, fence ${b.result.fence}: ${b.status}`);

  step('A wakes up (SIGCONT) and, not knowing it was frozen, writes balance 200 with its old token');
  a.kill('SIGCONT');
  const stale = (await next()).outcome as unknown as Record<string, string>;
  if (stale.status !== 'STALE' || stale.watermark !== String(lockB.token)) throw new Error(`SAFETY VIOLATION: A's stale UPDATE was ${show(stale)}`);
  info(`A's UPDATE affected 0 rows: ${bold(`STALE, watermark ${stale.watermark}`)} (B's token), not "0 rows"`);
  const after = await account();
  if (after.balance !== 120) throw new Error(`B's balance was not kept: ${after.balance}`);
  info(`account 1: balance ${after.balance}, fence ${after.fence}: B's write is intact`);

  step('A retries its first deposit (same token, same operation id), as after a lost answer');
  const retry = (await next()).outcome as unknown as Record<string, string> & { result: { balance: number } };
  if (retry.status !== 'REPLAYED' || retry.result.balance !== 150) throw new Error(`A's retry: ${show(retry)}`);
  const ops = (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM fencing_operations')).rows[0]!.n;
  info(`${bold('REPLAYED')}: the stored result of the first attempt (balance 150 then); applied operations: ${ops} (A's deposit, B's withdrawal)`);
  info(`account 1: balance ${(await account()).balance}: nothing applied twice`);
  if ((await account()).balance !== 120 || ops !== 2) throw new Error('the retry changed something');

  await lockB.release();
  await sessionB.close();
  await client.close();
  await db.close();
  console.log(`\n${bold('Done:')} the resource checked the token itself, atomically with the change; the late writer was told why.`);
}

let exitCode = 0;
main()
  .catch((err: Error) => {
    console.error(`demo:sql failed: ${err.stack ?? err.message}`);
    exitCode = 1;
  })
  .finally(() => {
    cluster?.destroy();
    process.exit(exitCode);
  });

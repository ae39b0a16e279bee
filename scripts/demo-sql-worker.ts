// Worker A of `npm run demo:sql`: takes the account's lock, writes its first step, "computes" for a while (the
// demo freezes it with SIGSTOP meanwhile, past its lease), then writes its second step with the token it has,
// not knowing it was frozen, and finally retries its first step as a client does after a lost answer.
//
// The database (PGlite) lives in the demo's process, so A's SQL goes there as intents on stdout, one JSON line
// each ({"event":"sql","id",...}); the demo runs them with fencedUpdate under A's claim and answers on stdin.
import * as readline from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { FenceLockClient, type LockHandle } from '../src/client';

const say = (o: object): void => void process.stdout.write(JSON.stringify(o) + '\n');
const answers = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();
let nextId = 0;

/** Sends an UPDATE intent under this lock's claim and waits for its outcome. */
async function update(lock: LockHandle, step: bigint, operationId: string, balance: number): Promise<Record<string, string>> {
  const id = ++nextId;
  say({ event: 'sql', id, table: 'account', key: 1, set: { balance }, claim: { lock: lock.name, token: lock.fencing.tokenString, step: step.toString(), operationId } });
  const { value, done } = await answers.next();
  if (done) throw new Error('the demo closed the database channel');
  return JSON.parse(value as string) as Record<string, string>;
}

async function main(): Promise<void> {
  const [endpoints, lockName] = process.argv.slice(2);
  const client = new FenceLockClient({ endpoints: endpoints!.split(','), clientId: 'demo-sql-a' });
  const session = await client.openSession({ ttlMs: 3_000, name: 'worker A' });
  const lock = await session.acquire(lockName!, { waitTimeoutMs: 10_000 });
  say({ event: 'acquired', token: lock.fencing.tokenString });
  // Read 100, deposit 50.
  say({ event: 'result', what: 'deposit-50', outcome: await update(lock, 1n, 'deposit-50', 150) });
  await sleep(1_500); // computing the next step: the demo freezes this process in here
  say({ event: 'result', what: 'deposit-50-more', outcome: await update(lock, 2n, 'deposit-50-more', 200) });
  // Its first answer "got lost": the same operation again, same token, same id.
  say({ event: 'result', what: 'deposit-50 (retry)', outcome: await update(lock, 1n, 'deposit-50', 150) });
  await client.close().catch(() => undefined);
  process.exit(0);
}

main().catch((err: Error) => {
  say({ event: 'error', message: err.message });
  process.exit(1);
});

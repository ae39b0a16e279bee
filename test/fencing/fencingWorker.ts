// A lock holder in a process of its own (compiled to dist/test/fencing/fencingWorker.js), so that a test can
// freeze it with SIGSTOP: its keepalives stop, its session expires, its lock goes to another worker, and when
// it wakes up it writes with its old token, as a process after a long pause would.
//
//   node dist/test/fencing/fencingWorker.js '<json WorkerConfig>'
//
// Until the test closes its stdin: take the lock of a random row, announce it, wait a moment (the test may freeze it
// now), then write the row in 1..3 steps under the token, sometimes sending a step twice (a retry), and
// release. Writes go over HTTP with the fencing headers (to a fenced service, a proxy, or the test's SQL
// gateway), or straight to PostgreSQL or MariaDB with fencedUpdate, or to Redis with its fencing script. One JSON
// line per event on stdout:
//   {"k":"holding","lock","token"}   {"k":"attempt","row","token","step","retry","outcome"}
//   {"k":"released","lock","token","held"}   {"k":"end"}
import pg from 'pg';
import mysql from 'mysql2/promise';
import { Redis } from 'ioredis';
import { setTimeout as sleep } from 'node:timers/promises';
import { FenceLockClient, type LockHandle, type Session } from '../../src/client';
import { TRANSPORT_ERROR, type Attempt, type WorkerConfig } from './workerProtocol';
import { fencedUpdate, FENCING_REPLAYED_HEADER, IDEMPOTENCY_KEY_HEADER, mysqlFencing, pgPoolDatabase, redisFencing, type SqlDatabase } from '../../src/fencing';

const emit = (o: object): void => void process.stdout.write(`${JSON.stringify(o)}\n`);
const rnd = (n: number): number => Math.floor(Math.random() * n);

type Write = (row: number, lock: LockHandle, step: bigint, opId: string, balance: number) => Promise<string>;

function httpWriter(url: string, name: string): Write {
  return async (row, lock, step, opId, balance) => {
    try {
      const r = await fetch(`${url}/accounts/${row}`, {
        method: 'POST',
        headers: { ...lock.fencing.headers(step), [IDEMPOTENCY_KEY_HEADER]: opId, 'x-writer': name, 'content-type': 'application/json' },
        body: JSON.stringify({ balance }),
        signal: AbortSignal.timeout(10_000),
      });
      const body = (await r.json().catch(() => ({}))) as { error?: string };
      if (r.status === 200) return r.headers.get(FENCING_REPLAYED_HEADER) === 'true' ? 'REPLAYED' : 'APPLIED';
      if (r.status === 409 && body.error) return body.error;
      return `ERROR ${r.status} ${JSON.stringify(body)}`;
    } catch (err) {
      // No answer (e.g. a kept-alive connection the server closed while this process was frozen).
      return `${TRANSPORT_ERROR} ${(err as Error).message}`;
    }
  };
}

function pgWriter(db: SqlDatabase, name: string): Write {
  return async (row, lock, step, opId, balance) => {
    const c = lock.fencing.claim(step, opId);
    const o = await fencedUpdate(db, { table: 'account', key: row, set: { balance } }, c, {
      alongside: async (tx) => {
        await tx.query('INSERT INTO audit (account, lock, token, step, balance, writer) VALUES ($1, $2, $3::bigint, $4::bigint, $5, $6)', [row, c.lock, c.token.toString(), step.toString(), balance, name]);
      },
    });
    return o.status;
  };
}

function mysqlWriter(db: mysqlFencing.MysqlDatabase, name: string): Write {
  return async (row, lock, step, opId, balance) => {
    const c = lock.fencing.claim(step, opId);
    const o = await mysqlFencing.fencedUpdate(db, { table: 'account', key: row, set: { balance } }, c, {
      alongside: async (tx) => {
        await tx.execute('INSERT INTO audit (account, lock_name, token, step, balance, writer) VALUES (?, ?, CAST(? AS SIGNED), CAST(? AS SIGNED), ?, ?)', [row, c.lock, c.token.toString(), step.toString(), balance, name]);
      },
    });
    return o.status;
  };
}

function redisWriter(redis: Redis, prefix: string, name: string): Write {
  return async (row, lock, step, opId, balance) => {
    const c = lock.fencing.claim(step, opId);
    const o = await redisFencing.fencedUpdate(redis, { key: `${prefix}row:${row}`, value: String(balance) }, c, {
      outbox: { stream: `${prefix}audit`, fields: { row: String(row), balance: String(balance), writer: name } },
    });
    return o.status;
  };
}

/** The writer for the target, and what to close at the end. */
function writerFor(cfg: WorkerConfig): { write: Write; close(): Promise<void> } {
  const t = cfg.target;
  switch (t.kind) {
    case 'pg': {
      const pool = new pg.Pool({ connectionString: t.url, max: 2 });
      return { write: pgWriter(pgPoolDatabase(pool), cfg.name), close: () => pool.end() };
    }
    case 'mysql': {
      const pool = mysql.createPool({ uri: t.url, connectionLimit: 2 });
      return { write: mysqlWriter(mysqlFencing.mysqlPoolDatabase(pool), cfg.name), close: () => pool.end() };
    }
    case 'redis': {
      const redis = new Redis(t.url);
      return { write: redisWriter(redis, t.prefix, cfg.name), close: async () => void (await redis.quit()) };
    }
    case 'http':
      return { write: httpWriter(t.url, cfg.name), close: async () => undefined };
  }
}

async function main(): Promise<void> {
  const cfg = JSON.parse(process.argv[2] ?? '') as WorkerConfig;
  const client = new FenceLockClient({ endpoints: cfg.endpoints, clientId: `fw-${cfg.name}-${process.pid}` });
  const { write, close } = writerFor(cfg);
  // The test decides when the run has done enough (it closes stdin); a frozen worker sees it when woken.
  let stopRequested = false;
  process.stdin.on('data', () => undefined).once('close', () => (stopRequested = true));
  let session: Session | undefined;
  while (!stopRequested) {
    if (!session || session.isLost() || session.isClosed()) session = await client.openSession({ ttlMs: cfg.ttlMs, name: cfg.name });
    const row = 1 + rnd(cfg.rows);
    let lock: LockHandle;
    try {
      lock = await session.acquire(`row/${row}`, { waitTimeoutMs: 5_000 });
    } catch {
      session = undefined;
      continue;
    }
    emit({ k: 'holding', lock: lock.name, token: lock.token.toString() });
    await sleep(100); // the moment the test may freeze this process, holding the lock
    const steps = 1 + rnd(3);
    for (let s = 1n; s <= BigInt(steps); s++) {
      const opId = `${cfg.name}-${lock.token}-${s}`;
      const balance = 100 + rnd(900);
      // Sometimes a second send of the same step (a retry); always one after a lost answer.
      let sends = Math.random() < 0.25 ? 2 : 1;
      for (let i = 0; i < sends; i++) {
        const outcome = await write(row, lock, s, opId, balance);
        emit({ k: 'attempt', worker: cfg.name, row, token: lock.token.toString(), step: s.toString(), retry: i > 0, outcome } satisfies Attempt);
        if (outcome.startsWith(TRANSPORT_ERROR) && i === sends - 1 && sends < 4) sends++;
      }
    }
    // A refused release: the lock was lost meanwhile (frozen, or starved of CPU past the lease), and the
    // server has expired the session.
    const held = await lock.release().then(
      () => true,
      () => {
        session = undefined;
        return false;
      },
    );
    emit({ k: 'released', lock: lock.name, token: lock.token.toString(), held });
  }
  emit({ k: 'end' });
  await client.close().catch(() => undefined);
  await close();
  process.exit(0);
}

main().catch((err: Error) => {
  emit({ k: 'error', message: err.stack ?? err.message });
  process.exit(1);
});

// Many lock holders with real locks from a real fencelock cluster hammer the same rows while some of them are
// frozen (SIGSTOP) past their lease and their sessions expire. The resource records every write it accepts (an
// audit row in the same transaction; what the service behind the proxy received); at the end the history
// must show, per row, strictly increasing tokens except further steps of one grant, and no stale write.
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimFromHeaders, ensureFencingSchema, fencedUpdate, FENCING_REPLAYED_HEADER, type SqlDatabase } from '../../src/fencing';
import { LocalCluster, stablePorts } from '../integration/harness';
import { EngineHost, ENGINES, type Engine } from './engines';
import { startBlindService, startProxy } from './proxyProcess';
import { ACCOUNT_TABLES, startAccountService } from './service';
import { checkHistory, runWorkers, type Accepted, type HistoryStats } from './workers';

const ROWS = 3;
const WORKERS = 5;
const DURATION_MS = 12_000;
const TTL_MS = 3_000; // the cluster's minimum session TTL
const FREEZE = { freezeChance: 0.3, freezeMs: TTL_MS + 2_000 };

let cluster: LocalCluster;
const figures: Record<string, HistoryStats> = {};

beforeAll(async () => {
  cluster = await LocalCluster.create({ size: 3 });
  cluster.startAll();
});
afterAll(async () => {
  await cluster?.destroy();
  // The figures the README's closing note quotes.
  console.log(JSON.stringify(figures, null, 1));
});

const workerConfig = (target: { kind: 'http' | 'pg'; url: string }) => ({ endpoints: cluster.endpoints, rows: ROWS, durationMs: DURATION_MS, ttlMs: TTL_MS, target });

async function setUp(e: Engine, fencedTables: string[]): Promise<void> {
  for (const t of ACCOUNT_TABLES) await e.sql(t);
  await ensureFencingSchema(e.db, fencedTables);
  await e.sql(`INSERT INTO account (id, balance) SELECT g, 0 FROM generate_series(1, ${ROWS}) g`);
}

async function auditHistory(e: Engine): Promise<Accepted[]> {
  const rows = await e.sql('SELECT account, token::text AS token, step::text AS step FROM audit ORDER BY n');
  return rows.map((r) => ({ row: Number(r.account), token: BigInt(r.token as string), step: BigInt(r.step as string) }));
}

/** Every row ends with the balance of its last accepted write. */
async function expectFinalState(e: Engine): Promise<void> {
  const finals = await e.sql('SELECT a.id, a.balance, (SELECT balance FROM audit WHERE account = a.id ORDER BY n DESC LIMIT 1) AS last FROM account a');
  for (const f of finals) expect(f.balance).toBe(f.last ?? 0);
}

/** For PGlite, which lives in this process: the workers' fenced UPDATEs arrive over HTTP and run here. */
async function sqlGateway(db: SqlDatabase): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      void (async () => {
        const parsed = claimFromHeaders(req.headers);
        if (!parsed.ok) return res.writeHead(parsed.status).end();
        const row = Number((req.url ?? '').split('/')[2]);
        const { balance } = JSON.parse(body) as { balance: number };
        const c = parsed.claim;
        const o = await fencedUpdate(db, { table: 'account', key: row, set: { balance } }, c, {
          alongside: async (tx) => {
            await tx.query('INSERT INTO audit (account, lock, token, step, balance, writer) VALUES ($1, $2, $3::bigint, $4::bigint, $5, $6)', [row, c.lock, c.token.toString(), c.step.toString(), balance, req.headers['x-writer']]);
          },
        });
        if (o.status === 'APPLIED' || o.status === 'REPLAYED') res.writeHead(200, o.status === 'REPLAYED' ? { [FENCING_REPLAYED_HEADER]: 'true' } : {}).end('{}');
        else res.writeHead(o.status === 'NOT_FOUND' ? 404 : 409, { 'content-type': 'application/json' }).end(JSON.stringify({ error: o.status }));
      })().catch(() => res.writeHead(500).end());
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise<void>((r) => server.close(() => r())) };
}

function expectExercised(name: string, s: HistoryStats): void {
  figures[name] = s;
  expect(s.freezes).toBeGreaterThan(0);
  expect(s.accepted).toBeGreaterThan(20);
  expect(s.refusedStale).toBeGreaterThan(0);
}

describe.each(ENGINES)('concurrent holders on %s', (engineName) => {
  const host = new EngineHost(engineName);
  afterAll(async () => host.shutdown());

  it('fencedUpdate: accepted tokens strictly increase per row (except steps of one grant), no stale write applied, retries applied once', async () => {
    const e = await host.open();
    const gateway = engineName === 'pglite' ? await sqlGateway(e.db) : undefined;
    try {
      await setUp(e, ['account']);
      // On the server, each worker opens its own connections; PGlite is reached through this process.
      const target = gateway ? { kind: 'http' as const, url: gateway.url } : { kind: 'pg' as const, url: e.url! };
      const run = await runWorkers({ workers: WORKERS, config: workerConfig(target), ...FREEZE });
      const stats = checkHistory(await auditHistory(e), run, 'REPLAYED');
      expectExercised(`sql/${engineName}`, stats);
      expect(stats.replayed).toBeGreaterThan(0);
      await expectFinalState(e);
    } finally {
      await gateway?.close();
      await e.close();
    }
  });

  it('the HTTP middleware under the same workload: the same history rules hold', async () => {
    const e = await host.open();
    await setUp(e, []);
    const svc = await startAccountService(e.db);
    try {
      const run = await runWorkers({ workers: WORKERS, config: workerConfig({ kind: 'http', url: svc.url }), ...FREEZE });
      const stats = checkHistory(await auditHistory(e), run, 'REPLAYED');
      expectExercised(`http/${engineName}`, stats);
      await expectFinalState(e);
    } finally {
      await svc.close();
      await e.close();
    }
  });
});

describe('concurrent holders through fencelock proxy', () => {
  it('stale requests never reach the service, and the watermarks survive a proxy crash and restart mid-run', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'fencelock-proxy-run-'));
    const svc = await startBlindService();
    const [port] = await stablePorts(1);
    const state = path.join(dir, 'watermarks.log');
    // The proxy checks every claim's token with the cluster that granted it.
    const proxyArgs = ['--resource-segments', '2', '--endpoints', cluster.endpoints.join(',')];
    let proxy = await startProxy(svc.url, state, proxyArgs, port);
    let restartedWith = 0;
    try {
      const run = await runWorkers({
        workers: WORKERS,
        config: workerConfig({ kind: 'http', url: proxy.url }),
        ...FREEZE,
        midway: async () => {
          await proxy.stop('SIGKILL');
          await new Promise((r) => setTimeout(r, 300));
          proxy = await startProxy(svc.url, state, proxyArgs, port);
          restartedWith = svc.received.length;
        },
      });
      const accepted = svc.received.map((r) => ({ row: Number(r.path.split('/')[2]), token: BigInt(r.token!), step: BigInt(r.step!) }));
      const stats = checkHistory(accepted, run, 'STALE_STEP', { forgottenLocks: true });
      expectExercised('proxy', stats);
      // The run went on after the restart, and the checks above covered writes on both sides of it.
      expect(restartedWith).toBeGreaterThan(0);
      expect(svc.received.length).toBeGreaterThan(restartedWith);
    } finally {
      await proxy.stop('SIGKILL');
      await svc.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

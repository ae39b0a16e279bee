// `fencelock check-resource` as a real process, with real tokens from a real fencelock cluster, against real
// resources: a PostgreSQL row (the server of the global setup), a service on the fencing middleware, a blind
// service behind `fencelock proxy`; and against broken ones, where it must name the rules that did not hold
// and exit 9.
import { mkdtempSync, rmSync } from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FenceLockClient } from '../../src/client';
import { ensureFencingSchema } from '../../src/fencing';
import { clusterWithLeader } from '../integration/clusterWithLeader';
import { freePorts, LocalCluster, runNode } from '../integration/harness';
import { startLenientResource } from './brokenResource';
import { EngineHost, type Engine } from './engines';
import { CLI_MAIN, startBlindService, startProxy } from './proxyProcess';
import { ACCOUNT_TABLES, startAccountService } from './service';

const BASE_CHECKS = ['tokens', 'newer-applies', 'stale-refused', 'retry-replayed', 'higher-step', 'same-step-refused', 'lower-step-refused', 'other-lock-refused'];
const RESTORE_CHECKS = ['restore-raise', 'after-raise-next-grant'];

interface Row {
  check: string;
  claim?: { lock: string; token: string; step: string; operationId: string };
  expected: string;
  observed: string;
  held: boolean;
}
interface Report {
  target: { kind: string; resource: string };
  lock: string;
  held: boolean;
  checks: Row[];
}

let cluster: LocalCluster;
let client: FenceLockClient;
const host = new EngineHost('postgres');
let e: Engine;

beforeAll(async () => {
  ({ cluster, client } = await clusterWithLeader({ size: 1 }, 30_000));
  e = await host.open();
  for (const t of ACCOUNT_TABLES) await e.sql(t);
  await ensureFencingSchema(e.db, ['account']);
  // Row 0 is the dedicated row of the checks; row 1 is the application's and must stay as it is.
  await e.sql('INSERT INTO account (id, balance) VALUES (0, 0), (1, 100), (2, 0), (3, 0)');
});
afterAll(async () => {
  await e?.close();
  await host.shutdown();
  await client?.close();
  await cluster?.destroy();
});

function checkResource(lock: string, args: string[], json = true): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const globals = ['--endpoints', cluster.endpoints.join(','), '--timeout', '10000', ...(json ? ['--json'] : [])];
  return runNode([CLI_MAIN, ...globals, 'check-resource', '--lock', lock, ...args], { timeoutMs: 120_000 });
}

function report(stdout: string): Report {
  return JSON.parse(stdout) as Report;
}

const byName = (r: Report): Record<string, Row> => Object.fromEntries(r.checks.map((c) => [c.check, c]));
const failing = (r: Report): string[] => r.checks.filter((c) => !c.held).map((c) => c.check);

describe('check-resource against a correct resource: every rule holds, exit 0', () => {
  it('a PostgreSQL row through the fencing helpers, with the restore raise; other rows untouched', async () => {
    const res = await checkResource('check/pg', ['--postgres', e.url!, '--table', 'account', '--row', '0', '--include-restore']);
    expect(res.code, res.stderr + res.stdout).toBe(0);
    const r = report(res.stdout);
    expect(r.checks.map((c) => c.check)).toEqual([...BASE_CHECKS, ...RESTORE_CHECKS]);
    expect(failing(r)).toEqual([]);
    expect(r.held).toBe(true);
    const c = byName(r);
    expect(c['stale-refused']!.observed).toMatch(/^STALE \(watermark \d+\)$/);
    expect(c['retry-replayed']!.observed).toMatch(/^REPLAYED/);
    expect(c['other-lock-refused']!.observed).toBe('WRONG_LOCK (bound to check/pg)');
    // Real tokens from the cluster's log: each grant above the one before, and the next holder's above them all.
    const tokens = ['stale-refused', 'newer-applies', 'other-lock-refused', 'after-raise-next-grant'].map((n) => BigInt(c[n]!.claim!.token));
    expect([...tokens].sort((a, b) => (a < b ? -1 : 1))).toEqual(tokens);
    expect(new Set(tokens).size).toBe(4);
    const last = tokens[3]!;
    const session = await client.openSession({ ttlMs: 5_000 });
    const after = await session.acquire('check/pg');
    expect(after.token).toBeGreaterThan(last);
    await session.close();
    const rows = await e.sql('SELECT id, balance, fence::text AS fence, fence_lock, fence_step::text AS step FROM account WHERE id IN (0, 1) ORDER BY id');
    expect(rows).toEqual([
      { id: 0, balance: 0, fence: last.toString(), fence_lock: 'check/pg', step: '1' },
      { id: 1, balance: 100, fence: '0', fence_lock: null, step: '0' },
    ]);
    expect(await e.sql('SELECT DISTINCT resource FROM fencing_operations')).toEqual([{ resource: `row:${e.schema}.account:id:0` }]);

    // Again, as a table: later grants, so the raised watermark is no obstacle.
    const text = await checkResource('check/pg', ['--postgres', e.url!, '--table', 'account', '--row', '0', '--include-restore'], false);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^CHECK +TOKEN\/STEP +EXPECTED +OBSERVED +HELD$/m);
    expect(text.stdout).toMatch(/all 10 checks held/);
    console.log(`postgres:\n${text.stdout}`);
  });

  it('an HTTP resource on the fencing middleware: the handler runs only for the applied writes', async () => {
    const svc = await startAccountService(e.db);
    try {
      const res = await checkResource('check/http', ['--http', `${svc.url}/accounts/2`, '--body', '{"balance": 5}']);
      expect(res.code, res.stderr + res.stdout).toBe(0);
      const r = report(res.stdout);
      expect(r.checks.map((c) => c.check)).toEqual(BASE_CHECKS);
      expect(failing(r)).toEqual([]);
      expect(byName(r)['retry-replayed']!.observed).toBe('REPLAYED (HTTP 200)');
      // newer-applies and higher-step ran the handler; the retry was replayed, the rest refused before it.
      expect(svc.handled).toBe(2);
      expect(await e.sql('SELECT step::text AS step FROM audit WHERE account = 2 ORDER BY n')).toEqual([{ step: '1' }, { step: '2' }]);
      const text = await checkResource('check/http', ['--http', `${svc.url}/accounts/2`, '--body', '{"balance": 5}'], false);
      expect(text.code, text.stderr).toBe(0);
      console.log(`http (middleware):\n${text.stdout}`);
    } finally {
      await svc.close();
    }
  });

  it('a service that checks nothing, behind fencelock proxy (--behind proxy): the service gets only the applied writes', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'fencelock-check-'));
    const svc = await startBlindService();
    // The proxy checks each claim against the cluster that issued it (docs/fencing-downstream.md, section 4).
    const proxy = await startProxy(svc.url, path.join(dir, 'state.log'), ['--endpoints', cluster.endpoints.join(',')]);
    try {
      const res = await checkResource('check/proxy', ['--http', `${proxy.url}/check/1`, '--behind', 'proxy']);
      expect(res.code, res.stderr + res.stdout).toBe(0);
      const r = report(res.stdout);
      expect(failing(r)).toEqual([]);
      expect(byName(r)['retry-replayed']!.observed).toMatch(/^STALE_STEP/);
      expect(svc.received.map((x) => x.step)).toEqual(['1', '2']);
      const text = await checkResource('check/proxy', ['--http', `${proxy.url}/check/1`, '--behind', 'proxy'], false);
      expect(text.code, text.stderr).toBe(0);
      console.log(`http (proxy):\n${text.stdout}`);
    } finally {
      await proxy.stop();
      await svc.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('check-resource against a broken resource: the rules that did not hold are named, exit 9', () => {
  it('an HTTP resource that checks `fence <= token`: the retry and the repeated steps run again', async () => {
    const svc = await startLenientResource();
    try {
      const res = await checkResource('check/lenient', ['--http', `${svc.url}/r`]);
      expect(res.code, res.stderr + res.stdout).toBe(9);
      const r = report(res.stdout);
      expect(r.held).toBe(false);
      expect(failing(r)).toEqual(['retry-replayed', 'same-step-refused', 'lower-step-refused']);
      expect(byName(r)['same-step-refused']!.observed).toBe('APPLIED (HTTP 200)');
      const text = await checkResource('check/lenient', ['--http', `${svc.url}/r`], false);
      expect(text.code).toBe(9);
      expect(text.stdout).toMatch(/3 of 8 checks did NOT hold: retry-replayed, same-step-refused, lower-step-refused/);
      console.log(`http (fence <= token):\n${text.stdout}`);
    } finally {
      await svc.close();
    }
  });

  it('an HTTP service that checks nothing: every refusal is missing', async () => {
    const svc = await startBlindService();
    try {
      const res = await checkResource('check/blind', ['--http', `${svc.url}/r`]);
      expect(res.code, res.stderr + res.stdout).toBe(9);
      expect(failing(report(res.stdout))).toEqual(['stale-refused', 'retry-replayed', 'same-step-refused', 'lower-step-refused', 'other-lock-refused']);
    } finally {
      await svc.close();
    }
  });

  it('a service that drops every write (resets the connection): each write row is an ERROR with the cause, exit 9', async () => {
    const server = http.createServer((req) => req.socket.destroy());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    try {
      const res = await checkResource('check/reset', ['--http', `http://127.0.0.1:${(server.address() as AddressInfo).port}/r`]);
      expect(res.code, res.stderr + res.stdout).toBe(9);
      const r = report(res.stdout);
      expect(failing(r)).toEqual(BASE_CHECKS.slice(1));
      expect(byName(r)['newer-applies']!.observed).toMatch(/^ERROR \(fetch failed: .+\)$/);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  it('a PostgreSQL table whose trigger puts the fence back (as an ORM saving a stale copy of the row would): stale writes get through', async () => {
    await e.sql('CREATE TABLE ledger (id INT PRIMARY KEY, amount INT NOT NULL DEFAULT 0)');
    await ensureFencingSchema(e.db, ['ledger']);
    await e.sql('INSERT INTO ledger (id) VALUES (0)');
    await e.sql(`CREATE FUNCTION reset_fence() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.fence := 0; NEW.fence_step := 0; RETURN NEW; END $$`);
    await e.sql('CREATE TRIGGER orm_save BEFORE UPDATE ON ledger FOR EACH ROW EXECUTE FUNCTION reset_fence()');
    const res = await checkResource('check/pg-broken', ['--postgres', e.url!, '--table', 'ledger', '--row', '0', '--include-restore']);
    expect(res.code, res.stderr + res.stdout).toBe(9);
    const r = report(res.stdout);
    expect(failing(r)).toEqual(['stale-refused', 'same-step-refused', 'lower-step-refused', 'restore-raise']);
    expect(byName(r)['stale-refused']!.observed).toMatch(/^APPLIED/);
  });
});

describe('check-resource: arguments, an unreachable resource or cluster', () => {
  it('one target exactly; --include-restore only where the watermark can be raised; a missing row: exit 1, before any grant', async () => {
    // The test holds the lock: a command that asked for a grant before checking its arguments and the resource
    // would wait for it and fail LOCK_HELD instead.
    const holder = await client.openSession({ ttlMs: 10_000 });
    await holder.acquire('check/args');
    const both = await checkResource('check/args', ['--postgres', e.url!, '--table', 'account', '--row', '0', '--http', 'http://127.0.0.1:1/x']);
    expect(both.code).toBe(1);
    expect(JSON.parse(both.stdout)).toMatchObject({ error: { message: expect.stringMatching(/give one target/) } });
    const restore = await checkResource('check/args', ['--http', 'http://127.0.0.1:1/x', '--include-restore']);
    expect(restore.code).toBe(1);
    expect(restore.stdout).toMatch(/cannot raise its watermark/);
    const noRow = await checkResource('check/args', ['--postgres', e.url!, '--table', 'account', '--row', '99']);
    expect(noRow.code).toBe(1);
    expect(JSON.parse(noRow.stdout)).toMatchObject({ error: { code: 'RESOURCE_NOT_READY', message: expect.stringMatching(/no such row/) } });
    const badName = await checkResource('check/args', ['--postgres', e.url!, '--table', 'account; drop', '--row', '0']);
    expect(badName.code).toBe(1);
    expect(badName.stdout).toMatch(/not a plain SQL identifier/);
    await holder.close();
  });

  it('a resource nobody listens on: exit 3 before any grant (RESOURCE_UNREACHABLE, not LOCK_HELD); a cluster nobody answers: exit 3', async () => {
    const [port] = await freePorts(1);
    const holder = await client.openSession({ ttlMs: 10_000 });
    await holder.acquire('check/down');
    const http = await checkResource('check/down', ['--http', `http://127.0.0.1:${port}/x`]);
    expect(http.code).toBe(3);
    expect(JSON.parse(http.stdout)).toMatchObject({ error: { code: 'RESOURCE_UNREACHABLE' } });
    const pg = await checkResource('check/down', ['--postgres', `postgres://postgres@127.0.0.1:${port}/postgres`, '--table', 'account', '--row', '0']);
    expect(pg.code).toBe(3);
    expect(JSON.parse(pg.stdout)).toMatchObject({ error: { code: 'RESOURCE_UNREACHABLE' } });
    await holder.close();
    const svc = await startBlindService();
    try {
      const res = await runNode([CLI_MAIN, '--endpoints', `127.0.0.1:${port}`, '--timeout', '1500', '--json', 'check-resource', '--lock', 'x', '--http', `${svc.url}/x`]);
      expect(res.code, res.stdout).toBe(3);
      expect(svc.received).toEqual([]);
    } finally {
      await svc.close();
    }
  });
});

// `npm run bench` end to end, short: both systems start with TLS and in plaintext (--tls both), and fencelock also
// with auth on (--auth both, fencelock-auth: five clusters); every workload runs on all five without errors (so
// every worker's own user may do what the workloads do, and no quota stops them), the table and the JSON record
// (with the fencelock/etcd and fencelock-auth/etcd ratios, the TLS cost and the auth cost) come out, and nothing
// is left running. Rows are shorter than with two clusters, so the test takes about as long as it did then.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runNode } from '../integration/harness';

const ROOT = path.resolve(__dirname, '../..');
const BENCH = path.join(ROOT, 'dist/scripts/bench.js');
const work = mkdtempSync(path.join(os.tmpdir(), 'fencelock-bench-test-'));

afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Pids of processes whose command line mentions `needle` (the bench's data folder names both clusters' members). */
function processesMentioning(needle: string): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(needle)) out.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

interface JsonSummary {
  opsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  measuredRounds: number;
  serverCpuPct?: number;
}

describe('npm run bench', () => {
  it('runs every workload on fencelock and etcd with and without TLS and on fencelock with auth, prints the comparison and writes the JSON record', async () => {
    const dataRoot = path.join(work, 'data');
    mkdirSync(dataRoot);
    const json = path.join(work, 'results.json');
    const res = await runNode(
      [
        BENCH,
        ...['--seconds', '0.25', '--warmup', '0.1', '--start-warmup', '0.2', '--clients', '2', '--systems', 'fencelock,etcd', '--tls', 'both', '--auth', 'both'],
        ...['--json', json, '--data-root', dataRoot],
      ],
      { cwd: work, timeoutMs: 150_000 },
    );
    expect(res.code, `${res.stdout}\n${res.stderr}`).toBe(0);
    expect(res.stdout).toMatch(/workload\s+clients\s+\|/);
    expect(res.stdout).toMatch(/fencelock\/etcd TLS/);
    expect(res.stdout).toMatch(/fencelock\/etcd plain/);
    expect(res.stdout).toMatch(/fencelock-auth\/etcd/);
    expect(res.stdout).toMatch(/TLS cost/);
    expect(res.stdout).toMatch(/auth cost/);
    expect(res.stdout).toMatch(/\|\s+fencelock\s+\|\s+fencelock-auth\s+\|\s+etcd\s+\|\s+fencelock-plain\s+\|\s+etcd-plain\s+\|/);

    const record = JSON.parse(readFileSync(json, 'utf8')) as {
      machine: { etcd?: string };
      flags: { tls: string; auth: string };
      systems: Array<{ name: string; base: string; tls: boolean; auth: boolean }>;
      failedToStart: Record<string, string>;
      rows: Array<{
        workload: string;
        clients: number;
        systems: Record<string, { median?: JsonSummary }>;
        fencelockVsEtcd: { tls?: { opsPerSec?: number; p50?: number }; plain?: { opsPerSec?: number; p50?: number } };
        fencelockAuthVsEtcd?: { opsPerSec?: number; p50?: number };
        tlsCost: Record<string, { opsPerSecPct?: number; p50Pct?: number } | undefined>;
        authCost?: { opsPerSecPct?: number; p50Pct?: number };
      }>;
    };
    expect(record.machine.etcd).toMatch(/^3\.4\./);
    expect(record.failedToStart).toEqual({});
    expect(record.flags.tls).toBe('both');
    expect(record.flags.auth).toBe('both');
    expect(record.systems).toEqual([
      { name: 'fencelock', base: 'fencelock', tls: true, auth: false },
      { name: 'fencelock-auth', base: 'fencelock', tls: true, auth: true },
      { name: 'etcd', base: 'etcd', tls: true, auth: false },
      { name: 'fencelock-plain', base: 'fencelock', tls: false, auth: false },
      { name: 'etcd-plain', base: 'etcd', tls: false, auth: false },
    ]);
    expect(record.rows.map((r) => r.workload).sort()).toEqual(['cycles-distinct', 'cycles-hot', 'fenced-writes', 'reads']);
    for (const row of record.rows) {
      for (const system of ['fencelock', 'fencelock-auth', 'etcd', 'fencelock-plain', 'etcd-plain']) {
        const m = row.systems[system]?.median;
        expect(m, `${row.workload} on ${system}`).toBeDefined();
        expect(m!.errors, `${row.workload} on ${system}: errors`).toBe(0);
        expect(m!.opsPerSec, `${row.workload} on ${system}: ops/s`).toBeGreaterThan(0);
        expect(m!.p50Ms).toBeGreaterThan(0);
        expect(m!.p99Ms).toBeGreaterThanOrEqual(m!.p50Ms);
        expect(m!.serverCpuPct).toBeGreaterThan(0);
      }
      for (const mode of ['tls', 'plain'] as const) {
        const ratios = row.fencelockVsEtcd[mode];
        expect(ratios?.opsPerSec, `${row.workload}: fencelock/etcd ${mode} ops/s`).toBeGreaterThan(0);
        expect(ratios?.p50, `${row.workload}: fencelock/etcd ${mode} p50`).toBeGreaterThan(0);
      }
      for (const system of ['fencelock', 'etcd']) {
        expect(row.tlsCost[system]?.opsPerSecPct, `${row.workload}: TLS cost of ${system}`).toBeGreaterThan(0);
        expect(row.tlsCost[system]?.p50Pct, `${row.workload}: TLS p50 of ${system}`).toBeGreaterThan(0);
      }
      expect(row.fencelockAuthVsEtcd?.opsPerSec, `${row.workload}: fencelock-auth/etcd ops/s`).toBeGreaterThan(0);
      expect(row.fencelockAuthVsEtcd?.p50, `${row.workload}: fencelock-auth/etcd p50`).toBeGreaterThan(0);
      expect(row.authCost?.opsPerSecPct, `${row.workload}: auth cost`).toBeGreaterThan(0);
      expect(row.authCost?.p50Pct, `${row.workload}: auth p50`).toBeGreaterThan(0);
    }
    // Both clusters were stopped and their data removed.
    expect(processesMentioning(dataRoot)).toEqual([]);
    expect(readdirSync(dataRoot)).toEqual([]);
  });

  it('refuses an unknown workload with a clear message and starts nothing', async () => {
    const res = await runNode([BENCH, '--workloads', 'cycles-distinct,nope'], { cwd: work, timeoutMs: 30_000 });
    expect(res.code).not.toBe(0);
    expect(res.stderr).toMatch(/unknown workload nope/);
    const tls = await runNode([BENCH, '--tls', 'sometimes'], { cwd: work, timeoutMs: 30_000 });
    expect(tls.code).not.toBe(0);
    expect(tls.stderr).toMatch(/--tls <mode>.*needs one of on, off, both/);
    const auth = await runNode([BENCH, '--auth', 'sometimes'], { cwd: work, timeoutMs: 30_000 });
    expect(auth.code).not.toBe(0);
    expect(auth.stderr).toMatch(/--auth <mode>.*needs one of on, off, both/);
    const plainAuth = await runNode([BENCH, '--tls', 'off', '--auth', 'on'], { cwd: work, timeoutMs: 30_000 });
    expect(plainAuth.code).not.toBe(0);
    expect(plainAuth.stderr).toMatch(/--auth on needs TLS/);
    expect(plainAuth.stdout).not.toMatch(/starting/);
  });
});

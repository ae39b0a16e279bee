// `npm run bench` end to end, short: both clusters start, every workload runs on both without errors, the
// table and the JSON record come out, and nothing is left running.
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
  it('runs every workload on fencelock and etcd, prints the comparison and writes the JSON record', async () => {
    const dataRoot = path.join(work, 'data');
    mkdirSync(dataRoot);
    const json = path.join(work, 'results.json');
    const res = await runNode(
      [BENCH, '--seconds', '0.5', '--warmup', '0.2', '--start-warmup', '0.4', '--clients', '2', '--systems', 'fencelock,etcd', '--json', json, '--data-root', dataRoot],
      { cwd: work, timeoutMs: 150_000 },
    );
    expect(res.code, `${res.stdout}\n${res.stderr}`).toBe(0);
    expect(res.stdout).toMatch(/workload\s+clients\s+\|/);
    expect(res.stdout).toMatch(/fencelock\/etcd/);

    const record = JSON.parse(readFileSync(json, 'utf8')) as {
      machine: { etcd?: string };
      failedToStart: Record<string, string>;
      rows: Array<{ workload: string; clients: number; systems: Record<string, { median?: JsonSummary }> }>;
    };
    expect(record.machine.etcd).toMatch(/^3\.4\./);
    expect(record.failedToStart).toEqual({});
    expect(record.rows.map((r) => r.workload).sort()).toEqual(['cycles-distinct', 'cycles-hot', 'fenced-writes', 'reads']);
    for (const row of record.rows) {
      for (const system of ['fencelock', 'etcd']) {
        const m = row.systems[system]?.median;
        expect(m, `${row.workload} on ${system}`).toBeDefined();
        expect(m!.errors, `${row.workload} on ${system}: errors`).toBe(0);
        expect(m!.opsPerSec, `${row.workload} on ${system}: ops/s`).toBeGreaterThan(0);
        expect(m!.p50Ms).toBeGreaterThan(0);
        expect(m!.p99Ms).toBeGreaterThanOrEqual(m!.p50Ms);
        expect(m!.serverCpuPct).toBeGreaterThan(0);
      }
    }
    // Both clusters were stopped and their data removed.
    expect(processesMentioning(dataRoot)).toEqual([]);
    expect(readdirSync(dataRoot)).toEqual([]);
  });

  it('refuses an unknown workload with a clear message and starts nothing', async () => {
    const res = await runNode([BENCH, '--workloads', 'cycles-distinct,nope'], { cwd: work, timeoutMs: 30_000 });
    expect(res.code).not.toBe(0);
    expect(res.stderr).toMatch(/unknown workload nope/);
  });
});

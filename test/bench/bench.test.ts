// `npm run bench` end to end, short: fencelock and etcd start with TLS and in plaintext (--tls both), fencelock also
// with auth on (--auth both, fencelock-auth), and a ZooKeeper ensemble in plaintext: six clusters. Every workload
// runs on all six without errors (so every worker's own user may do what the workloads do, no quota stops them,
// and ZooKeeper's lock, semaphore and read-write lock recipes, multi and sync work), except the semaphore and
// read-mostly rows on etcd, which has neither primitive: those say n/a, with the reason. The table and the JSON
// record (each fencelock system against the best peer of the row, the TLS cost and the auth cost) come out, and
// nothing is left running, no JVM either. One round at one client count, rows of 0.15 s: the figures are only
// checked for sanity (ops, no errors), which is all such short rows can show; the recipes' waiting is covered
// by zookeeper.test.ts and fencelock's by its own tests.
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

const SYSTEMS = ['fencelock', 'fencelock-auth', 'etcd', 'zookeeper', 'fencelock-plain', 'etcd-plain'];
/** The rows etcd cannot run, each with what its n/a says. */
const ETCD_LACKS: Record<string, RegExp> = { semaphore: /etcd has no semaphore/, 'read-mostly': /etcd has no shared lock mode/ };

describe('npm run bench', () => {
  it('runs every workload on fencelock and etcd with and without TLS (etcd: n/a where it lacks the primitive), on fencelock with auth and on zookeeper, prints the comparison and writes the JSON record', async () => {
    const dataRoot = path.join(work, 'data');
    mkdirSync(dataRoot);
    const json = path.join(work, 'results.json');
    const res = await runNode(
      [
        BENCH,
        ...['--seconds', '0.15', '--warmup', '0.05', '--start-warmup', '0.2', '--clients', '2', '--systems', 'fencelock,etcd,zookeeper', '--tls', 'both', '--auth', 'both'],
        ...['--json', json, '--data-root', dataRoot],
      ],
      { cwd: work, timeoutMs: 150_000 },
    );
    expect(res.code, `${res.stdout}\n${res.stderr}`).toBe(0);
    expect(res.stdout).toMatch(/workload\s+clients\s+\|/);
    expect(res.stdout).toMatch(/\|\s+fencelock\/best peer\s+\|\s+fencelock-auth\/best peer\s+\|\s+fencelock-plain\/best peer\s+\|\s+TLS cost\s+\|\s+auth cost$/m);
    // Every ratio cell names the peer it was taken against.
    expect(res.stdout).toMatch(/^reads\s+2 \|.*\d+(\.\d)?x (etcd|zookeeper)\s+\d+(\.\d)?x (etcd|zookeeper) \|/m);
    expect(res.stdout).toMatch(/zookeeper: plaintext/);
    expect(res.stdout).toMatch(/\|\s+fencelock\s+\|\s+fencelock-auth\s+\|\s+etcd\s+\|\s+zookeeper\s+\|\s+fencelock-plain\s+\|\s+etcd-plain\s+\|/);
    // etcd's cells of the rows it cannot run say n/a (fencelock, fencelock-auth measured before them), and why.
    for (const [workload, why] of Object.entries(ETCD_LACKS)) {
      expect(res.stdout).toMatch(new RegExp(`^${workload}\\s+2 \\|(\\s+\\d+\\s+[\\d.]+\\s+[\\d.]+\\s+\\d+%\\s+\\d+% \\|){2}\\s+n/a\\s+-\\s+-\\s+-\\s+- \\|`, 'm'));
      expect(res.stdout).toMatch(new RegExp(`^${workload} on etcd: n/a, ${why.source}`, 'm'));
    }
    expect(res.stdout).toMatch(/^semaphore: each client takes a permit of one semaphore of 4/m);
    expect(res.stdout).toMatch(/^read-mostly: 9 cycles in 10 take one lock shared/m);

    const record = JSON.parse(readFileSync(json, 'utf8')) as {
      machine: { etcd?: string; zookeeper?: string };
      flags: { tls: string; auth: string };
      systems: Array<{ name: string; base: string; tls: boolean; auth: boolean }>;
      failedToStart: Record<string, string>;
      rows: Array<{
        workload: string;
        clients: number;
        systems: Record<string, { median?: JsonSummary; rounds: Array<{ notApplicable?: string }> }>;
        vsBestPeer: Record<string, { bestPeer: { opsPerSec?: { system: string; value: number }; p50?: { system: string; value: number } }; opsPerSec?: number; p50?: number }>;
        tlsCost: Record<string, { opsPerSecPct?: number; p50Pct?: number } | undefined>;
        authCost?: { opsPerSecPct?: number; p50Pct?: number };
      }>;
    };
    expect(record.machine.etcd).toMatch(/^3\.4\./);
    expect(record.machine.zookeeper).toMatch(/^3\.8\./);
    expect(record.failedToStart).toEqual({});
    expect(record.flags.tls).toBe('both');
    expect(record.flags.auth).toBe('both');
    expect(record.systems).toEqual([
      { name: 'fencelock', base: 'fencelock', tls: true, auth: false },
      { name: 'fencelock-auth', base: 'fencelock', tls: true, auth: true },
      { name: 'etcd', base: 'etcd', tls: true, auth: false },
      { name: 'zookeeper', base: 'zookeeper', tls: false, auth: false },
      { name: 'fencelock-plain', base: 'fencelock', tls: false, auth: false },
      { name: 'etcd-plain', base: 'etcd', tls: false, auth: false },
    ]);
    expect(record.rows.map((r) => r.workload).sort()).toEqual(['cycles-distinct', 'cycles-hot', 'fenced-writes', 'read-mostly', 'reads', 'semaphore']);
    for (const row of record.rows) {
      const notApplicable = ETCD_LACKS[row.workload];
      const measured = SYSTEMS.filter((s) => !(notApplicable && s.startsWith('etcd')));
      for (const system of measured) {
        const m = row.systems[system]?.median;
        expect(m, `${row.workload} on ${system}`).toBeDefined();
        expect(m!.errors, `${row.workload} on ${system}: errors`).toBe(0);
        expect(m!.opsPerSec, `${row.workload} on ${system}: ops/s`).toBeGreaterThan(0);
        expect(m!.p50Ms).toBeGreaterThan(0);
        expect(m!.p99Ms).toBeGreaterThanOrEqual(m!.p50Ms);
        expect(m!.serverCpuPct).toBeGreaterThan(0);
      }
      if (notApplicable) {
        for (const system of ['etcd', 'etcd-plain']) {
          expect(row.systems[system]?.median, `${row.workload} on ${system} is not measured`).toBeUndefined();
          expect(row.systems[system]?.rounds).toEqual([{ notApplicable: expect.stringMatching(notApplicable) }]);
        }
      }
      const peersOf = { fencelock: ['etcd', 'zookeeper'], 'fencelock-auth': ['etcd', 'zookeeper'], 'fencelock-plain': ['etcd-plain', 'zookeeper'] };
      for (const [system, allPeers] of Object.entries(peersOf)) {
        const peers = allPeers.filter((p) => measured.includes(p));
        const v = row.vsBestPeer[system];
        const own = row.systems[system]!.median!;
        const best = { ops: Math.max(...peers.map((p) => row.systems[p]!.median!.opsPerSec)), p50: Math.min(...peers.map((p) => row.systems[p]!.median!.p50Ms)) };
        expect(peers, `${row.workload}: best ops/s peer of ${system}`).toContain(v?.bestPeer.opsPerSec?.system);
        expect(peers, `${row.workload}: best p50 peer of ${system}`).toContain(v?.bestPeer.p50?.system);
        expect(v!.bestPeer.opsPerSec!.value).toBe(best.ops);
        expect(v!.bestPeer.p50!.value).toBe(best.p50);
        expect(v!.opsPerSec, `${row.workload}: ${system}/best peer ops/s`).toBeCloseTo(own.opsPerSec / best.ops, 2);
        expect(v!.p50, `${row.workload}: ${system}/best peer p50`).toBeCloseTo(own.p50Ms / best.p50, 2);
      }
      expect(row.tlsCost.zookeeper, `${row.workload}: zookeeper runs in plaintext only`).toBeUndefined();
      for (const system of ['fencelock', 'etcd']) {
        if (system === 'etcd' && notApplicable) {
          expect(row.tlsCost.etcd, `${row.workload}: no TLS cost where etcd is n/a`).toBeUndefined();
          continue;
        }
        expect(row.tlsCost[system]?.opsPerSecPct, `${row.workload}: TLS cost of ${system}`).toBeGreaterThan(0);
        expect(row.tlsCost[system]?.p50Pct, `${row.workload}: TLS p50 of ${system}`).toBeGreaterThan(0);
      }
      expect(row.authCost?.opsPerSecPct, `${row.workload}: auth cost`).toBeGreaterThan(0);
      expect(row.authCost?.p50Pct, `${row.workload}: auth p50`).toBeGreaterThan(0);
    }
    // Every cluster (the ZooKeeper JVMs too: their command lines name their zoo.cfg under the data root) was
    // stopped and its data removed.
    expect(processesMentioning(dataRoot)).toEqual([]);
    expect(readdirSync(dataRoot)).toEqual([]);
  });

  it('refuses an unknown workload with a clear message and starts nothing', async () => {
    const res = await runNode([BENCH, '--workloads', 'cycles-distinct,nope'], { cwd: work, timeoutMs: 30_000 });
    expect(res.code).not.toBe(0);
    expect(res.stderr).toMatch(/unknown workload nope/);
    const system = await runNode([BENCH, '--systems', 'fencelock,zk'], { cwd: work, timeoutMs: 30_000 });
    expect(system.code).not.toBe(0);
    expect(system.stderr).toMatch(/unknown system zk \(known: fencelock, etcd, zookeeper\)/);
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

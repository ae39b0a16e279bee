// A SIGKILLed `npm run bench` leaves nothing behind: no server process of any of its clusters (fencelock's node
// processes, etcd, ZooKeeper's JVMs) and no data. The benchmark gets no chance to run any hook of its own;
// its guardians (scripts/bench/guardian.cjs) see the pipe from it close and kill what it started.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(__dirname, '../..');
const BENCH = path.join(ROOT, 'dist/scripts/bench.js');
const work = mkdtempSync(path.join(os.tmpdir(), 'fencelock-bench-kill-test-'));
/** Every process the test may have to clean up after, should the guardians fail. */
const seen = new Set<number>();

afterAll(() => {
  for (const pid of seen) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone, as it should be
    }
  }
  rmSync(work, { recursive: true, force: true });
});

/** Live (not zombie: a zombie's cmdline is empty) processes whose command line mentions `needle`. */
function processesMentioning(needle: string): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(needle)) out.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

async function until(condition: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
  return true;
}

describe('npm run bench, SIGKILLed', () => {
  it('leaves no server running and no data once it is SIGKILLed with its three clusters up', async () => {
    const dataRoot = path.join(work, 'data');
    mkdirSync(dataRoot);
    // Long rows, so the benchmark is surely mid-run when it is killed.
    const args = ['--systems', 'fencelock,etcd,zookeeper', '--tls', 'off', '--auth', 'off', '--workloads', 'reads', '--clients', '1'];
    const bench = spawn(process.execPath, [BENCH, ...args, '--seconds', '120', '--start-warmup', '0', '--json', path.join(work, 'r.json'), '--data-root', dataRoot], {
      cwd: work,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    bench.stdout.on('data', (d: Buffer) => (output += d.toString()));
    bench.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const exited = new Promise<NodeJS.Signals | null>((resolve) => bench.once('exit', (_code, signal) => resolve(signal)));
    try {
      // The plan line comes once every cluster started (and its servers serve); the first row follows.
      const started = await until(() => /rows x 3 system\(s\)/.test(output) || bench.exitCode !== null, 120_000);
      expect(started && bench.exitCode === null, `the benchmark did not get its clusters up:\n${output}`).toBe(true);
      await new Promise((r) => setTimeout(r, 500));
      // 3 fencelock nodes, 3 etcd members, 3 ZooKeeper JVMs (each names its data under the root), and a guardian
      // per cluster; the benchmark's own command line names the root too.
      const running = processesMentioning(dataRoot).filter((pid) => pid !== bench.pid);
      for (const pid of running) seen.add(pid);
      expect(running, `processes under ${dataRoot}`).toHaveLength(12);
      expect(readdirSync(dataRoot)).toHaveLength(3);

      bench.kill('SIGKILL');
      expect(await exited).toBe('SIGKILL');

      const allGone = await until(() => processesMentioning(dataRoot).length === 0, 10_000);
      expect(allGone, `still running after 10 s: ${processesMentioning(dataRoot).join(', ')}`).toBe(true);
      expect(running.filter((pid) => processesMentioning(dataRoot).includes(pid))).toEqual([]);
      expect(await until(() => readdirSync(dataRoot).length === 0, 5_000), `left behind: ${readdirSync(dataRoot).join(', ')}`).toBe(true);
    } finally {
      if (bench.exitCode === null && bench.signalCode === null) bench.kill('SIGKILL');
    }
  }, 180_000);
});

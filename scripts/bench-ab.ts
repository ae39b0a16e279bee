// A/B of two server builds on this machine (docs/performance.md): clusters of build A and of build B take
// turns, a fresh 3-node cluster per round and build, and run the same rows with the benchmark's workers (this
// checkout's client library, one connection and session per client). Prints every run, then per row and build
// the medians of ops/s, p50 and the CPU per operation of the servers and of this process: on a shared machine
// CPU per operation moves far less between runs than throughput does.
//
//   npm run build && node dist/scripts/bench-ab.js --a DIR --b DIR [--rounds 3] [--tls on|off]
//                                                  [--rows fenced-writes:1:5,fenced-writes:64:8,cycles-distinct:64:6]
//                                                  [--a-config JSON] [--b-config JSON]
//   DIR: a built checkout (git worktree add /tmp/base COMMIT && cd /tmp/base && npm ci && npm run build);
//   the same DIR twice with --a-config/--b-config compares one node setting (e.g. '{"peerCarrier":"grpc"}');
//   a row is workload:clients:seconds; each fresh cluster first runs 6 s of fenced writes at 64 clients.
import * as path from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { startFencelockCluster } from './bench/fencelockTarget';
import { runRow, WORKLOADS, type Measurement, type Workload } from './bench/runner';

interface Row {
  workload: Workload;
  clients: number;
  seconds: number;
}

interface Run {
  build: 'A' | 'B';
  row: Row;
  m: Measurement;
}

/** Run once on each build before its measured rows (JIT, LevelDB files, connections), not reported. */
const WARMUP_ROW = 'fenced-writes:64:6';

function parseRow(text: string): Row {
  const [name, clients, seconds] = text.split(':');
  const workload = WORKLOADS.find((w) => w.name === name);
  if (!workload) throw new InvalidArgumentError(`unknown workload ${name} (known: ${WORKLOADS.map((w) => w.name).join(', ')})`);
  const c = Number(clients);
  const s = Number(seconds);
  if (!Number.isInteger(c) || c < 1 || !(s > 0)) throw new InvalidArgumentError(`a row is workload:clients:seconds, got ${text}`);
  return { workload, clients: c, seconds: s };
}

function parseConfig(text: string): Record<string, unknown> {
  const parsed: unknown = JSON.parse(text);
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new InvalidArgumentError(`a config is a JSON object, got ${text}`);
  return parsed as Record<string, unknown>;
}

function median(values: number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
}

/** CPU per operation in µs from a row's CPU percentages (of one core) and its throughput. */
function perOp(cpuPct: number | undefined, m: Measurement): number {
  return cpuPct === undefined || m.opsPerSec === 0 ? NaN : (cpuPct / 100 / m.opsPerSec) * 1e6;
}

function describe(run: Run): string {
  const { m, row } = run;
  return (
    `${run.build}  ${row.workload.name.padEnd(15)} x${String(row.clients).padEnd(3)} ${m.opsPerSec.toFixed(0).padStart(6)} ops/s  ` +
    `p50 ${m.p50Ms.toFixed(2)} ms  srv ${perOp(m.serverCpuPct, m).toFixed(0)} µs/op  cli ${perOp(m.clientCpuPct, m).toFixed(0)} µs/op` +
    (m.errors > 0 ? `  ${m.errors} errors` : '')
  );
}

async function runBuild(build: 'A' | 'B', dir: string, rows: Row[], tls: boolean, nodeConfig: Record<string, unknown>): Promise<Run[]> {
  const target = await startFencelockCluster({ tls, nodeMain: path.join(dir, 'dist/src/node/main.js'), nodeConfig });
  try {
    const warm = parseRow(WARMUP_ROW);
    await runRow(target, warm.workload, warm.clients, warm.seconds, 0);
    const runs: Run[] = [];
    for (const row of rows) {
      const run = { build, row, m: await runRow(target, row.workload, row.clients, row.seconds, 1) };
      console.log(describe(run));
      runs.push(run);
    }
    return runs;
  } finally {
    await target.stop();
  }
}

async function main(): Promise<void> {
  const program = new Command()
    .name('bench-ab')
    .requiredOption('--a <dir>', 'a built checkout: build A')
    .requiredOption('--b <dir>', 'a built checkout: build B')
    .option('--rounds <n>', 'rounds; A and B alternate, B first every other round', (v) => Number(v), 3)
    .option('--tls <mode>', 'on or off', 'on')
    .option('--rows <list>', 'workload:clients:seconds, comma-separated', (v) => v.split(',').map(parseRow), [
      parseRow('fenced-writes:1:5'),
      parseRow('fenced-writes:64:8'),
      parseRow('cycles-distinct:1:5'),
      parseRow('cycles-distinct:64:6'),
    ])
    .option('--a-config <json>', "node config keys added for build A's clusters", parseConfig, {})
    .option('--b-config <json>', "node config keys added for build B's clusters", parseConfig, {});
  program.parse(process.argv);
  const opts = program.opts<{ a: string; b: string; rounds: number; tls: string; rows: Row[]; aConfig: Record<string, unknown>; bConfig: Record<string, unknown> }>();
  const configs = { A: opts.aConfig, B: opts.bConfig };
  const builds = { A: path.resolve(opts.a), B: path.resolve(opts.b) };
  const runs: Run[] = [];
  for (let round = 1; round <= opts.rounds; round++) {
    const order: Array<'A' | 'B'> = round % 2 === 1 ? ['A', 'B'] : ['B', 'A'];
    for (const build of order) {
      console.log(`round ${round}, build ${build} (${builds[build]} ${JSON.stringify(configs[build])})`);
      runs.push(...(await runBuild(build, builds[build], opts.rows, opts.tls !== 'off', configs[build])));
    }
  }
  console.log(`\nmedians of ${opts.rounds} rounds`);
  for (const row of opts.rows) {
    for (const build of ['A', 'B'] as const) {
      const mine = runs.filter((r) => r.build === build && r.row === row).map((r) => r.m);
      console.log(
        `${build}  ${row.workload.name.padEnd(15)} x${String(row.clients).padEnd(3)} ${median(mine.map((m) => m.opsPerSec)).toFixed(0).padStart(6)} ops/s  ` +
          `p50 ${median(mine.map((m) => m.p50Ms)).toFixed(2)} ms  srv ${median(mine.map((m) => perOp(m.serverCpuPct, m))).toFixed(0)} µs/op  ` +
          `cli ${median(mine.map((m) => perOp(m.clientCpuPct, m))).toFixed(0)} µs/op`,
      );
    }
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
});

// The chaos soak: the process-level chaos run of test/integration/chaos.test.ts, for as long as asked, in
// checked rounds against ONE cluster of real node processes (state, snapshots and sessions accumulate across
// rounds; every round uses its own lock namespace, so each round's history is checked on its own).
//
//   npm run chaos -- --minutes 30 [--nodes 5] [--seed N]
//   node dist/scripts/chaos.js --minutes 2
//     --minutes M        total time (default 5); rounds run until it is used up (at least one)
//     --nodes 3|5        cluster size (default 3)
//     --seed N           first round's seed (default: from the clock); round r uses seed N + r
//     --round-seconds S  nemesis time per round (default 60); a round adds ~5-10 s (heal, final reads)
//     --rounds R         exactly R rounds (overrides --minutes)
//     --clients C        in-process clients (default 6); --workers W worker processes (default 2)
//     --out DIR          where a failing round's history goes (default: a temp folder)
//
// Replay of a CI run's schedule: `--seed <seed printed by the test> --nodes <n> --round-seconds 10 --rounds 1`.
// Each round prints the checker's verdict and the fault timeline; the soak stops at the first round that
// fails the checker (or the liveness bound after healing), dumps that round's history, keeps the cluster's
// data and logs, and exits 1.
import * as os from 'node:os';
import * as path from 'node:path';
import { checkRunInThread, dumpRun, historyStats, runChaos, summarize, type ChaosRun, type CheckedRun } from '../test/integration/chaosRunner';
import { LocalCluster } from '../test/integration/harness';

interface Args {
  minutes: number;
  nodes: 3 | 5;
  seed: number;
  roundSeconds: number;
  rounds?: number;
  clients: number;
  workers: number;
  out?: string;
}

function parseArgs(argv: string[]): Args {
  const a: Args = { minutes: 5, nodes: 3, seed: Math.floor(Date.now() / 1000) % 1_000_000, roundSeconds: 60, clients: 6, workers: 2 };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${flag} needs a value`);
      return v;
    };
    const num = (): number => {
      const v = Number(value());
      if (!Number.isFinite(v) || v < 0) throw new Error(`${flag} needs a non-negative number`);
      return v;
    };
    switch (flag) {
      case '--minutes':
        a.minutes = num();
        break;
      case '--nodes': {
        const n = num();
        if (n !== 3 && n !== 5) throw new Error('--nodes is 3 or 5');
        a.nodes = n;
        break;
      }
      case '--seed':
        a.seed = Math.floor(num());
        break;
      case '--round-seconds':
        a.roundSeconds = Math.max(3, num());
        break;
      case '--rounds':
        a.rounds = Math.max(1, Math.floor(num()));
        break;
      case '--clients':
        a.clients = Math.floor(num());
        break;
      case '--workers':
        a.workers = Math.floor(num());
        break;
      case '--out':
        a.out = value();
        break;
      case '-h':
      case '--help':
        process.stdout.write('usage: node dist/scripts/chaos.js [--minutes M] [--nodes 3|5] [--seed N] [--round-seconds S] [--rounds R] [--clients C] [--workers W] [--out DIR]\n');
        process.exit(0);
        break;
      default:
        throw new Error(`unknown argument ${flag} (try --help)`);
    }
  }
  return a;
}

/** Time a round spends around its nemesis (cluster check, workers, heal, calm tail, final reads). */
const ROUND_OVERHEAD_MS = 10_000;
const MIN_ROUND_MS = 10_000;

const say = (line: string): void => {
  process.stdout.write(`${line}\n`);
};

function spread(xs: number[]): string {
  if (xs.length === 0) return 'none';
  const s = [...xs].sort((x, y) => x - y);
  const at = (q: number): number => s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
  return `n=${s.length} min ${s[0]} median ${at(0.5)} p90 ${at(0.9)} max ${s[s.length - 1]} ms`;
}

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  const started = Date.now();
  const budgetMs = args.minutes * 60_000;
  const rounds = args.rounds ?? Math.max(1, Math.ceil(budgetMs / (args.roundSeconds * 1000 + ROUND_OVERHEAD_MS)));
  say(`[soak] ${args.nodes} nodes, ${args.rounds ?? `~${rounds}`} round(s) of ${args.roundSeconds} s nemesis, first seed ${args.seed}` +
    `${args.rounds ? '' : ` (${args.minutes} min)`}`);

  const cluster = await LocalCluster.create({ size: args.nodes, proxies: true, snapshotEveryEntries: 1_000 });
  cluster.startAll();
  say(`[soak] cluster in ${cluster.dir} (node logs: cluster.log)`);
  let stopping = false;
  const onSignal = (): void => {
    if (stopping) process.exit(130);
    stopping = true;
    say('[soak] interrupted: stopping after this round (again to quit at once)');
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const totals = {
    rounds: 0,
    ops: 0,
    checkMs: [] as number[],
    failovers: [] as number[],
    overlapped: 0,
    noLeader: 0,
    stepDowns: [] as number[],
    recoveries: [] as number[],
    refused: 0,
  };
  let failed: { run?: ChaosRun; checked?: CheckedRun; error?: unknown } | undefined;
  try {
    for (let r = 0; !stopping; r++) {
      // With --minutes, the last round is shortened to what is left (a round adds ~8 s around its nemesis).
      let nemesisMs = args.roundSeconds * 1000;
      if (args.rounds !== undefined) {
        if (r >= args.rounds) break;
      } else {
        const left = budgetMs - (Date.now() - started) - ROUND_OVERHEAD_MS;
        if (r > 0 && left < MIN_ROUND_MS) break;
        nemesisMs = Math.max(MIN_ROUND_MS, Math.min(nemesisMs, left));
      }
      const seed = args.seed + r;
      say(`\n[soak] ===== round ${r + 1}, seed ${seed}, ${Math.round(nemesisMs / 1000)} s of faults =====`);
      let run: ChaosRun;
      try {
        run = await runChaos({
          nodes: args.nodes,
          seed,
          durationMs: nemesisMs,
          cluster,
          namespace: `soak-${args.seed}-r${r}`,
          clients: args.clients,
          workers: args.workers,
          log: say,
        });
      } catch (error) {
        // The liveness bound after healing (or the harness) failed: that is a failed round, too.
        failed = { error };
        say(`[soak] round ${r + 1} (seed ${seed}) FAILED: ${error instanceof Error ? error.message : String(error)}`);
        break;
      }
      const checked = await checkRunInThread(run, 120_000);
      say(summarize(run, checked));
      totals.rounds++;
      totals.ops += historyStats(run.history).ops;
      totals.checkMs.push(checked.checkMs);
      for (const f of run.failovers) {
        // Failover times of faults that overlapped another node fault are not failover times.
        if (f.overlapped) totals.overlapped++;
        else if (f.ms !== undefined) totals.failovers.push(f.ms);
        else totals.noLeader++;
        if (f.stepDownMs !== undefined && !f.overlapped) totals.stepDowns.push(f.stepDownMs);
      }
      totals.recoveries.push(run.recoveryMs);
      totals.refused += run.history.ops.filter((o) => o.op === 'write' && o.outcome === 'fail' && o.process.endsWith('-holder')).length;
      if (!checked.verdict.ok) {
        failed = { run, checked };
        break;
      }
    }
  } finally {
    if (failed) process.env.KEEP_TEST_DATA = '1';
    await cluster.destroy();
  }

  say(`\n[soak] ${totals.rounds} round(s) checked, ${totals.ops} operations in ${Math.round((Date.now() - started) / 1000)} s`);
  say(`[soak] checker time per round: ${spread(totals.checkMs)}`);
  say(`[soak] time to a new leader (faults that did not overlap another): ${spread(totals.failovers)}; ` +
    `none within the hold: ${totals.noLeader}; overlapped (not counted): ${totals.overlapped}`);
  say(`[soak] isolated/cut-off leader stepped down after (no overlap): ${spread(totals.stepDowns)}`);
  say(`[soak] recovery after healing: ${spread(totals.recoveries)}; frozen holders' stale writes refused: ${totals.refused}`);
  if (failed) {
    if (failed.run) {
      const dir = args.out ?? path.join(os.tmpdir(), `fencelock-soak-${failed.run.seed}`);
      const base = dumpRun(failed.run, dir, failed.checked);
      say(`[soak] VIOLATION in round seed ${failed.run.seed}: history ${base}.history.json, final reads ${base}.final.json, report ${base}.txt`);
    }
    say(`[soak] cluster data and node logs kept in ${cluster.dir}`);
    return 1;
  }
  say('[soak] verdict: OK (every round linearizable, no invariant broken, served again after every heal)');
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`[soak] ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(2);
  },
);

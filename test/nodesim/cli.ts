/**
 * The whole-node simulator's command line (compiled to dist/test/nodesim/cli.js):
 *
 *   npm run sim -- --seeds 10000        run seeds 1..10000 (--from A: A..A+N-1)
 *   npm run sim -- --seed 42            replay one seed exactly, printing its timeline
 *   options: --nodes 3|5  --profile NAME  --bug NAME  --clients N  --ms FAULTY_MS  --quiet  --stop-on-failure
 *            --membership / --no-membership (membership changes on every seed / none; default every fifth)
 *            --workers N (split the seeds over N processes)  --json (the summary as one JSON object)
 *
 * Prints every failure with its seed and what broke, then a summary (runSummary.ts): seeds passed and failed,
 * simulated time, faults of each kind and violations by check, totalled over the seeds, and the wall and CPU
 * time a seed takes; exits 1 when any seed fails.
 */
import { spawn } from 'node:child_process';
import { NODE_SIM_PROFILES } from './profiles';
import { replayCommand } from './replayCommand';
import { addResult, emptySummary, formatSummary, mergeSummaries, type RunSummary } from './runSummary';
import { BUG_NAMES, runNodeSeed, type NodeSimOptions, type NodeSimResult } from './simulation';

interface Args {
  seed?: number;
  seeds: number;
  from: number;
  nodes?: number;
  clients?: number;
  profile?: string;
  bug?: string;
  faultyMs?: number;
  membership?: boolean;
  quiet: boolean;
  stopOnFailure: boolean;
  workers: number;
  json: boolean;
  /** Internal: this process is one of --workers; it sends its summary to the parent instead of printing it. */
  worker: boolean;
}

const USAGE = `usage: npm run sim -- [--seeds N] [--from A] [--seed N] [--nodes 3|5] [--clients N] [--profile NAME]
                      [--bug NAME] [--ms FAULTY_MS] [--[no-]membership] [--quiet] [--stop-on-failure] [--workers N]
                      [--json]
profiles: ${NODE_SIM_PROFILES.map((p) => p.name).join(', ')}
bugs:     ${BUG_NAMES.join(', ')}`;

function parse(argv: string[]): Args {
  const args: Args = { seeds: 100, from: 1, quiet: false, stopOnFailure: false, workers: 1, json: false, worker: false };
  const int = (flag: string, v: string | undefined): number => {
    const n = Number(v);
    if (v === undefined || !Number.isSafeInteger(n)) throw new Error(`${flag} needs an integer, got ${String(v)}`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    const value = (): string | undefined => argv[++i];
    if (flag === '--seed') args.seed = int(flag, value());
    else if (flag === '--seeds') args.seeds = int(flag, value());
    else if (flag === '--from') args.from = int(flag, value());
    else if (flag === '--nodes') args.nodes = int(flag, value());
    else if (flag === '--clients') args.clients = int(flag, value());
    else if (flag === '--ms') args.faultyMs = int(flag, value());
    else if (flag === '--profile') args.profile = value();
    else if (flag === '--bug') args.bug = value();
    else if (flag === '--workers') args.workers = int(flag, value());
    else if (flag === '--membership') args.membership = true;
    else if (flag === '--no-membership') args.membership = false;
    else if (flag === '--quiet') args.quiet = true;
    else if (flag === '--stop-on-failure') args.stopOnFailure = true;
    else if (flag === '--json') args.json = true;
    else if (flag === '--worker') args.worker = true;
    else throw new Error(`unknown option ${flag}\n${USAGE}`);
  }
  return args;
}

function describe(r: NodeSimResult): string {
  const s = r.stats;
  return `seed ${r.seed} (${r.nodes} nodes, ${r.profile}): ${s.ops} ops, ${s.grants} grants, ${s.expiries} expiries, ${s.crashes} crashes, ${s.partitions} partitions, ${s.stalls} stalls, ${s.clockSteps} clock steps, ${s.snapshotsInstalled} snapshots installed, ${s.leaderTerms} leader terms, ${s.confChanges} membership changes (${s.confChangesRefused} refused), ${s.removalNotices} removal notices, ${s.events} events, ${(s.simulatedMs / 1000).toFixed(1)} s simulated`;
}

async function main(): Promise<number> {
  const args = parse(process.argv.slice(2));
  const base: Omit<NodeSimOptions, 'seed'> = { nodes: args.nodes, clients: args.clients, profile: args.profile, bug: args.bug, faultyMs: args.faultyMs, membership: args.membership };
  if (args.seed !== undefined) {
    const r = await runNodeSeed({ ...base, seed: args.seed, trace: args.quiet ? undefined : (line) => console.log(line) });
    console.log(describe(r));
    console.log(r.ok ? 'ok' : `FAILED: ${r.violation}`);
    return r.ok ? 0 : 1;
  }
  if (args.workers > 1) return runInWorkers(args);
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  const summary = emptySummary();
  for (let seed = args.from; seed < args.from + args.seeds; seed++) {
    const r = await runNodeSeed({ ...base, seed });
    addResult(summary, r);
    if (!r.ok) {
      // With --json the summary is the only line on stdout.
      (args.json ? console.error : console.log)(`FAILED ${describe(r)}\n  ${r.violation}\n  replay: ${replayCommand(seed, args)}`);
      if (args.stopOnFailure) break;
    } else if (!args.quiet && !args.json && (seed - args.from + 1) % 100 === 0) {
      console.log(`${seed - args.from + 1} seeds run, ${summary.failed} failed`);
    }
  }
  summary.wallMs = performance.now() - started;
  summary.cpuMs = cpuMs(process.cpuUsage(cpuBefore));
  if (args.worker) await sendToParent(summary);
  else report(summary, `seeds ${args.from}..${args.from + args.seeds - 1}`, args.json);
  return summary.failed > 0 ? 1 : 0;
}

/** Resolves once the message is out: the process exits right after. */
function sendToParent(summary: RunSummary): Promise<void> {
  return new Promise((resolve, reject) => {
    if (!process.send) return reject(new Error('--worker is for the processes --workers starts'));
    process.send(summary, undefined, {}, (err) => (err ? reject(err) : resolve()));
  });
}

function cpuMs(usage: NodeJS.CpuUsage): number {
  return (usage.user + usage.system) / 1000;
}

function report(summary: RunSummary, label: string, json: boolean): void {
  console.log(json ? JSON.stringify(summary) : formatSummary(summary, label));
}

/**
 * Splits the seeds into one contiguous range per child process; each prints its own failures and sends its
 * totals here, merged into one summary.
 */
async function runInWorkers(args: Args): Promise<number> {
  const started = performance.now();
  const per = Math.ceil(args.seeds / args.workers);
  const own = ['--workers', '--from', '--seeds'];
  const passThrough = process.argv.slice(2).filter((a, i, all) => !own.includes(a) && !own.includes(all[i - 1] ?? ''));
  const parts: RunSummary[] = [];
  const codes = await Promise.all(
    Array.from({ length: args.workers }, (_, w) => {
      const from = args.from + w * per;
      const seeds = Math.min(per, args.from + args.seeds - from);
      if (seeds <= 0) return Promise.resolve(0);
      const child = spawn(process.execPath, [__filename, ...passThrough, '--worker', '--from', String(from), '--seeds', String(seeds)], { stdio: ['inherit', 'inherit', 'inherit', 'ipc'] });
      child.on('message', (summary: RunSummary) => parts.push(summary));
      return new Promise<number>((resolve) => child.on('exit', (code) => resolve(code ?? 1)));
    }),
  );
  const summary = mergeSummaries(parts);
  summary.wallMs = performance.now() - started;
  report(summary, `seeds ${args.from}..${args.from + args.seeds - 1} in ${args.workers} processes`, args.json);
  // A worker that died before sending its totals (a crash, an exception) fails the run too.
  return codes.some((c) => c !== 0) || (summary.seeds < args.seeds && !args.stopOnFailure) ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(2);
  },
);

/**
 * The simulator's command line (compiled to dist/test/sim/cli.js):
 *
 *   npm run sim:raft -- --seeds 10000            run seeds 1..10000 (or --from A --seeds N: A..A+N-1)
 *   npm run sim:raft -- --seed 42                replay one seed verbosely (every event is printed)
 *   options: --nodes 3|5  --profile <name>  --bug <flagName> (repeatable)  --ticks <safety ticks>
 *            --no-durability-checks  --quiet (no per-event trace for --seed)  --stop-on-failure
 *
 * Prints the seeds run, each failure with its seed and violated invariant, and the time taken; exits 1 when
 * any seed fails.
 */
import type { TestOnlyBugs } from '../../src/raft/types';
import { PROFILES } from './profiles';
import { rawNodeFactory } from './rawNodeFactory';
import { DEFAULT_SAFETY_TICKS, runSeed, type SimOptions, type SimResult } from './simulator';

const BUG_FLAGS = ['commitPreviousTermByCounting', 'voteWithoutLogCheck', 'ackBeforeSync'] as const;

interface CliArgs {
  seed?: number;
  seeds: number;
  from: number;
  nodes?: number;
  profile?: string;
  bugs: TestOnlyBugs;
  ticks?: number;
  durability: boolean;
  quiet: boolean;
  stopOnFailure: boolean;
}

const USAGE = `usage: npm run sim:raft -- [--seeds N] [--from A] [--seed N] [--nodes 3|5] [--profile NAME]
                      [--bug FLAG]... [--ticks T] [--no-durability-checks] [--quiet] [--stop-on-failure]
profiles: ${PROFILES.map((p) => p.name).join(', ')}
bugs:     ${BUG_FLAGS.join(', ')}`;

function parseArgs(argv: string[]): CliArgs {
  const args: CliArgs = { seeds: 100, from: 1, bugs: {}, durability: true, quiet: false, stopOnFailure: false };
  const int = (flag: string, v: string | undefined): number => {
    const n = Number(v);
    if (v === undefined || !Number.isSafeInteger(n)) throw new Error(`${flag} needs an integer, got ${String(v)}`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const [flag, inline] = a.includes('=') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a, undefined];
    const value = (): string | undefined => inline ?? argv[++i];
    switch (flag) {
      case '--seed':
        args.seed = int(flag, value());
        break;
      case '--seeds':
        args.seeds = int(flag, value());
        break;
      case '--from':
        args.from = int(flag, value());
        break;
      case '--nodes':
        args.nodes = int(flag, value());
        break;
      case '--ticks':
        args.ticks = int(flag, value());
        break;
      case '--profile':
        args.profile = value();
        if (!PROFILES.some((p) => p.name === args.profile)) throw new Error(`unknown profile ${String(args.profile)}`);
        break;
      case '--bug': {
        const b = value() as (typeof BUG_FLAGS)[number];
        if (!BUG_FLAGS.includes(b)) throw new Error(`unknown bug flag ${String(b)}`);
        args.bugs[b] = true;
        break;
      }
      case '--no-durability-checks':
        args.durability = false;
        break;
      case '--quiet':
        args.quiet = true;
        break;
      case '--stop-on-failure':
        args.stopOnFailure = true;
        break;
      case '--help':
      case '-h':
        console.log(USAGE);
        process.exit(0);
        break;
      default:
        throw new Error(`unknown argument ${a}`);
    }
  }
  return args;
}

function describe(r: SimResult): string {
  return `seed ${r.seed} (${r.nodes} nodes, ${r.profile})`;
}

function main(): number {
  let args: CliArgs;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (e) {
    console.error(`${(e as Error).message}\n${USAGE}`);
    return 2;
  }
  const base: Omit<SimOptions, 'seed'> = { factory: rawNodeFactory, bugs: args.bugs, durabilityChecks: args.durability };
  if (args.nodes !== undefined) base.nodes = args.nodes;
  if (args.profile !== undefined) base.profile = args.profile;
  if (args.ticks !== undefined) base.safetyTicks = args.ticks;
  const bugs = Object.keys(args.bugs);
  const started = Date.now();

  if (args.seed !== undefined) {
    const opts: SimOptions = { ...base, seed: args.seed };
    if (!args.quiet) opts.trace = (line) => console.log(line);
    const r = runSeed(opts);
    const secs = ((Date.now() - started) / 1000).toFixed(2);
    console.log(`\n${describe(r)}: ${r.ok ? 'OK' : 'FAILED'} in ${secs}s, ${r.stats.ticks} ticks, ${r.stats.events} events`);
    console.log(`stats: ${JSON.stringify(r.stats)}`);
    if (r.violation) {
      console.log(`VIOLATION ${r.violation.invariant} at tick ${r.violation.tick}: ${r.violation.detail}`);
      if (r.violation.invariant === 'SimulatorError' && r.violation.error instanceof Error) console.log(r.violation.error.stack);
    }
    return r.ok ? 0 : 1;
  }

  const last = args.from + args.seeds - 1;
  console.log(
    `fencelock sim: seeds ${args.from}..${last}` +
      `${args.nodes ? `, ${args.nodes} nodes` : ', 3/5 nodes'}${args.profile ? `, profile ${args.profile}` : ', all profiles'}` +
      `, ${args.ticks ?? DEFAULT_SAFETY_TICKS} safety ticks${bugs.length ? `, BUGS ${bugs.join('+')}` : ''}`,
  );
  const failures: SimResult[] = [];
  let run = 0;
  let lastReport = Date.now();
  for (let seed = args.from; seed <= last; seed++) {
    const r = runSeed({ ...base, seed });
    run++;
    if (!r.ok) {
      failures.push(r);
      console.log(`FAIL ${describe(r)}: ${r.violation!.invariant} at tick ${r.violation!.tick}: ${r.violation!.detail}`);
      if (args.stopOnFailure) break;
    }
    if (Date.now() - lastReport > 10_000) {
      lastReport = Date.now();
      console.log(`... ${run} seeds, ${failures.length} failed, ${((Date.now() - started) / 1000).toFixed(0)}s`);
    }
  }
  const secs = (Date.now() - started) / 1000;
  console.log(
    `\n${run} seeds run (${args.from}..${args.from + run - 1}) in ${secs.toFixed(1)}s (${((secs * 1000) / Math.max(1, run)).toFixed(0)} ms/seed): ` +
      `${failures.length} failed`,
  );
  if (failures.length > 0) {
    const byInvariant = new Map<string, number[]>();
    for (const f of failures) {
      const k = f.violation!.invariant;
      byInvariant.set(k, [...(byInvariant.get(k) ?? []), f.seed]);
    }
    for (const [k, seeds] of byInvariant) {
      console.log(`  ${k}: seeds ${seeds.slice(0, 20).join(', ')}${seeds.length > 20 ? ', ...' : ''}`);
    }
    console.log(`replay one with: npm run sim:raft -- --seed ${failures[0]!.seed}${replayFlags(args)}`);
  }
  return failures.length > 0 ? 1 : 0;
}

function replayFlags(args: CliArgs): string {
  let s = '';
  if (args.nodes !== undefined) s += ` --nodes ${args.nodes}`;
  if (args.profile !== undefined) s += ` --profile ${args.profile}`;
  if (args.ticks !== undefined) s += ` --ticks ${args.ticks}`;
  for (const b of Object.keys(args.bugs)) s += ` --bug ${b}`;
  if (!args.durability) s += ' --no-durability-checks';
  return s;
}

process.exitCode = main();

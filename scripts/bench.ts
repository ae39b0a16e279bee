// Side-by-side benchmark: the same workloads against a fresh local 3-node fencelock cluster, a local 3-member
// etcd 3.4 cluster and a local 3-server ZooKeeper 3.8 ensemble (each peer when installed), all fsync on, all
// driven from this one Node.js process. fencelock and etcd run with TLS (both systems' default) and, with
// --tls both (the default), also in plaintext as a second cluster (<system>-plain), so each row shows what TLS
// costs each; ZooKeeper runs in plaintext only (its client has no TLS). fencelock also runs with auth on
// (fencelock-auth, TLS only; --auth both, the default), every client its own user with a bearer token, so each
// row shows what auth costs. Each fencelock system is set against the best peer of the row (etcd or
// zookeeper; etcd-plain or zookeeper for fencelock-plain). Systems alternate within each row, so slow drift of
// the machine (other load, thermals) hits all alike.
//
//   npm run bench -- [--seconds 10] [--warmup 2] [--start-warmup 6] [--rounds 1] [--workloads cycles-distinct,cycles-hot,...]
//                    [--clients 1,8,64] [--systems fencelock,etcd,zookeeper] [--tls on|off|both] [--auth on|off|both] [--json FILE] [--data-root DIR]
import { execFileSync } from 'node:child_process';
import * as os from 'node:os';
import * as path from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { etcdAvailable, startEtcdCluster } from './bench/etcdTarget';
import { startFencelockCluster } from './bench/fencelockTarget';
import { startZookeeperEnsemble, zookeeperAvailable } from './bench/zookeeperTarget';
import { compareRow, renderTable, summarize, writeJson, type RoundResult, type RowResult } from './bench/report';
import { errorMessage, notApplicable, runRow, WORKLOADS, type Workload } from './bench/runner';
import {
  AUTH_MODES,
  BASE_SYSTEMS as SYSTEMS,
  systemVariants,
  TLS_MODES,
  type AuthMode,
  type BaseSystem as SystemName,
  type TlsMode,
  type SystemVariant,
} from './bench/systems';
import type { BenchTarget } from './bench/target';

interface Flags {
  seconds: number;
  warmup: number;
  startWarmup: number;
  rounds: number;
  workloads: Workload[];
  clients: number[];
  systems?: SystemName[];
  tls: TlsMode;
  auth: AuthMode;
  json?: string;
  dataRoot: string;
}

function numberAtLeast(min: number, integer: boolean) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isFinite(n) || n < min || (integer && !Number.isInteger(n))) {
      throw new InvalidArgumentError(`needs ${integer ? 'an integer' : 'a number'} >= ${min}`);
    }
    return n;
  };
}

function list<T>(parse: (item: string) => T) {
  return (value: string): T[] => {
    const items = value.split(',').map((s) => s.trim()).filter((s) => s.length > 0);
    if (items.length === 0) throw new InvalidArgumentError('needs a comma-separated list');
    return items.map(parse);
  };
}

function parseFlags(argv: string[]): Flags {
  const workloadByName = (name: string): Workload => {
    const w = WORKLOADS.find((x) => x.name === name);
    if (!w) throw new InvalidArgumentError(`unknown workload ${name} (known: ${WORKLOADS.map((x) => x.name).join(', ')})`);
    return w;
  };
  const systemByName = (name: string): SystemName => {
    if (!(SYSTEMS as readonly string[]).includes(name)) throw new InvalidArgumentError(`unknown system ${name} (known: ${SYSTEMS.join(', ')})`);
    return name as SystemName;
  };
  const tlsMode = (value: string): TlsMode => {
    if (!(TLS_MODES as readonly string[]).includes(value)) throw new InvalidArgumentError(`needs one of ${TLS_MODES.join(', ')}`);
    return value as TlsMode;
  };
  const authMode = (value: string): AuthMode => {
    if (!(AUTH_MODES as readonly string[]).includes(value)) throw new InvalidArgumentError(`needs one of ${AUTH_MODES.join(', ')}`);
    return value as AuthMode;
  };
  const program = new Command()
    .name('bench')
    .description('fencelock vs etcd and ZooKeeper: lock cycles, fenced writes, linearizable reads, semaphore permits and read-mostly read-write locking on local 3-node clusters')
    .option('--seconds <n>', 'measured seconds per row and system', numberAtLeast(0.1, false), 10)
    .option('--warmup <n>', 'unrecorded seconds before each measurement', numberAtLeast(0, false), 2)
    .option('--start-warmup <n>', 'unrecorded seconds of every workload at the most clients, once per system before the first row', numberAtLeast(0, false), 6)
    .option('--rounds <n>', 'times each row runs per system; the table shows medians', numberAtLeast(1, true), 1)
    .option('--workloads <list>', `comma-separated workloads (${WORKLOADS.map((w) => w.name).join(', ')}; etcd: n/a for semaphore and read-mostly)`, list(workloadByName), [...WORKLOADS])
    .option('--clients <list>', 'comma-separated client counts', list(numberAtLeast(1, true)), [1, 8, 64])
    .option('--systems <list>', 'comma-separated systems, each measured as --tls says, zookeeper always in plaintext (default: fencelock, and etcd and zookeeper when installed)', list(systemByName))
    .option('--tls <mode>', 'on: TLS only; off: plaintext only (systems named <system>-plain); both: each system both ways, with the TLS cost', tlsMode, 'both')
    .option(
      '--auth <mode>',
      'on: fencelock with TLS runs with auth on (fencelock-auth: each client its own user and bearer token); off: without; ' +
        'both: both ways, with the auth cost. Auth needs TLS: plaintext systems and etcd always run without it',
      authMode,
      'both',
    )
    .option('--json <file>', 'where to write the results (default: bench-results/<timestamp>.json)')
    .option('--data-root <dir>', 'where the clusters keep their data (fsync goes there)', os.tmpdir());
  program.parse(argv);
  const flags = program.opts<Flags>();
  if (flags.auth === 'on' && flags.tls === 'off') program.error('error: --auth on needs TLS (--tls on or both): the admin of a cluster with auth is named by the client certificate');
  return { ...flags, systems: flags.systems && [...new Set(flags.systems)] };
}

function etcdVersion(bin: string): string | undefined {
  try {
    return /etcd Version:\s*(\S+)/.exec(execFileSync(bin, ['--version'], { encoding: 'utf8' }))?.[1];
  } catch {
    return undefined;
  }
}

function zookeeperVersion(): string | undefined {
  try {
    return execFileSync('dpkg-query', ['-W', '-f=${Version}', 'zookeeper'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() || undefined;
  } catch {
    return undefined;
  }
}

function gitRevision(): string | undefined {
  try {
    return execFileSync('git', ['describe', '--always', '--dirty'], { cwd: path.resolve(__dirname, '../..'), encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return undefined;
  }
}

function progressLine(round: string, workload: string, clients: number, system: string, m: RoundResult): string {
  const head = `${round}  ${workload.padEnd(15)} x${String(clients).padEnd(3)} ${system.padEnd(15)}`;
  if ('failed' in m) return `${head}  failed: ${m.failed}`;
  if ('notApplicable' in m) return `${head}  n/a: ${m.notApplicable}`;
  const cpu = (pct: number | undefined): string => (pct === undefined ? 'n/a' : `${Math.round(pct)}%`);
  return (
    `${head}  ${m.opsPerSec.toFixed(0).padStart(6)} ops/s  p50 ${m.p50Ms.toFixed(2)} ms  p99 ${m.p99Ms.toFixed(2)} ms` +
    `  srv ${cpu(m.serverCpuPct)}  cli ${cpu(m.clientCpuPct)}${m.errors > 0 ? `  ${m.errors} errors` : ''}`
  );
}

/** Every started cluster, so an interrupt or a failure stops them all. */
const running = new Map<string, BenchTarget>();

let stopping: Promise<void> | undefined;

/** Idempotent; a second caller (an interrupt racing the normal end) waits for the same stop. */
function stopAll(): Promise<void> {
  stopping ??= (async () => {
    const results = await Promise.allSettled([...running.values()].map((t) => t.stop()));
    for (const r of results) if (r.status === 'rejected') console.error(`stopping a cluster failed: ${errorMessage(r.reason)}`);
  })();
  return stopping;
}

let interrupted = false;
function onSignal(signal: NodeJS.Signals): void {
  // A second signal exits at once; the targets' exit hooks still SIGKILL the servers and remove their data.
  if (interrupted) process.exit(130);
  interrupted = true;
  console.error(`\n${signal}: stopping the clusters (again to force)`);
  void stopAll().finally(() => process.exit(130));
}

async function main(): Promise<number> {
  const flags = parseFlags(process.argv);
  const startedAt = new Date();
  // The build measured is the one checked out now, not when the run ends (a commit may land meanwhile).
  const revision = gitRevision();
  const etcdBin = etcdAvailable();
  const zookeeper = zookeeperAvailable();
  const installed: Record<SystemName, boolean> = { fencelock: true, etcd: etcdBin !== undefined, zookeeper: zookeeper !== undefined };
  const bases: SystemName[] = flags.systems ?? SYSTEMS.filter((s) => installed[s]);
  const variants: SystemVariant[] = systemVariants(bases, flags.tls, flags.auth);
  if (flags.auth === 'both' && flags.tls === 'off' && bases.includes('fencelock')) console.log('fencelock-auth is not measured: auth only with TLS (--tls on or both).');
  const systems = variants.map((v) => v.name);
  const failures: Record<string, string> = {};

  const howToInstall: Record<SystemName, string> = { fencelock: '', etcd: 'apt-get install etcd-server', zookeeper: 'bash scripts/ensure-zookeeper.sh' };
  for (const peer of ['etcd', 'zookeeper'] as const) {
    if (installed[peer] || (flags.systems !== undefined && !bases.includes(peer))) continue;
    console.log(`${peer} is not installed (to compare with it: ${howToInstall[peer]}); measuring without it.`);
    for (const v of variants) if (v.base === peer) failures[v.name] = `${peer} is not installed`;
  }

  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  for (const { name: system, base, tls, auth } of variants) {
    if (failures[system] || interrupted) continue;
    try {
      console.log(`starting ${system} (3 members, ${tls ? 'TLS' : 'plaintext'}${auth ? ', auth on' : ''}, data under ${flags.dataRoot}) ...`);
      const opts = { dataRoot: flags.dataRoot, tls, auth };
      const target =
        base === 'fencelock' ? await startFencelockCluster(opts) : base === 'etcd' ? await startEtcdCluster(opts) : await startZookeeperEnsemble(opts);
      running.set(system, target);
      for (const w of flags.workloads) if (notApplicable(target, w) === undefined) await w.seed?.(target);
    } catch (e) {
      failures[system] = errorMessage(e);
      console.error(`${system} failed to start: ${failures[system]}`);
      await running.get(system)?.stop();
      running.delete(system);
    }
  }
  const measured = systems.filter((s) => running.has(s));
  if (measured.length === 0) {
    console.error('no system to measure');
    return 1;
  }

  const rows: RowResult[] = flags.workloads.flatMap((w) => flags.clients.map((clients) => ({ workload: w.name, clients, systems: Object.fromEntries(measured.map((s) => [s, []])) })));
  // Rows a system lacks the primitive for take no time.
  const runs = measured.reduce((n, s) => n + rows.filter((r) => notApplicable(running.get(s)!, flags.workloads.find((w) => w.name === r.workload)!) === undefined).length, 0);
  const totalS = measured.length * flags.startWarmup + runs * flags.rounds * (flags.seconds + flags.warmup);
  console.log(
    `${rows.length} rows x ${measured.length} system(s) x ${flags.rounds} round(s), ${flags.warmup} s warm-up + ${flags.seconds} s each: about ${totalS < 120 ? `${Math.ceil(totalS)} s` : `${Math.ceil(totalS / 60)} min`}`,
  );

  // A fresh process runs its first thousands of operations unoptimized (V8 compiles hot code later), which
  // would penalize whichever row comes first; a long-running deployment is past that.
  if (flags.startWarmup > 0) {
    const maxClients = Math.max(...flags.clients);
    const perWorkload = flags.startWarmup / flags.workloads.length;
    for (const system of measured) {
      console.log(`warming up ${system}: every workload at ${maxClients} clients, ${flags.startWarmup} s ...`);
      for (const w of flags.workloads) {
        if (interrupted) return 130;
        if (notApplicable(running.get(system)!, w) !== undefined) continue;
        await runRow(running.get(system)!, w, maxClients, perWorkload, 0).catch((e: unknown) => {
          console.error(`${system} warm-up of ${w.name} failed: ${errorMessage(e)}`);
        });
      }
    }
  }

  for (let round = 0; round < flags.rounds; round++) {
    // Who goes first flips every round, so neither system always runs right after the other's heavy row.
    const order = round % 2 === 0 ? measured : [...measured].reverse();
    for (const row of rows) {
      const workload = flags.workloads.find((w) => w.name === row.workload)!;
      for (const system of order) {
        if (interrupted) return 130;
        const target = running.get(system)!;
        const lacking = notApplicable(target, workload);
        let result: RoundResult;
        try {
          result = lacking !== undefined ? { notApplicable: lacking } : await runRow(target, workload, row.clients, flags.seconds, flags.warmup);
        } catch (e) {
          result = { failed: errorMessage(e) };
        }
        row.systems[system].push(result);
        console.log(progressLine(`[${round + 1}/${flags.rounds}]`, row.workload, row.clients, system, result));
      }
    }
  }
  if (interrupted) return 130;

  console.log('');
  console.log(
    `3-node clusters, fsync on, ${flags.tls === 'both' ? 'TLS and plaintext' : flags.tls === 'on' ? 'TLS' : 'plaintext'}` +
      `${measured.some((s) => variants.find((v) => v.name === s)?.auth) ? ', fencelock-auth with auth on' : ''}` +
      `${measured.includes('zookeeper') && flags.tls !== 'off' ? ', zookeeper in plaintext' : ''}; ${flags.seconds} s per row after ${flags.warmup} s warm-up` +
      (flags.rounds > 1 ? `; medians of ${flags.rounds} rounds` : '') +
      `; ${os.cpus().length} CPUs, ${os.cpus()[0]?.model ?? 'unknown CPU'}`,
  );
  console.log(renderTable(rows, measured));

  const jsonFile = flags.json ?? path.join('bench-results', `${startedAt.toISOString().replace(/[:.]/g, '-')}.json`);
  writeJson(jsonFile, {
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    machine: {
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model,
      totalMemoryMiB: Math.round(os.totalmem() / 2 ** 20),
      os: `${os.type()} ${os.release()} ${os.arch()}`,
      node: process.version,
      etcd: etcdBin ? etcdVersion(etcdBin) : undefined,
      zookeeper: zookeeper ? zookeeperVersion() : undefined,
      fencelock: revision,
    },
    flags: { ...flags, workloads: flags.workloads.map((w) => w.name), systems: bases },
    systems: variants,
    failedToStart: failures,
    rows: rows.map((r) => {
      const medians = Object.fromEntries(Object.entries(r.systems).map(([s, rounds]) => [s, summarize(rounds)]));
      return {
        workload: r.workload,
        clients: r.clients,
        systems: Object.fromEntries(Object.entries(r.systems).map(([s, rounds]) => [s, { median: medians[s], rounds }])),
        ...compareRow(medians),
      };
    }),
  });
  console.log(`\nresults: ${jsonFile}`);
  return Object.keys(failures).length > 0 ? 1 : 0;
}

main()
  .catch((err: unknown) => {
    console.error(err);
    return 1;
  })
  .then(async (code) => {
    await stopAll();
    process.exit(code);
  });

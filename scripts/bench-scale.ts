// Scale benchmark of the lock state machine and of snapshot catch-up:
//   1. heap per session and per held lock with many sessions and locks (default 100,000 sessions x 10 locks),
//      built by applying real encoded entries to LockStateMachine in this process;
//   2. time and size of its snapshot (writeSnapshot, as RaftDriver.takeSnapshot) and of
//      installing it (readSnapshot), with the restored state checked equal;
//   3. catch-up of a restarted follower that needs the leader's snapshot: three RaftDrivers in this
//      process with real gRPC peer links, LevelDB (fsync on) and LockApp (see scripts/bench/scaleCatchup.ts).
//
//   npm run bench:scale -- [--sessions 100000] [--locks-per-session 10] [--dedup-results 200000]
//                          [--catchup-locks 100000] [--catchup-snapshot-every 20000] [--catchup-no-connect-all]
//                          [--json FILE]
//   --catchup-locks 0 skips part 3; --sessions 0 skips parts 1 and 2. --catchup-no-connect-all leaves out the
//   server's dial of every peer at start (the A/B baseline of that lever: the leader finds the restarted
//   follower only when its backoff ends).
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import * as os from 'node:os';
import { CONFIG_DEFAULTS } from '../src/node/config';
import { LIMITS } from '../src/state/limits';
import { runCatchupBench } from './bench/scaleCatchup';
import { runReferenceSizes } from './bench/scaleSizes';
import { runStateBench } from './bench/scaleState';

// Heap figures need full collections on demand; re-exec once with the flag rather than fail.
if (typeof (globalThis as { gc?: unknown }).gc !== 'function') {
  const r = spawnSync(process.execPath, ['--expose-gc', ...process.execArgv, __filename, ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exit(r.status ?? 1);
}

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

function intArg(name: string, fallback: number): number {
  const v = arg(name);
  if (v === undefined) return fallback;
  const n = Number(v.replace(/_/g, ''));
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`--${name} needs an integer >= 0, got ${v}`);
  return n;
}

async function main(): Promise<void> {
  const sessions = intArg('sessions', 100_000);
  const locksPerSession = intArg('locks-per-session', 10);
  const dedupResults = intArg('dedup-results', LIMITS.DEDUP_MAX_RESULTS);
  const catchupLocks = intArg('catchup-locks', 100_000);
  const snapshotEvery = intArg('catchup-snapshot-every', CONFIG_DEFAULTS.snapshotEveryEntries);
  const connectAll = !process.argv.includes('--catchup-no-connect-all');
  const jsonFile = arg('json');
  if (locksPerSession < 1) throw new Error('--locks-per-session must be >= 1');
  const log = (line: string): void => console.log(line);

  const report: Record<string, unknown> = {
    node: process.version,
    cpus: os.cpus().length,
    date: new Date().toISOString(),
    options: { sessions, locksPerSession, dedupResults, catchupLocks, snapshotEvery, connectAll },
    limits: LIMITS,
  };
  log(`fencelock scale benchmark (node ${process.version}, ${os.cpus().length} CPUs)`);

  log('\n[0] reference sizes of the building blocks (heap bytes each, for reading the figures below)');
  report.referenceSizes = runReferenceSizes(log);

  if (sessions > 0) {
    log(`\n[1+2] state machine: ${sessions} sessions x ${locksPerSession} locks, then snapshot and install`);
    report.state = await runStateBench({ sessions, locksPerSession, dedupResults, log });
  }

  if (catchupLocks > 0) {
    log(`\n[3] catch-up of a restarted follower from a snapshot: ${catchupLocks} locks (${locksPerSession} per session)`);
    report.catchup = await runCatchupBench({ locks: catchupLocks, locksPerSession, snapshotEvery, connectAll, log });
  }

  if (jsonFile !== undefined) {
    writeFileSync(jsonFile, `${JSON.stringify(report, null, 2)}\n`);
    log(`\nwrote ${jsonFile}`);
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);

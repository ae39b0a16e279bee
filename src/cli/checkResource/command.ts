// `fencelock check-resource`: plays the fencing rules against the user's own fenced resource with real tokens
// from the cluster (src/fencing/check) and prints what held. This file only wires the flags to a target.
import { type Command, Option } from 'commander';
import type { FenceLockClient } from '../../client';
import { runChecks } from '../../fencing/check/plan';
import { ResourceNotReady, type CheckTarget } from '../../fencing/check/target';
import { CommandFailure, EXIT, UsageError } from '../exitCodes';
import type { CliIO } from '../output';
import { ClusterGrants } from './clusterGrants';
import { reportJson, reportText } from './report';

type Action = <A extends unknown[]>(fn: (...args: A) => Promise<number>) => (...args: A) => Promise<void>;
type WithClient = <T>(cmd: Command, fn: (client: FenceLockClient, json: boolean) => Promise<T>) => Promise<T>;

interface CheckFlags {
  lock: string;
  otherLock?: string;
  postgres?: string;
  table?: string;
  row?: string;
  keyColumn: string;
  http?: string;
  method: string;
  body: string;
  behind: 'middleware' | 'proxy';
  includeRestore?: boolean;
}

/** The adapter the flags name; the fencing code (and pg) is loaded only when this command runs. */
async function targetOf(f: CheckFlags): Promise<CheckTarget> {
  if ((f.postgres === undefined) === (f.http === undefined)) throw new UsageError('check-resource: give one target, --postgres URL (with --table and --row) or --http URL');
  try {
    if (f.postgres !== undefined) {
      if (f.table === undefined || f.row === undefined) throw new UsageError('check-resource --postgres: --table and --row name the dedicated row to check');
      const { PostgresTarget } = await import('../../fencing/check/postgresTarget');
      return new PostgresTarget({ url: f.postgres, table: f.table, keyColumn: f.keyColumn, key: f.row });
    }
    for (const flag of ['table', 'row'] as const) if (f[flag] !== undefined) throw new UsageError(`check-resource: --${flag} is for --postgres, not --http`);
    const { HttpTarget } = await import('../../fencing/check/httpTarget');
    return new HttpTarget({ url: f.http ?? '', method: f.method, body: f.body, behind: f.behind });
  } catch (err) {
    throw err instanceof RangeError ? new UsageError(err.message) : err;
  }
}

export function addCheckResourceCommand(program: Command, io: CliIO, action: Action, withClient: WithClient): void {
  program
    .command('check-resource')
    .description(`play the fencing rules against your own fenced resource with real tokens; exit ${EXIT.CHECK_FAILED} when one did not hold`)
    .requiredOption('--lock <name>', 'a lock used for nothing else: the checks take it twice, and the resource gets bound to it')
    .option('--other-lock <name>', 'the other lock whose token must be refused (default: LOCK/check-other)')
    .option('--postgres <url>', 'PostgreSQL target: connection string, without a password (command lines show in ps: set PGPASSWORD)')
    .option('--table <name>', 'with --postgres: the fenced table (ensureFencingSchema run on it)')
    .option('--row <key>', 'with --postgres: the key of the dedicated row (it must exist); not --key, which is the TLS key')
    .addOption(new Option('--key-column <name>', 'with --postgres: the primary-key column').default('id'))
    .option('--http <url>', 'HTTP target: the URL of a dedicated resource behind the fencing middleware or fencelock proxy')
    .addOption(new Option('--method <method>', 'with --http: the method of a write').default('POST'))
    .addOption(new Option('--body <text>', 'with --http: the JSON body of every write').default('{}'))
    .addOption(new Option('--behind <kind>', 'with --http: middleware (replays a retry) or proxy (refuses it STALE_STEP)').choices(['middleware', 'proxy']).default('middleware'))
    .option('--include-restore', 'also raise the watermark as a restore does (--postgres only): PERMANENT, the row keeps the raised watermark')
    .addHelpText(
      'after',
      `
It WRITES to the resource named, and only to it: give a row or path kept for this check. The row's business
columns are left as they are (the write sets the key column to its own value); its fence columns and
fencing_operations change. An HTTP write is a request with --body to --http. Checks, in order: two grants of
LOCK give an older and a newer token; the newer writes (APPLIED); the older is refused (STALE); a retry with
the same operation id is REPLAYED (behind the proxy: STALE_STEP); step 2 is APPLIED; step 2 again and step 1
are STALE_STEP; a token of --other-lock is WRONG_LOCK; with --include-restore the watermark is raised to
LOCK's latest token + 1, the holder is then STALE and the next grant APPLIED. See docs/fencing-downstream.md.
Example: fencelock check-resource --lock check/account --postgres postgres://app@127.0.0.1/app --table account --row 0`,
    )
    .action(
      action(async (f: CheckFlags, cmd: Command) => {
        const target = await targetOf(f);
        try {
          if (f.includeRestore === true && !target.raise) {
            throw new UsageError(`check-resource --include-restore: the ${target.kind} target cannot raise its watermark from here (raise it where it is kept: raiseWatermarks on the service's database)`);
          }
          await prepare(target, f.lock);
          return await withClient(cmd, async (client, json) => {
            const grants = new ClusterGrants(client, f.lock, f.otherLock ?? `${f.lock}/check-other`, (cmd.optsWithGlobals() as { timeout: number }).timeout);
            try {
              const report = await runChecks(target, grants, { includeRestore: f.includeRestore === true });
              io.stdout(json ? reportJson(report) : reportText(report));
              return report.held ? EXIT.OK : EXIT.CHECK_FAILED;
            } finally {
              await grants.close();
            }
          });
        } finally {
          await target.close().catch(() => undefined);
        }
      }),
    );
}

/** A resource that cannot be checked stops the command before any token is taken. */
async function prepare(target: CheckTarget, lock: string): Promise<void> {
  try {
    await target.prepare(lock);
  } catch (err) {
    if (!(err instanceof ResourceNotReady)) throw err;
    if (err.unreachable) throw new CommandFailure('RESOURCE_UNREACHABLE', `check-resource: ${err.message}`, EXIT.UNAVAILABLE);
    throw new CommandFailure('RESOURCE_NOT_READY', `check-resource: ${err.message}`, EXIT.USAGE);
  }
}

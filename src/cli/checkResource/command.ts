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
  mysql?: string;
  redis?: string;
  redisKey?: string;
  table?: string;
  row?: string;
  keyColumn: string;
  http?: string;
  method: string;
  body: string;
  behind: 'middleware' | 'proxy';
  includeRestore?: boolean;
}

const TARGETS = ['postgres', 'mysql', 'redis', 'http'] as const;
type TargetFlag = (typeof TARGETS)[number];
/** The flags only one kind of target takes. */
const ONLY_FOR: Record<string, TargetFlag[]> = { table: ['postgres', 'mysql'], row: ['postgres', 'mysql'], redisKey: ['redis'] };
const flagName = (f: string): string => `--${f.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;

/** Loads an adapter; a driver missing from the install (a pruned node_modules) is named, not a stack trace. */
async function load<T>(flag: string, driver: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if ((err as { code?: string }).code === 'MODULE_NOT_FOUND' && String((err as Error).message).includes(`'${driver}`)) {
      throw new UsageError(`check-resource ${flag}: the ${driver} driver is not installed with this fencelock (npm install ${driver})`);
    }
    throw err;
  }
}

/** The adapter the flags name; the fencing code and its driver are loaded only when this command runs. */
async function targetOf(f: CheckFlags): Promise<CheckTarget> {
  const given = TARGETS.flatMap((t) => (f[t] === undefined ? [] : [{ kind: t, url: f[t] }]));
  const [only] = given;
  if (given.length !== 1 || !only) throw new UsageError('check-resource: give one target, --postgres URL or --mysql URL (with --table and --row), --redis URL (with --redis-key) or --http URL');
  const { kind, url } = only;
  for (const [flag, kinds] of Object.entries(ONLY_FOR)) {
    if (f[flag as keyof CheckFlags] !== undefined && !kinds.includes(kind)) throw new UsageError(`check-resource: ${flagName(flag)} is for ${kinds.map((k) => `--${k}`).join(' or ')}, not --${kind}`);
  }
  const row = (): { table: string; key: string } => {
    if (f.table === undefined || f.row === undefined) throw new UsageError(`check-resource --${kind}: --table and --row name the dedicated row to check`);
    return { table: f.table, key: f.row };
  };
  try {
    switch (kind) {
      case 'postgres': {
        const { PostgresTarget } = await import('../../fencing/check/postgresTarget');
        return new PostgresTarget({ url, keyColumn: f.keyColumn, ...row() });
      }
      case 'mysql': {
        const r = row();
        const { MysqlTarget } = await load('--mysql', 'mysql2', () => import('../../fencing/check/mysqlTarget'));
        return new MysqlTarget({ url, password: process.env.MYSQL_PWD, keyColumn: f.keyColumn, ...r });
      }
      case 'redis': {
        if (f.redisKey === undefined) throw new UsageError('check-resource --redis: --redis-key names the dedicated key to check');
        const key = f.redisKey;
        const { RedisTarget } = await load('--redis', 'ioredis', () => import('../../fencing/check/redisTarget'));
        return new RedisTarget({ url, password: process.env.REDISCLI_AUTH, key });
      }
      case 'http': {
        const { HttpTarget } = await import('../../fencing/check/httpTarget');
        return new HttpTarget({ url, method: f.method, body: f.body, behind: f.behind });
      }
    }
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
    .option('--mysql <url>', 'MariaDB/MySQL target: mysql://user@host:port/database, without a password (set MYSQL_PWD)')
    .option('--table <name>', 'with --postgres or --mysql: the fenced table (ensureFencingSchema run on it)')
    .option('--row <key>', 'with --postgres or --mysql: the key of the dedicated row (it must exist); not --key, which is the TLS key')
    .addOption(new Option('--key-column <name>', 'with --postgres or --mysql: the primary-key column').default('id'))
    .option('--redis <url>', 'Redis target: redis://[user@]host:port[/db], without a password (set REDISCLI_AUTH)')
    .option('--redis-key <key>', 'with --redis: the dedicated key (a string; it must exist); not --key, which is the TLS key')
    .option('--http <url>', 'HTTP target: the URL of a dedicated resource behind the fencing middleware or fencelock proxy')
    .addOption(new Option('--method <method>', 'with --http: the method of a write').default('POST'))
    .addOption(new Option('--body <text>', 'with --http: the JSON body of every write').default('{}'))
    .addOption(new Option('--behind <kind>', 'with --http: middleware (replays a retry) or proxy (refuses it STALE_STEP)').choices(['middleware', 'proxy']).default('middleware'))
    .option('--include-restore', 'also raise the watermark as a restore does (--postgres, --mysql, --redis): PERMANENT, the row or key keeps the raised watermark')
    .addHelpText(
      'after',
      `
It WRITES to the resource named, and only to it: give a row, key or path kept for this check. The row's
business columns are left as they are (the write sets the key column to its own value); its fence columns and
fencing_operations change. A Redis key is set to the value it had; its watermark and operation records change.
An HTTP write is a request with --body to --http. Checks, in order: two grants of LOCK give an older and a
newer token; the newer writes (APPLIED); the older is refused (STALE); a retry with the same operation id is
REPLAYED (behind the proxy: STALE_STEP); step 2 is APPLIED; step 2 again and step 1 are STALE_STEP; a token of
--other-lock is WRONG_LOCK; with --include-restore the watermark is raised to LOCK's latest token + 1, the
holder is then STALE and the next grant APPLIED. See docs/fencing-downstream.md.
Examples: fencelock check-resource --lock check/account --postgres postgres://app@127.0.0.1/app --table account --row 0
          MYSQL_PWD=... fencelock check-resource --lock check/account --mysql mysql://app@127.0.0.1/app --table account --row 0
          fencelock check-resource --lock check/cache --redis redis://127.0.0.1:6379 --redis-key acct:check`,
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

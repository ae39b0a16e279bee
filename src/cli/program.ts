import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import pino from 'pino';
import {
  DEFAULT_REQUEST_TIMEOUT_MS,
  AUTH_PERMISSIONS,
  AUTH_QUOTA_NAMES,
  DEFAULT_TTL_MS,
  DEFAULT_WAIT_TIMEOUT_MS,
  FenceLockClient,
  FenceLockError,
  isAuthTokenId,
  parseDecimalUint64,
  silentLogger,
  type AuthChangeResult,
  type AuthPermission,
  type FenceLockClientOptions,
  type Logger,
} from '../client';
import { defineProxyCommand } from '../fencing/proxy/command';
import { EXIT, EXIT_CODES_HELP, exitCodeFor, UsageError } from './exitCodes';
import { isReadOnly, lockDashDashHint, lockNamesAndCommand, wantsJson, wordsAfterDashDash } from './invocation';
import { runLockCommand } from './lockCommand';
import { checkLockSetUsage } from './lockSet';
import { checkSemaphoreKnown, formatSemaphore, semaphoreJson } from './semaphoreOutput';
import { locksJson } from './heldLock';
import { runElectCommand, runObserveCommand } from './electCommand';
import { addMemberCommands } from './memberCommand';
import { addLocksCommand } from './locksCommand';
import { addRevokeCommand } from './revokeCommand';
import { addSnapshotCommands } from './snapshotCommand';
import { addCheckResourceCommand } from './checkResource/command';
import {
  type CliIO,
  descriptionJson,
  eventJson,
  formatAuthListing,
  formatDescription,
  formatEvent,
  formatKey,
  formatLabels,
  formatStatusTable,
  formatWhoAmI,
  humanValue,
  keyJson,
  keyTable,
  notFoundMessage,
  reportError,
  statusJson,
  toJson,
} from './output';
import { DEFAULT_ENDPOINTS, parseDurationMs, parseLabel, parseNonNegativeInt, parsePositiveInt, resolveEndpoints, resolveFencing } from './parse';
import { MAX_LOCK_DELAY_MS, MAX_PERMITS } from '../protocol/limits';
import { ENV_AUTH_TOKEN, resolveAuthToken, resolveClientSecurity, type AuthTokenFlags, type SecurityFlags } from './security';
import { explainUnreachable } from './unreachable';
import { DEFAULT_MAX_LAG, health } from './health';
import { packageVersion } from './version';

interface GlobalOpts extends SecurityFlags, AuthTokenFlags {
  endpoints?: string;
  json?: boolean;
  timeout: number;
}

/** The CLI's budget for one call, retries included: short, so that a stopped cluster fails fast. */
export const DEFAULT_CLI_TIMEOUT_MS = 3_000;

const RUN_HELP = `Running it: from a clone, after \`npm install && npm run build\`, as \`npx fencelock ...\` (the package's
bin) or \`node dist/src/cli/main.js ...\`; \`npm link\` puts \`fencelock\` itself on PATH.`;

/** A node or client name in a certificate identity (urn:fencelock:node:NAME). */
const CERT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;

const ENV_HELP = `Environment:
  FENCELOCK_ENDPOINTS   default for --endpoints (default ${DEFAULT_ENDPOINTS.join(',')})
  FENCELOCK_CACERT, FENCELOCK_CERT, FENCELOCK_KEY
                        defaults for --cacert/--cert/--key (PEM file paths); without any of them,
                        ./data/certs/ca.pem (+ client.pem, client-key.pem) when present, else the
                        system's root CAs
  FENCELOCK_INSECURE    1: plaintext, like --insecure (only for a cluster run with "insecure": true)
  ${ENV_AUTH_TOKEN}  bearer token (flt_<id>_<secret>) every call carries, like --auth-token;
                        set for CMD by \`lock -- CMD\`. Not FENCELOCK_TOKEN: that is the fencing token
  FENCELOCK_LOCK, FENCELOCK_TOKEN, FENCELOCK_SESSION
                        defaults for kv put/delete --lock/--token/--session; set by \`lock -- CMD\`.
                        The session id is a secret: pass it in FENCELOCK_SESSION or --session-file,
                        not --session (command lines are visible to every local user in ps)
  FENCELOCK_LOG_LEVEL   client library log level on stderr (debug, info, warn; default silent)`;

/** Wraps a parse function for commander: a UsageError becomes commander's own invalid-argument error. */
function argParser<T>(fn: (text: string) => T): (text: string) => T {
  return (text: string) => {
    try {
      return fn(text);
    } catch (err) {
      throw new InvalidArgumentError(err instanceof Error ? err.message : String(err));
    }
  };
}

function cliLogger(env: NodeJS.ProcessEnv): Logger {
  const level = env.FENCELOCK_LOG_LEVEL;
  if (!level || level === 'silent') return silentLogger;
  return pino({ level, base: undefined }, pino.destination(2));
}

/**
 * Builds the `fencelock` command. Every action stores its exit code through `setExit`; nothing here calls
 * process.exit, so tests can run commands in-process.
 */
export function buildProgram(io: CliIO, setExit: (code: number) => void, opts: { json?: boolean; usageHint?: string; cmdWords?: number } = {}): Command {
  // How many words after `--` are CMD's: what tells `lock A B -- CMD`'s names from CMD (commander drops `--`).
  const cmdWords = opts.cmdWords;
  const program = new Command();
  program
    .name('fencelock')
    .description('fencelock: a distributed lock service with fencing tokens')
    .version(packageVersion(), '-V, --version', 'print the version of fencelock')
    .option('--endpoints <list>', 'comma-separated host:port of cluster nodes (env FENCELOCK_ENDPOINTS)')
    .option('--json', 'machine-readable output on stdout, errors included: one JSON document ({"error":{...}} on failure), or one per line for watch')
    .addOption(
      new Option('--timeout <ms>', 'give up a call (finding the leader, retries included) after this long')
        .argParser(argParser((t) => parsePositiveInt(t, '--timeout')))
        .default(DEFAULT_CLI_TIMEOUT_MS),
    )
    .option('--cacert <file>', 'CA certificate (PEM) the nodes must present a certificate from (env FENCELOCK_CACERT)')
    .option('--cert <file>', 'client certificate (PEM) to present; needs --key (env FENCELOCK_CERT)')
    .option('--key <file>', 'private key (PEM) of --cert (env FENCELOCK_KEY)')
    .option('--insecure', 'plaintext, no TLS (env FENCELOCK_INSECURE=1); only for a cluster run with "insecure": true')
    .option('--auth-token-file <file>', `file holding a bearer token (flt_<id>_<secret>) to send with every call (env ${ENV_AUTH_TOKEN})`)
    .option('--auth-token <token>', `bearer token to send with every call; visible in ps: prefer env ${ENV_AUTH_TOKEN} or --auth-token-file`)
    .exitOverride()
    // With --json, runCli reports a usage error as JSON on stdout instead.
    .configureOutput({
      writeOut: io.stdout,
      writeErr: opts.json === true ? () => undefined : io.stderr,
      outputError: (text, write) => write(usageMessage(text, opts.usageHint)),
    })
    .showHelpAfterError('(run with --help for usage)')
    .addHelpText('after', `\n${RUN_HELP}\n\n${EXIT_CODES_HELP}\n\n${ENV_HELP}\n`);

  const globals = (cmd: Command): GlobalOpts => cmd.optsWithGlobals<GlobalOpts>();
  /** What every command connects with; `security` when the caller needs it too (lock passes it on to CMD). */
  const clientOptions = (g: GlobalOpts, security = resolveClientSecurity(g, io.env)): FenceLockClientOptions => ({
    endpoints: resolveEndpoints(g.endpoints, io.env),
    tls: security.tls,
    insecure: security.insecure,
    token: resolveAuthToken(g, io.env),
    logger: cliLogger(io.env),
    // A third of the budget per attempt, so that one paused node cannot take all of it from the others.
    requestTimeoutMs: Math.min(DEFAULT_REQUEST_TIMEOUT_MS, Math.max(250, Math.floor(g.timeout / 3))),
    totalTimeoutMs: g.timeout,
  });
  const withClient = async <T>(cmd: Command, fn: (client: FenceLockClient, json: boolean) => Promise<T>): Promise<T> => {
    const g = globals(cmd);
    const security = resolveClientSecurity(g, io.env);
    const client = new FenceLockClient(clientOptions(g, security));
    try {
      return await fn(client, g.json === true);
    } catch (err) {
      throw await explainUnreachable(client, err, g.timeout, undefined, security.trust);
    } finally {
      await client.close();
    }
  };
  /** Runs an action, turning errors into a message on stderr and an exit code. */
  const action =
    <A extends unknown[]>(fn: (...args: A) => Promise<number>) =>
    async (...args: A): Promise<void> => {
      const cmd = args[args.length - 1] as Command;
      try {
        setExit(await fn(...args));
      } catch (err) {
        reportError(io, err, { json: globals(cmd).json === true, mutating: !isReadOnly(cmd) });
        setExit(exitCodeFor(err));
      }
    };

  program
    .command('serve')
    .description('run a cluster node')
    .requiredOption('--config <file>', 'node configuration, e.g. cluster/node1.json')
    .option('--join', 'start empty as a learner of a running cluster and wait to be added (fencelock member add)')
    .action(
      action(async (opts: { config: string; join?: boolean }, _cmd: Command) => {
        const { serve } = await import('../node/serve');
        // 0 after SIGTERM/SIGINT or removal from the cluster; non-zero after a fatal error, so that supervisors restart the node.
        return serve(opts.config, { join: opts.join === true });
      }),
    );

  program
    .command('lock')
    .description('run CMD while holding lock NAME (like flock(1)), or without CMD hold it until Ctrl-C or end of input (like etcdctl lock); several NAMEs before -- are taken at once; put -- before CMD')
    .usage('[options] NAME [NAME...] -- [CMD...]')
    .argument('<name>', 'lock name')
    .argument('[cmd...]', 'more lock names, then -- and the command and its arguments (none: hold the locks until Ctrl-C, SIGTERM or the end of stdin)')
    .addOption(new Option('--ttl <ms>', 'session TTL in ms').argParser(argParser((t) => parsePositiveInt(t, '--ttl'))).default(DEFAULT_TTL_MS))
    .addOption(
      new Option('--wait <ms>', 'how long to wait for the lock in ms (0: fail at once if held)')
        .argParser(argParser((t) => parseNonNegativeInt(t, '--wait')))
        .default(DEFAULT_WAIT_TIMEOUT_MS),
    )
    .addOption(
      new Option('--lock-delay <duration>', `if the grant ends by expiry or revoke (not release), nobody gets the lock for this long (e.g. 5s; at most ${MAX_LOCK_DELAY_MS / 1_000}s)`)
        .argParser(argParser((t) => parseDurationMs(t, '--lock-delay', MAX_LOCK_DELAY_MS)))
        .default(0),
    )
    .addOption(
      new Option('--shared', 'a shared (read) grant, held together with other --shared holders; waits behind an earlier exclusive request; CMD cannot write under its token')
        .conflicts('lockDelay'),
    )
    .addOption(
      new Option('--permits <n>', `take a permit of the semaphore NAME that has N permits (1..${MAX_PERMITS}) instead of the lock NAME; CMD also sees FENCELOCK_SLOT`)
        .argParser(argParser((t) => parsePositiveInt(t, '--permits', MAX_PERMITS)))
        .conflicts(['lockDelay', 'shared']),
    )
    .option('--label <key=value>', 'a label of the session, shown to those who may describe the lock (repeatable; host and pid are added)', (text: string, previous: Record<string, string>) => argParser((t) => parseLabel(t, previous))(text), {} as Record<string, string>)
    .addOption(
      new Option('--grace <ms>', 'after SIGTERM on lock loss, SIGKILL CMD after this long').argParser(argParser((t) => parseNonNegativeInt(t, '--grace'))).default(1_000),
    )
    .addHelpText(
      'after',
      `\nCMD sees FENCELOCK_TOKEN (decimal), FENCELOCK_LOCK, FENCELOCK_SESSION and FENCELOCK_ENDPOINTS (and the
FENCELOCK_CACERT/CERT/KEY/INSECURE and ${ENV_AUTH_TOKEN} this command connected with), so \`fencelock kv put KEY VALUE\` inside it
is a fenced write. If the lock is presumed lost, CMD gets SIGTERM
(SIGKILL after --grace) and fencelock exits ${EXIT.LOCK_LOST}; otherwise it exits with CMD's code.
Without CMD, it prints the token and the session's public handle once the lock is held (--json:
{"lock","token","session"}), holds it, and releases it on SIGINT (Ctrl-C), SIGTERM, SIGHUP or the end of
stdin (Ctrl-D; </dev/null releases at once), exiting 0; it exits ${EXIT.LOCK_LOST} if the lock is lost while held.
--lock-delay: if this grant ends by the session's expiry or a revoke, the lock goes to nobody for that long
(side effects CMD started without a token can finish); while it lasts, --wait 0 fails LOCK_DELAYED.
--shared: a read lock (docs/architecture.md#read-write-locks); not with --lock-delay.
--permits N: a permit of a semaphore (docs/architecture.md#semaphores), like consul lock -n: CMD also sees
FENCELOCK_SLOT, the permit's slot; downstream resources fence per (NAME, slot). Not with --shared or --lock-delay.
Several NAMEs before --: all taken at once or none (docs/architecture.md#atomic-multi-lock), one token for
all; CMD sees FENCELOCK_LOCKS (the names, one a line) and no FENCELOCK_LOCK (kv put needs --lock); the loss
of any of them stops CMD; --json prints "locks". Not with --permits, --shared or --lock-delay.
Examples: fencelock lock backup --ttl 15000 -- sh -c 'fencelock kv put backup/last "$(date)"'
          fencelock lock accounts/alice accounts/bob -- ./transfer alice bob 10
          fencelock lock maintenance            # hold it until Ctrl-C`,
    )
    .action(
      action(async (name: string, words: string[], opts: { ttl: number; wait: number; lockDelay: number; shared?: boolean; permits?: number; grace: number; label: Record<string, string> }, cmd: Command) => {
        const { names, command } = lockNamesAndCommand(name, words, cmdWords);
        checkLockSetUsage(names, { permits: opts.permits, shared: opts.shared, lockDelayGiven: cmd.getOptionValueSource('lockDelay') === 'cli' });
        const g = globals(cmd);
        const security = resolveClientSecurity(g, io.env);
        const client = clientOptions(g, security);
        const outcome = await runLockCommand(
          { client, childEnv: security.childEnv, trust: security.trust, names, command, ttlMs: opts.ttl, waitMs: opts.wait, lockDelayMs: opts.lockDelay, shared: opts.shared === true, ...(opts.permits === undefined ? {} : { permits: opts.permits }), labels: opts.label, graceMs: opts.grace, timeoutMs: g.timeout, json: g.json === true },
          io,
        );
        // Without CMD the JSON document came when the lock was held.
        if (g.json === true && command.length > 0) io.stdout(`${toJson({ ...locksJson(names), token: outcome.token, ...(outcome.slot === undefined ? {} : { slot: outcome.slot }), exitCode: outcome.exitCode })}\n`);
        return outcome.exitCode;
      }),
    );

  program
    .command('elect')
    .description('run CMD while leading election NAME with VALUE (waits in line to lead), or --observe NAME to print each leadership; put -- before CMD')
    .argument('<name>', 'election name (its lock and its key are both NAME)')
    .argument('[value]', "the leader's value, readable by everyone (kv get NAME) while it leads")
    .argument('[cmd...]', 'command and its arguments, run as leader')
    .option('--observe', 'print each new leadership (token, value, holder) and each vacancy, one line each, until Ctrl-C')
    .addOption(new Option('--ttl <ms>', 'session TTL in ms: how long a crashed leader still leads').argParser(argParser((t) => parsePositiveInt(t, '--ttl'))).default(DEFAULT_TTL_MS))
    .addOption(new Option('--wait <ms>', 'give up after waiting this long to lead (default: wait for ever)').argParser(argParser((t) => parseNonNegativeInt(t, '--wait'))))
    .addOption(
      new Option('--grace <ms>', 'after SIGTERM on loss of the leadership, SIGKILL CMD after this long').argParser(argParser((t) => parseNonNegativeInt(t, '--grace'))).default(1_000),
    )
    .addHelpText(
      'after',
      `\nCMD sees FENCELOCK_TOKEN (the leadership's fencing token), FENCELOCK_LOCK and FENCELOCK_ELECTION (NAME),
FENCELOCK_SESSION and FENCELOCK_ENDPOINTS, as with lock -- CMD. If the leadership is lost, CMD gets SIGTERM
(SIGKILL after --grace) and fencelock exits ${EXIT.LOCK_LOST}; otherwise it resigns when CMD exits and exits with CMD's code.
Examples: fencelock elect scheduler node-a -- ./run-scheduler
          fencelock elect --observe scheduler`,
    )
    .action(
      action(async (name: string, value: string | undefined, command: string[], opts: { observe?: boolean; ttl: number; wait?: number; grace: number }, cmd: Command) => {
        const g = globals(cmd);
        if (opts.observe === true) {
          if (value !== undefined || command.length > 0) throw new UsageError('elect --observe takes only NAME');
          return withClient(cmd, (client, json) => runObserveCommand(client, name, io, json, g.timeout));
        }
        if (value === undefined || command.length === 0) throw new UsageError('elect: give NAME VALUE -- CMD, or --observe NAME');
        const security = resolveClientSecurity(g, io.env);
        const outcome = await runElectCommand(
          { client: clientOptions(g, security), childEnv: security.childEnv, trust: security.trust, name, value, command, ttlMs: opts.ttl, waitMs: opts.wait, graceMs: opts.grace, timeoutMs: g.timeout, json: g.json === true },
          io,
        );
        if (g.json === true) io.stdout(`${toJson({ election: name, token: outcome.token, exitCode: outcome.exitCode })}\n`);
        return outcome.exitCode;
      }),
    );

  const kv = program.command('kv').description('the fenced key-value store');
  const fencingOptions = (c: Command): Command =>
    c
      .option('--lock <name>', 'lock the keys belong to (env FENCELOCK_LOCK)')
      .option('--token <n>', 'fencing token, decimal (env FENCELOCK_TOKEN)')
      .option('--session-file <file>', 'file holding the session id (preferred over --session)')
      .option('--session <id>', 'session holding the lock; visible in ps: prefer env FENCELOCK_SESSION or --session-file');

  fencingOptions(kv.command('put').description('fenced write of one key').argument('<key>').argument('<value>', 'value (UTF-8 text)')).action(
    action(async (key: string, value: string, opts: { lock?: string; token?: string; session?: string; sessionFile?: string }, cmd: Command) => {
      const f = resolveFencing(opts, io.env);
      return withClient(cmd, async (client, json) => {
        const res = await client.write({ ...f, ops: [{ put: key, value }] });
        io.stdout(json ? `${toJson({ index: res.index })}\n` : `OK (index ${res.index})\n`);
        return EXIT.OK;
      });
    }),
  );

  fencingOptions(kv.command('delete').description('fenced delete of one or more keys (atomic)').argument('<key...>')).action(
    action(async (keys: string[], opts: { lock?: string; token?: string; session?: string; sessionFile?: string }, cmd: Command) => {
      const f = resolveFencing(opts, io.env);
      return withClient(cmd, async (client, json) => {
        const res = await client.write({ ...f, ops: keys.map((k) => ({ delete: k })) });
        io.stdout(json ? `${toJson({ index: res.index })}\n` : `OK (index ${res.index})\n`);
        return EXIT.OK;
      });
    }),
  );

  kv.command('get')
    .description(`read a key with its lock and watermark (exit ${EXIT.NOT_FOUND} when missing or deleted)`)
    .argument('<key>')
    .option('--stale', "answer from the contacted node's state (faster, may be stale)")
    .option('--value', 'print only the value (for scripts)')
    .action(
      action(async (key: string, opts: { stale?: boolean; value?: boolean }, cmd: Command) =>
        withClient(cmd, async (client, json) => {
          const r = await client.get(key, { staleOk: opts.stale === true });
          // Missing or deleted is a failure like any other (exit 5): with --json it is {"error": ...}, which names
          // the key and, for a deleted one, the lock it still belongs to (keyLock) and its watermark.
          if (!r.found) throw new FenceLockError('NOT_FOUND', notFoundMessage(key, r), r.deleted ? { key, keyLock: r.lock, watermark: r.token } : { key });
          if (json) io.stdout(`${toJson({ key, found: true, ...keyJson(key, r) })}\n`);
          else io.stdout(opts.value === true ? `${humanValue(r.value)}\n` : formatKey(key, r));
          return EXIT.OK;
        }),
      ),
    );

  kv.command('list')
    .description('list keys by prefix, each with its lock and watermark')
    .argument('[prefix]', 'key prefix', '')
    .addOption(new Option('--limit <n>', 'at most this many keys (server default 100, max 1000)').argParser(argParser((t) => parsePositiveInt(t, '--limit', 1000))))
    .option('--start-after <key>', 'continue after this key')
    .option('--all', 'include deleted keys (they keep their lock and watermark)')
    .action(
      action(async (prefix: string, opts: { limit?: number; startAfter?: string; all?: boolean }, cmd: Command) =>
        withClient(cmd, async (client, json) => {
          const all = opts.all === true;
          const r = await client.list(prefix, { limit: opts.limit, startAfter: opts.startAfter, includeDeleted: all });
          if (json) {
            io.stdout(`${toJson({ items: r.items.map((i) => keyJson(i.key, i)), more: r.more })}\n`);
          } else {
            io.stdout(keyTable(r.items, all));
            if (r.more) io.stdout(`(more keys follow: --start-after ${JSON.stringify(r.items[r.items.length - 1]?.key ?? '')})\n`);
          }
          return EXIT.OK;
        }),
      ),
    );

  kv.command('move')
    .description('bind a key, or every key under a prefix, to another lock (admin only)')
    .argument('[key]', 'the key to move (or --prefix)')
    .option('--prefix <prefix>', "move every key under this prefix instead (at most 10,000; '' for every key)")
    .requiredOption('--to <lock>', 'the lock the keys belong to from now on')
    .addHelpText(
      'after',
      `
The lock must be free (no holder, no waiters). Each moved key keeps its watermark; the lock's latest
token is raised to the highest of them, so a token the lock granted before never gets in.
Examples: fencelock kv move cfg/a --to cfg2
          fencelock kv move --prefix cfg/ --to cfg2`,
    )
    .action(
      action(async (key: string | undefined, opts: { prefix?: string; to: string }, cmd: Command) => {
        if ((key === undefined) === (opts.prefix === undefined)) throw new UsageError('kv move: give KEY or --prefix PREFIX (not both)');
        if (key === '') throw new UsageError("kv move: KEY is empty (for every key, --prefix '')");
        if (opts.to === '') throw new UsageError('kv move: --to names no lock');
        return withClient(cmd, async (client, json) => {
          const r = await client.move(key !== undefined ? { key } : { prefix: opts.prefix ?? '' }, opts.to);
          io.stdout(json ? `${toJson(r)}\n` : `moved ${r.moved} key${r.moved === 1 ? '' : 's'} to lock ${JSON.stringify(opts.to)} (index ${r.index})\n`);
          return EXIT.OK;
        });
      }),
    );

  const auth = program
    .command('auth')
    .description('users, roles, permissions, quotas and tokens (docs/auth.md)')
    .addHelpText(
      'after',
      `
With auth on, a call's identity is its bearer token's user (--auth-token-file, ${ENV_AUTH_TOKEN}), else the
name in its client certificate. Every change here needs the admin permission and is one log entry.`,
    );
  /** One auth change: the call, then `OK (index N)` or {"index":"N"}. */
  const change = (cmd: Command, fn: (client: FenceLockClient) => Promise<AuthChangeResult>): Promise<number> =>
    withClient(cmd, async (client, json) => {
      const r = await fn(client);
      io.stdout(json ? `${toJson(r)}\n` : `OK (index ${r.index})\n`);
      return EXIT.OK;
    });

  auth
    .command('whoami')
    .description('the identity the cluster takes this client for, its roles and rules (needs no identity)')
    .action(
      action(async (_opts: unknown, cmd: Command) =>
        withClient(cmd, async (client, json) => {
          const w = await client.auth.whoAmI();
          io.stdout(json ? `${toJson(w)}\n` : formatWhoAmI(w));
          return EXIT.OK;
        }),
      ),
    );

  auth
    .command('list')
    .description('users and their roles, roles with their rules and quotas, and token ids (never secrets)')
    .action(
      action(async (_opts: unknown, cmd: Command) =>
        withClient(cmd, async (client, json) => {
          const l = await client.auth.list();
          io.stdout(json ? `${toJson(l)}\n` : formatAuthListing(l));
          return EXIT.OK;
        }),
      ),
    );

  const user = auth.command('user').description('add, delete, grant or revoke roles of users');
  user
    .command('add')
    .description('add a user (letters, digits, . _ @ -; up to 128 bytes)')
    .argument('<name>')
    .action(action(async (name: string, _opts: unknown, cmd: Command) => change(cmd, (c) => c.auth.userAdd(name))));
  user
    .command('delete')
    .description('delete a user and revoke its tokens (the last admin cannot be deleted)')
    .argument('<name>')
    .action(action(async (name: string, _opts: unknown, cmd: Command) => change(cmd, (c) => c.auth.userDelete(name))));
  user
    .command('grant')
    .description('give a user a role')
    .argument('<user>')
    .argument('<role>')
    .action(action(async (u: string, role: string, _opts: unknown, cmd: Command) => change(cmd, (c) => c.auth.userGrantRole(u, role))));
  user
    .command('revoke')
    .description('take a role from a user')
    .argument('<user>')
    .argument('<role>')
    .action(action(async (u: string, role: string, _opts: unknown, cmd: Command) => change(cmd, (c) => c.auth.userRevokeRole(u, role))));

  const role = auth.command('role').description('add or delete roles, set their quotas');
  role
    .command('add')
    .description('add a role (it allows nothing until granted permissions)')
    .argument('<name>')
    .action(action(async (name: string, _opts: unknown, cmd: Command) => change(cmd, (c) => c.auth.roleAdd(name))));
  role
    .command('delete')
    .description('delete a role (its users lose what it allowed)')
    .argument('<name>')
    .action(action(async (name: string, _opts: unknown, cmd: Command) => change(cmd, (c) => c.auth.roleDelete(name))));
  role
    .command('quota')
    .description("set a quota for the role's users, or --unset it (the default applies again)")
    .argument('<role>')
    .argument('<name>', `quota: ${AUTH_QUOTA_NAMES.join(', ')}`)
    .argument('[value]', 'a non-negative integer')
    .option('--unset', 'stop this role setting the quota')
    .addHelpText(
      'after',
      `
A user gets the largest value among its roles; a role that does not set a quota leaves the default
(docs/auth.md, "Quotas"). Example: fencelock auth role quota ops sessions 500`,
    )
    .action(
      action(async (r: string, name: string, value: string | undefined, opts: { unset?: boolean }, cmd: Command) => {
        const unset = opts.unset === true;
        if ((value === undefined) !== unset) throw new UsageError('auth role quota: give VALUE or --unset (not both)');
        let n: bigint | undefined;
        if (value !== undefined) {
          n = parseDecimalUint64(value);
          if (n === undefined) throw new UsageError(`auth role quota: VALUE ${JSON.stringify(value)} is not a non-negative integer (digits only)`);
        }
        return change(cmd, (c) => c.auth.roleSetQuota(r, name, n));
      }),
    );

  const ruleCommand = (verb: 'grant' | 'revoke'): void => {
    auth
      .command(verb)
      .description(verb === 'grant' ? 'let a role use a permission on every name under PREFIX' : 'take a rule (PERM, PREFIX) back from a role')
      .argument('<role>')
      .argument('<perm>', AUTH_PERMISSIONS.join(' | '))
      .argument('[prefix]', "names the rule covers: every name starting with it ('' = every name)")
      .option('--all', "every name: the same as PREFIX ''")
      .addHelpText(
        'after',
        `
lock: acquire, release, describe and watch locks named PREFIX...; write: fenced writes of keys PREFIX...;
read: get keys PREFIX..., list prefixes that start with PREFIX; admin: auth changes and key moves (no
PREFIX: it covers everything). PREFIX is required for the others, so that a forgotten one never means
every name: give '' or --all for that.
Examples: fencelock auth ${verb} ops lock jobs/
          fencelock auth ${verb} ops read --all
          fencelock auth ${verb} ops admin`,
      )
      .action(
        action(async (r: string, perm: string, prefix: string | undefined, opts: { all?: boolean }, cmd: Command) => {
          const permission = perm.toLowerCase() as AuthPermission;
          if (!AUTH_PERMISSIONS.includes(permission)) throw new UsageError(`auth ${verb}: PERM ${JSON.stringify(perm)} is not one of ${AUTH_PERMISSIONS.join(', ')}`);
          if (prefix !== undefined && opts.all === true) throw new UsageError(`auth ${verb}: give PREFIX or --all, not both`);
          let p = opts.all === true ? '' : prefix;
          if (permission === 'admin') {
            if (p !== undefined && p !== '') throw new UsageError(`auth ${verb}: admin covers everything and takes no PREFIX`);
            p = '';
          }
          if (p === undefined) throw new UsageError(`auth ${verb}: give PREFIX ('' for every name) or --all`);
          const rulePrefix = p;
          return change(cmd, (c) => (verb === 'grant' ? c.auth.roleGrantPermission(r, permission, rulePrefix) : c.auth.roleRevokePermission(r, permission, rulePrefix)));
        }),
      );
  };
  ruleCommand('grant');
  ruleCommand('revoke');

  const token = auth.command('token').description('issue or revoke bearer tokens');
  token
    .command('issue')
    .description('issue a bearer token for a user and print it: it is shown this once')
    .argument('<user>')
    .addHelpText(
      'after',
      `
The token alone goes to stdout (with --json: {"tokenId","user","token"}), its id to stderr. Keep it in a
file only you can read and pass it with --auth-token-file FILE or ${ENV_AUTH_TOKEN}.
Example: (umask 077; fencelock auth token issue alice > alice.token)`,
    )
    .action(
      action(async (u: string, _opts: unknown, cmd: Command) =>
        withClient(cmd, async (client, json) => {
          const t = await client.auth.tokenIssue(u);
          if (json) {
            io.stdout(`${toJson({ tokenId: t.tokenId, user: u, token: t.token })}\n`);
          } else {
            io.stdout(`${t.token}\n`);
            io.stderr(`fencelock: token ${t.tokenId} for user ${JSON.stringify(u)}: shown this once, store it now (revoke: fencelock auth token revoke ${t.tokenId})\n`);
          }
          return EXIT.OK;
        }),
      ),
    );
  token
    .command('revoke')
    .description('revoke a token by its id (16 hex digits, as auth list shows it): calls with it fail from then on')
    .argument('<id>')
    .action(
      action(async (id: string, _opts: unknown, cmd: Command) => {
        // Refuse a whole token here rather than send its secret anywhere.
        if (!isAuthTokenId(id)) throw new UsageError('auth token revoke: ID must be a token id, 16 hex digits (auth list shows them), not the token');
        return change(cmd, (c) => c.auth.tokenRevoke(id));
      }),
    );

  const session = program.command('session').description('list open sessions and end one (admin; docs/auth.md "Ending sessions")');
  session
    .command('list')
    .description('every open session: public handle, identity, client name, locks held, age')
    .action(
      action(async (_opts: unknown, cmd: Command) =>
        withClient(cmd, async (client, json) => {
          const sessions = await client.auth.sessionList();
          if (json) {
            io.stdout(`${toJson({ sessions })}\n`);
          } else {
            for (const s of sessions) {
              const name = s.clientName === '' ? '-' : JSON.stringify(s.clientName);
              const labels = formatLabels(s.labels);
              io.stdout(`${s.handle}  ${s.identity === '' ? '-' : s.identity}  ${name}${labels === '' ? '' : `  ${labels}`}  age ${Math.round(s.ageMs / 1000)}s  locks ${s.locks.length === 0 ? '-' : s.locks.join(',')}${s.waiting.length === 0 ? '' : `  waiting ${s.waiting.join(',')}`}\n`);
            }
          }
          return EXIT.OK;
        }),
      ),
    );
  session
    .command('revoke')
    .description("end a session by its handle (as session list shows it): its locks go to their next waiters, and its holder's client loses it with reason REVOKED")
    .argument('<handle>')
    .action(
      action(async (handle: string, _opts: unknown, cmd: Command) => {
        if (!/^[0-9a-f]{16}$/.test(handle)) throw new UsageError('session revoke: HANDLE must be a session handle, 16 lowercase hex characters (session list shows them)');
        return withClient(cmd, async (client, json) => {
          const { released } = await client.auth.sessionRevoke(handle);
          io.stdout(json ? `${toJson({ handle, released })}\n` : `session ${handle} revoked; released ${released.length === 0 ? 'no lock' : released.join(', ')}\n`);
          return EXIT.OK;
        });
      }),
    );

  const certs = program.command('certs').description('certificates for a cluster (docs/security.md)');
  certs
    .command('init')
    .description('write a cluster CA, a certificate per node and a client certificate into DIR (keys 0600, DIR 0700)')
    .argument('<dir>', 'output folder, e.g. data/certs')
    .option('--nodes <list>', 'comma-separated node ids', 'n1,n2,n3')
    .option('--client <name>', 'client identity (urn:fencelock:client:NAME) of client.pem')
    .option('--host <host>', 'extra DNS name or IP address of the nodes (repeatable)', (h: string, prev: string[]) => [...prev, h], [] as string[])
    .action(
      action(async (dir: string, opts: { nodes: string; client?: string; host: string[] }, cmd: Command) => {
        const nodes = [...new Set(opts.nodes.split(',').map((n) => n.trim()).filter((n) => n !== ''))];
        if (nodes.length === 0) throw new UsageError('--nodes: no node id given');
        for (const n of nodes) if (!CERT_NAME.test(n)) throw new UsageError(`--nodes: ${JSON.stringify(n)} is not a node id (letters, digits, . _ -)`);
        if (opts.client !== undefined && !CERT_NAME.test(opts.client)) throw new UsageError(`--client: ${JSON.stringify(opts.client)} is not a name (letters, digits, . _ -)`);
        for (const h of opts.host) if (h.trim() === '' || /[\s,/]/.test(h)) throw new UsageError(`--host: ${JSON.stringify(h)} is not a host name or address`);
        const { generateDevCerts } = await import('../certs/generate');
        await generateDevCerts(dir, { nodes, client: opts.client, hosts: opts.host.length > 0 ? opts.host : undefined });
        const files = ['ca.pem', 'ca-key.pem', ...nodes.flatMap((n) => [`${n}.pem`, `${n}-key.pem`]), 'client.pem', 'client-key.pem'];
        io.stdout(globals(cmd).json === true ? `${toJson({ dir, files })}\n` : `wrote ${files.join(', ')} into ${dir}\n`);
        return EXIT.OK;
      }),
    );
  certs
    .command('node')
    .description('issue a certificate for one more node (a member to add) from the CA in DIR (ca.pem, ca-key.pem)')
    .argument('<name>', 'the node id its certificate names (urn:fencelock:node:NAME)')
    .argument('<dir>', 'the folder of `certs init`, e.g. data/certs')
    .option('--host <host>', 'extra DNS name or IP address of the node (repeatable)', (h: string, prev: string[]) => [...prev, h], [] as string[])
    .action(
      action(async (name: string, dir: string, opts: { host: string[] }, cmd: Command) => {
        if (!CERT_NAME.test(name)) throw new UsageError(`certs node: ${JSON.stringify(name)} is not a node id (letters, digits, . _ -)`);
        for (const h of opts.host) if (h.trim() === '' || /[\s,/]/.test(h)) throw new UsageError(`--host: ${JSON.stringify(h)} is not a host name or address`);
        const { issueNodeCertificate } = await import('../certs/generate');
        issueNodeCertificate(dir, name, { hosts: opts.host });
        const files = [`${name}.pem`, `${name}-key.pem`];
        io.stdout(globals(cmd).json === true ? `${toJson({ dir, files })}\n` : `wrote ${files.join(', ')} into ${dir}\n`);
        return EXIT.OK;
      }),
    );

  addMemberCommands(program, io, action, withClient);
  addRevokeCommand(program, io, action, withClient);

  // The proxy asks the cluster (the global --endpoints and credentials) which tokens each lock issued.
  defineProxyCommand(program.command('proxy'), io, action, 'fencelock proxy', (cmd) => new FenceLockClient(clientOptions(globals(cmd))));
  addCheckResourceCommand(program, io, action, withClient);

  program
    .command('status')
    .description(
      `status of every node; a health check: exit ${EXIT.UNAVAILABLE} when no node answers or none leads or knows a leader, ` +
        `exit ${EXIT.BEHIND} when one is behind the leader by more than --max-lag applied entries`,
    )
    .addOption(new Option('--max-lag <n>', 'entries a node may trail the leader by before it counts as behind').argParser(argParser((t) => parseNonNegativeInt(t, '--max-lag'))).default(DEFAULT_MAX_LAG))
    .action(
      action(async (opts: { maxLag: number }, cmd: Command) =>
        withClient(cmd, async (client, json) => {
          const rows = await client.statusAll();
          io.stdout(json ? `${toJson(statusJson(rows))}\n` : formatStatusTable(rows));
          // The rows are printed whatever the verdict; the exit code is the verdict (and, for people, a line on stderr).
          const verdict = health(rows, opts.maxLag);
          if (verdict.problem !== undefined && !json) io.stderr(`fencelock: ${verdict.problem}\n`);
          return verdict.exitCode;
        }),
      ),
    );

  const kit = { io, action, withClient, json: (cmd: Command) => globals(cmd).json === true, argParser };
  addSnapshotCommands(program, kit);
  addLocksCommand(program, kit);

  program
    .command('describe')
    .description(`holder, token and waiters of a lock; with --semaphore, permits, holders by slot and waiters of a semaphore (exit ${EXIT.NOT_FOUND} when unknown)`)
    .argument('<lock>', 'lock name (with --semaphore: semaphore name)')
    .option('--semaphore', 'describe the semaphore NAME (fencelock lock NAME --permits N) instead of the lock NAME: a separate namespace')
    .action(
      action(async (lock: string, opts: { semaphore?: boolean }, cmd: Command) =>
        withClient(cmd, async (client, json) => {
          if (opts.semaphore === true) {
            const sem = await client.describeSemaphore(lock);
            checkSemaphoreKnown(sem);
            io.stdout(json ? `${toJson(semaphoreJson(sem))}\n` : formatSemaphore(sem));
            return EXIT.OK;
          }
          const d = await client.describe(lock);
          io.stdout(json ? `${toJson(descriptionJson(d))}\n` : formatDescription(d));
          return EXIT.OK;
        }),
      ),
    );

  program
    .command('watch')
    .description('print grants, releases and expiries of a lock until interrupted')
    .argument('<lock>')
    .action(
      action(async (lock: string, _opts: unknown, cmd: Command) =>
        withClient(cmd, async (client, json) => {
          // The watch itself reconnects forever: first make sure some node answers, or fail within --timeout.
          await client.status().catch(async (err: unknown) => {
            throw await explainUnreachable(client, err, globals(cmd).timeout, `watch lock ${JSON.stringify(lock)}`);
          });
          return new Promise<number>((resolve, reject) => {
            const stop = (): void => {
              for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) io.signals.off(sig, stop);
              w.cancel();
              resolve(EXIT.OK);
            };
            const w = client.watch(lock, (ev) => io.stdout(json ? `${toJson(eventJson(ev))}\n` : formatEvent(ev)), {
              // Events were lost to a snapshot on the node: say so, and keep watching (the library reconnects).
              onMissed: (err) => io.stderr(`fencelock: ${err.message} (still watching)\n`),
              onError: (err) => {
                for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) io.signals.off(sig, stop);
                reject(err);
              },
            });
            for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) io.signals.on(sig, stop);
          });
        }),
      ),
    );

  return program;
}

/** Commander's "error: unknown option '-l'\n", with the `--` hint of `lock` when it applies. */
function usageMessage(text: string, hint: string | undefined): string {
  if (hint === undefined || !text.startsWith('error: unknown option')) return text;
  return `${text.trimEnd()}\n${hint}\n`;
}

/** Runs the CLI with arguments (without node and script) and resolves to the exit code. */
export async function runCli(args: string[], io: CliIO): Promise<number> {
  let code: number = EXIT.OK;
  const json = wantsJson(args);
  const usageHint = lockDashDashHint(args);
  const program = buildProgram(
    io,
    (c) => {
      code = c;
    },
    { json, usageHint, cmdWords: wordsAfterDashDash(args) },
  );
  try {
    await program.parseAsync(args, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.exitCode === 0) return EXIT.OK;
      if (json) reportError(io, new UsageError(usageMessage(err.message, usageHint).replace(/^error: /, '').trimEnd()), { json });
      return EXIT.USAGE;
    }
    reportError(io, err, { json });
    return exitCodeFor(err);
  }
  return code;
}

#!/usr/bin/env node
// `fencelock-proxy`, the bin of the @fencelock/fencing package: the same command as `fencelock proxy`
// (./command.ts), for an application that installs the package and not the server.
import { Command, CommanderError } from 'commander';
import { defineProxyCommand, ProxyUsageError, type ProxyCluster, type ProxyCommandIO } from './command';

const CLIENT_PACKAGE = '@fencelock/client';

/**
 * The cluster through @fencelock/client, an optional peer of this package: loaded only when claims are checked,
 * so that a proxy run with --unchecked-claims needs nothing else. Credentials come from the client's own
 * environment variables (FENCELOCK_CACERT, FENCELOCK_CERT, FENCELOCK_KEY).
 */
function connectWithClientPackage(cmd: Command): ProxyCluster {
  const endpoints = ((cmd.optsWithGlobals() as { endpoints?: string }).endpoints ?? process.env.FENCELOCK_ENDPOINTS ?? '').split(',').filter((e) => e !== '');
  if (endpoints.length === 0) throw new ProxyUsageError('checking claims needs the cluster: give --endpoints host:port,... (or FENCELOCK_ENDPOINTS), or --unchecked-claims');
  let client: { FenceLockClient: new (o: { endpoints: string[] }) => ProxyCluster };
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- an optional peer, resolved from the application
    client = require(CLIENT_PACKAGE) as typeof client;
  } catch {
    throw new ProxyUsageError(`checking claims needs ${CLIENT_PACKAGE} installed beside @fencelock/fencing (npm install ./fencelock-client-X.tgz), or --unchecked-claims`);
  }
  return new client.FenceLockClient({ endpoints });
}

/** Runs the command with `argv` (without node and the script) and resolves its exit code; never exits the process. */
export async function runProxyCli(argv: string[], io: ProxyCommandIO): Promise<number> {
  let code = 0;
  const program = new Command('fencelock-proxy')
    .option('--json', 'print where it listens as one JSON document')
    .option('--endpoints <list>', 'the fencelock cluster that checks claims, host:port,... (default: FENCELOCK_ENDPOINTS)')
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr });
  defineProxyCommand(program, io, (fn) => async (...args) => {
    try {
      code = await fn(...args);
    } catch (err) {
      io.stderr(`fencelock-proxy: ${err instanceof Error ? err.message : String(err)}\n`);
      code = 1;
    }
  }, 'fencelock-proxy', connectWithClientPackage);
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (err) {
    // --help and --version end here with exit code 0; a bad flag with commander's own message (already printed).
    if (err instanceof CommanderError) return err.exitCode;
    throw err;
  }
  return code;
}

if (require.main === module) {
  runProxyCli(process.argv.slice(2), { stdout: (t) => void process.stdout.write(t), stderr: (t) => void process.stderr.write(t), signals: process }).then(
    (code) => (process.exitCode = code),
    (err: unknown) => {
      process.stderr.write(`fencelock-proxy: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}

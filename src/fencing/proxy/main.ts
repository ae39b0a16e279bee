#!/usr/bin/env node
// `fencelock-proxy`, the bin of the @fencelock/fencing package: the same command as `fencelock proxy`
// (./command.ts), for an application that installs the package and not the server.
import { Command, CommanderError } from 'commander';
import { defineProxyCommand, type ProxyCommandIO } from './command';

/** Runs the command with `argv` (without node and the script) and resolves its exit code; never exits the process. */
export async function runProxyCli(argv: string[], io: ProxyCommandIO): Promise<number> {
  let code = 0;
  const program = new Command('fencelock-proxy')
    .option('--json', 'print where it listens as one JSON document')
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr });
  defineProxyCommand(program, io, (fn) => async (...args) => {
    try {
      code = await fn(...args);
    } catch (err) {
      io.stderr(`fencelock-proxy: ${err instanceof Error ? err.message : String(err)}\n`);
      code = 1;
    }
  }, 'fencelock-proxy');
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

#!/usr/bin/env node
/** Entry point of the `fencelock` command (package.json bin -> dist/src/cli/main.js). */
import { quietSniIpWarning } from '../node/processWarnings';
import { runCli } from './program';

export { runCli };
export { EXIT } from './exitCodes';

if (require.main === module) {
  quietSniIpWarning();
  runCli(process.argv.slice(2), {
    stdout: (text) => void process.stdout.write(text),
    stderr: (text) => void process.stderr.write(text),
    env: process.env,
    signals: process,
    stdin: () => process.stdin,
  }).then(
    (code) => {
      process.exitCode = code;
      // The answer is out: a connection still opening to a paused node must not keep the process alive
      // until TCP gives up. Writes to pipes and files are synchronous, so nothing printed is lost.
      setTimeout(() => process.exit(code), 200).unref();
    },
    (err: unknown) => {
      process.stderr.write(`fencelock: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}

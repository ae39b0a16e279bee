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
  }).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`fencelock: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}

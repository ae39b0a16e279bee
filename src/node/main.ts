#!/usr/bin/env node
// Entry point of one node process: `node dist/src/node/main.js --config cluster/node1.json`.
import { quietSniIpWarning } from './processWarnings';
import { serve } from './serve';

function configArg(argv: string[]): string {
  const i = argv.indexOf('--config');
  const file = i < 0 ? undefined : argv[i + 1];
  if (!file) {
    process.stderr.write('usage: main.js --config <node.json> [--join]\n');
    process.exit(1);
  }
  return file;
}

quietSniIpWarning();
const args = process.argv.slice(2);
serve(configArg(args), { join: args.includes('--join') }).then(
  (code) => process.exit(code),
  (err: Error) => {
    process.stderr.write(`fencelock node failed to start: ${err.message}\n`);
    process.exit(1);
  },
);

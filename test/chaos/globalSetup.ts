// Global setup of the vitest 'chaos' project: a Docker engine must answer and the local image must exist.
// Runs scripts/ensure-docker.sh (installs and starts dockerd when needed; root on CI) and
// scripts/build-image.sh (rebuilds fencelock-node:dev only when node or its libraries changed), then
// removes leftovers of crashed earlier runs. Fails loudly, never skips: a chaos run without Docker is an
// error, not a pass. The project must be compiled first (`npx tsc -p tsconfig.json`): containers run dist/.
import './env';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { removeLeftovers } from './cleanup';
import { PROJECT_ROOT } from './containerCluster';

function runScript(name: string): void {
  const script = path.join(PROJECT_ROOT, 'scripts', name);
  const t0 = Date.now();
  try {
    execFileSync('bash', [script], { cwd: PROJECT_ROOT, stdio: ['ignore', 'inherit', 'inherit'], env: process.env });
  } catch (err) {
    throw new Error(`chaos tests need Docker: scripts/${name} failed (${(err as Error).message.split('\n')[0]}). See its output above.`);
  }
  process.stderr.write(`chaos setup: scripts/${name} took ${Date.now() - t0} ms\n`);
}

export default async function setup(): Promise<void> {
  runScript('ensure-docker.sh');
  runScript('build-image.sh');
  const main = path.join(PROJECT_ROOT, 'dist/src/node/main.js');
  if (!existsSync(main)) throw new Error(`${main} is missing: run \`npx tsc -p tsconfig.json\` before the chaos tests`);
  await removeLeftovers();
}

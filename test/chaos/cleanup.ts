// Removes containers and networks left behind by chaos runs that crashed (no reaper runs here: see
// docs/containers.md#testcontainers). Everything the harness creates carries org.testcontainers=true plus
// fencelock.chaos.pid = the pid of the process that created it; a leftover is one whose process is gone.
//
//   import { removeLeftovers } from './cleanup'; await removeLeftovers();
//   node dist/test/chaos/cleanup.js          leftovers of dead fencelock chaos runs
//   node dist/test/chaos/cleanup.js --all    every org.testcontainers=true container and network
import './env';
import { rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { getContainerRuntimeClient } from 'testcontainers';

export const LABEL_TESTCONTAINERS = 'org.testcontainers';
export const LABEL_CHAOS_PID = 'fencelock.chaos.pid';
export const LABEL_CHAOS_DIR = 'fencelock.chaos.dir';
export const TEMP_PREFIX = 'fencelock-chaos-';

export interface CleanupOptions {
  /** Remove every org.testcontainers=true container and network, not only leftovers of dead fencelock runs. */
  all?: boolean;
  log?: (line: string) => void;
}

export interface CleanupResult {
  containers: string[];
  networks: string[];
}

function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function isLeftover(labels: Record<string, string> | undefined, all: boolean): boolean {
  if (!labels || labels[LABEL_TESTCONTAINERS] !== 'true') return false;
  const pid = labels[LABEL_CHAOS_PID];
  if (pid === undefined) return all;
  return all || !processAlive(Number(pid));
}

function removeTempDir(dir: string | undefined): void {
  if (!dir || process.env.KEEP_TEST_DATA) return;
  const resolved = path.resolve(dir);
  if (path.dirname(resolved) !== path.resolve(os.tmpdir()) || !path.basename(resolved).startsWith(TEMP_PREFIX)) return;
  rmSync(resolved, { recursive: true, force: true });
}

export async function removeLeftovers(opts: CleanupOptions = {}): Promise<CleanupResult> {
  const log = opts.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const docker = (await getContainerRuntimeClient()).container.dockerode;
  const result: CleanupResult = { containers: [], networks: [] };

  const containers = await docker.listContainers({ all: true, filters: { label: [`${LABEL_TESTCONTAINERS}=true`] } });
  for (const info of containers) {
    if (!isLeftover(info.Labels, opts.all ?? false)) continue;
    const c = docker.getContainer(info.Id);
    if (info.State === 'paused') await c.unpause().catch(() => undefined);
    await c.remove({ force: true, v: true }).catch((err: Error) => log(`cleanup: cannot remove container ${info.Id}: ${err.message}`));
    result.containers.push((info.Names[0] ?? info.Id).replace(/^\//, ''));
  }

  const networks = await docker.listNetworks({ filters: { label: [`${LABEL_TESTCONTAINERS}=true`] } });
  for (const info of networks) {
    if (!isLeftover(info.Labels, opts.all ?? false)) continue;
    await docker
      .getNetwork(info.Id)
      .remove()
      .then(() => result.networks.push(info.Name))
      .catch((err: Error) => log(`cleanup: cannot remove network ${info.Name}: ${err.message}`));
    removeTempDir(info.Labels?.[LABEL_CHAOS_DIR]);
  }

  if (result.containers.length + result.networks.length > 0) {
    log(`cleanup: removed ${result.containers.length} leftover container(s) [${result.containers.join(', ')}] and ${result.networks.length} network(s) [${result.networks.join(', ')}]`);
  }
  return result;
}

// `typeof` guards: under vitest's module runner `require`/`module` may not exist.
if (typeof require !== 'undefined' && typeof module !== 'undefined' && require.main === module) {
  removeLeftovers({ all: process.argv.includes('--all') }).then(
    () => process.exit(0),
    (err: Error) => {
      process.stderr.write(`cleanup failed: ${err.message}\n`);
      process.exit(1);
    },
  );
}

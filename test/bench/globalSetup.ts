// Global setup of the vitest 'bench' project: the benchmark compares with etcd, so etcd must be installed
// (scripts/ensure-etcd.sh installs Debian's etcd-server when missing). Fails loudly, never skips.
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';

export default function setup(): void {
  const script = path.resolve(__dirname, '../../scripts/ensure-etcd.sh');
  try {
    execFileSync('bash', [script], { stdio: ['ignore', 'inherit', 'inherit'] });
  } catch (err) {
    throw new Error(`the bench test needs etcd: scripts/ensure-etcd.sh failed (${(err as Error).message.split('\n')[0]})`);
  }
}

// Global setup of the vitest 'bench' project: the benchmark compares with etcd and ZooKeeper, so both must be
// installed (scripts/ensure-etcd.sh installs Debian's etcd-server, scripts/ensure-zookeeper.sh Debian's
// zookeeper, when missing). Fails loudly, never skips.
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';

function ensure(what: string, script: string): void {
  try {
    execFileSync('bash', [path.resolve(__dirname, '../../scripts', script)], { stdio: ['ignore', 'inherit', 'inherit'] });
  } catch (err) {
    throw new Error(`the bench test needs ${what}: scripts/${script} failed (${(err as Error).message.split('\n')[0]})`);
  }
}

export default function setup(): void {
  ensure('etcd', 'ensure-etcd.sh');
  ensure('ZooKeeper', 'ensure-zookeeper.sh');
}

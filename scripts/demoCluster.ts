// The pieces the demos share: a fresh local 3-node cluster (TLS and fsync on) in a folder of its own, the
// numbered-step output, and reading a child process's JSON-line events.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { generateDevCerts } from '../src/certs/generate';
import type { FenceLockClient, NodeStatus } from '../src/client';

export const ROOT = path.resolve(__dirname, '../..');

export const bold = (s: string): string => (process.stdout.isTTY ? `\x1b[1m${s}\x1b[0m` : s);
let stepNo = 0;
export const step = (s: string): void => console.log(`\n${bold(`${++stepNo}.`)} ${s}`);
export const info = (s: string): void => console.log(`   ${s}`);
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export function lines(child: ChildProcess): AsyncIterator<string> {
  return readline.createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
}

export async function nextEvent(it: AsyncIterator<string>, who = 'client A'): Promise<Record<string, string>> {
  const { value, done } = await it.next();
  if (done) throw new Error(`${who} exited early`);
  return JSON.parse(value as string) as Record<string, string>;
}

export interface DemoCluster {
  dir: string;
  endpoints: string[];
  /** SIGKILL of one node. */
  kill(id: string): void;
  /** The leader's status (other than `exclude`), waiting up to 20 s for one. */
  leader(client: FenceLockClient, exclude?: string): Promise<NodeStatus>;
  /** Kills every node and removes the folder. */
  destroy(): void;
}

/**
 * Writes certificates and configs into `dir` (FENCELOCK_DEMO_DIR overrides it; removed first) for nodes n1..n3
 * on the given three client and three peer ports (FENCELOCK_DEMO_PORTS overrides them), points this process's
 * FENCELOCK_CACERT/CERT/KEY at the certificates (children inherit them), and starts the nodes.
 */
export async function startDemoCluster(defaultDir: string, defaultPorts: string): Promise<DemoCluster> {
  const dir = process.env.FENCELOCK_DEMO_DIR ?? defaultDir;
  const ports = (process.env.FENCELOCK_DEMO_PORTS ?? defaultPorts).split(',').map(Number);
  const ids = ['n1', 'n2', 'n3'];
  const members = Object.fromEntries(ids.map((id, i) => [id, { client: `127.0.0.1:${ports[i]}`, peer: `127.0.0.1:${ports[i + 3]}` }]));
  const certs = path.join(dir, 'certs');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  await generateDevCerts(certs, { nodes: ids });
  for (const id of ids) {
    const tls = { ca: path.join(certs, 'ca.pem'), cert: path.join(certs, `${id}.pem`), key: path.join(certs, `${id}-key.pem`) };
    const config = { id, listen: members[id]!.client, peerListen: members[id]!.peer, members, tls, auth: { enabled: false }, dataDir: path.join(dir, id), logLevel: 'warn' };
    writeFileSync(path.join(dir, `${id}.json`), JSON.stringify(config, null, 2));
  }
  process.env.FENCELOCK_CACERT = path.join(certs, 'ca.pem');
  process.env.FENCELOCK_CERT = path.join(certs, 'client.pem');
  process.env.FENCELOCK_KEY = path.join(certs, 'client-key.pem');
  delete process.env.FENCELOCK_INSECURE;
  const nodes = new Map<string, ChildProcess>();
  for (const id of ids) {
    nodes.set(id, spawn(process.execPath, [path.join(ROOT, 'dist/src/node/main.js'), '--config', path.join(dir, `${id}.json`)], { stdio: ['ignore', 'ignore', 'ignore'] }));
  }
  return {
    dir,
    endpoints: Object.values(members).map((m) => m.client),
    kill: (id) => void nodes.get(id)?.kill('SIGKILL'),
    async leader(client, exclude) {
      for (let i = 0; i < 200; i++) {
        for (const s of await client.statusAll()) {
          if (s.ok && s.status.role === 'leader' && s.status.id !== exclude) return s.status;
        }
        await sleep(100);
      }
      throw new Error('no leader elected within 20 s');
    },
    destroy() {
      for (const child of nodes.values()) child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

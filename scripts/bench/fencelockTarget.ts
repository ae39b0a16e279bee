// The fencelock side of the side-by-side benchmark: a fresh local 3-node cluster (default config, so fsync on)
// of dist/src/node/main.js processes, driven through the TypeScript client in src/client.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { generateDevCerts } from '../../src/certs/generate';
import { FenceLockClient, type EndpointStatus, type FenceLockClientOptions, type LockHandle, type Session } from '../../src/client';
import { exited, freePort, logTail, sleep, waitExit } from './processes';
import type { BenchTarget, BenchWorker } from './target';

const NODE_IDS = ['n1', 'n2', 'n3'];
const READY_TIMEOUT_MS = 20_000;
const SESSION_TTL_MS = 10_000;
// An acquire of the hot lock queues behind every other client; etcd's side waits as long.
const ACQUIRE_WAIT_MS = 30_000;
/** This file is dist/scripts/bench/fencelockTarget.js once built; the node entry point is built alongside. */
const NODE_MAIN = path.resolve(__dirname, '../../src/node/main.js');

interface Node {
  id: string;
  logFile: string;
  child: ChildProcess;
}

/** Starts a fresh local 3-node fencelock cluster and waits until a session can be opened on it. */
export async function startFencelockCluster(opts: { dataRoot?: string; tls?: boolean } = {}): Promise<BenchTarget> {
  const tls = opts.tls ?? true;
  try {
    return await startCluster(opts.dataRoot, tls);
  } catch (e) {
    // Free ports are picked before the nodes bind them; on a busy machine another process can win one.
    console.error(`${(e as Error).message.split('\n')[0]}; retrying once with fresh ports`);
    return startCluster(opts.dataRoot, tls);
  }
}

/** How this target's clients reach the nodes: TLS against the bench CA, or plaintext. */
type ClientSecurity = Pick<FenceLockClientOptions, 'tls' | 'insecure'>;

/**
 * A client with this target's own credentials, given as options (never through the process-wide env): the
 * bench runs a TLS and a plaintext cluster in one process.
 */
function newClient(endpoints: string[], security: ClientSecurity): { client: FenceLockClient; reached: Promise<EndpointStatus[]> } {
  const client = new FenceLockClient({ endpoints, ...security });
  return { client, reached: client.statusAll() };
}

/** Certificates for the bench cluster (TLS) or plaintext; the bench's clients verify the nodes against its CA. */
async function security(dir: string, tls: boolean): Promise<{ config: (id: string) => object; client: ClientSecurity }> {
  if (!tls) return { config: () => ({ insecure: true }), client: { insecure: true } };
  const certs = path.join(dir, 'certs');
  await generateDevCerts(certs, { nodes: NODE_IDS, client: 'bench' });
  return {
    config: (id) => ({ tls: { ca: path.join(certs, 'ca.pem'), cert: path.join(certs, `${id}.pem`), key: path.join(certs, `${id}-key.pem`) } }),
    client: { insecure: false, tls: { ca: path.join(certs, 'ca.pem') } },
  };
}

async function startCluster(dataRoot: string | undefined, tls: boolean): Promise<BenchTarget> {
  const dir = mkdtempSync(path.join(dataRoot ?? os.tmpdir(), 'fencelock-bench-fl-'));
  const ports: number[] = [];
  for (const _ of [...NODE_IDS, ...NODE_IDS]) ports.push(await freePort());
  const members = Object.fromEntries(NODE_IDS.map((id, i) => [id, { client: `127.0.0.1:${ports[i]}`, peer: `127.0.0.1:${ports[i + NODE_IDS.length]}` }]));
  const endpoints = Object.values(members).map((m) => m.client);
  const secure = await security(dir, tls);
  const name = tls ? 'fencelock' : 'fencelock-plain';

  const nodes: Node[] = NODE_IDS.map((id) => {
    const configFile = path.join(dir, `${id}.json`);
    const config = { id, listen: members[id]!.client, peerListen: members[id]!.peer, members, ...secure.config(id), dataDir: path.join(dir, id), logLevel: 'warn' };
    writeFileSync(configFile, JSON.stringify(config));
    const logFile = path.join(dir, `${id}.log`);
    const fd = openSync(logFile, 'a');
    const child = spawn(process.execPath, [NODE_MAIN, '--config', configFile], { stdio: ['ignore', fd, fd] });
    closeSync(fd); // the child holds its own copy of the descriptor
    return { id, logFile, child };
  });

  // process.exit() and uncaught errors skip stop(); the nodes must not outlive the benchmark.
  const killOnExit = (): void => {
    for (const n of nodes) if (!exited(n.child)) n.child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  process.on('exit', killOnExit);

  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    for (const n of nodes) if (!exited(n.child)) n.child.kill('SIGTERM');
    await Promise.all(
      nodes.map(async (n) => {
        if (await waitExit(n.child, 3_000)) return;
        n.child.kill('SIGKILL');
        await waitExit(n.child, 3_000);
      }),
    );
    process.removeListener('exit', killOnExit);
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    await waitReady(nodes, endpoints, secure.client);
  } catch (e) {
    const tails = nodes.map((n) => `--- ${n.id} (${n.logFile}) ---\n${logTail(n.logFile)}`).join('\n');
    await stop();
    throw new Error(`fencelock cluster did not become ready: ${(e as Error).message}\n${tails}`);
  }

  return {
    name,
    pids: nodes.map((n) => n.child.pid!),
    newWorker: (index: number): Promise<BenchWorker> => FencelockWorker.open(endpoints, secure.client, index),
    stop,
  };
}

/** Ready means a leader that commits: opening a session is a replicated write. */
async function waitReady(nodes: Node[], endpoints: string[], security: ClientSecurity): Promise<void> {
  const { client: probe, reached } = newClient(endpoints, security);
  await reached;
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let last = 'no leader yet';
  try {
    while (Date.now() < deadline) {
      const dead = nodes.find((n) => exited(n.child));
      if (dead) throw new Error(`node ${dead.id} exited (code ${dead.child.exitCode}, signal ${dead.child.signalCode})`);
      // Every member must answer as itself: a port taken by another process between freePort() and the node's
      // bind makes that node exit, and a quorum of two would still elect a leader.
      const statuses = await probe.statusAll();
      const all = statuses.every((s) => s.ok && endpoints[NODE_IDS.indexOf(s.status.id)] === s.endpoint);
      if (all && statuses.some((s) => s.ok && s.status.role === 'leader')) {
        try {
          const session = await probe.openSession({ ttlMs: SESSION_TTL_MS, name: 'bench-ready' });
          await session.close();
          return;
        } catch (e) {
          last = `opening a session failed: ${(e as Error).message}`;
        }
      }
      await sleep(100);
    }
    throw new Error(`timed out after ${READY_TIMEOUT_MS / 1000} s (${last})`);
  } finally {
    await probe.close();
  }
}

/** One benchmark client: its own FenceLockClient (own channels) and its own session. */
class FencelockWorker implements BenchWorker {
  private held: LockHandle | undefined;

  private constructor(
    private readonly client: FenceLockClient,
    private readonly session: Session,
  ) {}

  static async open(endpoints: string[], security: ClientSecurity, index: number): Promise<FencelockWorker> {
    const { client, reached } = newClient(endpoints, security);
    try {
      // A client with the wrong credentials reaches no node at all.
      const statuses = await reached;
      if (!statuses.some((s) => s.ok)) {
        const first = statuses.find((s) => !s.ok);
        throw new Error(`no node answered a status call: ${first && !first.ok ? first.error.message : 'no endpoints'}`);
      }
      const session = await client.openSession({ ttlMs: SESSION_TTL_MS, name: `bench-${index}` });
      return new FencelockWorker(client, session);
    } catch (e) {
      await client.close();
      throw e;
    }
  }

  async lockCycle(lock: string): Promise<void> {
    const handle = await this.session.acquire(lock, { waitTimeoutMs: ACQUIRE_WAIT_MS });
    try {
      await handle.write([{ put: `${lock}/value`, value: `token ${handle.token}` }]);
    } finally {
      // Released even when the write failed, or every later cycle of this worker would find the lock held.
      await handle.release();
    }
  }

  async holdLock(lock: string): Promise<void> {
    this.held = await this.session.acquire(lock, { waitTimeoutMs: ACQUIRE_WAIT_MS });
  }

  async fencedWrite(key: string, value: string): Promise<void> {
    if (!this.held) throw new Error('fencedWrite before holdLock');
    await this.held.write([{ put: key, value }]);
  }

  async linearizableRead(key: string): Promise<void> {
    await this.client.get(key);
  }

  /** Closing the client closes the session, which releases a lock taken by holdLock. */
  close(): Promise<void> {
    return this.client.close();
  }
}

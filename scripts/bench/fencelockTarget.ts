// The fencelock side of the side-by-side benchmark: a fresh local 3-node cluster (default config, so fsync on)
// of dist/src/node/main.js processes, driven through the TypeScript client in src/client. With auth (the
// fencelock-auth system, TLS only) the cluster turns auth on with the bench's client certificate as its admin,
// and every worker index gets a user of its own, holding only a role with prefix rules on the workloads' names,
// and a bearer token: each worker is one identity, as separate applications would be.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { generateDevCerts } from '../../src/certs/generate';
import { FenceLockClient, isFenceLockError, type EndpointStatus, type FenceLockClientOptions, type LockHandle, type Session } from '../../src/client';
import { exited, freePort, logTail, ServerGuard, sleep, terminate } from './processes';
import { BENCH_NAME_PREFIX } from './runner';
import { variantName } from './systems';
import type { BenchTarget, BenchWorker } from './target';

const NODE_IDS = ['n1', 'n2', 'n3'];
const READY_TIMEOUT_MS = 20_000;
const SESSION_TTL_MS = 10_000;
// An acquire of the hot lock queues behind every other client; etcd's side waits as long.
const ACQUIRE_WAIT_MS = 30_000;
/** This file is dist/scripts/bench/fencelockTarget.js once built; the node entry point is built alongside. */
const NODE_MAIN = path.resolve(__dirname, '../../src/node/main.js');
/** The identity in the bench's client certificate: the admin of a cluster with auth on. */
const ADMIN = 'bench';
/** The role of every worker's user with auth on: lock, write and read on the workloads' prefix, nothing else. */
const WORKER_ROLE = 'bench-worker';
const workerUser = (index: number): string => `bench-worker-${index}`;

interface Node {
  id: string;
  logFile: string;
  child: ChildProcess;
}

/**
 * Starts a fresh local 3-node fencelock cluster and waits until a session can be opened on it. With `auth`
 * (needs TLS), also until auth is on, and sets up the workers' role.
 */
export async function startFencelockCluster(
  opts: {
    dataRoot?: string;
    tls?: boolean;
    auth?: boolean;
    /** The node entry point to run (another build, for A/B). */
    nodeMain?: string;
    /** Config keys added to every node's config (an A/B of one setting, e.g. `{ peerCarrier: 'grpc' }`). */
    nodeConfig?: Record<string, unknown>;
  } = {},
): Promise<BenchTarget> {
  const tls = opts.tls ?? true;
  const auth = opts.auth ?? false;
  if (auth && !tls) throw new Error('fencelock with auth needs TLS: its admin is named by the client certificate');
  try {
    return await startCluster(opts.dataRoot, tls, auth, opts.nodeMain ?? NODE_MAIN, opts.nodeConfig ?? {});
  } catch (e) {
    // Free ports are picked before the nodes bind them; on a busy machine another process can win one.
    console.error(`${(e as Error).message.split('\n')[0]}; retrying once with fresh ports`);
    return startCluster(opts.dataRoot, tls, auth, opts.nodeMain ?? NODE_MAIN, opts.nodeConfig ?? {});
  }
}

/** How this target's clients reach the nodes: TLS against the bench CA, or plaintext. */
type ClientSecurity = Pick<FenceLockClientOptions, 'tls' | 'insecure'>;

/**
 * A client with this target's own credentials, given as options (never through the process-wide env): the
 * bench runs a TLS and a plaintext cluster in one process.
 */
function newClient(endpoints: string[], security: ClientSecurity, token?: string): { client: FenceLockClient; reached: Promise<EndpointStatus[]> } {
  const client = new FenceLockClient({ endpoints, ...security, token });
  return { client, reached: client.statusAll() };
}

interface Security {
  config: (id: string) => object;
  /** The workers' clients: they verify the nodes against the bench CA and present no certificate. */
  client: ClientSecurity;
  /** The readiness probe's client; with TLS it presents the client certificate, naming it ADMIN. */
  admin: ClientSecurity;
}

/** Certificates for the bench cluster (TLS) or plaintext; the bench's clients verify the nodes against its CA. */
async function security(dir: string, tls: boolean): Promise<Security> {
  if (!tls) return { config: () => ({ insecure: true }), client: { insecure: true }, admin: { insecure: true } };
  const certs = path.join(dir, 'certs');
  await generateDevCerts(certs, { nodes: NODE_IDS, client: ADMIN });
  const ca = path.join(certs, 'ca.pem');
  return {
    config: (id) => ({ tls: { ca, cert: path.join(certs, `${id}.pem`), key: path.join(certs, `${id}-key.pem`) } }),
    client: { insecure: false, tls: { ca } },
    admin: { insecure: false, tls: { ca, cert: path.join(certs, 'client.pem'), key: path.join(certs, 'client-key.pem') } },
  };
}

/**
 * The workers' identities on a cluster with auth on: one user per worker index (created the first time a
 * worker of that index opens, and reused by every later row), holding WORKER_ROLE, with one bearer token.
 *
 * No quota is raised: an identity's default quotas (docs/auth.md) are far above what one worker uses (one
 * session, one lock held or awaited, one key written, a stream or two per node). Each worker is a new
 * FenceLockClient, so its identity gets a new client id every row; past the `dedup_clients` quota (1,000) the
 * least recently used one is forgotten, and those are the closed clients of earlier rows.
 */
class WorkerIdentities {
  private readonly tokens = new Map<number, Promise<string>>();

  private constructor(
    private readonly admin: FenceLockClient,
    private readonly endpoints: string[],
    private readonly security: ClientSecurity,
  ) {}

  /** Creates WORKER_ROLE: a rule per permission on the workloads' prefix (prefix matching is what is measured). */
  static async setUp(admin: FenceLockClient, endpoints: string[], security: ClientSecurity): Promise<WorkerIdentities> {
    await admin.auth.roleAdd(WORKER_ROLE);
    for (const permission of ['lock', 'write', 'read'] as const) await admin.auth.roleGrantPermission(WORKER_ROLE, permission, BENCH_NAME_PREFIX);
    return new WorkerIdentities(admin, endpoints, security);
  }

  /** The bearer token of worker `index`'s user. */
  token(index: number): Promise<string> {
    const known = this.tokens.get(index);
    if (known) return known;
    const token = this.issue(workerUser(index));
    this.tokens.set(index, token);
    // A failure is not remembered: the next worker of this index tries again.
    token.catch(() => {
      if (this.tokens.get(index) === token) this.tokens.delete(index);
    });
    return token;
  }

  private async issue(user: string): Promise<string> {
    try {
      await this.admin.auth.userAdd(user);
    } catch (e) {
      // Left by an earlier attempt that failed after adding the user.
      if (!(isFenceLockError(e) && e.code === 'ALREADY_EXISTS')) throw e;
    }
    await this.admin.auth.userGrantRole(user, WORKER_ROLE);
    const { token } = await this.admin.auth.tokenIssue(user);
    await this.untilEveryNodeKnows(token);
    return token;
  }

  /**
   * Waits until every node takes `token`. A token is checked by the node that takes the call, against the
   * entries it has applied: a follower that has not applied the issue yet refuses it (UNAUTHENTICATED, which the
   * client does not retry), and a worker's first call may well go to a follower. Cluster.Status needs a user,
   * so a status answered by every node means each has applied the token and the user and role before it.
   */
  private async untilEveryNodeKnows(token: string): Promise<void> {
    const client = new FenceLockClient({ endpoints: this.endpoints, ...this.security, token });
    try {
      const deadline = Date.now() + READY_TIMEOUT_MS;
      for (;;) {
        const refused = (await client.statusAll()).find((s) => !s.ok);
        if (!refused) return;
        if (Date.now() > deadline) throw new Error(`a fresh token was not taken by every node within ${READY_TIMEOUT_MS / 1000} s: ${refused.ok ? '' : refused.error.message}`);
        await sleep(20);
      }
    } finally {
      await client.close();
    }
  }
}

async function startCluster(dataRoot: string | undefined, tls: boolean, auth: boolean, nodeMain: string, extraConfig: Record<string, unknown>): Promise<BenchTarget> {
  const dir = mkdtempSync(path.join(dataRoot ?? os.tmpdir(), 'fencelock-bench-fl-'));
  const ports: number[] = [];
  for (const _ of [...NODE_IDS, ...NODE_IDS]) ports.push(await freePort());
  const members = Object.fromEntries(NODE_IDS.map((id, i) => [id, { client: `127.0.0.1:${ports[i]}`, peer: `127.0.0.1:${ports[i + NODE_IDS.length]}` }]));
  const endpoints = Object.values(members).map((m) => m.client);
  const secure = await security(dir, tls);
  const name = variantName('fencelock', tls, auth);
  const authConfig = { auth: auth ? { enabled: true, admin: ADMIN } : { enabled: false } };

  const guard = new ServerGuard(dir);
  const nodes: Node[] = NODE_IDS.map((id) => {
    const configFile = path.join(dir, `${id}.json`);
    const config = { id, listen: members[id]!.client, peerListen: members[id]!.peer, members, ...secure.config(id), ...authConfig, dataDir: path.join(dir, id), logLevel: 'warn', ...extraConfig };
    writeFileSync(configFile, JSON.stringify(config));
    const logFile = path.join(dir, `${id}.log`);
    const fd = openSync(logFile, 'a');
    const child = spawn(process.execPath, [nodeMain, '--config', configFile], { stdio: ['ignore', fd, fd] });
    guard.watch(child);
    closeSync(fd); // the child holds its own copy of the descriptor
    return { id, logFile, child };
  });

  // The readiness probe; with auth it stays open as the admin that issues the workers' tokens.
  const probe = new FenceLockClient({ endpoints, ...secure.admin });
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await probe.close().catch(() => undefined);
    await terminate(nodes.map((n) => n.child));
    rmSync(dir, { recursive: true, force: true });
    await guard.release();
  };

  let identities: WorkerIdentities | undefined;
  try {
    await waitReady(nodes, endpoints, probe, auth);
    if (auth) {
      identities = await WorkerIdentities.setUp(probe, endpoints, secure.client).catch((e: unknown) => {
        throw new Error(`setting up the workers' role failed: ${(e as Error).message}`);
      });
    } else {
      await probe.close();
    }
  } catch (e) {
    const tails = nodes.map((n) => `--- ${n.id} (${n.logFile}) ---\n${logTail(n.logFile)}`).join('\n');
    await stop();
    throw new Error(`fencelock cluster did not become ready: ${(e as Error).message}\n${tails}`);
  }

  return {
    name,
    pids: nodes.map((n) => n.child.pid!),
    newWorker: async (index: number): Promise<BenchWorker> => FencelockWorker.open(endpoints, secure.client, index, await identities?.token(index)),
    stop,
  };
}

/**
 * Ready means a leader that commits: opening a session is a replicated write. With auth, also that auth is on
 * (the first leader turns it on): the probe, the admin by its certificate, must be taken for ADMIN.
 */
async function waitReady(nodes: Node[], endpoints: string[], probe: FenceLockClient, auth: boolean): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let last = 'no leader yet';
  while (Date.now() < deadline) {
    const dead = nodes.find((n) => exited(n.child));
    if (dead) throw new Error(`node ${dead.id} exited (code ${dead.child.exitCode}, signal ${dead.child.signalCode})`);
    // Every member must answer as itself: a port taken by another process between freePort() and the node's
    // bind makes that node exit, and a quorum of two would still elect a leader.
    const statuses = await probe.statusAll();
    const all = statuses.every((s) => s.ok && endpoints[NODE_IDS.indexOf(s.status.id)] === s.endpoint);
    if (!all) last = `not every node answered its status as itself: ${statuses.map((s) => (s.ok ? `${s.endpoint} ${s.status.id}` : `${s.endpoint} ${s.error.message}`)).join('; ')}`;
    if (all && statuses.some((s) => s.ok && s.status.role === 'leader')) {
      try {
        const me = auth ? await probe.auth.whoAmI() : undefined;
        if (me && !me.authEnabled) {
          last = 'auth is not on yet';
        } else if (me && me.identity !== ADMIN) {
          throw new Error(`the probe is taken for ${JSON.stringify(me.identity)} (via ${me.via}), not the admin ${ADMIN}: check the client certificate`);
        } else {
          const session = await probe.openSession({ ttlMs: SESSION_TTL_MS, name: 'bench-ready' });
          await session.close();
          return;
        }
      } catch (e) {
        if (!isFenceLockError(e)) throw e;
        last = `${auth ? 'whoami or ' : ''}opening a session failed: ${e.message}`;
      }
    }
    await sleep(100);
  }
  throw new Error(`timed out after ${READY_TIMEOUT_MS / 1000} s (${last})`);
}

/** One benchmark client: its own FenceLockClient (own channels) and its own session. */
class FencelockWorker implements BenchWorker {
  private held: LockHandle | undefined;

  private constructor(
    private readonly client: FenceLockClient,
    private readonly session: Session,
  ) {}

  /** With `token` (auth on), the worker is that token's user. */
  static async open(endpoints: string[], security: ClientSecurity, index: number, token?: string): Promise<FencelockWorker> {
    const { client, reached } = newClient(endpoints, security, token);
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

  async permitCycle(semaphore: string, permits: number): Promise<void> {
    const permit = await this.session.acquirePermit(semaphore, { permits, waitTimeoutMs: ACQUIRE_WAIT_MS });
    try {
      // A permit's writes are fenced per slot, and a key is bound to the slot it was first written under.
      await permit.write([{ put: `${semaphore}/slot-${permit.slot}`, value: `token ${permit.token}` }]);
    } finally {
      await permit.release();
    }
  }

  async readWriteCycle(lock: string, exclusive: boolean): Promise<void> {
    const handle = await this.session.acquire(lock, { waitTimeoutMs: ACQUIRE_WAIT_MS, mode: exclusive ? 'exclusive' : 'shared' });
    try {
      // A shared holder writes nothing (the server refuses it, SHARED_GRANT); it reads what the writers left.
      if (exclusive) await handle.write([{ put: `${lock}/value`, value: `token ${handle.token}` }]);
      else await this.client.get(`${lock}/value`);
    } finally {
      await handle.release();
    }
  }

  /** Closing the client closes the session, which releases a lock taken by holdLock. */
  close(): Promise<void> {
    return this.client.close();
  }
}

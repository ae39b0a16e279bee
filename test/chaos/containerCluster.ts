// A fencelock cluster in Docker containers, for chaos tests: real network namespaces, real partitions.
//
// Layout (see docs/containers.md#testcontainers for why):
// - one user-defined bridge network `raft-<random>` (sorts after "bridge"); every container sits on it only,
//   with its node id as network alias (n1, n2, ...);
// - image fencelock-node:dev (scripts/build-image.sh: node + libraries, no app); the built project is
//   bind-mounted read-only at /app (dist/, node_modules/, proto/, package.json), so no rebuild per change;
// - per node a host temp folder bind-mounted read-write at /data (a kill + start keeps the data) and its
//   config file mounted at /config/node.json;
// - a fixed host port on 127.0.0.1 per node (chosen free before start). `members` holds these host
//   addresses: what host clients dial and what followers hand out as leader hints; peers dial each other
//   by alias through `peerAddresses` (nX:7000). The fixed port survives kill + start.
//
// Nemesis: cut links (ClusterControl.cut/heal; the shapes are in test/support/links.ts) are iptables rules
// inside each container's network namespace, written from the host (`nsenter -t <pid> -n iptables-restore`,
// once per node per call): packets vanish silently, as on a real network. The host's own traffic to the
// published ports comes from the network's gateway address and is never dropped, so the tests can still
// ask an isolated node for its status.
// Also pause/resume (cgroup freeze), kill (SIGKILL) + start on the same data, graceful stop, logs.
//
// No reaper runs here: destroy() removes every container and the network this cluster created (anything
// labelled with its cluster name, even half-started ones); cleanup.ts removes leftovers of crashed runs.
import './env';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type Dockerode from 'dockerode';
import { GenericContainer, Wait, getContainerRuntimeClient } from 'testcontainers';
import { generateDevCerts, issueNodeCertificate } from '../../src/certs/generate';
import { deriveClusterId } from '../../src/node/config';
import { FenceLockClient, type NodeStatus } from '../../src/client';
import type { FenceLockClientOptions } from '../../src/client/types';
import type { ClusterControl, Link } from '../support/clusterControl';
import { linkKey } from '../support/links';
import { nodeKnobs, type NodeKnobs } from '../support/nodeKnobs';
import { LABEL_CHAOS_DIR, LABEL_CHAOS_PID, LABEL_TESTCONTAINERS, TEMP_PREFIX } from './cleanup';
import { freePorts, stablePorts } from '../integration/harness';

export const DEFAULT_IMAGE = process.env.FENCELOCK_IMAGE ?? 'fencelock-node:dev';
export const NODE_PORT = 7000;
/** The peer listener's port inside every container (mutual TLS); only other containers dial it. */
export const PEER_PORT = 7100;
export const STARTED_MESSAGE = 'fencelock node started';
export const LABEL_CHAOS_CLUSTER = 'fencelock.chaos.cluster';

/** The repository root: the folder above test/ (or above dist/ when this runs compiled). */
export const PROJECT_ROOT = ((): string => {
  let dir = __dirname;
  for (;;) {
    if (existsSync(path.join(dir, 'package.json')) && existsSync(path.join(dir, 'proto'))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`cannot find the project root above ${__dirname}`);
    dir = parent;
  }
})();

/** Node knobs left unset take the node's defaults (CONFIG_DEFAULTS). */
export interface ContainerClusterOptions extends Partial<NodeKnobs> {
  /** Number of nodes, 3 or 5 usually. Default 3. */
  size?: number;
  image?: string;
  /** Per container, until "fencelock node started". Default 30 s. */
  startupTimeoutMs?: number;
  /** Auth on (docs/auth.md), this user the admin (the test process's client certificate is `chaos`). */
  authAdmin?: string;
  /**
   * Ids of nodes made for a later `member add` (state 'new': a host port, no container yet; join() starts
   * one). Their endpoints are in `endpoints` from the start: leader hints never add endpoints to a client.
   */
  spares?: string[];
}

/** 'new': a spare never started (see spares); 'removed': out of the configuration, never started again. */
export type NodeState = 'running' | 'paused' | 'down' | 'new' | 'removed';

export interface ChaosNode {
  readonly id: string;
  /** Fixed port on 127.0.0.1 published to the container's 7000. */
  readonly hostPort: number;
  /** 127.0.0.1:hostPort: how the host (and any client) reaches this node; also its `members` address. */
  readonly endpoint: string;
  readonly containerName: string;
  readonly dataDir: string;
  readonly configFile: string;
  containerId: string;
  state: NodeState;
  /** The container's addresses on the cluster network (refreshed at each start). */
  ips: string[];
  /** PID of the node process on the host (refreshed at each start), for nsenter. */
  pid: number;
}

export interface LeaderInfo {
  id: string;
  term: bigint;
  endpoint: string;
  /** Milliseconds waited for it. */
  waitedMs: number;
}

export { freePorts };

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function findBinary(name: string): string {
  for (const dir of [...(process.env.PATH ?? '').split(':'), '/usr/sbin', '/sbin', '/usr/bin', '/bin']) {
    if (dir && existsSync(path.join(dir, name))) return path.join(dir, name);
  }
  throw new Error(`${name} not found (install util-linux / iptables: scripts/ensure-docker.sh does)`);
}

/** Runs a command, feeding `input` on stdin; rejects with its stderr when it exits non-zero. */
function run(cmd: string, args: string[], input = ''): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.once('error', reject);
    // A command that exits before reading all its input makes the write fail with EPIPE; its exit code,
    // handled below, is what tells whether it worked.
    child.stdin.on('error', () => undefined);
    child.once('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`${cmd} ${args.join(' ')} exited ${code}: ${err.trim()}`))));
    child.stdin.end(input);
  });
}

/** Docker's multiplexed log stream (8-byte frame headers, no TTY) to plain text. */
function demuxLogs(buf: Buffer): string {
  const parts: Buffer[] = [];
  let i = 0;
  while (i + 8 <= buf.length) {
    const type = buf[i];
    const size = buf.readUInt32BE(i + 4);
    if (type > 2 || buf[i + 1] !== 0 || buf[i + 2] !== 0 || buf[i + 3] !== 0) return buf.toString('utf8'); // not multiplexed
    parts.push(buf.subarray(i + 8, i + 8 + size));
    i += 8 + size;
  }
  return Buffer.concat(parts).toString('utf8');
}

function countOccurrences(text: string, needle: string): number {
  let n = 0;
  for (let i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + needle.length)) n++;
  return n;
}

/** A node's config file: its listeners inside the container, the certificates at /certs, the data at /data. */
function writeNodeConfig(file: string, id: string, members: Record<string, { client: string; peer: string }>, extra: object): void {
  const config = {
    id,
    listen: `0.0.0.0:${NODE_PORT}`,
    peerListen: `0.0.0.0:${PEER_PORT}`,
    members,
    tls: { ca: '/certs/ca.pem', cert: `/certs/${id}.pem`, key: `/certs/${id}-key.pem` },
    dataDir: '/data',
    ...extra,
  };
  writeFileSync(file, JSON.stringify(config, null, 2));
}

/**
 * A container image node with the project mounted: on the cluster network only (alias = node id), its port
 * published on 127.0.0.1 at a fixed host port. (GenericContainer's own withNetworkAliases would also leave
 * the container on the default bridge, and withExposedPorts binds every interface.)
 */
class NodeContainer extends GenericContainer {
  constructor(image: string, network: string, alias: string, hostPort: number) {
    super(image);
    this.withNetworkMode(network).withExposedPorts(NODE_PORT);
    this.hostConfig.PortBindings = { [`${NODE_PORT}/tcp`]: [{ HostIp: '127.0.0.1', HostPort: String(hostPort) }] };
    this.createOpts.NetworkingConfig = { EndpointsConfig: { [network]: { Aliases: [alias] } } };
  }
}

export class ContainerCluster implements ClusterControl {
  readonly nodes: ChaosNode[];
  /** Pairs from>to whose packets are dropped now. */
  private readonly blocked = new Set<string>();
  private readonly clients: FenceLockClient[] = [];
  private readonly statusClient: FenceLockClient;
  private stopped = false;
  private networkCreated = false;
  /** Milliseconds from start() call until every node had logged "fencelock node started". */
  startMs = 0;

  private constructor(
    readonly networkName: string,
    readonly dir: string,
    nodes: ChaosNode[],
    private readonly docker: Dockerode,
    private readonly opts: Required<Pick<ContainerClusterOptions, 'image' | 'startupTimeoutMs'>>,
    /** What every node's config shares (a node that joins later gets the same). */
    private readonly shared: { clusterId: string; knobs: object },
  ) {
    this.nodes = nodes;
    this.statusClient = this.newClient({ requestTimeoutMs: 500, totalTimeoutMs: 2_000 });
  }

  static async start(opts: ContainerClusterOptions = {}): Promise<ContainerCluster> {
    const t0 = Date.now();
    const size = opts.size ?? 3;
    const image = opts.image ?? DEFAULT_IMAGE;
    const main = path.join(PROJECT_ROOT, 'dist/src/node/main.js');
    if (!existsSync(main)) throw new Error(`${main} is missing: run \`npx tsc -p tsconfig.json\` first`);
    const docker = (await getContainerRuntimeClient()).container.dockerode;
    await docker
      .getImage(image)
      .inspect()
      .catch(() => {
        throw new Error(`image ${image} is missing: run scripts/build-image.sh (no registry to pull from)`);
      });

    const networkName = `raft-${randomBytes(4).toString('hex')}`;
    const dir = mkdtempSync(path.join(os.tmpdir(), TEMP_PREFIX));
    const ids = Array.from({ length: size }, (_, i) => `n${i + 1}`);
    const spares = opts.spares ?? [];
    // Spares' ports below the ephemeral range (stablePorts): nothing takes them before the spare starts.
    const ports = [...(await freePorts(size)), ...(await stablePorts(spares.length))];
    // Clients reach a node at its fixed host port; peers dial each other by network alias.
    const members = Object.fromEntries(ids.map((id, i) => [id, { client: `127.0.0.1:${ports[i]}`, peer: `${id}:${PEER_PORT}` }]));
    const certs = path.join(dir, 'certs');
    await generateDevCerts(certs, { nodes: ids, client: 'chaos' });
    // Clients in this test process (and the processes it starts) verify the nodes against this CA.
    process.env.FENCELOCK_CACERT = path.join(certs, 'ca.pem');
    process.env.FENCELOCK_CERT = path.join(certs, 'client.pem');
    process.env.FENCELOCK_KEY = path.join(certs, 'client-key.pem');
    // Every node config says whether auth is on: a node without the section refuses to start.
    const auth = opts.authAdmin === undefined ? { enabled: false } : { enabled: true, admin: opts.authAdmin };
    const knobs = { ...nodeKnobs(opts), auth };
    const nodes: ChaosNode[] = [...ids, ...spares].map((id, i) => {
      const dataDir = path.join(dir, 'data', id);
      mkdirSync(dataDir, { recursive: true });
      const configFile = path.join(dir, 'config', `${id}.json`);
      mkdirSync(path.dirname(configFile), { recursive: true });
      if (i < size) writeNodeConfig(configFile, id, members, knobs);
      return {
        id,
        hostPort: ports[i]!,
        endpoint: `127.0.0.1:${ports[i]}`,
        containerName: `${networkName}-${id}`,
        dataDir,
        configFile,
        containerId: '',
        state: i < size ? 'down' : 'new',
        ips: [],
        pid: 0,
      };
    });

    const shared = { clusterId: deriveClusterId(members), knobs };
    const cluster = new ContainerCluster(networkName, dir, nodes, docker, { image, startupTimeoutMs: opts.startupTimeoutMs ?? 30_000 }, shared);
    try {
      await docker.createNetwork({ Name: networkName, Driver: 'bridge', CheckDuplicate: true, Labels: cluster.labels() });
      cluster.networkCreated = true;
      await Promise.all(nodes.filter((n) => n.state === 'down').map((n) => cluster.create(n)));
    } catch (err) {
      await cluster.destroy().catch(() => undefined);
      throw err;
    }
    cluster.startMs = Date.now() - t0;
    return cluster;
  }

  /**
   * Starts spare `id` as a new machine joining the cluster (after `member add` made it a learner): its own
   * certificate from the cluster's CA, an empty data folder, a config with `join: true` that names the
   * current `members`; resolves once it logged "fencelock node started".
   */
  async join(id: string, members: string[]): Promise<void> {
    const n = this.node(id);
    if (n.state !== 'new') throw new Error(`cannot join ${id}: it is ${n.state}, not a spare`);
    issueNodeCertificate(path.join(this.dir, 'certs'), id);
    const addresses = Object.fromEntries([...members, id].map((m) => [m, { client: this.node(m).endpoint, peer: `${m}:${PEER_PORT}` }]));
    writeNodeConfig(n.configFile, id, addresses, { ...this.shared.knobs, clusterId: this.shared.clusterId, join: true });
    await this.create(n);
    await this.applyRules();
  }

  /**
   * Marks `id` out of the configuration: never restarted (startAll), its rules no longer written. Waits up
   * to `exitWithinMs` for its process to exit by itself (a removed node stops, exit 0) and returns the exit
   * code, or undefined when it still runs (it is then left alone until destroy()).
   */
  async markRemoved(id: string, exitWithinMs: number): Promise<number | undefined> {
    const n = this.node(id);
    const c = this.container(id);
    if (n.state === 'paused') await c.unpause();
    n.state = 'removed';
    const t0 = Date.now();
    for (;;) {
      const info = await c.inspect();
      if (!info.State.Running) return info.State.ExitCode;
      if (Date.now() - t0 > exitWithinMs) return undefined;
      await sleep(100);
    }
  }

  private labels(): Record<string, string> {
    return {
      [LABEL_TESTCONTAINERS]: 'true',
      [LABEL_CHAOS_PID]: String(process.pid),
      [LABEL_CHAOS_DIR]: this.dir,
      [LABEL_CHAOS_CLUSTER]: this.networkName,
    };
  }

  private async create(n: ChaosNode): Promise<void> {
    const uid = process.getuid?.() ?? 0;
    const gid = process.getgid?.() ?? 0;
    const ro = (p: string): { source: string; target: string; mode: 'ro' } => ({ source: path.join(PROJECT_ROOT, p), target: `/app/${p}`, mode: 'ro' });
    const started = await new NodeContainer(this.opts.image, this.networkName, n.id, n.hostPort)
      .withName(n.containerName)
      .withLabels(this.labels())
      .withUser(`${uid}:${gid}`)
      .withBindMounts([
        ro('dist'),
        ro('node_modules'),
        ro('proto'),
        ro('package.json'),
        { source: n.configFile, target: '/config/node.json', mode: 'ro' },
        { source: path.join(this.dir, 'certs'), target: '/certs', mode: 'ro' },
        { source: n.dataDir, target: '/data', mode: 'rw' },
      ])
      .withCommand(['/app/dist/src/node/main.js', '--config', '/config/node.json'])
      .withWaitStrategy(Wait.forLogMessage(STARTED_MESSAGE))
      .withStartupTimeout(this.opts.startupTimeoutMs)
      .start();
    n.containerId = started.getId();
    await this.refresh(n);
    n.state = 'running';
  }

  private container(id: string): Dockerode.Container {
    const n = this.node(id);
    if (!n.containerId) throw new Error(`node ${id} has no container`);
    return this.docker.getContainer(n.containerId);
  }

  /** Re-reads the node's process id and addresses (both change with each start). */
  private async refresh(n: ChaosNode): Promise<void> {
    const info = await this.docker.getContainer(n.containerId).inspect();
    n.pid = info.State.Pid;
    n.ips = Object.values(info.NetworkSettings.Networks ?? {})
      .map((e) => e.IPAddress)
      .filter((ip) => !!ip);
  }

  // ----- lookup -----

  get ids(): string[] {
    return this.nodes.map((n) => n.id);
  }

  get endpoints(): string[] {
    return this.nodes.map((n) => n.endpoint);
  }

  node(id: string): ChaosNode {
    const n = this.nodes.find((x) => x.id === id);
    if (!n) throw new Error(`no node ${id} (have ${this.ids.join(', ')})`);
    return n;
  }

  /** Which node has this endpoint (leader hints are endpoints). */
  nodeByEndpoint(endpoint: string): ChaosNode {
    const n = this.nodes.find((x) => x.endpoint === endpoint);
    if (!n) throw new Error(`no node at ${endpoint}`);
    return n;
  }

  // ----- clients and status -----

  /** A client of this cluster, closed by destroy(). */
  newClient(opts: Partial<FenceLockClientOptions> = {}): FenceLockClient {
    const c = new FenceLockClient({ endpoints: this.endpoints, ...opts });
    this.clients.push(c);
    return c;
  }

  /** Cluster.Status of one node through its host port (one attempt, 500 ms). */
  status(id: string): Promise<NodeStatus> {
    return this.statusClient.status(this.node(id).endpoint);
  }

  /** Status of the given nodes (default: all running or paused); unreachable ones are left out. */
  async statuses(ids: string[] = this.nodes.filter((n) => n.state === 'running' || n.state === 'paused').map((n) => n.id)): Promise<Map<string, NodeStatus>> {
    const rows = await Promise.all(ids.map((id) => this.status(id).then((s) => [id, s] as const, () => undefined)));
    return new Map(rows.filter((r): r is readonly [string, NodeStatus] => r !== undefined));
  }

  /**
   * Waits until one of `among` (default: every node not down) says it is leader at a term >= minTerm, and is
   * the only one claiming leadership at the highest term seen among them.
   */
  async waitForLeader(opts: { among?: string[]; minTerm?: bigint; timeoutMs?: number } = {}): Promise<LeaderInfo> {
    const t0 = Date.now();
    const timeoutMs = opts.timeoutMs ?? 20_000;
    let last = '';
    for (;;) {
      const among = opts.among ?? this.nodes.filter((n) => n.state === 'running').map((n) => n.id);
      const st = await this.statuses(among);
      const leaders = [...st.values()].filter((s) => s.role === 'leader' && s.term >= (opts.minTerm ?? 0n));
      const maxTerm = [...st.values()].reduce((m, s) => (s.term > m ? s.term : m), 0n);
      const top = leaders.filter((s) => s.term === maxTerm);
      if (top.length === 1) return { id: top[0].id, term: top[0].term, endpoint: this.node(top[0].id).endpoint, waitedMs: Date.now() - t0 };
      last = [...st.values()].map((s) => `${s.id}:${s.role}@${s.term}`).join(' ');
      if (Date.now() - t0 > timeoutMs) throw new Error(`no single leader among ${among.join(',')} after ${timeoutMs} ms (last: ${last || 'no answers'})`);
      await sleep(50);
    }
  }

  /** Polls fn until it returns true (or a truthy value); throws after timeoutMs. Returns the waited ms. */
  async waitUntil(what: string, fn: () => Promise<boolean> | boolean, timeoutMs = 20_000, everyMs = 50): Promise<number> {
    const t0 = Date.now();
    for (;;) {
      let ok = false;
      try {
        ok = await fn();
      } catch {
        ok = false;
      }
      if (ok) return Date.now() - t0;
      if (Date.now() - t0 > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for: ${what}`);
      await sleep(everyMs);
    }
  }

  // ----- network faults (iptables in each container's namespace) -----

  /** Drops the packets of each link (adds to the current faults); one rewrite of the rules for them all. */
  async cut(links: readonly Link[]): Promise<void> {
    if (links.length === 0) return;
    for (const l of links) {
      this.node(l.from); // throws on an unknown id
      this.node(l.to);
    }
    for (const l of links) this.blocked.add(linkKey(l));
    await this.applyRules();
  }

  /** Stops dropping the links named, or removes every network fault when none are named. */
  async heal(links?: readonly Link[]): Promise<void> {
    if (links?.length === 0) return;
    if (links) for (const l of links) this.blocked.delete(linkKey(l));
    else this.blocked.clear();
    await this.applyRules();
  }

  /** The directed pairs dropped now, as "from>to". */
  faults(): string[] {
    return [...this.blocked].sort();
  }

  /** One nsenter per node whose container runs (running or paused; a removed one may have exited). */
  private async applyRules(): Promise<void> {
    await Promise.all(this.nodes.filter((n) => n.state === 'running' || n.state === 'paused').map((n) => this.applyRulesOn(n)));
  }

  /** Rewrites the filter table inside the node's namespace (Docker keeps only nat rules, for its DNS, there). */
  private async applyRulesOn(n: ChaosNode): Promise<void> {
    const lines = ['*filter', ':INPUT ACCEPT [0:0]', ':FORWARD ACCEPT [0:0]', ':OUTPUT ACCEPT [0:0]'];
    for (const other of this.nodes) {
      if (other === n) continue;
      if (this.blocked.has(linkKey({ from: other.id, to: n.id }))) for (const ip of other.ips) lines.push(`-A INPUT -s ${ip}/32 -j DROP`);
      if (this.blocked.has(linkKey({ from: n.id, to: other.id }))) for (const ip of other.ips) lines.push(`-A OUTPUT -d ${ip}/32 -j DROP`);
    }
    lines.push('COMMIT', '');
    await run(findBinary('nsenter'), ['-t', String(n.pid), '-n', findBinary('iptables-restore')], lines.join('\n'));
  }

  /** The filter rules inside a node's namespace (iptables -S), for debugging and tests. */
  async rules(id: string): Promise<string> {
    return run(findBinary('nsenter'), ['-t', String(this.node(id).pid), '-n', findBinary('iptables'), '-S']);
  }

  // ----- process faults -----

  /** Freezes every process of the node (like a long GC pause or a stopped VM). */
  async pause(id: string): Promise<void> {
    const n = this.node(id);
    if (n.state !== 'running') throw new Error(`cannot pause ${id}: it is ${n.state}`);
    await this.container(id).pause();
    n.state = 'paused';
  }

  async resume(id: string): Promise<void> {
    const n = this.node(id);
    if (n.state !== 'paused') throw new Error(`cannot resume ${id}: it is ${n.state}`);
    await this.container(id).unpause();
    n.state = 'running';
  }

  /** SIGKILL to the node process: it dies at once with whatever it had not synced. Data dir and port stay. */
  async kill(id: string): Promise<void> {
    const n = this.node(id);
    if (n.state !== 'running' && n.state !== 'paused') return;
    const c = this.container(id);
    if (n.state === 'paused') await c.unpause();
    await c.kill({ signal: 'SIGKILL' }).catch((err: { statusCode?: number }) => {
      if (err.statusCode !== 409) throw err; // 409: already not running
    });
    await c.wait({ condition: 'not-running' });
    n.state = 'down';
  }

  /** SIGTERM and wait (graceful shutdown: leadership transfer, flush); SIGKILL after timeoutS. */
  async stop(id: string, timeoutS = 10): Promise<void> {
    const n = this.node(id);
    if (n.state !== 'running' && n.state !== 'paused') return;
    const c = this.container(id);
    if (n.state === 'paused') await c.unpause();
    await c.stop({ t: timeoutS }).catch((err: { statusCode?: number }) => {
      if (err.statusCode !== 304) throw err; // 304: already stopped
    });
    n.state = 'down';
  }

  /**
   * Starts a killed or stopped node again: same container, same data folder, same host port. The current
   * network faults are applied to it (and to the others, as its address may have changed) before it logs
   * "fencelock node started"; resolves once it has.
   */
  async start(id: string): Promise<void> {
    const n = this.node(id);
    if (n.state !== 'down') throw new Error(`cannot start ${id}: it is ${n.state}`);
    const c = this.container(id);
    // Count the start message in the logs since a second ago (bounded, however long the container has run).
    const since = Math.floor(Date.now() / 1000) - 1;
    const before = countOccurrences(await this.logs(id, since), STARTED_MESSAGE);
    await c.start();
    await this.refresh(n);
    n.state = 'running';
    await this.applyRules();
    const t0 = Date.now();
    for (;;) {
      if (countOccurrences(await this.logs(id, since), STARTED_MESSAGE) > before) return;
      const info = await c.inspect();
      if (!info.State.Running) {
        n.state = 'down';
        throw new Error(`node ${id} exited (code ${info.State.ExitCode}) while starting; last logs:\n${await this.tail(id, 20)}`);
      }
      if (Date.now() - t0 > this.opts.startupTimeoutMs) throw new Error(`node ${id} did not log "${STARTED_MESSAGE}" within ${this.opts.startupTimeoutMs} ms`);
      await sleep(50);
    }
  }

  async killAll(): Promise<void> {
    await Promise.all(this.ids.map((id) => this.kill(id)));
  }

  /** Starts every node that is down. */
  async startAll(): Promise<void> {
    await Promise.all(this.nodes.filter((n) => n.state === 'down').map((n) => this.start(n.id)));
  }

  // ----- logs -----

  /** What the node's container wrote (stdout and stderr, all incarnations; since: UNIX seconds). */
  async logs(id: string, since = 0): Promise<string> {
    const raw = (await this.container(id).logs({ stdout: true, stderr: true, follow: false, since })) as unknown as Buffer;
    return demuxLogs(Buffer.isBuffer(raw) ? raw : Buffer.from(String(raw)));
  }

  async tail(id: string, lines = 30): Promise<string> {
    return (await this.logs(id)).trimEnd().split('\n').slice(-lines).join('\n');
  }

  /** Writes every node's log to <dir>/logs/<id>.log (default dir: the cluster's temp folder). */
  async dumpLogs(dir = path.join(this.dir, 'logs')): Promise<string> {
    mkdirSync(dir, { recursive: true });
    await Promise.all(
      this.nodes
        .filter((n) => n.containerId)
        .map(async (n) => writeFileSync(path.join(dir, `${n.id}.log`), await this.logs(n.id).catch((e: Error) => `cannot read logs: ${e.message}\n`))),
    );
    return dir;
  }

  // ----- teardown -----

  /**
   * Closes the clients, removes every container labelled with this cluster (paused, dead or half-started
   * ones too) and the network, and deletes the temp folder (kept, with the logs, when KEEP_TEST_DATA is
   * set). Safe to call twice.
   */
  async destroy(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    await Promise.allSettled(this.clients.map((c) => c.close()));
    const keep = !!process.env.KEEP_TEST_DATA;
    if (keep) await this.dumpLogs().catch(() => undefined);
    const errors: string[] = [];
    const list = await this.docker.listContainers({ all: true, filters: { label: [`${LABEL_CHAOS_CLUSTER}=${this.networkName}`] } });
    await Promise.all(
      list.map(async (info) => {
        const c = this.docker.getContainer(info.Id);
        if (info.State === 'paused') await c.unpause().catch(() => undefined);
        await c.remove({ force: true, v: true }).catch((err: Error) => errors.push(`container ${info.Names[0]}: ${err.message}`));
      }),
    );
    for (const n of this.nodes) n.state = 'down';
    if (this.networkCreated) {
      await this.docker
        .getNetwork(this.networkName)
        .remove()
        .catch((err: { statusCode?: number; message: string }) => {
          if (err.statusCode !== 404) errors.push(`network ${this.networkName}: ${err.message}`);
        });
    }
    if (keep) process.stderr.write(`chaos: kept ${this.dir} (KEEP_TEST_DATA)\n`);
    else rmSync(this.dir, { recursive: true, force: true });
    if (errors.length > 0) throw new Error(`ContainerCluster.stop: ${errors.join('; ')}`);
  }
}

// Real node processes on 127.0.0.1 for integration tests: each node is `node dist/src/node/main.js`
// with its own config and data directory under a temp folder; the harness kills everything it started.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdtempSync, readFileSync, rmSync, writeFileSync, type WriteStream } from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { protoRoot } from '../../src/codec/protoPath';
import { generateDevCerts, issueNodeCertificate } from '../../src/certs/generate';
import { withoutIpServerName } from '../../src/client/ipServerName';
import { deriveClusterId } from '../../src/node/config';
import type { ClusterControl, CutOptions, Link } from '../support/clusterControl';
import { nodeKnobs, type NodeKnobs } from '../support/nodeKnobs';
import { FaultProxy } from './faultProxy';

// The repository root (proto/ sits in it), whether this runs from test/ or from dist/test/.
const ROOT = path.dirname(protoRoot());
export const NODE_MAIN = path.join(ROOT, 'dist/src/node/main.js');
/** The repository root (for other compiled entry points under dist/). */
export const PROJECT_ROOT = ROOT;

export interface NodeHandle {
  id: string;
  /** The client listener. */
  address: string;
  /** The peer listener (RaftPeer, mutual TLS). */
  peerAddress: string;
  /** The Prometheus listener (plain HTTP), with `metrics: true`. */
  metricsAddress?: string;
  configFile: string;
  process?: ChildProcess;
  paused: boolean;
}

export async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<net.Server>((resolve, reject) => {
          const s = net.createServer();
          s.once('error', reject);
          s.listen(0, '127.0.0.1', () => resolve(s));
        }),
    ),
  );
  const ports = servers.map((s) => (s.address() as net.AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}

/**
 * Free ports BELOW the kernel's ephemeral range (net.ipv4.ip_local_port_range), bound together so they are
 * distinct. An outgoing connection takes its local port from the ephemeral range, so none can sit on such a
 * port while the node that owns it is down: a killed node always gets its port back on restart (with
 * freePorts, a client or proxy connection made meanwhile can take it, and the restart fails EADDRINUSE).
 */
export async function stablePorts(count: number): Promise<number[]> {
  let low = 32_768;
  try {
    low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || low;
  } catch {
    /* not Linux: assume the IANA range */
  }
  const min = 10_000;
  const max = Math.max(min + 1_000, low - 1);
  const held: net.Server[] = [];
  const tried = new Set<number>();
  try {
    while (held.length < count) {
      if (tried.size > 5_000) throw new Error(`stablePorts: found only ${held.length} of ${count} free ports in ${min}..${max}`);
      const port = min + Math.floor(Math.random() * (max - min));
      if (tried.has(port)) continue;
      tried.add(port);
      const s = net.createServer();
      const ok = await new Promise<boolean>((resolve) => {
        s.once('error', () => resolve(false));
        s.listen(port, '127.0.0.1', () => resolve(true));
      });
      if (ok) held.push(s);
    }
    return held.map((s) => (s.address() as net.AddressInfo).port);
  } finally {
    await Promise.all(held.map((s) => new Promise((r) => s.close(r))));
  }
}

/** Node knobs left unset take the node's defaults (CONFIG_DEFAULTS). */
export interface ClusterOptions extends Partial<NodeKnobs> {
  size?: number;
  /**
   * Put a fault-injecting proxy (faultProxy.ts) on every directed peer link: node A dials peer B through
   * its own proxy P(A->B) (`peerAddresses` in A's config), while `members` (what clients use) stays the
   * nodes' real addresses. Then cut(), heal() and link(from, to) work.
   * Implies stablePorts.
   */
  proxies?: boolean;
  /** Listen ports (and proxy ports) from stablePorts() rather than freePorts(). */
  stablePorts?: boolean;
  /**
   * TLS on both listeners (the default), with certificates made for this cluster in `<dir>/certs`. The
   * harness points FENCELOCK_CACERT/CERT/KEY of this test process (and so of the processes it starts) at them.
   * false: `insecure: true` (plaintext on loopback).
   */
  tls?: boolean;
  /** Require client certificates on the client listener. */
  clientCertAuth?: boolean;
  /** Auth on (docs/auth.md), with this admin (the harness's client certificate is `test`); absent: `{ "enabled": false }`. */
  authAdmin?: string;
  /** A metrics listener (`metricsListen`) on every node, at NodeHandle.metricsAddress. */
  metrics?: boolean;
}

/** The auth section of every node's config: a config always says whether auth is on (docs/auth.md). */
function authOf(opts: ClusterOptions): { enabled: boolean; admin?: string } {
  return opts.authAdmin === undefined ? { enabled: false } : { enabled: true, admin: opts.authAdmin };
}

// A test that dies before its cleanup must not leave node processes behind.
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export class LocalCluster implements ClusterControl {
  readonly dir: string;
  /** Where this cluster's CA, node and client certificates are (with TLS on). */
  certsDir: string | undefined;
  readonly nodes: NodeHandle[] = [];
  private readonly logs: WriteStream;
  /** Proxies by "from->to" (only with `proxies: true`). */
  private readonly proxies = new Map<string, FaultProxy>();
  /** What every node's config shares, for nodes added later (addNode). */
  private shared: { clusterId: string; security: object | ((id: string) => object); knobs: object } | undefined;

  private constructor(dir: string) {
    this.dir = dir;
    this.logs = createWriteStream(path.join(dir, 'cluster.log'));
  }

  static async create(opts: ClusterOptions = {}): Promise<LocalCluster> {
    const size = opts.size ?? 3;
    const dir = mkdtempSync(path.join(os.tmpdir(), 'fencelock-it-'));
    const cluster = new LocalCluster(dir);
    const links = opts.proxies ? size * (size - 1) : 0;
    const metricsPorts = opts.metrics ? size : 0;
    const all = opts.proxies || opts.stablePorts ? await stablePorts(2 * size + metricsPorts + links) : await freePorts(2 * size + metricsPorts);
    const ports = all.slice(0, size);
    const peerPorts = all.slice(size, 2 * size);
    const metricsAddresses = all.slice(2 * size, 2 * size + metricsPorts).map((p) => `127.0.0.1:${p}`);
    const proxyPorts = all.slice(2 * size + metricsPorts);
    const members = Object.fromEntries(ports.map((p, i) => [`n${i + 1}`, { client: `127.0.0.1:${p}`, peer: `127.0.0.1:${peerPorts[i]}` }]));
    if (opts.proxies) {
      for (const from of Object.keys(members)) {
        for (const [to, target] of Object.entries(members)) {
          if (from === to) continue;
          cluster.proxies.set(`${from}->${to}`, await FaultProxy.start({ name: `${from}->${to}`, target: target.peer, port: proxyPorts.shift()! }));
        }
      }
    }
    const security = opts.tls === false ? { insecure: true } : await cluster.makeCertificates(Object.keys(members), opts.clientCertAuth ?? false);
    for (const [i, [id, addresses]] of Object.entries(members).entries()) {
      const configFile = path.join(dir, `${id}.json`);
      const metricsAddress = metricsAddresses[i];
      const config = {
        id,
        listen: addresses.client,
        peerListen: addresses.peer,
        ...(metricsAddress === undefined ? {} : { metricsListen: metricsAddress }),
        members,
        ...(typeof security === 'function' ? security(id) : security),
        dataDir: path.join(dir, 'data', id),
        ...nodeKnobs(opts),
        auth: authOf(opts),
        ...(opts.proxies ? { peerAddresses: cluster.peerAddressesOf(id, Object.keys(members)) } : {}),
      };
      writeFileSync(configFile, JSON.stringify(config, null, 2));
      cluster.nodes.push({ id, address: addresses.client, peerAddress: addresses.peer, metricsAddress, configFile, paused: false });
    }
    const knobs = { ...nodeKnobs(opts), auth: authOf(opts) };
    cluster.shared = { clusterId: deriveClusterId(members), security, knobs };
    return cluster;
  }

  /**
   * A new node for `fencelock member add`: ports, a certificate from this cluster's CA, and a config that
   * joins (`join: true`, the cluster's id, the current members and itself). Not started, not yet a member.
   * Its ports come from stablePorts: it may be made long before it starts (so that clients know its
   * address), and nothing must take them meanwhile.
   */
  async addNode(id: string): Promise<NodeHandle> {
    if (!this.shared) throw new Error('addNode: cluster not created');
    if (this.nodes.some((n) => n.id === id)) throw new Error(`addNode: ${id} exists`);
    const [client, peer] = (await stablePorts(2)).map((p) => `127.0.0.1:${p}`);
    if (this.certsDir) issueNodeCertificate(this.certsDir, id);
    const security = typeof this.shared.security === 'function' ? this.shared.security(id) : this.shared.security;
    const members = Object.fromEntries([...this.nodes.map((n) => [n.id, { client: n.address, peer: n.peerAddress }]), [id, { client, peer }]]);
    const configFile = path.join(this.dir, `${id}.json`);
    const config = { id, listen: client, peerListen: peer, members, clusterId: this.shared.clusterId, join: true, ...security, dataDir: path.join(this.dir, 'data', id), ...this.shared.knobs };
    writeFileSync(configFile, JSON.stringify(config, null, 2));
    const handle: NodeHandle = { id, address: client!, peerAddress: peer!, configFile, paused: false };
    this.nodes.push(handle);
    return handle;
  }

  /** Makes this cluster's certificates; returns each node's TLS config. Clients of this process use them. */
  private async makeCertificates(ids: string[], clientCertAuth: boolean): Promise<(id: string) => object> {
    const certs = path.join(this.dir, 'certs');
    await generateDevCerts(certs, { nodes: ids, client: 'test' });
    this.certsDir = certs;
    process.env.FENCELOCK_CACERT = path.join(certs, 'ca.pem');
    process.env.FENCELOCK_CERT = path.join(certs, 'client.pem');
    process.env.FENCELOCK_KEY = path.join(certs, 'client-key.pem');
    delete process.env.FENCELOCK_INSECURE;
    return (id) => ({
      tls: { ca: path.join(certs, 'ca.pem'), cert: path.join(certs, `${id}.pem`), key: path.join(certs, `${id}-key.pem`) },
      clientCertAuth,
    });
  }

  private peerAddressesOf(id: string, ids: string[]): Record<string, string> {
    return Object.fromEntries(ids.filter((to) => to !== id).map((to) => [to, this.link(id, to).address]));
  }

  /** True when the cluster was created with `proxies: true`. */
  get hasProxies(): boolean {
    return this.proxies.size > 0;
  }

  /** The proxy of the directed peer link from -> to (the stream `from` opens to send to `to`). */
  link(from: string, to: string): FaultProxy {
    const p = this.proxies.get(`${from}->${to}`);
    if (!p) throw new Error(`no proxy for ${from}->${to} (create the cluster with proxies: true)`);
    return p;
  }

  /** Every proxy. */
  links(): FaultProxy[] {
    return [...this.proxies.values()];
  }

  /** Cuts each link's proxy (see faultProxy.ts for `existing`). */
  cut(links: readonly Link[], opts: CutOptions = {}): void {
    for (const l of links) this.link(l.from, l.to).cut(opts);
  }

  /** Heals the links named (their delays stay), or with none every link and every delay. */
  heal(links?: readonly Link[]): void {
    if (links) {
      for (const l of links) this.link(l.from, l.to).heal();
      return;
    }
    for (const p of this.proxies.values()) {
      p.heal();
      p.delay(0);
    }
  }

  get ids(): string[] {
    return this.nodes.map((n) => n.id);
  }

  get endpoints(): string[] {
    return this.nodes.map((n) => n.address);
  }

  node(id: string): NodeHandle {
    const n = this.nodes.find((x) => x.id === id);
    if (!n) throw new Error(`no node ${id}`);
    return n;
  }

  startAll(): void {
    for (const n of this.nodes) this.start(n.id);
  }

  start(id: string): void {
    const n = this.node(id);
    if (n.process && n.process.exitCode === null && n.process.signalCode === null) throw new Error(`${id} is running`);
    const child = spawn(process.execPath, [NODE_MAIN, '--config', n.configFile], { stdio: ['ignore', 'pipe', 'pipe'] });
    const prefix = (chunk: Buffer): void => {
      for (const line of chunk.toString().split('\n')) if (line) this.logs.write(`[${id}] ${line}\n`);
    };
    child.stdout!.on('data', prefix);
    child.stderr!.on('data', prefix);
    n.process = child;
    n.paused = false;
    running.add(child);
    child.once('exit', (code, signal) => {
      running.delete(child);
      // Why a node went away is the first question when a test finds it gone.
      this.logs.write(`[${id}] process exited: code ${code ?? '-'}, signal ${signal ?? '-'}\n`);
    });
  }

  isRunning(id: string): boolean {
    const p = this.node(id).process;
    return !!p && p.exitCode === null && p.signalCode === null;
  }

  /** SIGKILL: the process dies at once, with whatever it had not fsynced. */
  async kill(id: string): Promise<void> {
    await this.signalAndWait(id, 'SIGKILL');
  }

  /** SIGTERM: graceful shutdown (leadership transfer, flush). */
  async stop(id: string): Promise<void> {
    await this.signalAndWait(id, 'SIGTERM');
  }

  pause(id: string): void {
    this.node(id).process?.kill('SIGSTOP');
    this.node(id).paused = true;
  }

  resume(id: string): void {
    this.node(id).process?.kill('SIGCONT');
    this.node(id).paused = false;
  }

  private async signalAndWait(id: string, signal: NodeJS.Signals): Promise<void> {
    const n = this.node(id);
    const p = n.process;
    if (!p || p.exitCode !== null || p.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => p.once('exit', () => resolve()));
    if (n.paused && signal !== 'SIGKILL') p.kill('SIGCONT');
    p.kill(signal);
    await exited;
    n.paused = false;
  }

  /** Stops every process and removes the data, unless KEEP_TEST_DATA is set (for post-mortems). */
  async destroy(): Promise<void> {
    await Promise.all(this.nodes.map((n) => this.kill(n.id)));
    await Promise.all([...this.proxies.values()].map((p) => p.close()));
    await new Promise((r) => this.logs.end(r));
    if (!process.env.KEEP_TEST_DATA) rmSync(this.dir, { recursive: true, force: true });
  }
}

export async function eventually<T>(fn: () => Promise<T | undefined> | T | undefined, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastErr: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await fn();
      if (v !== undefined && v !== false) return v as T;
      lastErr = undefined;
    } catch (err) {
      lastErr = err;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastErr ? `: ${String(lastErr)}` : ''}`);
}

/** Runs `node ARGS` to its exit and collects its output; kills it and rejects after `timeoutMs`. */
export function runNode(
  args: string[],
  opts: { env?: Record<string, string>; cwd?: string; timeoutMs?: number } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const timeoutMs = opts.timeoutMs ?? 60_000;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: opts.cwd, env: { ...process.env, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`timed out: ${args.join(' ')}\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * Channel credentials for raw gRPC clients in tests: TLS against the CA the last TLS cluster of this process
 * made (with its client certificate), plaintext when there is none.
 */
export function testCredentials(): grpc.ChannelCredentials {
  const ca = process.env.FENCELOCK_CACERT;
  if (!ca || process.env.FENCELOCK_INSECURE === '1') return grpc.credentials.createInsecure();
  const cert = process.env.FENCELOCK_CERT;
  const key = process.env.FENCELOCK_KEY;
  return withoutIpServerName(grpc.credentials.createSsl(readFileSync(ca), key ? readFileSync(key) : null, cert ? readFileSync(cert) : null));
}

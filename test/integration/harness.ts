// Real node processes on 127.0.0.1 for integration tests: each node is `node dist/src/node/main.js`
// with its own config and data directory under a temp folder; the harness kills everything it started.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync, writeFileSync, type WriteStream } from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { protoRoot } from '../../src/codec/protoPath';

// The repository root (proto/ sits in it), whether this runs from test/ or from dist/test/.
const ROOT = path.dirname(protoRoot());
export const NODE_MAIN = path.join(ROOT, 'dist/src/node/main.js');

export interface NodeHandle {
  id: string;
  address: string;
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

export interface ClusterOptions {
  size?: number;
  tickMs?: number;
  electionTicks?: number;
  snapshotEveryEntries?: number;
  minSessionTtlMs?: number;
  logLevel?: string;
}

// A test that dies before its cleanup must not leave node processes behind.
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export class LocalCluster {
  readonly dir: string;
  readonly nodes: NodeHandle[] = [];
  private readonly logs: WriteStream;

  private constructor(dir: string) {
    this.dir = dir;
    this.logs = createWriteStream(path.join(dir, 'cluster.log'));
  }

  static async create(opts: ClusterOptions = {}): Promise<LocalCluster> {
    const size = opts.size ?? 3;
    const dir = mkdtempSync(path.join(os.tmpdir(), 'fencelock-it-'));
    const cluster = new LocalCluster(dir);
    const ports = await freePorts(size);
    const members = Object.fromEntries(ports.map((p, i) => [`n${i + 1}`, `127.0.0.1:${p}`]));
    for (const [id, address] of Object.entries(members)) {
      const configFile = path.join(dir, `${id}.json`);
      const config = {
        id,
        listen: address,
        members,
        dataDir: path.join(dir, 'data', id),
        tickMs: opts.tickMs ?? 50,
        electionTicks: opts.electionTicks ?? 10,
        heartbeatTicks: 2,
        snapshotEveryEntries: opts.snapshotEveryEntries ?? 20_000,
        minSessionTtlMs: opts.minSessionTtlMs ?? 3_000,
        logLevel: opts.logLevel ?? 'info',
      };
      writeFileSync(configFile, JSON.stringify(config, null, 2));
      cluster.nodes.push({ id, address, configFile, paused: false });
    }
    return cluster;
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
    child.once('exit', () => running.delete(child));
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

// The ZooKeeper side of the side-by-side benchmark: a local 3-server ensemble of Debian's ZooKeeper 3.8 (one
// JVM each, QuorumPeerMain), with its default durability (forceSync=yes: a transaction is fsynced before it is
// acknowledged), driven through node-zookeeper-client (./zookeeper/worker.ts). That client has no TLS, so
// ZooKeeper is measured in plaintext, its own default, under the name `zookeeper`.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Client } from 'node-zookeeper-client';
import { exited, freePort, logTail, ServerGuard, sleep, terminate } from './processes';
import type { BenchTarget, BenchWorker } from './target';
import { fourLetterWord, serverMode } from './zookeeper/fourLetterWord';
import { connect, ZookeeperWorker, ZNODE_ROOTS } from './zookeeper/worker';
import { mkdirp } from './zookeeper/znodes';

const SERVERS = 3;
const READY_TIMEOUT_MS = 60_000;
/** Debian's zookeeper package; its manifest's Class-Path names the other jars it needs. */
const ZOOKEEPER_JAR = '/usr/share/java/zookeeper.jar';
/** The server logs through SLF4J; without a binding it would log nothing, and a failed start would say nothing. */
const SLF4J_BINDING = '/usr/share/java/slf4j-simple.jar';
// Three JVMs next to the other clusters on a small machine: a modest heap (the benchmark's data is tiny).
const JVM_OPTS = ['-Xms64m', '-Xmx512m', '-Dorg.slf4j.simpleLogger.defaultLogLevel=warn', '-Dzookeeper.jmx.log4j.disable=true'];

/** The java binary and ZooKeeper's jar, or undefined when either is missing. */
export function zookeeperAvailable(): { java: string; jar: string } | undefined {
  const java = ['/usr/bin/java', ...(process.env.JAVA_HOME ? [path.join(process.env.JAVA_HOME, 'bin/java')] : [])].find((p) => existsSync(p));
  return java && existsSync(ZOOKEEPER_JAR) ? { java, jar: ZOOKEEPER_JAR } : undefined;
}

interface Server {
  id: number;
  clientPort: number;
  logFile: string;
  child: ChildProcess;
  spawnError?: Error;
}

/** zoo.cfg of server `id`: ZooKeeper's defaults, with everything this benchmark relies on written out. */
function zooCfg(dataDir: string, clientPort: number, quorum: Array<{ quorumPort: number; electionPort: number }>): string {
  return [
    'tickTime=2000',
    'initLimit=10',
    'syncLimit=5',
    `dataDir=${dataDir}`,
    `clientPort=${clientPort}`,
    'clientPortAddress=127.0.0.1',
    // The default, written explicitly: every transaction is fsynced to the log before it is acknowledged.
    'forceSync=yes',
    'admin.enableServer=false',
    '4lw.commands.whitelist=srvr,ruok',
    // One session per client, up to 64 clients, all from 127.0.0.1 (the default limit is 60 per address).
    'maxClientCnxns=0',
    ...quorum.map((q, i) => `server.${i + 1}=127.0.0.1:${q.quorumPort}:${q.electionPort}`),
  ].join('\n');
}

export interface ZookeeperTarget extends BenchTarget {
  /** host:port of the leader's client port, which every worker connects to. */
  readonly leaderAddress: string;
}

/** Starts a fresh local 3-server ZooKeeper ensemble and waits until all serve and a write succeeds. */
export async function startZookeeperEnsemble(opts: { dataRoot?: string } = {}): Promise<ZookeeperTarget> {
  const installed = zookeeperAvailable();
  if (!installed) throw new Error('ZooKeeper is not installed (bash scripts/ensure-zookeeper.sh, or apt-get install zookeeper)');
  const dir = mkdtempSync(path.join(opts.dataRoot ?? os.tmpdir(), 'fencelock-bench-zk-'));
  const ports: number[] = [];
  for (let i = 0; i < SERVERS * 3; i++) ports.push(await freePort());
  const quorum = Array.from({ length: SERVERS }, (_, i) => ({ quorumPort: ports[SERVERS + i], electionPort: ports[2 * SERVERS + i] }));
  const classPath = [installed.jar, ...(existsSync(SLF4J_BINDING) ? [SLF4J_BINDING] : [])].join(':');

  const guard = new ServerGuard(dir);
  const servers: Server[] = quorum.map((_, i) => {
    const id = i + 1;
    const dataDir = path.join(dir, `zk${id}`);
    mkdirSync(dataDir);
    writeFileSync(path.join(dataDir, 'myid'), `${id}\n`);
    const cfg = path.join(dir, `zoo${id}.cfg`);
    writeFileSync(cfg, zooCfg(dataDir, ports[i], quorum) + '\n');
    const logFile = path.join(dir, `zk${id}.log`);
    const fd = openSync(logFile, 'a');
    const args = [...JVM_OPTS, '-cp', classPath, 'org.apache.zookeeper.server.quorum.QuorumPeerMain', cfg];
    const child = spawn(installed.java, args, { stdio: ['ignore', fd, fd] });
    guard.watch(child);
    closeSync(fd); // the child holds its own copy of the descriptor
    const server: Server = { id, clientPort: ports[i], logFile, child };
    child.on('error', (err) => (server.spawnError = err)); // reported by waitReady instead of crashing the process
    return server;
  });

  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    // A JVM's shutdown takes longer than a node process's: more grace before SIGKILL.
    await terminate(servers.map((s) => s.child), 5_000);
    rmSync(dir, { recursive: true, force: true });
    await guard.release();
  };

  let leaderPort: number;
  try {
    leaderPort = await waitReady(servers);
  } catch (e) {
    const tails = servers.map((s) => `--- zk${s.id} (${s.logFile}) ---\n${logTail(s.logFile)}`).join('\n');
    await stop();
    throw new Error(`ZooKeeper ensemble did not become ready: ${(e as Error).message}\n${tails}`);
  }

  const leaderAddress = `127.0.0.1:${leaderPort}`;
  return {
    name: 'zookeeper',
    pids: servers.map((s) => s.child.pid!),
    leaderAddress,
    // Every worker talks to the leader, like etcd's: a follower would forward each write to it, an extra hop.
    newWorker: async (_index: number): Promise<BenchWorker> => ZookeeperWorker.open(leaderAddress),
    stop,
  };
}

/** The leader's `srvr` mode across the servers: the client port of the one leader, or undefined. */
async function findLeader(servers: Server[]): Promise<{ leaderPort?: number; modes: string[] }> {
  const modes = await Promise.all(servers.map((s) => fourLetterWord(s.clientPort, 'srvr').then(serverMode, (e: Error) => `unreachable (${e.message})`)));
  const leaders = servers.filter((_, i) => modes[i] === 'leader');
  const serving = modes.every((m) => m === 'leader' || m === 'follower');
  return { leaderPort: serving && leaders.length === 1 ? leaders[0].clientPort : undefined, modes: modes.map((m) => m ?? 'not serving') };
}

/** Waits until every server serves (one leader, two followers) and a client on the leader creates the roots. */
async function waitReady(servers: Server[]): Promise<number> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let last = 'no server answered yet';
  while (Date.now() < deadline) {
    const failed = servers.find((s) => s.spawnError);
    if (failed) throw new Error(`cannot start server zk${failed.id}: ${failed.spawnError!.message}`);
    const dead = servers.find((s) => exited(s.child));
    if (dead) throw new Error(`server zk${dead.id} exited (code ${dead.child.exitCode}, signal ${dead.child.signalCode})`);
    const { leaderPort, modes } = await findLeader(servers);
    last = `srvr modes: ${modes.map((m, i) => `zk${i + 1} ${m}`).join(', ')}`;
    if (leaderPort !== undefined) {
      let client: Client | undefined;
      try {
        client = await connect(`127.0.0.1:${leaderPort}`);
        for (const root of ZNODE_ROOTS) await mkdirp(client, root);
        return leaderPort;
      } catch (e) {
        last = `creating ${ZNODE_ROOTS.join(', ')} on the leader failed: ${(e as Error).message}`;
      } finally {
        client?.close();
      }
    }
    await sleep(200);
  }
  throw new Error(`timed out after ${READY_TIMEOUT_MS / 1000} s (${last})`);
}

// The local cluster on 127.0.0.1 (configs in cluster/, data under data/, which git ignores), TLS on with
// development certificates made in data/certs on first start.
//
//   npm run cluster                      all nodes in the foreground, prefixed logs, Ctrl-C stops them
//   npm run cluster -- start|stop|status background mode (pids and logs under data/run/)
//   npm run cluster -- pause|resume|kill|restart n2    one node, for experiments
//   add --five for the 5-node cluster (cluster/five/)
//
// Exit status: 0 done; 1 a node did not come up (its log's last lines are shown) or none answers status;
// 2 usage. FENCELOCK_CLUSTER_ROOT moves cluster/ and data/ elsewhere (the tests' own ports and folders).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { formatStatusTable } from '../src/cli/output';
import { ensureDevCerts } from '../src/certs/devCluster';
import { quietSniIpWarning } from '../src/node/processWarnings';
import { parseClusterArgs, USAGE, USAGE_EXIT } from './clusterArgs';
import { askStatus, processState, tailLog, waitServing, type ClusterMember } from './clusterHealth';

const PROJECT = path.resolve(__dirname, '../..');
const ROOT = process.env.FENCELOCK_CLUSTER_ROOT ? path.resolve(process.env.FENCELOCK_CLUSTER_ROOT) : PROJECT;
const NODE_MAIN = path.join(PROJECT, 'dist/src/node/main.js');
const CERTS = path.join(ROOT, 'data', 'certs');
/** How long `start` waits for every node to answer (and a leader), and how much of a failed node's log it shows. */
const START_TIMEOUT_MS = 30_000;
const LOG_TAIL_LINES = 10;

export function members(five: boolean): ClusterMember[] {
  const dir = path.join(ROOT, five ? 'cluster/five' : 'cluster');
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => /^node\d+\.json$/.test(f))
    .sort()
    .map((f) => {
      const configFile = path.join(dir, f);
      const cfg = JSON.parse(readFileSync(configFile, 'utf8')) as { id: string; listen: string };
      return { id: cfg.id, configFile, listen: cfg.listen };
    });
}

function runDir(five: boolean): string {
  const dir = path.join(ROOT, 'data', five ? 'run-five' : 'run');
  mkdirSync(dir, { recursive: true });
  return dir;
}

const COLORS = ['\x1b[36m', '\x1b[33m', '\x1b[35m', '\x1b[32m', '\x1b[34m'];

/** Turns a pino JSON line into a short human line. */
function pretty(line: string): string {
  try {
    const o = JSON.parse(line) as Record<string, unknown>;
    const { level, time, pid: _pid, hostname: _h, node: _n, msg, ...rest } = o;
    const lvl = ({ 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' } as Record<string, string>)[String(level)] ?? level;
    const extra = Object.entries(rest)
      .map(([k, v]) => `${k}=${typeof v === 'object' ? JSON.stringify(v) : String(v)}`)
      .join(' ');
    return `${new Date(Number(time)).toISOString().slice(11, 23)} ${lvl} ${String(msg)} ${extra}`;
  } catch {
    return line;
  }
}

export function spawnNode(m: ClusterMember, logFile?: string): ChildProcess {
  if (logFile) {
    const fd = openSync(logFile, 'a');
    return spawn(process.execPath, [NODE_MAIN, '--config', m.configFile], { stdio: ['ignore', fd, fd], detached: true });
  }
  // A process group of its own: Ctrl-C reaches this script only, which then stops the nodes in order (foreground()).
  return spawn(process.execPath, [NODE_MAIN, '--config', m.configFile], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
}

function foreground(five: boolean): void {
  const all = members(five);
  // Colours only for a person at a terminal: a file or a pipe gets plain text (and NO_COLOR is honoured).
  const colour = process.stdout.isTTY === true && !process.env.NO_COLOR;
  const children = all.map((m, i) => {
    const child = spawnNode(m);
    const prefix = colour ? `${COLORS[i % COLORS.length]}[${m.id}]\x1b[0m ` : `[${m.id}] `;
    const out = (chunk: Buffer): void => {
      for (const line of chunk.toString().split('\n')) if (line.trim()) process.stdout.write(prefix + pretty(line) + '\n');
    };
    child.stdout!.on('data', out);
    child.stderr!.on('data', out);
    child.on('exit', (code, signal) => process.stdout.write(`${prefix}exited (${signal ?? code})\n`));
    return child;
  });
  process.stdout.write(`cluster of ${all.length} on ${all.map((m) => m.listen).join(', ')}; Ctrl-C stops it\n`);
  let stopping = false;
  const exited = (c: ChildProcess): Promise<void> =>
    c.exitCode !== null || c.signalCode !== null ? Promise.resolve() : new Promise((resolve) => c.once('exit', () => resolve()));
  // As `stop` does: the followers first, then the leader, so that it hands leadership to nobody about to stop.
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    setTimeout(() => {
      for (const c of children) c.kill('SIGKILL');
      process.exit(0);
    }, 5_000).unref();
    void (async () => {
      const rows = await askStatus(all, CERTS).catch(() => []);
      const leader = rows.find((r) => r.ok && r.status.role === 'leader');
      const leaderId = leader?.ok ? leader.status.id : undefined;
      const followers = children.filter((_c, i) => all[i]!.id !== leaderId);
      for (const c of followers) c.kill('SIGTERM');
      await Promise.all(followers.map(exited));
      for (const c of children) c.kill('SIGTERM');
    })();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  // The nodes are not in this process group: never leave them behind.
  process.on('exit', () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  });
  let alive = children.length;
  for (const c of children) c.on('exit', () => --alive === 0 && process.exit(0));
}

function pidFile(five: boolean, id: string): string {
  return path.join(runDir(five), `${id}.pid`);
}

function readPid(five: boolean, id: string): number | undefined {
  const f = pidFile(five, id);
  if (!existsSync(f)) return undefined;
  const pid = Number(readFileSync(f, 'utf8'));
  try {
    process.kill(pid, 0);
    return pid;
  } catch {
    rmSync(f, { force: true });
    return undefined;
  }
}

function logFileOf(five: boolean, id: string): string {
  return path.join(runDir(five), `${id}.log`);
}

/** Starts the members not running yet, then waits until each answers; a node that dies is reported with its log. */
async function startBackground(five: boolean, only?: string): Promise<number> {
  const all = members(five);
  const exits = new Map<string, string>();
  const started: string[] = [];
  for (const m of all) {
    if (only && m.id !== only) continue;
    if (readPid(five, m.id)) {
      console.log(`${m.id} already running`);
      continue;
    }
    const child = spawnNode(m, logFileOf(five, m.id));
    child.on('exit', (code, signal) => exits.set(m.id, signal ? `killed by ${signal}` : `exited with code ${code}`));
    writeFileSync(pidFile(five, m.id), String(child.pid));
    child.unref();
    started.push(m.id);
  }
  if (started.length === 0) return 0;
  const needLeader = all.every((m) => started.includes(m.id) || readPid(five, m.id));
  const { failures, rows } = await waitServing(all, started, CERTS, (id) => exits.get(id), START_TIMEOUT_MS, needLeader);
  for (const id of started.filter((i) => !failures.some((f) => f.id === i))) {
    console.log(`${id} serving (pid ${readPid(five, id)}), log ${path.relative(ROOT, logFileOf(five, id))}`);
  }
  for (const f of failures) reportFailure(five, f.id, f.why);
  if (failures.length === 0 && rows.length > 0) process.stdout.write(formatStatusTable(rows));
  return failures.length === 0 ? 0 : 1;
}

function reportFailure(five: boolean, id: string, why: string): void {
  const log = logFileOf(five, id);
  console.error(`${id} did not start: ${why}; the last lines of ${path.relative(ROOT, log)}:`);
  for (const line of tailLog(log, LOG_TAIL_LINES)) console.error(`  ${pretty(line)}`);
}

/** How long a stopping node gets (a leader hands over first, then flushes and closes LevelDB). */
const STOP_TIMEOUT_MS = 15_000;

/** Sends `signal` to one node; false when it is not running, or did not exit within STOP_TIMEOUT_MS. */
async function signalNode(five: boolean, id: string, signal: NodeJS.Signals): Promise<boolean> {
  const pid = readPid(five, id);
  if (!pid) {
    console.log(`${id} is not running`);
    return signal === 'SIGTERM' || signal === 'SIGKILL';
  }
  if (signal !== 'SIGTERM' && signal !== 'SIGKILL') {
    process.kill(pid, signal);
    console.log(`${id} ${signal === 'SIGSTOP' ? 'paused' : 'resumed'}`);
    return true;
  }
  process.kill(pid, 'SIGCONT');
  process.kill(pid, signal);
  const deadline = Date.now() + STOP_TIMEOUT_MS;
  while (readPid(five, id) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  if (readPid(five, id)) {
    console.error(`${id} (pid ${pid}) is still running ${STOP_TIMEOUT_MS / 1000} s after ${signal}`);
    return false;
  }
  console.log(`${id} stopped`);
  return true;
}

/**
 * Stops the followers together, then the leader: a leader stopped first would hand leadership to a node
 * that is itself about to stop. The followers' clean goodbyes tell the leader nobody can take over.
 */
async function stopAll(five: boolean): Promise<number> {
  const all = members(five).filter((m) => readPid(five, m.id));
  if (all.length === 0) {
    console.log('no node is running');
    return 0;
  }
  const rows = await askStatus(all, CERTS);
  const leader = rows.find((r) => r.ok && r.status.role === 'leader');
  const leaderId = leader?.ok ? leader.status.id : undefined;
  const followers = all.filter((m) => m.id !== leaderId);
  const ok = await Promise.all(followers.map((m) => signalNode(five, m.id, 'SIGTERM')));
  if (leaderId) ok.push(await signalNode(five, leaderId, 'SIGTERM'));
  return ok.every(Boolean) ? 0 : 1;
}

/** Every node's own Status answer, then each process as the pid files know it (a paused node answers nothing). */
async function status(five: boolean): Promise<number> {
  const all = members(five);
  const rows = await askStatus(all, CERTS);
  process.stdout.write(formatStatusTable(rows));
  for (const m of all) {
    const pid = readPid(five, m.id);
    console.log(`${m.id} ${m.listen} ${pid ? `${processState(pid)} (pid ${pid})` : 'not running'}`);
  }
  return rows.some((r) => r.ok) ? 0 : 1;
}

async function run(argv: string[]): Promise<number> {
  const args = parseClusterArgs(argv, (five) => members(five).map((m) => m.id));
  if ('error' in args) {
    console.error(`cluster: ${args.error}\n${USAGE}`);
    return USAGE_EXIT;
  }
  const { cmd, id, five } = args;
  if (!existsSync(NODE_MAIN)) throw new Error(`${NODE_MAIN} is missing: run npm run build first`);
  if (cmd === 'run' || cmd === 'start' || cmd === 'restart') {
    const dir = await ensureDevCerts(ROOT);
    console.log(`TLS on: certificates in ${path.relative(ROOT, dir) || dir} (clients run from ${ROOT} find ca.pem there, or set FENCELOCK_CACERT)`);
  }
  const ok = (done: boolean): number => (done ? 0 : 1);
  switch (cmd) {
    case 'run':
      foreground(five);
      return new Promise<number>(() => undefined); // foreground() exits the process when the nodes are gone
    case 'start':
      return startBackground(five, id);
    case 'stop':
      return id ? ok(await signalNode(five, id, 'SIGTERM')) : stopAll(five);
    case 'kill':
      return ok(await signalNode(five, id!, 'SIGKILL'));
    case 'restart':
      await signalNode(five, id!, 'SIGKILL');
      return startBackground(five, id);
    case 'pause':
      return ok(await signalNode(five, id!, 'SIGSTOP'));
    case 'resume':
      return ok(await signalNode(five, id!, 'SIGCONT'));
    case 'status':
      return status(five);
  }
}

if (require.main === module) {
  quietSniIpWarning();
  run(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err: Error) => {
      console.error(err.message);
      process.exit(1);
    },
  );
}

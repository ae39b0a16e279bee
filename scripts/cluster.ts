// The local cluster on 127.0.0.1 (configs in cluster/, data under data/, which git ignores), TLS on with
// development certificates made in data/certs on first start.
//
//   npm run cluster                      all nodes in the foreground, prefixed logs, Ctrl-C stops them
//   npm run cluster -- start|stop|status background mode (pids and logs under data/run/)
//   npm run cluster -- pause|resume|kill|restart n2    one node, for experiments
//   add --five for the 5-node cluster (cluster/five/)
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { ensureDevCerts } from '../src/certs/devCluster';

const ROOT = path.resolve(__dirname, '../..');
const NODE_MAIN = path.join(ROOT, 'dist/src/node/main.js');

interface Member {
  id: string;
  configFile: string;
  listen: string;
}

export function members(five: boolean): Member[] {
  const dir = path.join(ROOT, five ? 'cluster/five' : 'cluster');
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

export function spawnNode(m: Member, logFile?: string): ChildProcess {
  if (logFile) {
    const fd = openSync(logFile, 'a');
    return spawn(process.execPath, [NODE_MAIN, '--config', m.configFile], { stdio: ['ignore', fd, fd], detached: true });
  }
  return spawn(process.execPath, [NODE_MAIN, '--config', m.configFile], { stdio: ['ignore', 'pipe', 'pipe'] });
}

function foreground(five: boolean): void {
  const all = members(five);
  const children = all.map((m, i) => {
    const child = spawnNode(m);
    const prefix = `${COLORS[i % COLORS.length]}[${m.id}]\x1b[0m `;
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
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    for (const c of children) c.kill('SIGTERM');
    setTimeout(() => {
      for (const c of children) c.kill('SIGKILL');
      process.exit(0);
    }, 5_000).unref();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
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

function startBackground(five: boolean, only?: string): void {
  for (const m of members(five)) {
    if (only && m.id !== only) continue;
    if (readPid(five, m.id)) {
      console.log(`${m.id} already running`);
      continue;
    }
    const child = spawnNode(m, path.join(runDir(five), `${m.id}.log`));
    writeFileSync(pidFile(five, m.id), String(child.pid));
    child.unref();
    console.log(`${m.id} started (pid ${child.pid}) on ${m.listen}, log ${path.relative(ROOT, path.join(runDir(five), `${m.id}.log`))}`);
  }
}

async function signalNode(five: boolean, id: string, signal: NodeJS.Signals): Promise<void> {
  const pid = readPid(five, id);
  if (!pid) {
    console.log(`${id} is not running`);
    return;
  }
  if (signal === 'SIGTERM' || signal === 'SIGKILL') {
    process.kill(pid, 'SIGCONT');
    process.kill(pid, signal);
    for (let i = 0; i < 100 && readPid(five, id); i++) await new Promise((r) => setTimeout(r, 50));
    console.log(`${id} stopped`);
  } else {
    process.kill(pid, signal);
    console.log(`${id} ${signal === 'SIGSTOP' ? 'paused' : 'resumed'}`);
  }
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const five = args.includes('--five');
  const [cmd, id] = args.filter((a) => a !== '--five');
  if (!existsSync(NODE_MAIN)) throw new Error(`${NODE_MAIN} is missing: run npm run build first`);
  if (cmd === undefined || cmd === 'run' || cmd === 'start' || cmd === 'restart') {
    const dir = await ensureDevCerts(ROOT);
    console.log(`TLS on: certificates in ${path.relative(ROOT, dir)} (clients run from ${ROOT} find ca.pem there, or set FENCELOCK_CACERT)`);
  }
  switch (cmd ?? 'run') {
    case 'run':
      return foreground(five);
    case 'start':
      return startBackground(five, id);
    case 'stop':
      for (const m of members(five)) if (!id || m.id === id) await signalNode(five, m.id, 'SIGTERM');
      return;
    case 'kill':
      return signalNode(five, id, 'SIGKILL');
    case 'restart':
      await signalNode(five, id, 'SIGKILL');
      return startBackground(five, id);
    case 'pause':
      return signalNode(five, id, 'SIGSTOP');
    case 'resume':
      return signalNode(five, id, 'SIGCONT');
    case 'status':
      for (const m of members(five)) console.log(`${m.id} ${m.listen} ${readPid(five, m.id) ? `running (pid ${readPid(five, m.id)})` : 'stopped'}`);
      return;
    default:
      console.error('usage: npm run cluster -- [run|start|stop|status|pause ID|resume ID|kill ID|restart ID] [--five]');
      process.exit(1);
  }
}

if (require.main === module) {
  main().catch((err: Error) => {
    console.error(err.message);
    process.exit(1);
  });
}

// The chaos runner's side of a client worker process (clientWorker.ts): start it, parse what it streams
// (operations, pongs, holder grants, events), measure its clock offset, freeze and thaw it.
import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { historyFromJSON, type Operation } from '../../checker';
import { type WorkerConfig } from '../clientWorker';
import { PROJECT_ROOT } from '../harness';

export const WORKER_MAIN = path.join(PROJECT_ROOT, 'dist/test/integration/clientWorker.js');

/** A worker's clock against the run's: offset to subtract, slack to widen its intervals by (ms). */
export interface WorkerClock {
  name: string;
  offsetMs: number;
  slackMs: number;
}

/** A client worker process (clientWorker.ts) and what it streamed so far. */
export interface WorkerHandle {
  name: string;
  child: ChildProcess;
  ops: Map<number, Operation>;
  ready: Promise<void>;
  exited: Promise<void>;
  stats?: Record<string, number>;
  paused: boolean;
  pongs: Map<number, (t: number) => void>;
  /** Called on the next "holding" announcement of the worker's slow holder. */
  onHolding?: (lock: string, token: string) => void;
  /** Every other line the worker printed (session, waiter-done, ...), parsed. */
  events: Array<Record<string, unknown>>;
  onEvent?: (e: Record<string, unknown>) => void;
  stderr: string[];
}

/** Starts a client worker process (compiled clientWorker.js); resolve `ready` before using it. */
export function startClientWorker(cfg: WorkerConfig): WorkerHandle {
  const child = spawn(process.execPath, [WORKER_MAIN, JSON.stringify(cfg)], { stdio: ['pipe', 'pipe', 'pipe'] });
  const w: WorkerHandle = {
    name: cfg.name,
    child,
    ops: new Map(),
    ready: Promise.resolve(),
    exited: Promise.resolve(),
    paused: false,
    pongs: new Map(),
    events: [],
    stderr: [],
  };
  w.exited = new Promise((resolve) => child.once('exit', () => resolve()));
  w.ready = new Promise((resolve, reject) => {
    child.once('exit', (code, signal) => reject(new Error(`worker ${cfg.name} exited before it was ready (${code ?? signal}): ${w.stderr.join('')}`)));
    readline.createInterface({ input: child.stdout! }).on('line', (line) => onLine(w, line, resolve));
  });
  w.ready.catch(() => undefined);
  child.stderr!.on('data', (b: Buffer) => {
    if (w.stderr.length < 50) w.stderr.push(b.toString());
  });
  return w;
}

/** One line the worker printed: an operation, a pong, a holder's grant, ready, its stats, or another event. */
function onLine(w: WorkerHandle, line: string, ready: () => void): void {
  const msg = JSON.parse(line) as { k: string; seq?: number; t?: number; stats?: Record<string, number>; lock?: string; token?: string };
  if (msg.k === 'call' || msg.k === 'done') {
    const op = historyFromJSON(line).ops[0]!;
    w.ops.set(op.id, op);
  } else if (msg.k === 'pong') {
    w.pongs.get(msg.seq!)?.(msg.t!);
  } else if (msg.k === 'holding') {
    const cb = w.onHolding;
    w.onHolding = undefined;
    cb?.(msg.lock!, msg.token!);
  } else if (msg.k === 'ready') {
    ready();
  } else if (msg.k === 'end') {
    w.stats = msg.stats;
  } else {
    w.events.push(msg);
    w.onEvent?.(msg);
  }
}

/** Offset of the worker's clock against `clock`, from the ping with the shortest round trip. */
export async function calibrateWorker(w: WorkerHandle, clock: () => number): Promise<WorkerClock> {
  let best = { offsetMs: 0, slackMs: Number.POSITIVE_INFINITY };
  for (let seq = 0; seq < 7; seq++) {
    const t0 = clock();
    const tw = await new Promise<number>((resolve) => {
      w.pongs.set(seq, resolve);
      w.child.stdin!.write(`ping ${seq}\n`);
    });
    const t1 = clock();
    const half = (t1 - t0) / 2;
    if (half < best.slackMs) best = { offsetMs: tw - (t0 + t1) / 2, slackMs: half };
  }
  return { name: w.name, offsetMs: best.offsetMs, slackMs: best.slackMs + 0.05 };
}


/** SIGSTOP / SIGCONT to a worker that still runs; `paused` follows the intent either way. */
export function signalWorker(w: WorkerHandle, sig: 'SIGSTOP' | 'SIGCONT'): void {
  if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill(sig);
  w.paused = sig === 'SIGSTOP';
}

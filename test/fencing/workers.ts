// Runs fencingWorker processes against a fencelock cluster, freezing holders (SIGSTOP past their lease), and
// checks the history of accepted writes they leave.
import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { PROJECT_ROOT } from '../integration/harness';
import { TRANSPORT_ERROR, type Attempt, type WorkerConfig } from './workerProtocol';

const WORKER = path.join(PROJECT_ROOT, 'dist/test/fencing/fencingWorker.js');

export interface RunResult {
  attempts: Attempt[];
  /** Tokens granted per lock, as the holders announced them. */
  grants: Map<string, Set<string>>;
  freezes: number;
  /**
   * "lock/token" of the grants whose holder lost the lock before it was done: frozen past its lease, or its
   * release refused (its session expired, e.g. starved of CPU).
   */
  lost: Set<string>;
}

export interface RunOptions {
  workers: number;
  config: Omit<WorkerConfig, 'name'>;
  /** Chance that a holder is frozen right after it announces its lock, and for how long. */
  freezeChance: number;
  freezeMs: number;
  /** Called once, half-way through the run (the proxy restart). */
  midway?: () => Promise<void>;
}

/** Writes applied before the run may end; on a loaded machine the minimum duration alone can leave too few. */
const MIN_APPLIED = 30;
/** However slow the machine, the run ends by then (the test's own checks then say what was missing). */
const MAX_DURATION_FACTOR = 4;

/** The run has done what its checks need: applied writes, a frozen holder, and a stale writer refused. */
function exercised(r: RunResult): boolean {
  const applied = r.attempts.filter((a) => a.outcome === 'APPLIED').length;
  return applied >= MIN_APPLIED && r.freezes > 0 && r.attempts.some((a) => a.outcome === 'STALE');
}

/** Resolves once the minimum duration has passed and the run is exercised, or at the hard cap. */
async function enoughDone(r: RunResult, durationMs: number): Promise<void> {
  const started = performance.now();
  await new Promise((res) => setTimeout(res, durationMs));
  while (!exercised(r) && performance.now() - started < durationMs * MAX_DURATION_FACTOR) await new Promise((res) => setTimeout(res, 200));
}

export async function runWorkers(o: RunOptions): Promise<RunResult> {
  const result: RunResult = { attempts: [], grants: new Map(), freezes: 0, lost: new Set() };
  const children: ChildProcess[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const errors: string[] = [];
  const exits = Array.from({ length: o.workers }, (_, i) => {
    const child = spawn(process.execPath, [WORKER, JSON.stringify({ ...o.config, name: `w${i}` } satisfies WorkerConfig)], { stdio: ['pipe', 'pipe', 'inherit'] });
    children.push(child);
    child.stdin!.on('error', () => undefined); // a worker that already exited cannot be told to stop
    let frozen = false;
    readline.createInterface({ input: child.stdout! }).on('line', (line) => {
      const ev = JSON.parse(line) as { k: string; lock?: string; token?: string; message?: string; held?: boolean };
      if (ev.k === 'attempt') result.attempts.push(ev as unknown as Attempt);
      else if (ev.k === 'released' && ev.held === false) result.lost.add(`${ev.lock}/${ev.token}`);
      else if (ev.k === 'error') errors.push(`w${i}: ${ev.message}`);
      else if (ev.k === 'holding') {
        const set = result.grants.get(ev.lock!) ?? new Set<string>();
        set.add(ev.token!);
        result.grants.set(ev.lock!, set);
        if (!frozen && Math.random() < o.freezeChance) {
          frozen = true;
          result.freezes++;
          result.lost.add(`${ev.lock}/${ev.token}`);
          child.kill('SIGSTOP');
          const t = setTimeout(() => {
            timers.delete(t);
            frozen = false;
            child.kill('SIGCONT');
          }, o.freezeMs);
          timers.add(t);
        }
      }
    });
    return new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  });
  const mid = o.midway ? new Promise((r) => setTimeout(r, o.config.durationMs / 2)).then(o.midway) : Promise.resolve();
  void enoughDone(result, o.config.durationMs).then(() => children.forEach((c) => c.stdin?.end()));
  const deadline = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('workers did not finish in time')), o.config.durationMs * MAX_DURATION_FACTOR + 60_000).unref());
  try {
    const codes = await Promise.race([Promise.all([...exits, mid]), deadline]);
    if (errors.length > 0) throw new Error(`worker errors:\n${errors.join('\n')}`);
    if (codes.slice(0, o.workers).some((c) => c !== 0)) throw new Error(`worker exit codes ${codes.join(',')}`);
  } finally {
    for (const t of timers) clearTimeout(t);
    for (const c of children) {
      if (c.exitCode === null && c.signalCode === null) {
        c.kill('SIGCONT');
        c.kill('SIGKILL');
      }
    }
  }
  return result;
}

/** One accepted write as the resource recorded it, in the order it took effect. */
export interface Accepted {
  row: number;
  token: bigint;
  step: bigint;
}

export interface HistoryStats {
  attempted: number;
  accepted: number;
  replayed: number;
  refusedStale: number;
  refusedStep: number;
  /** Attempts without an answer (sent again, same step). */
  errors: number;
  freezes: number;
  /** WRONG_LOCK from the proxy: the token of a holder that lost its lock, which the cluster had forgotten meanwhile. */
  refusedForgotten: number;
}

const key = (row: number, token: bigint | string, step: bigint | string): string => `${row}/${token}/${step}`;

/**
 * The checks of a run: per row, accepted (token, step) strictly increase (tokens strictly, except further steps
 * of one grant); every accepted write was announced by a worker that held that row's lock with that token, and
 * is the one APPLIED attempt with its key (a write whose answer was lost may be either); every STALE refusal was
 * justified by a newer accepted token. With `forgottenLocks` (the proxy, which asks the cluster whether a lock
 * issued the token), a WRONG_LOCK refusal is allowed for the grant of a holder that lost its lock (RunResult.lost):
 * the lock may have gone idle, and the cluster forgets an idle lock that owns no keys (its latest token reads 0).
 * Returns the figures; throws a description of the first violation.
 */
export function checkHistory(accepted: Accepted[], run: RunResult, retryOutcome: 'REPLAYED' | 'STALE_STEP', opts: { forgottenLocks?: boolean } = {}): HistoryStats {
  const last = new Map<number, Accepted>();
  const newest = new Map<number, bigint>();
  const seen = new Set<string>();
  for (const a of accepted) {
    const prev = last.get(a.row);
    if (prev && !(a.token > prev.token || (a.token === prev.token && a.step > prev.step))) {
      throw new Error(`row ${a.row}: accepted (token ${a.token}, step ${a.step}) after (token ${prev.token}, step ${prev.step})`);
    }
    if (!run.grants.get(`row/${a.row}`)?.has(a.token.toString())) throw new Error(`row ${a.row}: accepted token ${a.token}, which no holder of row/${a.row} had`);
    last.set(a.row, a);
    newest.set(a.row, a.token);
    seen.add(key(a.row, a.token, a.step));
  }
  const applied = new Set<string>();
  const stats: HistoryStats = { attempted: run.attempts.length, accepted: accepted.length, replayed: 0, refusedStale: 0, refusedStep: 0, errors: 0, freezes: run.freezes, refusedForgotten: 0 };
  for (const t of run.attempts) {
    const k = key(t.row, t.token, t.step);
    switch (t.outcome) {
      case 'APPLIED':
        if (!seen.has(k) || applied.has(k)) throw new Error(`${t.worker}: ${k} reported APPLIED but the resource has it ${applied.has(k) ? 'already' : 'not'}`);
        applied.add(k);
        break;
      case 'REPLAYED':
        stats.replayed++;
        if (!seen.has(k)) throw new Error(`${t.worker}: ${k} replayed a result never applied`);
        break;
      case 'STALE':
        stats.refusedStale++;
        // (A retry through the proxy of a step already applied is STALE too once a newer holder has written.)
        if (!t.retry && seen.has(k)) throw new Error(`${t.worker}: ${k} reported STALE but was applied`);
        if (!(BigInt(t.token) < (newest.get(t.row) ?? 0n))) throw new Error(`${t.worker}: ${k} refused STALE with no newer token ever accepted on row ${t.row}`);
        break;
      case 'STALE_STEP':
        stats.refusedStep++;
        if (!t.retry && retryOutcome === 'STALE_STEP') throw new Error(`${t.worker}: first send of ${k} refused STALE_STEP`);
        break;
      case 'WRONG_LOCK':
        if (opts.forgottenLocks !== true) throw new Error(`${t.worker}: unexpected outcome WRONG_LOCK for ${k}`);
        stats.refusedForgotten++;
        if (!run.lost.has(`row/${t.row}/${t.token}`)) throw new Error(`${t.worker}: ${k} refused WRONG_LOCK, but its holder still held the lock at its release`);
        if (!t.retry && seen.has(k)) throw new Error(`${t.worker}: ${k} reported WRONG_LOCK but was applied`);
        break;
      default:
        // Only a request without an answer is allowed to fail: an answered error (a 500) is a bug.
        if (!t.outcome.startsWith(TRANSPORT_ERROR)) throw new Error(`${t.worker}: unexpected outcome ${t.outcome} for ${k}`);
        stats.errors++;
    }
    if (t.retry && retryOutcome === 'REPLAYED' && t.outcome === 'STALE_STEP') throw new Error(`${t.worker}: retry of ${k} refused instead of replayed`);
  }
  // Whatever was accepted without an APPLIED answer must be a write whose answer was lost.
  const unexplained = [...seen].filter((k) => !applied.has(k) && !run.attempts.some((t) => key(t.row, t.token, t.step) === k && t.outcome.startsWith(TRANSPORT_ERROR)));
  if (unexplained.length > 0) throw new Error(`accepted writes nobody sent: ${unexplained.join(', ')}`);
  return stats;
}

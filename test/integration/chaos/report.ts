// Checking a chaos run (in this thread, or in a worker thread for the soak) and telling what happened.
import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { checkHistory, finalStateToJSON, historyToJSON, type History, type HistoryVerdict } from '../../checker';
import { PROJECT_ROOT } from '../harness';
import type { Failover } from './failovers';
import type { ChaosRun } from './types';

const CHECKER_MAIN = path.join(PROJECT_ROOT, 'dist/test/checker/index.js');

export interface CheckedRun {
  verdict: HistoryVerdict;
  checkMs: number;
}

/** checkHistory over the run (in this thread). */
export function checkRun(run: ChaosRun, budgetMs = 60_000): CheckedRun {
  const t0 = performance.now();
  const verdict = checkHistory(run.history, { finalState: run.finalState, budgetMs });
  return { verdict, checkMs: Math.round(performance.now() - t0) };
}

/**
 * checkHistory in a worker thread (the compiled checker under dist/), so that a long check does not stall
 * this event loop: the proxies of a running cluster and the node log pipes live on it (the soak).
 */
export function checkRunInThread(run: ChaosRun, budgetMs = 60_000): Promise<CheckedRun> {
  const code = `
    const { parentPort, workerData } = require('node:worker_threads');
    const { performance } = require('node:perf_hooks');
    const c = require(workerData.checker);
    const h = c.historyFromJSON(workerData.history);
    const t0 = performance.now();
    const v = c.checkHistory(h, { finalState: c.finalStateFromJSON(workerData.finalState), budgetMs: workerData.budgetMs });
    const checkMs = Math.round(performance.now() - t0);
    parentPort.postMessage(c.historyToJSON({ ops: [], faults: [], meta: { verdict: v, checkMs } }));
  `;
  return new Promise((resolve, reject) => {
    const w = new Worker(code, {
      eval: true,
      workerData: { checker: CHECKER_MAIN, history: historyToJSON(run.history), finalState: finalStateToJSON(run.finalState), budgetMs },
    });
    w.once('message', (text: string) => {
      const meta = (JSON.parse(text) as { meta: { verdict: HistoryVerdict; checkMs: number } }).meta;
      resolve({ verdict: meta.verdict, checkMs: meta.checkMs });
    });
    w.once('error', reject);
    w.once('exit', (code) => {
      if (code !== 0) reject(new Error(`checker thread exited with ${code}`));
    });
  });
}

export function historyStats(h: History): { ops: number; byKind: Record<string, number>; byOutcome: Record<string, number>; processes: number; locks: number } {
  const byKind: Record<string, number> = {};
  const byOutcome: Record<string, number> = {};
  const processes = new Set<string>();
  const locks = new Set<string>();
  for (const o of h.ops) {
    byKind[o.op] = (byKind[o.op] ?? 0) + 1;
    byOutcome[o.outcome] = (byOutcome[o.outcome] ?? 0) + 1;
    processes.add(o.process);
    if (o.args.lock !== undefined) locks.add(o.args.lock);
  }
  return { ops: h.ops.length, byKind, byOutcome, processes: processes.size, locks: locks.size };
}

/**
 * The longest time the clients went without an ok answer: between two consecutive ok returns of the
 * workload's operations (probes and final reads left out), with when it started (run clock, ms).
 */
export function longestPause(h: History): { ms: number; from: number } {
  const rets = h.ops
    .filter((o) => o.outcome === 'ok' && o.ret !== undefined && !o.process.startsWith('probe-') && !o.process.endsWith('-final'))
    .map((o) => o.ret!)
    .sort((a, b) => a - b);
  let best = { ms: 0, from: rets[0] ?? 0 };
  for (let i = 1; i < rets.length; i++) if (rets[i]! - rets[i - 1]! > best.ms) best = { ms: rets[i]! - rets[i - 1]!, from: rets[i - 1]! };
  return { ms: Math.round(best.ms), from: best.from };
}

/** A readable account of a run and its verdict. */
export function summarize(run: ChaosRun, checked?: CheckedRun): string {
  const s = historyStats(run.history);
  const pause = longestPause(run.history);
  const lines = [
    `chaos run: seed ${run.seed}, ${run.nodes} nodes, namespace ${run.namespace}`,
    `history: ${s.ops} operations (${Object.entries(s.byKind).map(([k, v]) => `${k} ${v}`).join(', ')}); ` +
      `outcomes ${Object.entries(s.byOutcome).map(([k, v]) => `${k} ${v}`).join(', ')}; ${s.processes} processes, ${s.locks} locks; final reads ${run.finalState.size} keys`,
    `workload: ${JSON.stringify(run.workloadStats)}`,
    `workers: ${run.workerStats.map((w, i) => `w${i + 1} ${w ? `${w.cycles} cycles, ${w.acquired} grants, ${w.writesRefused} writes refused` : 'no stats'}`).join('; ')}`,
    `slow holders: ${describeHolderWrites(run.history)}`,
    `failovers: ${run.failovers.length === 0 ? 'none' : run.failovers.map(formatFailover).join('; ')}`,
    `recovery after healing: ${run.recoveryMs} ms; ${run.okAfterHeal} operations ok after healing`,
    `longest pause without an ok answer: ${pause.ms} ms (from ${(pause.from / 1000).toFixed(3)} s)`,
    `minority probes: ${run.probes.sent} sent, ${run.probes.ok} answered ok (any ok inside a window fails minority-answer)`,
  ];
  if (checked) {
    const v = checked.verdict;
    lines.push(
      `checker: ${v.ok ? 'OK' : 'FAILED'} in ${checked.checkMs} ms (linearizability ${v.linearizability.outcome}, ` +
        `${v.linearizability.stats.partitions} partitions, ${v.linearizability.stats.opsChecked} ops checked; invariants: ${v.invariants.length} violations)`,
    );
    if (!v.ok) lines.push(v.report);
  }
  lines.push('fault timeline:', ...run.timeline.map((l) => `  ${l}`));
  return lines.join('\n');
}

/** Writes of the slow holders (clientWorker.ts) by outcome and refusal reason. */
export function holderWrites(h: History): Record<string, number> {
  const out: Record<string, number> = {};
  for (const o of h.ops) {
    if (o.op !== 'write' || !o.process.endsWith('-holder')) continue;
    const k = o.outcome === 'fail' ? `refused ${o.error?.reason ?? o.error?.code ?? '?'}` : o.outcome;
    out[k] = (out[k] ?? 0) + 1;
  }
  return out;
}

function describeHolderWrites(h: History): string {
  const w = holderWrites(h);
  const parts = Object.entries(w).map(([k, v]) => `${k} ${v}`);
  return parts.length === 0 ? 'no writes' : `writes ${parts.join(', ')}`;
}

function formatFailover(f: Failover): string {
  const overlap = f.overlapped ? ' [overlapping another fault]' : '';
  const to = f.to === undefined ? 'no other leader within the hold' : `${f.to} after ${f.ms} ms (${f.failedOps ?? 0} ops failed meanwhile)`;
  return `${f.kind} ${f.from} -> ${to}${f.stepDownMs !== undefined ? `, old leader stepped down after ${f.stepDownMs} ms` : ''}${overlap}`;
}

/** Writes the history, the final state and the summary to `dir` (for post-mortems and replays). */
export function dumpRun(run: ChaosRun, dir: string, checked?: CheckedRun): string {
  mkdirSync(dir, { recursive: true });
  const base = path.join(dir, `chaos-seed${run.seed}-n${run.nodes}`);
  writeFileSync(`${base}.history.json`, historyToJSON(run.history, 1));
  writeFileSync(`${base}.final.json`, finalStateToJSON(run.finalState));
  writeFileSync(`${base}.txt`, summarize(run, checked));
  return base;
}

// A chaos run as a test runs it: run (nemesis or scripted steps), check the whole history, print the summary,
// dump it on failure, and assert what every run must satisfy. Shared by chaos.test.ts and membership.test.ts.
import * as os from 'node:os';
import * as path from 'node:path';
import { expect } from 'vitest';
import { runChaos } from '../chaosRunner';
import { checkRun, dumpRun, summarize, type CheckedRun } from './report';
import type { ChaosOptions, ChaosRun } from './types';

export const CHECK_BUDGET_MS = 60_000;
export const HEAL_BOUND_MS = 20_000;

export function out(text: string): void {
  process.stdout.write(`${text}\n`);
}

/** Runs, checks, prints, dumps on failure, and asserts: linearizable, no invariant broken, served again. */
export async function checkedChaos(o: ChaosOptions): Promise<{ run: ChaosRun; checked: CheckedRun }> {
  out(`[chaos] ${o.nodes} nodes, seed ${o.seed}${o.steps ? ' (scripted steps)' : o.schedule ? ' (scripted schedule)' : ''}: replay with CHAOS_SEED=${o.seed}`);
  const run = await runChaos({ healBoundMs: HEAL_BOUND_MS, log: out, ...o });
  const checked = checkRun(run, CHECK_BUDGET_MS);
  out(summarize(run, checked));
  if (!checked.verdict.ok) {
    const base = dumpRun(run, path.join(os.tmpdir(), `fencelock-chaos-${Date.now()}`), checked);
    out(`[chaos] FAILED: seed ${run.seed}; history, final reads and timeline in ${base}.*`);
  }
  expect(checked.verdict.linearizability.outcome, checked.verdict.report).toBe('ok');
  expect(checked.verdict.invariants.map((v) => `${v.invariant}: ${v.message}`)).toEqual([]);
  expect(run.recoveryMs).toBeGreaterThanOrEqual(0);
  expect(run.recoveryMs).toBeLessThan(o.healBoundMs ?? HEAL_BOUND_MS);
  expect(run.okAfterHeal, 'the clients are served again after healing').toBeGreaterThan(0);
  expect(run.finalState.size, 'final reads of the written keys').toBeGreaterThan(0);
  return { run, checked };
}

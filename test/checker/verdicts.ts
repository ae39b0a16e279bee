// Assertions shared by the checker's tests of issue 33's primitives: a history is (not) linearizable, and
// which invariants it breaks.
import { expect } from 'vitest';
import type { Operation } from './history';
import { checkInvariants, type InvariantName } from './invariants';
import { checkLinearizability } from './linearizability';

export function expectLinearizable(ops: Operation[]): void {
  const r = checkLinearizability(ops, { budgetMs: 5_000 });
  if (r.outcome === 'violation') throw new Error(r.explanation);
  expect(r.outcome).toBe('ok');
}

/** Not linearizable; the violation is reported on `partition`, and its shrunk sub-history fails again. */
export function expectNotLinearizable(ops: Operation[], partition: string): void {
  const r = checkLinearizability(ops, { budgetMs: 5_000 });
  expect(r.outcome).toBe('violation');
  if (r.outcome !== 'violation') return;
  expect(r.partition).toBe(partition);
  expect(checkLinearizability(r.ops, { budgetMs: 5_000, noShrink: true }).outcome).toBe('violation');
}

/** The names of the invariants the history breaks (sorted, once each). */
export function brokenInvariants(ops: Operation[]): InvariantName[] {
  return [...new Set(checkInvariants(ops).map((v) => v.invariant))].sort();
}

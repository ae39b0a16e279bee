// The history checker of fencelock (docs/architecture.md#test-ladder): the format (history.ts), the linearizability checker
// (linearizability.ts, its header explains the algorithm and the model) and the direct invariants
// (invariants.ts). `checkHistory` runs both, for the chaos suite.
import { formatOps, minorityWindows, type FinalRead, type History, type MinorityWindow } from './history';
import { checkInvariants, type InvariantViolation } from './invariants';
import { checkLinearizability, type CheckOptions, type LinearizabilityResult } from './linearizability';

export * from './history';
export { checkInvariants, type InvariantName, type InvariantOptions, type InvariantViolation } from './invariants';
export { checkLinearizability, partitionByLock, type CheckOptions, type LinearizabilityResult } from './linearizability';

export interface HistoryVerdict {
  /** True only when linearizability says ok and no invariant is broken. */
  ok: boolean;
  linearizability: LinearizabilityResult;
  invariants: InvariantViolation[];
  /** A readable account of what failed ('' when ok). */
  report: string;
}

/**
 * Runs the linearizability check and the invariants on a recorded run. Minority windows default to those
 * of the history's partition faults (set `minorityWindows: []` to skip that invariant).
 */
export function checkHistory(
  history: History,
  opts: CheckOptions & { finalState?: ReadonlyMap<string, FinalRead>; minorityWindows?: readonly MinorityWindow[] } = {},
): HistoryVerdict {
  const linearizability = checkLinearizability(history.ops, opts);
  const windows = opts.minorityWindows ?? minorityWindows(history.faults);
  const invariants = checkInvariants(history.ops, { finalState: opts.finalState, minorityWindows: windows });
  const parts: string[] = [];
  if (linearizability.outcome === 'violation') parts.push(`NOT LINEARIZABLE: ${linearizability.explanation}`);
  if (linearizability.outcome === 'unknown') parts.push(`linearizability UNKNOWN: ${linearizability.reason} (unfinished: ${linearizability.unfinished.join(', ')})`);
  for (const v of invariants) parts.push(`${v.invariant}: ${v.message}\n${formatOps(v.ops)}`);
  return { ok: linearizability.outcome === 'ok' && invariants.length === 0, linearizability, invariants, report: parts.join('\n\n') };
}

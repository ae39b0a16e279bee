/**
 * What a run of many seeds amounts to: seeds passed and failed, simulated time, the faults of each kind and
 * what else happened, totalled over the seeds, and the violations by check. Worker processes each total their
 * own seeds; the parent merges their totals. Every numeric field of a seed's stats is totalled, so a counter
 * the simulation gains shows up here without a change.
 */
import type { NodeSimResult } from './simulation';

export interface RunSummary {
  seeds: number;
  passed: number;
  failed: number;
  /** Failed seeds, ascending. */
  failedSeeds: number[];
  simulatedMs: number;
  events: number;
  /** Every other stats counter, totalled over the seeds. */
  totals: Record<string, number>;
  /** Violations by the check that reported them (see checkOf). */
  violations: Record<string, number>;
  /** CPU time of the process(es) that ran the seeds, and wall time of the run. */
  cpuMs: number;
  wallMs: number;
}

/** The faults the simulator injects, in the order printed, with their names in the summary. */
const FAULTS: ReadonlyArray<[key: string, name: string]> = [
  ['crashes', 'crashes (each followed by a restart)'],
  ['unsyncedBatchesLost', 'un-synced disk batches lost in crashes'],
  ['partitions', 'partitions'],
  ['messagesDropped', 'messages dropped'],
  ['messagesDuplicated', 'messages duplicated'],
  ['slowStarts', 'leaders whose appends were lost after election'],
  ['stalls', 'stalls (node and client pauses)'],
  ['clockSteps', 'wall-clock steps'],
  ['confChanges', 'membership changes'],
  ['confChangesRefused', 'membership changes refused'],
  ['closesInOutage', 'client closes while cut off'],
];

export function emptySummary(): RunSummary {
  return { seeds: 0, passed: 0, failed: 0, failedSeeds: [], simulatedMs: 0, events: 0, totals: {}, violations: {}, cpuMs: 0, wallMs: 0 };
}

export function addResult(s: RunSummary, r: NodeSimResult): void {
  s.seeds++;
  if (r.ok) s.passed++;
  else {
    s.failed++;
    s.failedSeeds.push(r.seed);
    const check = checkOf(r.violation ?? '');
    s.violations[check] = (s.violations[check] ?? 0) + 1;
  }
  for (const [key, value] of Object.entries(r.stats)) {
    if (key === 'simulatedMs') s.simulatedMs += value;
    else if (key === 'events') s.events += value;
    else if (typeof value === 'number') s.totals[key] = (s.totals[key] ?? 0) + value;
  }
}

/** One summary of several workers' (their CPU times add up; wall time is the caller's). */
export function mergeSummaries(parts: readonly RunSummary[]): RunSummary {
  const out = emptySummary();
  for (const p of parts) {
    out.seeds += p.seeds;
    out.passed += p.passed;
    out.failed += p.failed;
    out.failedSeeds.push(...p.failedSeeds);
    out.simulatedMs += p.simulatedMs;
    out.events += p.events;
    out.cpuMs += p.cpuMs;
    addCounts(out.totals, p.totals);
    addCounts(out.violations, p.violations);
  }
  out.failedSeeds.sort((a, b) => a - b);
  return out;
}

function addCounts(into: Record<string, number>, from: Record<string, number>): void {
  for (const [k, v] of Object.entries(from)) into[k] = (into[k] ?? 0) + v;
}

/**
 * The check a violation names: the Raft checker's rule ("raft: LeaderCompleteness"), else the text before
 * the first colon ("lease promise", "liveness", "client history", ...).
 */
export function checkOf(violation: string): string {
  const raft = /^raft: (\w+)/.exec(violation);
  if (raft) return `raft: ${raft[1]}`;
  const colon = violation.indexOf(':');
  return colon > 0 ? violation.slice(0, colon) : violation.slice(0, 60);
}

export function formatSummary(s: RunSummary, label: string): string {
  const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
  const faultKeys = new Set(FAULTS.map(([k]) => k));
  const faults = FAULTS.map(([k, name]) => `${s.totals[k] ?? 0} ${name}`);
  const other = Object.entries(s.totals).filter(([k]) => !faultKeys.has(k)).map(([k, v]) => `${v} ${k}`);
  const violations = Object.entries(s.violations).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v}`);
  const perSeed = (ms: number): string => (s.seeds === 0 ? '-' : `${(ms / s.seeds / 1000).toFixed(2)} s a seed`);
  return [
    `${label}: ${s.seeds} seeds, ${s.passed} passed, ${s.failed} failed${s.failed > 0 ? ` (seeds ${s.failedSeeds.slice(0, 20).join(', ')}${s.failed > 20 ? ', ...' : ''})` : ''}`,
    `  simulated: ${seconds(s.simulatedMs)} in all (${(s.simulatedMs / 3_600_000).toFixed(2)} h), ${s.events} events`,
    `  faults: ${faults.join(', ')}`,
    `  also: ${other.join(', ')}`,
    `  violations by check: ${violations.length === 0 ? 'none' : violations.join(', ')}`,
    `  time: ${seconds(s.wallMs)} wall (${perSeed(s.wallMs)}), ${seconds(s.cpuMs)} CPU (${perSeed(s.cpuMs)})`,
  ].join('\n');
}

// Results of the side-by-side benchmark: medians across rounds, the comparison table, the JSON file.
import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import type { Measurement } from './runner';

/** One round of one row on one system: measured, or the reason the row could not be set up. */
export type RoundResult = Measurement | { failed: string };

export interface RowResult {
  workload: string;
  clients: number;
  /** system name -> one entry per round. */
  systems: Record<string, RoundResult[]>;
}

export interface Summary {
  /** Medians over the measured rounds. */
  opsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  serverCpuPct?: number;
  clientCpuPct: number;
  /** Summed over the rounds. */
  errors: number;
  firstError?: string;
  measuredRounds: number;
  /** Why a round could not be set up (the first such round). */
  failure?: string;
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** Undefined when no round was measured. */
export function summarize(rounds: RoundResult[]): Summary | undefined {
  const measured = rounds.filter((r): r is Measurement => !('failed' in r));
  const failure = rounds.find((r): r is { failed: string } => 'failed' in r)?.failed;
  if (measured.length === 0) return undefined;
  const serverCpu = measured.map((m) => m.serverCpuPct).filter((v): v is number => v !== undefined);
  return {
    opsPerSec: median(measured.map((m) => m.opsPerSec)),
    p50Ms: median(measured.map((m) => m.p50Ms)),
    p99Ms: median(measured.map((m) => m.p99Ms)),
    serverCpuPct: serverCpu.length === measured.length ? median(serverCpu) : undefined,
    clientCpuPct: median(measured.map((m) => m.clientCpuPct)),
    errors: measured.reduce((n, m) => n + m.errors, 0),
    firstError: measured.find((m) => m.firstError !== undefined)?.firstError,
    measuredRounds: measured.length,
    failure,
  };
}

function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return '-';
  return ms < 10 ? ms.toFixed(2) : ms < 100 ? ms.toFixed(1) : ms.toFixed(0);
}

function formatPct(pct: number | undefined): string {
  return pct === undefined ? 'n/a' : `${Math.round(pct)}%`;
}

function formatRatio(a: number | undefined, b: number | undefined): string {
  if (a === undefined || b === undefined || !Number.isFinite(a) || !Number.isFinite(b) || b === 0) return '-';
  const r = a / b;
  return `${r < 10 ? r.toFixed(1) : r.toFixed(0)}x`;
}

interface Column {
  header: string;
  /** The group header spanning this column (a system name), if any. */
  group?: string;
  alignLeft?: boolean;
}

function renderGrid(columns: Column[], body: string[][]): string {
  const widths = columns.map((c, i) => Math.max(c.header.length, ...body.map((row) => row[i].length)));
  const cell = (text: string, i: number): string => (columns[i].alignLeft ? text.padEnd(widths[i]) : text.padStart(widths[i]));
  // Two spaces inside a group, ' | ' where a group starts or ends.
  const sep = (i: number): string => (i === 0 ? '' : columns[i].group !== columns[i - 1].group ? ' | ' : '  ');
  const line = (cells: string[]): string => cells.map((t, i) => sep(i) + cell(t, i)).join('').trimEnd();

  // Each run of columns with the same group gets its name centred above it.
  let groups = '';
  for (let i = 0; i < columns.length; ) {
    let last = i;
    while (last + 1 < columns.length && columns[last + 1].group === columns[i].group) last++;
    const span = widths.slice(i, last + 1).reduce((a, w) => a + w, 0) + 2 * (last - i);
    const name = columns[i].group ?? '';
    groups += sep(i) + name.padStart(Math.floor((span + name.length) / 2)).padEnd(span);
    i = last + 1;
  }
  return [groups.trimEnd(), line(columns.map((c) => c.header)), ...body.map(line)].join('\n');
}

/** The comparison table, with notes on errors and failed rows below it. */
export function renderTable(rows: RowResult[], systems: string[]): string {
  const compare = systems.includes('fencelock') && systems.includes('etcd');
  const summaries = rows.map((r) => Object.fromEntries(systems.map((s) => [s, summarize(r.systems[s] ?? [])])));
  const withErrors = new Set(systems.filter((s) => summaries.some((row) => (row[s]?.errors ?? 0) > 0)));

  const columns: Column[] = [{ header: 'workload', alignLeft: true }, { header: 'clients' }];
  for (const s of systems) {
    for (const header of ['ops/s', 'p50 ms', 'p99 ms', 'srv CPU', 'cli CPU']) columns.push({ header, group: s });
    if (withErrors.has(s)) columns.push({ header: 'errors', group: s });
  }
  if (compare) for (const header of ['ops/s', 'p50']) columns.push({ header, group: 'fencelock/etcd' });

  const notes: string[] = [];
  const body = rows.map((r, i) => {
    const cells = [r.workload, String(r.clients)];
    for (const s of systems) {
      const sum = summaries[i][s];
      const label = `${r.workload} x${r.clients} on ${s}`;
      if (sum === undefined) {
        cells.push('failed', '-', '-', '-', '-');
        const failure = (r.systems[s] ?? []).find((x): x is { failed: string } => 'failed' in x)?.failed ?? 'not run';
        notes.push(`${label} failed: ${failure}`);
      } else {
        cells.push(sum.opsPerSec.toFixed(0), formatMs(sum.p50Ms), formatMs(sum.p99Ms), formatPct(sum.serverCpuPct), formatPct(sum.clientCpuPct));
        if (sum.failure) notes.push(`${label}: ${(r.systems[s] ?? []).length - sum.measuredRounds} round(s) failed: ${sum.failure}`);
        if (sum.errors > 0) notes.push(`${label}: ${sum.errors} failed operation(s), first: ${sum.firstError}`);
      }
      if (withErrors.has(s)) cells.push(sum ? String(sum.errors) : '-');
    }
    if (compare) {
      const fl = summaries[i].fencelock;
      const etcd = summaries[i].etcd;
      cells.push(formatRatio(fl?.opsPerSec, etcd?.opsPerSec), formatRatio(fl?.p50Ms, etcd?.p50Ms));
    }
    return cells;
  });

  const legend = [
    'srv CPU: the system\'s 3 server processes; cli CPU: this process (the clients); % of one core.',
    ...(compare ? ['fencelock/etcd: ops/s above 1x and p50 below 1x favour fencelock.'] : []),
  ];
  return [renderGrid(columns, body), '', ...legend, ...notes.map((n) => `! ${n}`)].join('\n');
}

export function writeJson(file: string, data: unknown): void {
  mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  writeFileSync(file, JSON.stringify(data, null, 2) + '\n');
}

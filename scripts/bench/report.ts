// Results of the side-by-side benchmark: medians across rounds, the comparison table, the JSON file.
import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { SEMAPHORE_PERMITS, type Measurement } from './runner';
import { BASE_SYSTEMS, hasTlsVariant, peerSystems, variantName, type BaseSystem } from './systems';

/** A row whose workload needs a primitive the system lacks: not run, and shown as n/a with the reason. */
export interface NotApplicable {
  notApplicable: string;
}

/** One round of one row on one system: measured, the reason the row could not be set up, or not applicable. */
export type RoundResult = Measurement | { failed: string } | NotApplicable;

function isMeasured(r: RoundResult): r is Measurement {
  return !('failed' in r) && !('notApplicable' in r);
}

/** Why the row is not applicable to the system, when it is not (every round says the same). */
export function notApplicableReason(rounds: RoundResult[]): string | undefined {
  return rounds.find((r): r is NotApplicable => 'notApplicable' in r)?.notApplicable;
}

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
  const measured = rounds.filter(isMeasured);
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

/** a / b, undefined when either is missing or b is 0. */
function ratio(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined || b === undefined || !Number.isFinite(a) || !Number.isFinite(b) || b === 0) return undefined;
  return a / b;
}

/** A peer's figure that was the best of its row. */
export interface PeerFigure {
  system: string;
  value: number;
}

/** One fencelock system against the best of its peers in one row. */
export interface VersusBestPeer {
  /** The peer with the most ops/s and the one with the lowest p50 (not necessarily the same). */
  bestPeer: { opsPerSec?: PeerFigure; p50?: PeerFigure };
  /** fencelock ops/s / the best peer's ops/s: above 1 favours fencelock. */
  opsPerSec?: number;
  /** fencelock p50 / the best peer's p50: below 1 favours fencelock. */
  p50?: number;
}

export interface TlsCost {
  /** TLS ops/s as a percentage of the same system's plaintext ops/s (100: TLS costs no throughput). */
  opsPerSecPct?: number;
  /** TLS p50 latency as a percentage of the plaintext p50 (100: TLS adds no latency). */
  p50Pct?: number;
}

export interface AuthCost {
  /** fencelock-auth ops/s as a percentage of fencelock's (both TLS; 100: auth costs no throughput). */
  opsPerSecPct?: number;
  /** fencelock-auth p50 latency as a percentage of fencelock's (100: auth adds no latency). */
  p50Pct?: number;
}

/** The system with auth on (TLS), and the one it is compared with for auth's cost. */
const AUTH_SYSTEM = variantName('fencelock', true, true);
const NO_AUTH_SYSTEM = variantName('fencelock', true);

/** The fencelock systems compared with their peers, each with the peers of its own transport. */
const COMPARED: ReadonlyArray<{ system: string; peers: string[] }> = [
  { system: NO_AUTH_SYSTEM, peers: peerSystems(true) },
  { system: AUTH_SYSTEM, peers: peerSystems(true) },
  { system: variantName('fencelock', false), peers: peerSystems(false) },
];

export interface RowComparison {
  /** Per fencelock system (fencelock, fencelock-auth, fencelock-plain) with at least one of its peers measured. */
  vsBestPeer: Record<string, VersusBestPeer>;
  /** Per system measured both ways. */
  tlsCost: Partial<Record<BaseSystem, TlsCost>>;
  /** fencelock with auth against fencelock without, both with TLS (where both were measured). */
  authCost?: AuthCost;
}

const round3 = (v: number | undefined): number | undefined => (v === undefined ? undefined : Math.round(v * 1000) / 1000);

/** The peer whose `value` is best (highest with `higher`, else lowest), among the peers measured. */
function best(summaries: Record<string, Summary | undefined>, peers: string[], value: (s: Summary) => number, higher: boolean): PeerFigure | undefined {
  let found: PeerFigure | undefined;
  for (const system of peers) {
    const s = summaries[system];
    if (!s || !Number.isFinite(value(s))) continue;
    if (!found || (higher ? value(s) > found.value : value(s) < found.value)) found = { system, value: value(s) };
  }
  return found;
}

/** `system` against the best of `peers`, or undefined when it or every peer is missing. */
export function versusBestPeer(summaries: Record<string, Summary | undefined>, system: string, peers: string[]): VersusBestPeer | undefined {
  const own = summaries[system];
  const ops = best(summaries, peers, (s) => s.opsPerSec, true);
  const p50 = best(summaries, peers, (s) => s.p50Ms, false);
  if (!own || (!ops && !p50)) return undefined;
  return {
    bestPeer: { opsPerSec: ops, p50 },
    opsPerSec: round3(ratio(own.opsPerSec, ops?.value)),
    p50: round3(ratio(own.p50Ms, p50?.value)),
  };
}

/** The ratios of one row, from the summaries of its systems (keyed by system name). */
export function compareRow(summaries: Record<string, Summary | undefined>): RowComparison {
  const pct = (a: number, b: number): number | undefined => {
    const r = ratio(a, b);
    return r === undefined ? undefined : Math.round(r * 1000) / 10;
  };
  const vsBestPeer: Record<string, VersusBestPeer> = {};
  for (const { system, peers } of COMPARED) {
    const v = versusBestPeer(summaries, system, peers);
    if (v) vsBestPeer[system] = v;
  }
  const tlsCost: Partial<Record<BaseSystem, TlsCost>> = {};
  for (const base of BASE_SYSTEMS.filter(hasTlsVariant)) {
    const withTls = summaries[variantName(base, true)];
    const plain = summaries[variantName(base, false)];
    if (!withTls || !plain) continue;
    tlsCost[base] = { opsPerSecPct: pct(withTls.opsPerSec, plain.opsPerSec), p50Pct: pct(withTls.p50Ms, plain.p50Ms) };
  }
  const withAuth = summaries[AUTH_SYSTEM];
  const noAuth = summaries[NO_AUTH_SYSTEM];
  return {
    vsBestPeer,
    tlsCost,
    authCost: withAuth && noAuth ? { opsPerSecPct: pct(withAuth.opsPerSec, noAuth.opsPerSec), p50Pct: pct(withAuth.p50Ms, noAuth.p50Ms) } : undefined,
  };
}

function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return '-';
  return ms < 10 ? ms.toFixed(2) : ms < 100 ? ms.toFixed(1) : ms.toFixed(0);
}

function formatPct(pct: number | undefined): string {
  return pct === undefined ? 'n/a' : `${Math.round(pct)}%`;
}

function formatRatio(r: number | undefined): string {
  if (r === undefined) return '-';
  return `${r < 10 ? r.toFixed(1) : r.toFixed(0)}x`;
}

/** "2.1x etcd": a ratio and the peer it is taken against. */
function formatVersus(r: number | undefined, peer: PeerFigure | undefined): string {
  return r === undefined || peer === undefined ? '-' : `${formatRatio(r)} ${peer.system}`;
}

interface Column {
  header: string;
  /** The group header spanning this column (a system name), if any. */
  group?: string;
  alignLeft?: boolean;
}

function renderGrid(columns: Column[], body: string[][]): string {
  const widths = columns.map((c, i) => Math.max(c.header.length, ...body.map((row) => row[i].length)));
  // A group name wider than its columns widens them, evenly.
  for (let i = 0; i < columns.length; ) {
    let last = i;
    while (last + 1 < columns.length && columns[last + 1].group === columns[i].group) last++;
    const span = widths.slice(i, last + 1).reduce((a, w) => a + w, 0) + 2 * (last - i);
    const deficit = Math.max(0, (columns[i].group ?? '').length - span);
    for (let k = i; k <= last; k++) widths[k] += Math.floor(deficit / (last - i + 1)) + (k - i < deficit % (last - i + 1) ? 1 : 0);
    i = last + 1;
  }
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
  const summaries = rows.map((r) => Object.fromEntries(systems.map((s) => [s, summarize(r.systems[s] ?? [])])));
  const withErrors = new Set(systems.filter((s) => summaries.some((row) => (row[s]?.errors ?? 0) > 0)));
  const has = (base: BaseSystem, tls: boolean): boolean => systems.includes(variantName(base, tls));
  // Each fencelock system measured next to at least one of its peers, against the best of them.
  const compared = COMPARED.filter((c) => systems.includes(c.system) && c.peers.some((p) => systems.includes(p)));
  const costed = BASE_SYSTEMS.filter((b) => hasTlsVariant(b) && has(b, true) && has(b, false));
  const authCosted = systems.includes(AUTH_SYSTEM) && systems.includes(NO_AUTH_SYSTEM);

  const columns: Column[] = [{ header: 'workload', alignLeft: true }, { header: 'clients' }];
  for (const s of systems) {
    for (const header of ['ops/s', 'p50 ms', 'p99 ms', 'srv CPU', 'cli CPU']) columns.push({ header, group: s });
    if (withErrors.has(s)) columns.push({ header: 'errors', group: s });
  }
  for (const c of compared) for (const header of ['ops/s', 'p50']) columns.push({ header, group: `${c.system}/best peer` });
  for (const base of costed) columns.push({ header: base, group: 'TLS cost' });
  if (authCosted) for (const header of ['ops/s', 'p50']) columns.push({ header, group: 'auth cost' });

  const notes: string[] = [];
  const notApplicableNotes = new Set<string>();
  const body = rows.map((r, i) => {
    const cells = [r.workload, String(r.clients)];
    for (const s of systems) {
      const sum = summaries[i][s];
      const label = `${r.workload} x${r.clients} on ${s}`;
      const notApplicable = notApplicableReason(r.systems[s] ?? []);
      if (notApplicable !== undefined) {
        cells.push('n/a', '-', '-', '-', '-');
        notApplicableNotes.add(`${r.workload} on ${s}: n/a, ${notApplicable}.`);
      } else if (sum === undefined) {
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
    const comparison = compareRow(summaries[i]);
    for (const c of compared) {
      const v = comparison.vsBestPeer[c.system];
      cells.push(formatVersus(v?.opsPerSec, v?.bestPeer.opsPerSec), formatVersus(v?.p50, v?.bestPeer.p50));
    }
    for (const base of costed) cells.push(formatPct(comparison.tlsCost[base]?.opsPerSecPct));
    if (authCosted) cells.push(formatPct(comparison.authCost?.opsPerSecPct), formatPct(comparison.authCost?.p50Pct));
    return cells;
  });

  const legend = [
    "srv CPU: the system's 3 server processes; cli CPU: this process (the clients); % of one core.",
    ...(systems.some((s) => s.endsWith('-plain')) ? ['<system>: TLS (clients verify the servers, mutual TLS between members); <system>-plain: no TLS anywhere.'] : []),
    ...(systems.includes(AUTH_SYSTEM) ? [`${AUTH_SYSTEM}: fencelock with TLS and auth on, every client its own user (bearer token, a role with prefix rules).`] : []),
    ...(systems.includes('zookeeper') ? ['zookeeper: plaintext, its own default (the client used here, node-zookeeper-client, has no TLS).'] : []),
    ...(compared.length > 0
      ? [
          '<fencelock system>/best peer: its ops/s over the most ops/s of a peer in the row, its p50 over the lowest peer p50, each naming that peer;',
          `  the peers are ${peerSystems(true).join(' and ')} (for ${variantName('fencelock', false)}: ${peerSystems(false).join(' and ')}). Ops/s above 1x and p50 below 1x favour fencelock.`,
        ]
      : []),
    ...(costed.length > 0 ? ["TLS cost: the system's ops/s with TLS as % of its ops/s in plaintext (100% = TLS costs no throughput)."] : []),
    ...(authCosted ? [`auth cost: ${AUTH_SYSTEM}'s ops/s and p50 as % of ${NO_AUTH_SYSTEM}'s (100% = auth costs nothing; ops/s below and p50 above 100% are its cost).`] : []),
  ];
  const workloads = new Set(rows.map((r) => r.workload));
  const rowLegend = [
    ...(workloads.has('semaphore') ? [`semaphore: each client takes a permit of one semaphore of ${SEMAPHORE_PERMITS}, writes fenced to its slot's key, releases (zookeeper: Curator's semaphore recipe).`] : []),
    ...(workloads.has('read-mostly') ? ['read-mostly: 9 cycles in 10 take one lock shared and read, 1 takes it exclusive and writes fenced (zookeeper: Curator\'s read-write lock recipe).'] : []),
  ];
  return [renderGrid(columns, body), '', ...legend, ...rowLegend, ...notApplicableNotes, ...notes.map((n) => `! ${n}`)].join('\n');
}

export function writeJson(file: string, data: unknown): void {
  mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  writeFileSync(file, JSON.stringify(data, null, 2) + '\n');
}

import {
  FenceLockError,
  type AuthListing,
  type AuthRule,
  type EndpointStatus,
  type GetResult,
  type KeyValue,
  type LockDescription,
  type LockEvent,
  type SessionDetails,
  type WhoAmI,
} from '../client';
import { CommandFailure, exitCodeFor } from './exitCodes';
import { endpointFate, UnreachableError } from './unreachable';

/** Where a command writes: stdout for results, stderr for diagnostics. */
export interface CliIO {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: NodeJS.ProcessEnv;
  /** Receives SIGINT/SIGTERM/SIGHUP (the process, or a stand-in in tests). */
  signals: NodeJS.EventEmitter;
  /**
   * Standard input, for `lock NAME` (no CMD), which holds until it ends. A function: only that command touches
   * it (reading stdin keeps a process alive). Absent: such a hold ends on a signal only.
   */
  stdin?: () => NodeJS.ReadableStream;
}

/** JSON with bigints as decimal strings and bytes as plain arrays never used: callers convert first. */
export function toJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
}

/** Left-aligned columns separated by two spaces. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]): string =>
    cells
      // A cell beyond the header's columns has no width to pad to.
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n') + '\n';
}

/** Bytes as text when they are valid UTF-8, else undefined. */
export function utf8OrUndefined(bytes: Uint8Array): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/** A value for JSON output: `value` (UTF-8 text, when it is) and always `valueBase64`. */
export function jsonValue(bytes: Uint8Array): { value: string | null; valueBase64: string } {
  return { value: utf8OrUndefined(bytes) ?? null, valueBase64: Buffer.from(bytes).toString('base64') };
}

/** A value for humans: the text, or base64 marked as such. */
export function humanValue(bytes: Uint8Array): string {
  const text = utf8OrUndefined(bytes);
  return text !== undefined ? text : `base64:${Buffer.from(bytes).toString('base64')}`;
}

/**
 * An error as JSON: code, reason, message and the exit code it gives, plus what fencing and quotas add.
 * `indeterminate` ("it may have happened") only for a command that changes something: of a read it means nothing.
 */
export function errorJson(err: unknown, opts: { mutating?: boolean } = {}): Record<string, unknown> {
  const exitCode = exitCodeFor(err);
  if (err instanceof FenceLockError) {
    return {
      code: err.code,
      reason: err.reason ?? null,
      watermark: err.watermark ?? null,
      key: err.key ?? null,
      keyLock: err.keyLock ?? null,
      quota: err.quota ?? null,
      ...(opts.mutating === false ? {} : { indeterminate: err.indeterminate }),
      ...(err instanceof UnreachableError ? { endpoints: err.endpoints } : {}),
      message: err.message,
      exitCode,
    };
  }
  if (err instanceof CommandFailure) return { code: err.code, reason: null, message: err.message, exitCode };
  return { code: 'USAGE', reason: null, message: err instanceof Error ? err.message : String(err), exitCode };
}

/** A failed command's report: `fencelock: MESSAGE` on stderr, or with --json `{"error":{...}}` on stdout. */
export function reportError(io: CliIO, err: unknown, opts: { json: boolean; mutating?: boolean }): void {
  if (opts.json) io.stdout(`${toJson({ error: errorJson(err, opts) })}\n`);
  else io.stderr(`fencelock: ${err instanceof Error ? err.message : String(err)}\n`);
}

/**
 * How far each node's applied index is behind the leader's commit index (null: no answering node leads).
 * The leader's figure comes from its own answer, so a row's lag is as of the moment the statuses were taken.
 */
export function statusLags(rows: EndpointStatus[]): Array<bigint | null> {
  const leader = rows.find((r) => r.ok && r.status.role === 'leader');
  const commit = leader?.ok ? leader.status.commit : undefined;
  return rows.map((r) => {
    if (!r.ok || commit === undefined) return null;
    const lag = commit - r.status.applied;
    return lag > 0n ? lag : 0n;
  });
}

export function formatStatusTable(rows: EndpointStatus[]): string {
  const lags = statusLags(rows);
  const body = rows.map((r, i): string[] => {
    if (!r.ok) return ['-', r.endpoint, 'unreachable', '-', '-', '-', '-', '-', '-', '-', '-'];
    const s = r.status;
    const cells = [s.id, s.address || r.endpoint, s.role, s.term, s.leader || '-', s.commit, s.applied, lags[i] ?? '-', s.sessions, s.locksHeld, s.waiters];
    return cells.map(String);
  });
  const notes = rows.flatMap((r) => (r.ok ? [] : [`${r.endpoint}: ${statusProblem(r.error)}`]));
  const header = ['ID', 'ADDRESS', 'ROLE', 'TERM', 'LEADER', 'COMMIT', 'APPLIED', 'LAG', 'SESSIONS', 'LOCKS', 'WAITERS'];
  return table(header, body) + (notes.length > 0 ? '\n' + notes.join('\n') + '\n' : '');
}

/** Why a node gave no status: its refusal, or the connection's fate without grpc-js's wording. */
function statusProblem(err: FenceLockError): string {
  const { fate, detail } = endpointFate(err);
  if (fate === 'answered') return `${err.code}${err.details ? ` (${err.details})` : ''}`;
  return fate === 'tls' ? `TLS handshake failed (${detail})` : detail;
}

/** `lag`: the node's applied index behind the leader's commit (null without a leader's answer). */
export function statusJson(rows: EndpointStatus[]): unknown[] {
  const lags = statusLags(rows);
  return rows.map((r, i) => (r.ok ? { endpoint: r.endpoint, ok: true, ...r.status, lag: lags[i] } : { endpoint: r.endpoint, ok: false, error: { ...errorJson(r.error, { mutating: false }), message: `${r.endpoint}: ${statusProblem(r.error)}` } }));
}

/** `label: value` lines, the values aligned. */
export function fields(lines: Array<[string, string]>): string {
  const w = Math.max(...lines.map(([k]) => k.length)) + 1;
  return lines.map(([k, v]) => `${(k + ':').padEnd(w)} ${v}`).join('\n') + '\n';
}

/** A key that has a value, for humans: its lock and watermark, the value last (it may span lines). */
export function formatKey(key: string, r: GetResult): string {
  return fields([
    ['key', key],
    ['lock', r.lock],
    ['watermark', r.token.toString()],
    ['value', humanValue(r.value)],
  ]);
}

/** Why `kv get` found no value: never written, or deleted (the key still belongs to its lock). */
export function notFoundMessage(key: string, r: GetResult): string {
  const q = JSON.stringify;
  return r.deleted ? `key ${q(key)} was deleted; it still belongs to lock ${q(r.lock)} (watermark ${r.token})` : `key ${q(key)} not found`;
}

/** A key for JSON output: a deleted one has no value. `token` is the key's watermark, as on the wire. */
export function keyJson(key: string, r: { value: Uint8Array; token: bigint; lock: string; deleted: boolean }): Record<string, unknown> {
  const value = r.deleted ? {} : jsonValue(r.value);
  return { key, deleted: r.deleted, ...value, token: r.token, lock: r.lock };
}

/** `kv list` for humans; a DELETED column when deleted keys were asked for. */
export function keyTable(items: KeyValue[], withDeleted: boolean): string {
  const header = ['KEY', 'LOCK', 'WATERMARK', ...(withDeleted ? ['DELETED'] : []), 'VALUE'];
  const row = (i: KeyValue): string[] => [i.key, i.lock, i.token.toString(), ...(withDeleted ? [i.deleted ? 'yes' : 'no'] : []), i.deleted ? '' : humanValue(i.value)];
  return table(header, items.map(row));
}

export function formatDescription(d: LockDescription): string {
  const lines: Array<[string, string]> = [
    ['lock', d.lock],
    ['held', d.held ? 'yes' : 'no'],
  ];
  if (d.held) {
    lines.push(['holder', d.holderSession]);
    if (d.holder !== null) lines.push(['holder client', clientOf(d.holder)]);
    lines.push(['token', d.token.toString()]);
    if (d.grantedAtMs > 0) lines.push(['granted at', new Date(d.grantedAtMs).toISOString()]);
    if (d.lockDelayMs > 0) lines.push(['lock-delay', `${d.lockDelayMs} ms (if this grant ends by expiry or revoke)`]);
  }
  if (d.delayedUntilMs > 0) lines.push(['delayed until', `${new Date(d.delayedUntilMs).toISOString()} (${d.delayRemainingMs} ms left; granted to nobody until then)`]);
  lines.push(['waiters', d.waiters.length === 0 ? '0' : `${d.waiters.length} (${d.waiters.join(', ')})`]);
  d.waiterSessions.slice(0, SHOWN_WAITERS).forEach((w, i) => lines.push([`waiter ${i + 1}`, `${w.handle} ${clientOf(w)}`]));
  if (d.waiterSessions.length > SHOWN_WAITERS) lines.push(['', `... ${d.waiterSessions.length - SHOWN_WAITERS} more (--json lists them all)`]);
  lines.push(['latest token', hasRecord(d) ? d.latestToken.toString() : NO_RECORD]);
  return fields(lines);
}

/**
 * Whether the server keeps a record of the lock. It forgets a lock's record as soon as the lock is free, has
 * no waiters and owns no keys (src/state/locks.ts, bounded memory), and with it the lock's last token; it
 * answers such a lock like one never granted (latest token 0), so the two cannot be told apart.
 */
export function hasRecord(d: LockDescription): boolean {
  return d.held || d.waiters.length > 0 || d.latestToken > 0n || d.delayedUntilMs > 0;
}

const NO_RECORD = 'none kept: no record of this lock (never granted, or free, without waiters or keys, and forgotten; its last token is not kept)';

/** `describe --json`: the description and `recorded` (false: no record kept, latestToken 0 means "not known"). */
/**
 * A lock for JSON. `session` is the holder's public handle ('' when free), the same name a watch event uses
 * for the session it is about (the library calls them holderSession and sessionId).
 */
export function descriptionJson(d: LockDescription): Record<string, unknown> {
  return {
    lock: d.lock,
    held: d.held,
    session: d.holderSession,
    holder: d.holder,
    token: d.token,
    grantedAtMs: d.grantedAtMs,
    waiters: d.waiters,
    waiterSessions: d.waiterSessions,
    latestToken: d.latestToken,
    lockDelayMs: d.lockDelayMs,
    delayedUntilMs: d.delayedUntilMs,
    delayRemainingMs: d.delayRemainingMs,
    recorded: hasRecord(d),
  };
}

/** Waiters `describe` lists one a line; the rest are counted. */
const SHOWN_WAITERS = 10;

/** A session's client name (quoted, '-' when none) and labels, for humans: `"worker" host=a pid=12`. */
export function clientOf(s: Pick<SessionDetails, 'clientName' | 'labels'>): string {
  const name = s.clientName === '' ? '-' : JSON.stringify(s.clientName);
  const labels = formatLabels(s.labels);
  return labels === '' ? name : `${name} ${labels}`;
}

/** Labels as k=v separated by spaces, in key order; a value with a space, quote or = is quoted as JSON. */
export function formatLabels(labels: Record<string, string>): string {
  return Object.keys(labels)
    .sort()
    .map((k) => {
      const v = labels[k] ?? '';
      return `${k}=${/^[^\s"=]*$/.test(v) ? v : JSON.stringify(v)}`;
    })
    .join(' ');
}

/** A watch event for JSON: `session` is the public handle of the session it is about, as in descriptionJson. */
export function eventJson(ev: LockEvent): Record<string, unknown> {
  return { kind: ev.kind, lock: ev.lock, session: ev.sessionId, token: ev.token, index: ev.index, ...(ev.holder === null ? {} : { holder: ev.holder }) };
}

export function formatEvent(ev: LockEvent): string {
  const holder = ev.holder === null ? '' : ` client=${clientOf(ev.holder)}`;
  return `${ev.kind.padEnd(8)} lock=${ev.lock} session=${ev.sessionId} token=${ev.token} index=${ev.index}${holder}\n`;
}

/** A rule for humans: the permission and its prefix, quoted ("" = every name). */
export function formatRule(r: AuthRule): string {
  return `${r.permission} ${JSON.stringify(r.prefix)}`;
}

export function formatWhoAmI(w: WhoAmI): string {
  return fields([
    ['identity', w.identity === '' ? '(none)' : `${w.identity} (via ${w.via || 'unknown'})`],
    ['auth', w.authEnabled ? 'enabled' : 'disabled'],
    ['roles', w.roles.length === 0 ? '-' : w.roles.join(', ')],
    ['rules', w.rules.length === 0 ? '-' : w.rules.map(formatRule).join(', ')],
  ]);
}

/** `auth list` for humans: users, roles with their rules and quotas, token ids (the listing has no secrets). */
export function formatAuthListing(l: AuthListing): string {
  const dash = (xs: string[]): string => (xs.length === 0 ? '-' : xs.join(', '));
  return [
    `auth: ${l.authEnabled ? 'enabled' : 'disabled'}\n`,
    table(
      ['USER', 'ROLES'],
      l.users.map((u) => [u.name, dash(u.roles)]),
    ),
    table(
      ['ROLE', 'RULES', 'QUOTAS'],
      l.roles.map((r) => [r.name, dash(r.rules.map(formatRule)), dash(r.quotas.map((q) => `${q.name}=${q.value}`))]),
    ),
    table(
      ['TOKEN', 'USER'],
      l.tokens.map((t) => [t.id, t.user]),
    ),
  ].join('\n');
}

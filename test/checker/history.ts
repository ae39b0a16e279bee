// The history format shared by the chaos recorder (test/chaos/recorder.ts) and the checkers
// (linearizability.ts, invariants.ts).
//
// An Operation is one client call as the client saw it: when it was called and when it returned (both in ms
// of ONE monotonic clock, performance.now() of the recording process), what it asked, and how it ended:
//
//   ok       the server acknowledged it; `result` says what it answered.
//   fail     a definite refusal: the operation did NOT take effect (a fencing refusal, a try-lock that found
//            the lock held, a blocking acquire whose wait ended without a grant, bad input...). `error` says
//            why; the checkers use `error.reason` (STALE_TOKEN, LOCK_NOT_HELD, LOCK_HELD, ...).
//   unknown  timeout, unavailable, indeterminate: the operation MAY have taken effect, at any time after
//            `call` (even long after the client gave up). `ret` may be set (when the client gave up) but the
//            checkers treat the return time of an unknown operation as infinite.
//
// Tokens, watermarks and indexes are bigint in memory and decimal strings in JSON dumps.
//
// Issue 33's primitives (docs/architecture.md#read-write-locks, #semaphores, #atomic-multi-lock):
//   acquire/release with `mode` 'shared' (a read grant; 'exclusive' or absent: the default);
//   acquirePermit (semaphore, permits) answering a slot and a token; releasePermit and writes under a
//   permit name the semaphore and slot (no lock): each slot is a resource of its own (checkedSlot);
//   acquireAll (locks) answering one token per lock (`tokens`, in the order of `locks`).

export type OpKind = 'acquire' | 'release' | 'write' | 'get' | 'keepalive' | 'open' | 'close' | 'acquirePermit' | 'releasePermit' | 'acquireAll';
export type LockMode = 'shared' | 'exclusive';
export type Outcome = 'ok' | 'fail' | 'unknown';

/** One key of a fenced write: a put of `value`, or a delete when `value` is null. */
export interface KeyWrite {
  key: string;
  value: string | null;
}

export interface OpArgs {
  /** acquire, release, write; get: the lock the key belongs to (when the caller knows it). */
  lock?: string;
  /** acquire, release, write, close, keepalive: the session id. */
  session?: string;
  /** release, write: the fencing token. */
  token?: bigint;
  /** get: the key read. */
  key?: string;
  /** write: the keys written, in order (atomic). */
  writes?: KeyWrite[];
  /** acquire: the wait timeout (0 = try-lock). */
  waitMs?: number;
  /** open: the TTL asked for. */
  ttlMs?: number;
  /** acquire, release: the grant's mode (absent: exclusive). */
  mode?: LockMode;
  /** acquirePermit, releasePermit, write under a permit: the semaphore. */
  semaphore?: string;
  /** acquirePermit: the number of permits asked for. */
  permits?: number;
  /** releasePermit, write under a permit: the permit's slot. */
  slot?: number;
  /** acquireAll: the locks of the set, in the order asked. */
  locks?: string[];
}

export interface OpResult {
  /** acquire: the granted token; get: the key's watermark (0n when never written); write: the token. */
  token?: bigint;
  /** write: the log index the server reported (for a retried write, possibly a later entry's index). */
  index?: bigint;
  /** get. */
  found?: boolean;
  /** get: the value read (null when not found). */
  value?: string | null;
  /** get: the lock the key belongs to ('' when the key never existed). */
  lock?: string;
  /** open: the new session id. */
  session?: string;
  /** acquirePermit: the slot granted. */
  slot?: number;
  /** acquireAll: the token the client handed out for each lock of `args.locks` (one grant: all equal). */
  tokens?: bigint[];
}

export interface OpError {
  /** gRPC status name (FenceLockError.code), or a pseudo code of the recorder (NOT_ACQUIRED). */
  code: string;
  /** Machine-readable reason: STALE_TOKEN, LOCK_NOT_HELD, WRONG_LOCK, UNKNOWN_SESSION, NOT_HOLDER, WRONG_TOKEN, LOCK_HELD, ... */
  reason?: string;
  /** The refusal's watermark (fencelock-watermark), when the server sent one. */
  watermark?: bigint;
  message?: string;
}

export interface Operation {
  /** Unique within a history; the order of ids is the order of calls in one recorder. */
  id: number;
  /** The client (process) that issued it. One process issues one operation at a time. */
  process: string;
  op: OpKind;
  args: OpArgs;
  /** performance.now() when called. */
  call: number;
  /** performance.now() when it returned; undefined while in flight (then outcome is unknown). */
  ret?: number;
  outcome: Outcome;
  result?: OpResult;
  error?: OpError;
  /** The endpoint that answered (best effort: the client's current endpoint when the call returned). */
  endpoint?: string;
}

/** A fault injected (or observed) during a run, on the same clock as the operations. */
export interface FaultEvent {
  /** performance.now() when the fault began. */
  at: number;
  /** When it ended (healed, resumed, restarted), if it is a window. */
  end?: number;
  /** partition, heal, pause, resume, kill, start, restart, disconnect, connect, clock, note, ... */
  kind: string;
  /** The nodes (ids or endpoints) it touched. */
  targets: string[];
  /** For partitions: the endpoints on the minority side while it lasted. */
  minority?: string[];
  note?: string;
}

/** A window during which the given client endpoints were on a minority side of a partition. */
export interface MinorityWindow {
  start: number;
  end: number;
  endpoints: string[];
}

export interface History {
  ops: Operation[];
  faults: FaultEvent[];
  /** Free-form run information (seed, options, cluster layout). */
  meta?: Record<string, unknown>;
}

/** The final read of one key after a run (every fault healed): for invariants.ts. */
export interface FinalRead {
  found: boolean;
  value: string | null;
  /** The key's watermark (0n when never written). */
  token: bigint;
}

// ---- derived helpers -------------------------------------------------------------------------------------

/**
 * The checker's name of one slot of a semaphore: semaphores and locks are separate namespaces
 * (docs/architecture.md#semaphores), so the prefix keeps a slot apart from a lock named `NAME#SLOT`. Not the
 * downstream spelling (src/protocol/fencingHeaders.ts), where the two share a resource.
 */
export const checkedSlot = (semaphore: string, slot: number): string => `sem:${semaphore}#${slot}`;

/** The resource (lock, or semaphore slot) an acquire, release, write or get names; undefined when none. */
export function resourceOf(o: Operation): string | undefined {
  if (o.args.semaphore !== undefined && o.args.slot !== undefined) return checkedSlot(o.args.semaphore, o.args.slot);
  return o.args.lock;
}

/** Minority windows of the partition faults that name their minority side and have ended. */
export function minorityWindows(faults: readonly FaultEvent[], until = Number.POSITIVE_INFINITY): MinorityWindow[] {
  const out: MinorityWindow[] = [];
  for (const f of faults) {
    if (f.minority === undefined || f.minority.length === 0) continue;
    out.push({ start: f.at, end: f.end ?? until, endpoints: [...f.minority] });
  }
  return out;
}

/** The keys a history touched, with the lock each belongs to (from writes and lock-tagged gets). */
export function keysOf(ops: readonly Operation[]): Map<string, string | undefined> {
  const keys = new Map<string, string | undefined>();
  for (const o of ops) {
    const resource = resourceOf(o);
    if (o.op === 'write') for (const w of o.args.writes ?? []) if (resource !== undefined) keys.set(w.key, resource);
  }
  for (const o of ops) {
    if (o.op !== 'get' || o.args.key === undefined) continue;
    const known = keys.get(o.args.key);
    if (known === undefined) keys.set(o.args.key, o.args.lock ?? (o.result?.lock ? o.result.lock : undefined));
  }
  return keys;
}

/** Problems that make a history unusable (the checkers throw on them): ids, times, missing fields. */
export function validateHistory(ops: readonly Operation[]): string[] {
  const problems: string[] = [];
  const ids = new Set<number>();
  for (const o of ops) {
    const at = `op ${o.id} (${o.op})`;
    if (ids.has(o.id)) problems.push(`${at}: duplicate id`);
    ids.add(o.id);
    if (!Number.isFinite(o.call)) problems.push(`${at}: call time is not a number`);
    if (o.outcome !== 'unknown') {
      if (o.ret === undefined || !Number.isFinite(o.ret)) problems.push(`${at}: a ${o.outcome} operation needs a return time`);
    }
    if (o.ret !== undefined && o.ret < o.call) problems.push(`${at}: returns (${o.ret}) before its call (${o.call})`);
    const onPermit = o.args.semaphore !== undefined;
    const needLock = o.op === 'acquire' || o.op === 'release' || (o.op === 'write' && !onPermit);
    if (needLock && o.args.lock === undefined) problems.push(`${at}: no lock`);
    const needSession = needLock || o.op === 'write' || o.op === 'acquirePermit' || o.op === 'releasePermit' || o.op === 'acquireAll';
    if (needSession && o.args.session === undefined) problems.push(`${at}: no session`);
    if ((o.op === 'release' || o.op === 'write' || o.op === 'releasePermit') && o.args.token === undefined) problems.push(`${at}: no token`);
    if (o.op === 'write' && (o.args.writes === undefined || o.args.writes.length === 0)) problems.push(`${at}: no keys written`);
    if (o.op === 'acquirePermit' && (o.args.semaphore === undefined || o.args.permits === undefined)) problems.push(`${at}: no semaphore or permits`);
    if ((o.op === 'releasePermit' || (o.op === 'write' && onPermit)) && o.args.slot === undefined) problems.push(`${at}: no slot`);
    if (o.op === 'acquireAll' && (o.args.locks === undefined || o.args.locks.length === 0)) problems.push(`${at}: no locks`);
    if (o.outcome === 'ok' && o.op === 'acquirePermit' && (o.result?.slot === undefined || o.result.token === undefined)) problems.push(`${at}: ok permit without slot/token`);
    if (o.outcome === 'ok' && o.op === 'acquireAll' && o.result?.tokens?.length !== o.args.locks?.length) problems.push(`${at}: ok acquireAll without a token per lock`);
    if (o.op === 'get' && o.args.key === undefined) problems.push(`${at}: no key`);
    if (o.outcome === 'ok' && o.op === 'acquire' && o.result?.token === undefined) problems.push(`${at}: ok acquire without a token`);
    if (o.outcome === 'ok' && o.op === 'get' && (o.result?.found === undefined || o.result.token === undefined)) {
      problems.push(`${at}: ok get without found/token`);
    }
  }
  return problems;
}

// ---- text -----------------------------------------------------------------------------------------------

const ms = (t: number | undefined): string => (t === undefined ? '∞' : t.toFixed(1));

/** One line per operation: `#12 [10.0, 14.2] c3 write L token=7 {L/k=c3#4} -> ok`. */
export function formatOp(o: Operation): string {
  const a = o.args;
  const parts: string[] = [`#${o.id}`, `[${ms(o.call)}, ${o.outcome === 'unknown' ? '∞' : ms(o.ret)}]`, o.process, o.op];
  if (a.lock !== undefined) parts.push(a.lock);
  if (a.locks !== undefined) parts.push(`[${a.locks.join(',')}]`);
  if (a.semaphore !== undefined) parts.push(`sem=${a.semaphore}${a.permits === undefined ? '' : `/${a.permits}`}${a.slot === undefined ? '' : `#${a.slot}`}`);
  if (a.mode !== undefined) parts.push(a.mode);
  if (a.session !== undefined) parts.push(`s=${a.session.slice(-8)}`);
  if (a.token !== undefined) parts.push(`token=${a.token}`);
  if (a.key !== undefined) parts.push(`key=${a.key}`);
  if (a.waitMs !== undefined) parts.push(`wait=${a.waitMs}`);
  if (a.writes !== undefined) parts.push(`{${a.writes.map((w) => (w.value === null ? `-${w.key}` : `${w.key}=${w.value}`)).join(', ')}}`);
  let out = `-> ${o.outcome}`;
  if (o.outcome === 'ok' && o.result) {
    const r = o.result;
    if (o.op === 'get') out += ` ${r.found ? JSON.stringify(r.value) : 'not found'} @${r.token}`;
    else if (r.token !== undefined) out += ` token=${r.token}`;
    if (r.slot !== undefined) out += ` slot=${r.slot}`;
    if (r.tokens !== undefined) out += ` tokens=${r.tokens.join(',')}`;
    if (r.session !== undefined) out += ` s=${r.session.slice(-8)}`;
  }
  if (o.error) out += ` ${o.error.code}${o.error.reason ? `/${o.error.reason}` : ''}${o.error.watermark !== undefined ? ` wm=${o.error.watermark}` : ''}`;
  parts.push(out);
  return parts.join(' ');
}

export function formatOps(ops: readonly Operation[]): string {
  return [...ops].sort((x, y) => x.call - y.call || x.id - y.id).map(formatOp).join('\n');
}

// ---- JSON -----------------------------------------------------------------------------------------------

const big = (v: unknown): bigint | undefined => {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'bigint') return v;
  if (typeof v === 'string' || typeof v === 'number') return BigInt(v);
  throw new Error(`not a token: ${JSON.stringify(v)}`);
};

/** Serializes a history for a dump: bigints become decimal strings. */
export function historyToJSON(h: History, space?: number): string {
  return JSON.stringify(h, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v), space);
}

/** Parses a dump of historyToJSON (tokens, indexes and watermarks back to bigint). */
export function historyFromJSON(text: string): History {
  const raw = JSON.parse(text) as { ops?: unknown[]; faults?: FaultEvent[]; meta?: Record<string, unknown> };
  const ops = (raw.ops ?? []).map((x): Operation => {
    const o = x as Operation & { ret?: number | null };
    const op: Operation = { ...o, args: { ...o.args }, ret: o.ret ?? undefined };
    if (op.ret === undefined) delete op.ret;
    const tok = big(o.args?.token);
    if (tok !== undefined) op.args.token = tok;
    if (o.result) {
      op.result = { ...o.result };
      const t = big(o.result.token);
      if (t !== undefined) op.result.token = t;
      const i = big(o.result.index);
      if (i !== undefined) op.result.index = i;
      if (o.result.tokens !== undefined) op.result.tokens = o.result.tokens.map((t) => big(t)!);
    }
    if (o.error) {
      op.error = { ...o.error };
      const w = big(o.error.watermark);
      if (w !== undefined) op.error.watermark = w;
    }
    return op;
  });
  const h: History = { ops, faults: raw.faults ?? [] };
  if (raw.meta !== undefined) h.meta = raw.meta;
  return h;
}

/** Final reads as JSON-friendly rows, and back. */
export function finalStateToJSON(state: ReadonlyMap<string, FinalRead>): string {
  return JSON.stringify([...state].map(([key, r]) => ({ key, found: r.found, value: r.value, token: r.token.toString() })));
}

export function finalStateFromJSON(text: string): Map<string, FinalRead> {
  const rows = JSON.parse(text) as Array<{ key: string; found: boolean; value: string | null; token: string }>;
  return new Map(rows.map((r) => [r.key, { found: r.found, value: r.value, token: BigInt(r.token) }]));
}

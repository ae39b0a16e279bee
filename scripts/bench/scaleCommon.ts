// Shared pieces of the scale benchmark (scripts/bench-scale.ts): the synthetic workload (session ids, lock
// names, commands), heap measurement and small formatting helpers.
import type { AcquireCommand, Command, OpenSessionCommand } from '../../src/state';

/** A 32-bit mix (murmur3's finalizer): cheap, deterministic, and spreads consecutive integers. */
function mix32(x: number): number {
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b);
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
  return (x ^ (x >>> 16)) >>> 0;
}

function hex8(x: number): string {
  return x.toString(16).padStart(8, '0');
}

/**
 * Session id number n: 32 lowercase hex characters that look random (the leader picks 128 random bits),
 * so the snapshot's sort by id does real work. Distinct for distinct n: the last word is n itself, mixed
 * by a bijection.
 */
export function sessionId(n: number): string {
  return hex8(mix32(n + 0x9e3779b9)) + hex8(mix32(n ^ 0x7f4a7c15)) + hex8(mix32(n * 3 + 1)) + hex8(mix32(n));
}

/**
 * Lock name number n, e.g. "jobs/3f9a02c1/000042": unique (the suffix is n), about 20 bytes, and not in
 * insertion order, so the snapshot's sort by name is not handed pre-sorted input.
 */
export function lockName(n: number): string {
  return `jobs/${hex8(mix32(n ^ 0x5bd1e995))}/${String(n).padStart(6, '0')}`;
}

/**
 * How the synthetic clients identify their requests. '' = not de-duplicated (keeps the dedup table out of
 * the per-session and per-lock figures; it is measured on its own). 'per-session' = one client id per
 * session that acknowledges every earlier reply (ackedBelow), as the client library does, so each client
 * keeps one stored result and the table stays at its client bound.
 */
export type ClientMode = 'none' | 'per-session';

function meta(mode: ClientMode, session: number, requestId: number, now: number): { clientId: string; requestId: number; ackedBelow?: number; now: number } {
  if (mode === 'none') return { clientId: '', requestId: 0, now };
  return { clientId: `client-${session}`, requestId, ackedBelow: requestId, now };
}

export function openSessionCommand(mode: ClientMode, session: number, now: number): OpenSessionCommand {
  return { type: 'OpenSession', ...meta(mode, session, 1, now), sessionId: sessionId(session), ttlMs: 10_000, clientName: `bench-${session}` };
}

/** The k-th lock (0-based) of `session`, as a blocking Acquire like the client library sends. */
export function acquireCommand(mode: ClientMode, session: number, k: number, locksPerSession: number, now: number): AcquireCommand {
  return {
    type: 'Acquire',
    ...meta(mode, session, 2 + k, now),
    lock: lockName(session * locksPerSession + k),
    sessionId: sessionId(session),
    tryOnly: false,
    waitTimeoutMs: 5_000,
  };
}

/** The whole load in log order: every session opens before any of its acquires. */
export function* workload(mode: ClientMode, sessions: number, locksPerSession: number, startNow: number): Generator<Command> {
  let now = startNow;
  for (let s = 0; s < sessions; s++) yield openSessionCommand(mode, s, now++);
  for (let s = 0; s < sessions; s++) {
    for (let k = 0; k < locksPerSession; k++) yield acquireCommand(mode, s, k, locksPerSession, now++);
  }
}

export interface MemorySample {
  heapUsed: number;
  external: number;
  arrayBuffers: number;
  rss: number;
}

/** Full collections until the heap stops shrinking, then process memory. Needs --expose-gc. */
export function settledMemory(): MemorySample {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run node with --expose-gc');
  let last = Infinity;
  for (let i = 0; i < 5; i++) {
    gc();
    const used = process.memoryUsage().heapUsed;
    if (used >= last - 64 * 1024) break;
    last = used;
  }
  const m = process.memoryUsage();
  return { heapUsed: m.heapUsed, external: m.external, arrayBuffers: m.arrayBuffers, rss: m.rss };
}

/** Peak resident set size of this process so far, in bytes. */
export function peakRss(): number {
  return process.resourceUsage().maxRSS * 1024;
}

/** Milliseconds `fn` takes. */
export function time(fn: () => void): number {
  const t0 = performance.now();
  fn();
  return performance.now() - t0;
}

/** The value and the time; do not keep the pair around when the value must be collectable. */
export function timed<T>(fn: () => T): { value: T; ms: number } {
  const t0 = performance.now();
  const value = fn();
  return { value, ms: performance.now() - t0 };
}

export function mib(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

export function ms(x: number): string {
  return x >= 10_000 ? `${(x / 1000).toFixed(1)} s` : `${x.toFixed(0)} ms`;
}

export function round(x: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/** A tiny assertion that names what failed (the benchmark must not report figures of a wrong state). */
export function check(cond: unknown, what: string): asserts cond {
  if (!cond) throw new Error(`bench-scale: ${what}`);
}

export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false;
  for (let i = 0; i < a.byteLength; i++) if (a[i] !== b[i]) return false;
  return true;
}

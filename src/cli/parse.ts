import * as fs from 'node:fs';
import { AUTH_TOKEN_PREFIX, endpointProblem, parseDecimalUint64 } from '../client';
import { UsageError } from './exitCodes';
import { ENV_AUTH_TOKEN } from './security';

/** The local 3-node cluster (cluster/node{1,2,3}.json). */
export const DEFAULT_ENDPOINTS = ['127.0.0.1:7001', '127.0.0.1:7002', '127.0.0.1:7003'];

/**
 * A fencing token as typed or passed in FENCELOCK_TOKEN: a decimal uint64, digits only (no sign, spaces,
 * leading zeros, exponent or hex), 1..18446744073709551615. Throws UsageError saying what is wrong.
 */
export function parseToken(text: string | undefined, source = '--token'): bigint {
  if (text === undefined || text === '') throw new UsageError(`${source}: a fencing token is required`);
  // A bearer token put where the fencing token goes: say so without repeating it (it is a secret).
  if (text.startsWith(AUTH_TOKEN_PREFIX)) {
    throw new UsageError(`${source}: this is a bearer token (flt_...), not a fencing token; pass it as --auth-token-file, --auth-token or ${ENV_AUTH_TOKEN}`);
  }
  const n = parseDecimalUint64(text);
  if (n === undefined) {
    throw new UsageError(`${source}: ${JSON.stringify(text)} is not a fencing token (a decimal integer from 1 to 18446744073709551615, digits only)`);
  }
  if (n === 0n) throw new UsageError(`${source}: 0 is not a fencing token (tokens start at 1)`);
  return n;
}

/** `host:port,host:port`; spaces around commas are ignored, duplicates dropped. */
export function parseEndpoints(text: string, source = '--endpoints'): string[] {
  const list = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  if (list.length === 0) throw new UsageError(`${source}: no endpoint given`);
  for (const e of list) {
    const problem = endpointProblem(e);
    if (problem) throw new UsageError(`${source}: ${problem}`);
  }
  return [...new Set(list)];
}

/** --endpoints, else FENCELOCK_ENDPOINTS, else the local 3-node cluster. */
export function resolveEndpoints(flag: string | undefined, env: NodeJS.ProcessEnv): string[] {
  if (flag !== undefined) return parseEndpoints(flag, '--endpoints');
  const fromEnv = env.FENCELOCK_ENDPOINTS;
  if (fromEnv !== undefined && fromEnv.trim() !== '') return parseEndpoints(fromEnv, 'FENCELOCK_ENDPOINTS');
  return [...DEFAULT_ENDPOINTS];
}

/** A non-negative integer count of milliseconds (or of anything), digits only. */
export function parseNonNegativeInt(text: string, what: string, max = Number.MAX_SAFE_INTEGER): number {
  if (!/^(0|[1-9][0-9]*)$/.test(text)) throw new UsageError(`${what}: ${JSON.stringify(text)} is not a non-negative integer`);
  const n = Number(text);
  if (n > max) throw new UsageError(`${what}: ${text} is above the maximum ${max}`);
  return n;
}

const DURATION_UNITS_MS: Readonly<Record<string, number>> = { '': 1, ms: 1, s: 1_000, m: 60_000 };

/** A duration: whole milliseconds (`1500`, `1500ms`) or whole seconds or minutes (`5s`, `1m`), at most `maxMs`. */
export function parseDurationMs(text: string, what: string, maxMs = Number.MAX_SAFE_INTEGER): number {
  const m = /^(0|[1-9][0-9]{0,14})(ms|s|m)?$/.exec(text);
  if (m === null) throw new UsageError(`${what}: ${JSON.stringify(text)} is not a duration (e.g. 5s, 1500ms, 1m, or milliseconds)`);
  const ms = Number(m[1]) * (DURATION_UNITS_MS[m[2] ?? ''] ?? 1);
  if (ms > maxMs) throw new UsageError(`${what}: ${text} is above the maximum ${maxMs} ms`);
  return ms;
}

/** One `--label k=v` added to those before it (the key's rules are checked with all labels, when the session opens). */
export function parseLabel(text: string, previous: Record<string, string>): Record<string, string> {
  const eq = text.indexOf('=');
  if (eq <= 0) throw new UsageError(`--label: ${JSON.stringify(text)} is not KEY=VALUE`);
  return { ...previous, [text.slice(0, eq)]: text.slice(eq + 1) };
}

export function parsePositiveInt(text: string, what: string, max = Number.MAX_SAFE_INTEGER): number {
  const n = parseNonNegativeInt(text, what, max);
  if (n === 0) throw new UsageError(`${what}: must be at least 1`);
  return n;
}

/**
 * The session id of a fenced write: --session (works, but argv is visible to every local user in `ps`),
 * else --session-file (the file's content, surrounding whitespace trimmed), else FENCELOCK_SESSION.
 * Returns undefined when none is given.
 */
export function resolveSession(
  flags: { session?: string; sessionFile?: string },
  env: NodeJS.ProcessEnv,
  readFile: (file: string) => string = (f) => fs.readFileSync(f, 'utf8'),
): string | undefined {
  if (flags.session !== undefined && flags.sessionFile !== undefined) throw new UsageError('give --session or --session-file, not both');
  if (flags.sessionFile !== undefined) {
    let text: string;
    try {
      text = readFile(flags.sessionFile);
    } catch (err) {
      throw new UsageError(`--session-file: cannot read ${flags.sessionFile}: ${(err as Error).message}`);
    }
    const id = text.trim();
    if (id === '') throw new UsageError(`--session-file: ${flags.sessionFile} is empty`);
    return id;
  }
  return flags.session || env.FENCELOCK_SESSION || undefined;
}

/**
 * The fencing triple for kv put/delete: flags first, then FENCELOCK_LOCK / FENCELOCK_TOKEN / FENCELOCK_SESSION;
 * the session may also come from --session-file.
 */
export function resolveFencing(
  flags: { lock?: string; token?: string; session?: string; sessionFile?: string },
  env: NodeJS.ProcessEnv,
  readFile?: (file: string) => string,
): { lock: string; token: bigint; sessionId: string } {
  const lock = flags.lock ?? env.FENCELOCK_LOCK;
  const session = resolveSession(flags, env, readFile);
  const tokenText = flags.token ?? env.FENCELOCK_TOKEN;
  const tokenSource = flags.token !== undefined ? '--token' : 'FENCELOCK_TOKEN';
  const missing: string[] = [];
  if (!lock) missing.push('--lock (or FENCELOCK_LOCK)');
  if (tokenText === undefined || tokenText === '') missing.push('--token (or FENCELOCK_TOKEN)');
  if (!session) missing.push('FENCELOCK_SESSION (or --session-file, or --session)');
  if (missing.length > 0 || !lock || !session) {
    throw new UsageError(`a fenced write needs ${missing.join(', ')}; run it inside \`fencelock lock NAME -- CMD\` or pass the flags`);
  }
  return { lock, token: parseToken(tokenText, tokenSource), sessionId: session };
}

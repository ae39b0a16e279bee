import { endpointProblem, parseDecimalUint64 } from '../client';
import { UsageError } from './exitCodes';

/** The local 3-node cluster (cluster/node{1,2,3}.json). */
export const DEFAULT_ENDPOINTS = ['127.0.0.1:7001', '127.0.0.1:7002', '127.0.0.1:7003'];

/**
 * A fencing token as typed or passed in FENCELOCK_TOKEN: a decimal uint64, digits only (no sign, spaces,
 * leading zeros, exponent or hex), 1..18446744073709551615. Throws UsageError saying what is wrong.
 */
export function parseToken(text: string | undefined, source = '--token'): bigint {
  if (text === undefined || text === '') throw new UsageError(`${source}: a fencing token is required`);
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

export function parsePositiveInt(text: string, what: string, max = Number.MAX_SAFE_INTEGER): number {
  const n = parseNonNegativeInt(text, what, max);
  if (n === 0) throw new UsageError(`${what}: must be at least 1`);
  return n;
}

/** The fencing triple for kv put/delete: flags first, then FENCELOCK_LOCK / FENCELOCK_TOKEN / FENCELOCK_SESSION. */
export function resolveFencing(
  flags: { lock?: string; token?: string; session?: string },
  env: NodeJS.ProcessEnv,
): { lock: string; token: bigint; sessionId: string } {
  const lock = flags.lock ?? env.FENCELOCK_LOCK;
  const session = flags.session ?? env.FENCELOCK_SESSION;
  const tokenText = flags.token ?? env.FENCELOCK_TOKEN;
  const tokenSource = flags.token !== undefined ? '--token' : 'FENCELOCK_TOKEN';
  const missing: string[] = [];
  if (!lock) missing.push('--lock (or FENCELOCK_LOCK)');
  if (tokenText === undefined || tokenText === '') missing.push('--token (or FENCELOCK_TOKEN)');
  if (!session) missing.push('--session (or FENCELOCK_SESSION)');
  if (missing.length > 0) {
    throw new UsageError(`a fenced write needs ${missing.join(', ')}; run it inside \`fencelock lock NAME -- CMD\` or pass the flags`);
  }
  return { lock: lock!, token: parseToken(tokenText, tokenSource), sessionId: session! };
}

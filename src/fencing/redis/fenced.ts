// Fenced writes of Redis keys (string values): the claim judged and the write applied in one server-side
// script, with the same outcomes as the SQL helpers.
import { checkClaim, type CheckedClaim, type FencingClaim } from '../token';
import type { Refusal } from '../watermark';
import { checkDataKey, markKey, operationKey } from './keys';
import { FENCE_SCRIPT, sha1 } from './script';

/** The commands the helpers send; an ioredis client (one connection, or a Cluster's node) has them. */
export interface RedisScripting {
  evalsha(sha: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
  eval(script: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
}

/** The value a change found before it (set: the old value or null; delete: the deleted value). */
export interface RedisChange {
  previous: string | null;
}

export type RedisFencedOutcome =
  | { status: 'APPLIED'; result: RedisChange; token: bigint; step: bigint }
  | { status: 'REPLAYED'; result: RedisChange; token: bigint; step: bigint }
  | Refusal
  | { status: 'NOT_FOUND'; watermark: bigint };

export interface RedisFencedOptions {
  /** How long an operation record is kept for retries, in seconds (default one day); a later retry gets STALE or STALE_STEP, never a second apply. */
  operationTtlSeconds?: number;
  /** A stream to XADD (lock, token, step, and these fields) to in the same script: an outbox or audit trail. */
  outbox?: { stream: string; fields?: Record<string, string> };
}

export const DEFAULT_OPERATION_TTL_SECONDS = 86_400;

const SHA = sha1(FENCE_SCRIPT);

async function run(redis: RedisScripting, keys: string[], args: string[]): Promise<unknown> {
  try {
    return await redis.evalsha(SHA, keys.length, ...keys, ...args);
  } catch (err) {
    // First use on this server (or after SCRIPT FLUSH): send the script itself, which also caches it.
    if (!/NOSCRIPT/.test((err as Error).message)) throw err;
    return redis.eval(FENCE_SCRIPT, keys.length, ...keys, ...args);
  }
}

function decodeResult(text: string): RedisChange {
  return { previous: text.startsWith('1') ? text.slice(1) : null };
}

function outcomeOf(reply: unknown, c: CheckedClaim): RedisFencedOutcome {
  const r = Array.isArray(reply) ? (reply as unknown[]) : [];
  const at = (i: number): string => {
    const v = r[i];
    if (typeof v !== 'string') throw new Error(`fencing: unexpected reply from the fencing script: ${JSON.stringify(reply)}`);
    return v;
  };
  const lockOrNull = (s: string): string | null => (s ? s : null);
  switch (r[0]) {
    case 'APPLIED':
      return { status: 'APPLIED', result: decodeResult(at(1)), token: c.token, step: c.step };
    case 'REPLAYED': {
      const record = at(1);
      const colon = record.indexOf(':');
      return { status: 'REPLAYED', result: decodeResult(record.slice(colon + 1)), token: c.token, step: BigInt(record.slice(0, colon)) };
    }
    case 'STALE':
      return { status: 'STALE', watermark: BigInt(at(1)), lock: lockOrNull(at(2)) };
    case 'STALE_STEP':
      return { status: 'STALE_STEP', watermark: BigInt(at(1)), lastStep: BigInt(at(3)), lock: lockOrNull(at(2)) };
    case 'WRONG_LOCK':
      return { status: 'WRONG_LOCK', watermark: BigInt(at(1)), lock: at(2) };
    case 'NOT_FOUND':
      return { status: 'NOT_FOUND', watermark: BigInt(at(1)) };
    default:
      throw new Error(`fencing: unexpected reply from the fencing script: ${JSON.stringify(reply)}`);
  }
}

type Action = 'set' | 'update' | 'del';

async function fencedWrite(redis: RedisScripting, action: Action, key: string, value: string, claim: FencingClaim, opts: RedisFencedOptions): Promise<RedisFencedOutcome> {
  const c = checkClaim(claim);
  checkDataKey(key);
  if (typeof value !== 'string') throw new RangeError('fencing: the value must be a string');
  const ttl = opts.operationTtlSeconds ?? DEFAULT_OPERATION_TTL_SECONDS;
  if (!Number.isSafeInteger(ttl) || ttl < 1) throw new RangeError('fencing: operationTtlSeconds must be a positive integer');
  const keys = [key, markKey(key), operationKey(key, c.token, c.operationId)];
  const args = [action, c.lock, c.token.toString(), c.step.toString(), String(ttl), value];
  if (opts.outbox) {
    keys.push(checkDataKey(opts.outbox.stream));
    for (const [f, v] of Object.entries(opts.outbox.fields ?? {})) args.push(f, String(v));
  }
  return outcomeOf(await run(redis, keys, args), c);
}

/** SET key value if the claim passes the key's watermark (creates the key; a deleted key's tombstone still holds). */
export function fencedSet(redis: RedisScripting, target: { key: string; value: string }, claim: FencingClaim, opts: RedisFencedOptions = {}): Promise<RedisFencedOutcome> {
  return fencedWrite(redis, 'set', target.key, target.value, claim, opts);
}

/** SET an existing key only: NOT_FOUND (with the watermark, or the tombstone's) when it does not exist. */
export function fencedUpdate(redis: RedisScripting, target: { key: string; value: string }, claim: FencingClaim, opts: RedisFencedOptions = {}): Promise<RedisFencedOutcome> {
  return fencedWrite(redis, 'update', target.key, target.value, claim, opts);
}

/** DEL key if the claim passes; its watermark stays as the tombstone. Returns the deleted value. */
export function fencedDelete(redis: RedisScripting, target: { key: string }, claim: FencingClaim, opts: RedisFencedOptions = {}): Promise<RedisFencedOutcome> {
  return fencedWrite(redis, 'del', target.key, '', claim, opts);
}

// After restoring Redis from an old snapshot (RDB/AOF), watermarks are as old as the snapshot. raiseWatermarks
// walks a key prefix and raises every watermark below the minimum token to it.
import { checkClaim } from '../token';
import { markKey, NAMESPACE, prefixPattern } from './keys';
import { RAISE_SCRIPT } from './script';
import type { RedisScripting } from './fenced';

export interface RedisScanning extends RedisScripting {
  scan(cursor: string, match: 'MATCH', pattern: string, count: 'COUNT', n: number): Promise<[string, string[]]>;
}

async function scanAll(redis: RedisScanning, pattern: string, each: (key: string) => Promise<void>): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
    for (const k of keys) await each(k);
    cursor = next;
  } while (cursor !== '0');
}

/**
 * Raises the watermark of every key under `prefix` (its tombstone, for deleted keys; a new watermark for a key
 * that has none yet) below minToken to minToken, step 0: afterwards every token below minToken is refused
 * there and minToken is accepted as a first step. Each key is raised atomically; run it before writers come
 * back. Returns how many watermarks it raised.
 */
export async function raiseWatermarks(redis: RedisScanning, prefix: string, minToken: bigint): Promise<number> {
  const min = checkClaim({ lock: 'restore', token: minToken }).token.toString();
  if (typeof prefix !== 'string') throw new RangeError('fencing: prefix must be a string');
  const marks = new Set<string>();
  const markPrefix = markKey('');
  await scanAll(redis, prefixPattern(markKey(prefix)), async (k) => void marks.add(k));
  // Keys written before they were fenced have no watermark yet: they get one.
  await scanAll(redis, prefixPattern(prefix), async (k) => {
    if (!k.startsWith(NAMESPACE)) marks.add(markKey(k));
  });
  let raised = 0;
  for (const mark of marks) {
    if (!mark.startsWith(markPrefix)) continue;
    raised += Number(await redis.eval(RAISE_SCRIPT, 1, mark, min));
  }
  return raised;
}

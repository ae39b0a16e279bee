// Where the fencing state of a Redis key lives, beside the key. Everything fencing stores is under `fencing:`,
// which fenced data keys may not use.

export const NAMESPACE = 'fencing:';

/** The key's watermark (a hash: lock, fence, step). It outlives the key: after a delete it is the tombstone. */
export function markKey(key: string): string {
  return `${NAMESPACE}mark:${key}`;
}

/** One applied operation's record; the opId's byte length keeps `token:opId:key` unambiguous. */
export function operationKey(key: string, token: bigint, operationId: string): string {
  return `${NAMESPACE}op:${token}:${Buffer.byteLength(operationId, 'utf8')}:${operationId}:${key}`;
}

export function checkDataKey(key: unknown): string {
  if (typeof key !== 'string' || key === '') throw new RangeError('fencing: the Redis key must be a non-empty string');
  if (key.startsWith(NAMESPACE)) throw new RangeError(`fencing: keys under ${NAMESPACE} hold fencing state; a fenced key may not start with it`);
  return key;
}

/** A SCAN MATCH pattern for every key that starts with prefix (glob characters escaped). */
export function prefixPattern(prefix: string): string {
  return `${prefix.replace(/[*?[\]\\]/g, (ch) => `\\${ch}`)}*`;
}

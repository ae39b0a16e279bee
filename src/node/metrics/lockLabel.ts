/** Lock labels stop at this many segments: deeper prefixes are as many series as names. */
export const MAX_LOCK_LABEL_DEPTH = 8;

/**
 * The lock label of a lock name at `depth`: its first `depth` segments split on '/' (a name with fewer
 * segments is its own label). Depth 0 has no lock label at all (undefined), which keeps the series count
 * independent of how many locks there are.
 */
export function lockLabel(name: string, depth: number): string | undefined {
  if (depth <= 0) return undefined;
  return name.split('/', depth).join('/');
}

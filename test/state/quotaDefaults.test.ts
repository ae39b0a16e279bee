// Defaults below every shared limit (docs/auth.md "Quotas"): for every quota and every limit it shares with
// other identities, the default fits QUOTA_HEADROOM times, so no identity at its defaults fills a resource
// that others need (a lock's queue, the session table, the store...).
import { describe, expect, it } from 'vitest';
import { DEFAULT_QUOTAS, MAX_WAITERS_PER_LOCK, QUOTA_HEADROOM, QUOTA_SHARED_LIMITS } from '../../src/state/limits';
import { QUOTA_NAMES } from '../../src/state/auth/names';

describe('quota defaults', () => {
  it('every quota says which shared limits it keeps an identity below (none only for per-listener counts)', () => {
    expect(Object.keys(QUOTA_SHARED_LIMITS).sort()).toEqual([...QUOTA_NAMES].sort());
    const perListener = ['watch_streams', 'pipeline_streams', 'keepalive_streams', 'calls_in_flight'];
    for (const quota of QUOTA_NAMES) {
      if (!perListener.includes(quota)) expect(QUOTA_SHARED_LIMITS[quota].length, quota).toBeGreaterThan(0);
    }
  });

  it(`each default is at most 1/${QUOTA_HEADROOM} of every shared limit it pairs with`, () => {
    const pairs = QUOTA_NAMES.flatMap((quota) => QUOTA_SHARED_LIMITS[quota].map((limit) => ({ quota, limit })));
    expect(pairs.length).toBeGreaterThanOrEqual(7);
    for (const { quota, limit } of pairs) {
      expect(DEFAULT_QUOTAS[quota] * QUOTA_HEADROOM, `${quota} (${DEFAULT_QUOTAS[quota]}) against ${limit.name} (${limit.value})`).toBeLessThanOrEqual(limit.value);
    }
  });

  it('one identity at its default waiters cannot fill a lock queue everyone shares', () => {
    expect(DEFAULT_QUOTAS.waiters).toBeLessThan(MAX_WAITERS_PER_LOCK);
    expect(QUOTA_SHARED_LIMITS.waiters.map((l) => l.name)).toContain('MAX_WAITERS_PER_LOCK');
  });
});

// Heap cost of the building blocks the state machine is made of (a Set, a 32-character session id string, a
// lock record, a Map entry...), measured the same way as the machine itself: many of them kept alive, full
// collections, heap delta divided by the count. They explain where the per-lock bytes go.
import { lockName, round, sessionId, settledMemory } from './scaleCommon';

const N = 100_000;
const utf8 = new TextDecoder();
const ascii = (s: string): Uint8Array => Buffer.from(s, 'latin1');

/**
 * Heap bytes per item made by `make`, items kept in a preallocated array (its slots are not counted).
 * `prepare` builds inputs the items share (not counted either).
 */
function perItem<P>(prepare: () => P, make: (i: number, p: P) => unknown): number {
  const p = prepare();
  const keep: unknown[] = new Array<unknown>(N).fill(null);
  const before = settledMemory().heapUsed;
  for (let i = 0; i < N; i++) keep[i] = make(i, p);
  const after = settledMemory().heapUsed;
  // Used after the measurement, so neither the items nor their shared inputs are collected during it.
  if (keep.length !== N || p === undefined) throw new Error('unreachable');
  return (after - before) / N;
}

export function runReferenceSizes(log: (line: string) => void): Record<string, number> {
  const now = 1_700_000_000_000;
  const sizes: Record<string, number> = {
    // Every LockRecord allocates one for its waiters, almost always empty; every Session has two.
    emptySet: perItem(() => 0, () => new Set<string>()),
    // A session's `held` set with 10 lock names (the names themselves are shared, not counted).
    setOf10: perItem(
      () => Array.from({ length: 10 }, (_, k) => lockName(k)),
      (_i, names) => new Set(names),
    ),
    // A session id decoded from an entry: a fresh 32-byte string each time.
    sessionIdString: perItem(
      () => Array.from({ length: N }, (_, i) => ascii(sessionId(i))),
      (i, bytes) => utf8.decode(bytes[i]),
    ),
    lockNameString: perItem(
      () => Array.from({ length: N }, (_, i) => ascii(lockName(i))),
      (i, bytes) => utf8.decode(bytes[i]),
    ),
    // The shape of a LockRecord without its Set and strings (shared here).
    lockRecordObject: perItem(
      () => ({ name: 'n', holder: 'h', waiters: new Set<string>() }),
      (i, p) => ({ name: p.name, holder: p.holder, token: i + 1, grantedAt: now + i, latestToken: i + 1, latestHolder: p.holder, waiters: p.waiters, boundKeys: 0 }),
    ),
  };
  // A Map entry (string key -> object), amortized over a large table including its growth slack.
  {
    const keys = Array.from({ length: N }, (_, i) => lockName(i));
    const value = {};
    const before = settledMemory().heapUsed;
    const map = new Map<string, object>();
    for (const k of keys) map.set(k, value);
    sizes.mapEntry = (settledMemory().heapUsed - before) / map.size;
    const set = new Set<string>(keys);
    sizes.bigSetEntry = (settledMemory().heapUsed - before) / set.size - sizes.mapEntry;
    if (map.size + set.size !== 2 * N) throw new Error('unreachable');
  }
  for (const [k, v] of Object.entries(sizes)) sizes[k] = round(v);
  log(
    `  empty Set ${sizes.emptySet}, Set of 10 ${sizes.setOf10}, decoded 32-char id ${sizes.sessionIdString}, ` +
      `decoded ~20-char name ${sizes.lockNameString}, lock record object ${sizes.lockRecordObject}, ` +
      `Map entry ${sizes.mapEntry}, big Set entry ${sizes.bigSetEntry}`,
  );
  return sizes;
}

// An admin's move of keys to another lock (docs/auth.md "Moving keys"). A key is bound to the lock of its
// first write, so that a token of lock A never suppresses lock B's writes; a move rebinds keys on purpose.
//
// Safe because the target is idle (nobody holds or waits for it: no grant of it is live) and its latest
// token is raised to the highest moved watermark: every token it grants later (an index of the same log)
// is above every watermark it now guards, and a token below is refused as stale. The source locks lose the
// keys (an idle source without keys is forgotten, as ever).
import type { FencedKv, KvRecord } from './fencedKv';
import { invariant } from './invariant';
import * as L from './limits';
import type { LockTable } from './locks';
import type { LockRecord } from './records';
import { Reason, refused, refusedAbout, type KeysMovedResult, type RefusedResult } from './results';

/** What a MoveKeys names (registry/moveKeys.ts): one key or a prefix, and the target lock. */
export interface KeyMove {
  key?: string;
  prefix?: string;
  toLock: string;
}

export function moveKeys(kv: FencedKv, locks: LockTable, c: KeyMove): KeysMovedResult | RefusedResult {
  const target = locks.get(c.toLock);
  if (target !== undefined && (target.holder !== null || target.waiters !== null)) return refusedAbout(Reason.LOCK_BUSY, c.toLock);
  const found = keysToMove(kv, c);
  if (found === null) return refusedAbout(Reason.MOVE_TOO_LARGE, c.prefix ?? '');
  const moving = found.filter((r) => r.lock !== c.toLock || r.slot !== undefined);
  if (moving.length === 0) return { status: 'keys_moved', moved: 0 };
  if (target === undefined && locks.size >= L.MAX_LOCKS) return refused(Reason.TOO_MANY_LOCKS, 0);
  const rec = target ?? locks.create(c.toLock);
  // A key bound to a semaphore's slot (issue 33) leaves no lock: it pinned none.
  const sourceOf = (r: KvRecord): LockRecord | undefined => (r.slot === undefined ? locks.get(r.lock) : undefined);
  const sources = new Set(moving.map(sourceOf));
  let highest = 0;
  for (const r of moving) {
    const source = sourceOf(r);
    invariant(source !== undefined || r.slot !== undefined, () => `key ${JSON.stringify(r.key)} bound to a lock without a record`);
    if (source !== undefined) source.boundKeys--;
    kv.move(r, rec.name);
    rec.boundKeys++;
    if (r.watermark > highest) highest = r.watermark;
  }
  locks.raiseLatest(rec, highest);
  for (const source of sources) if (source !== undefined) locks.collectIfIdle(source);
  return { status: 'keys_moved', moved: moving.length };
}

/** The key, or the keys under the prefix (tombstones included); null when there are more than MAX_MOVE_KEYS. */
function keysToMove(kv: FencedKv, c: KeyMove): KvRecord[] | null {
  if (c.key !== undefined) {
    const r = kv.record(c.key);
    return r === undefined ? [] : [r];
  }
  const found = kv.recordsWithPrefix(c.prefix ?? '', L.MAX_MOVE_KEYS + 1);
  return found.length > L.MAX_MOVE_KEYS ? null : found;
}

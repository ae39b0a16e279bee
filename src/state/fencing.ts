// The fencing decision for a Write, as one pure function (docs/architecture.md#promises, promise 2; docs/architecture.md#fenced-writes).
//
// Accept only if, when the entry is applied, `sessionId` holds `lock` under exactly `token` and no touched
// key has a watermark above `token`. Otherwise refuse with the first of these that holds (the README's
// table, "The fencing rules", lists the same rows in the same order):
//
//   1. WRONG_LOCK      a touched key is bound to another lock (`key` names it, `owner` that lock).
//   2. WRONG_LOCK      the token is above the lock's latestToken, so it cannot have been issued for this lock;
//                      for a lock without a record (never used, or forgotten when idle without keys): above
//                      gcFloor.
//   3. SHARED_GRANT    the token is the session's live shared (read) grant of this lock: shared grants
//                      never write (docs/architecture.md#read-write-locks). Checked before the staleness
//                      rules, since later shared grants raise the latest token without ending this one.
//   4. STALE_TOKEN     the token is below the lock's latestToken: a newer grant of this lock exists. The lock
//                      keeps only its latest token, not the set of tokens it issued, so a token issued for
//                      another lock that happens to be lower also lands here: for its caller the token is
//                      useless on this lock either way, and "stop" is the safe answer.
//                      Also: a touched key's watermark is above the token (`key` names it; cannot happen while
//                      keys only take tokens of their own lock, checked defensively).
//   From here the lock has a record and token == latestToken, or it has no record and token <= gcFloor.
//   5. UNKNOWN_SESSION the session is not open and was not the holder of this grant.
//   6. NOT_HOLDER      the session is open but was not the holder of this grant: the token is another
//                      session's (its grant live or ended).
//   7. LOCK_NOT_HELD   the session was the holder of this grant and the grant has ended (released, closed or
//                      expired; no newer grant yet); or the lock has no record (its history is forgotten, so
//                      the grant's holder is unknown, but it certainly is not held under this token).
//
// The refusal's watermark = max(latestToken of the lock (0 without a record), watermark of every touched
// key that exists, whatever its lock). Every token below it is stale for this write.
import { keyOwner, type FencedKv } from './fencedKv';
import type { LockRecord } from './locks';
import { sharedGrantById } from './records';
import { Reason, type WriteRefusalReason } from './results';

export interface FenceQuery {
  lock: string;
  sessionId: string;
  token: number;
  /** Keys the write touches (duplicates allowed). */
  keys: readonly string[];
  record: LockRecord | undefined;
  gcFloor: number;
  sessionOpen: boolean;
  kv: FencedKv;
}

export type FenceDecision =
  | { ok: true }
  | { ok: false; reason: WriteRefusalReason; watermark: number; key?: string; owner?: string };

export function checkFence(q: FenceQuery): FenceDecision {
  const latest = q.record?.latestToken ?? 0;
  let watermark = latest;
  for (const key of q.keys) {
    const r = q.kv.record(key);
    if (r !== undefined && r.watermark > watermark) watermark = r.watermark;
  }
  const refuse = (reason: WriteRefusalReason, key?: string): FenceDecision =>
    key === undefined ? { ok: false, reason, watermark } : { ok: false, reason, watermark, key };

  for (const key of q.keys) {
    const r = q.kv.record(key);
    // A key bound to a semaphore's slot is no key of the lock of the same name (slotFencing.ts).
    if (r !== undefined && (r.lock !== q.lock || r.slot !== undefined)) return { ok: false, reason: Reason.WRONG_LOCK, watermark, key, owner: keyOwner(r) };
  }
  const record = q.record;
  if (q.token > (record === undefined ? q.gcFloor : latest)) return refuse(Reason.WRONG_LOCK);
  if (record !== undefined && sharedGrantById(record, q.sessionId)?.token === q.token) return refuse(Reason.SHARED_GRANT);
  if (record !== undefined && q.token < latest) return refuse(Reason.STALE_TOKEN);
  for (const key of q.keys) {
    const r = q.kv.record(key);
    if (r !== undefined && r.watermark > q.token) return refuse(Reason.STALE_TOKEN, key);
  }
  if (record === undefined) return refuse(Reason.LOCK_NOT_HELD);
  if (record.latestHolder !== q.sessionId) return refuse(q.sessionOpen ? Reason.NOT_HOLDER : Reason.UNKNOWN_SESSION);
  if (record.holder !== null && record.holder.id === q.sessionId) return { ok: true };
  return refuse(Reason.LOCK_NOT_HELD);
}

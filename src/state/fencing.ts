// The fencing decision for a Write, as one pure function (DESIGN.md 1.2 and section 3).
//
// Accept only if, when the entry is applied, `sessionId` holds `lock` under exactly `token` and no touched
// key has a watermark above `token`. Otherwise refuse, checking in this order (the first that applies):
//
//   1. WRONG_LOCK      a touched key is bound to another lock (`key` names it).
//   2. WRONG_LOCK      the token was never issued for this lock: token > the lock's latestToken; for a lock
//                      without a record (never used, or forgotten when idle without keys), token > gcFloor.
//   3. STALE_TOKEN     a newer grant of this lock exists: token < latestToken.
//   4. LOCK_NOT_HELD   the lock has no record and token <= gcFloor: its history is forgotten, and it is
//                      certainly not held under this token.
//   5. (token == latestToken, the session holds the lock under it)
//      STALE_TOKEN     if a touched key's watermark is above the token (`key` names it; cannot happen while
//                      keys only take tokens of their own lock, checked defensively), else ACCEPT.
//   6. UNKNOWN_SESSION the session is not open and was not the holder of this grant (someone else's token).
//   7. LOCK_NOT_HELD   the grant has ended (released, closed or expired; no newer grant yet), or the token
//                      belongs to another session's live grant.
//
// The refusal's watermark = max(latestToken of the lock (0 without a record), watermark of every touched
// key that exists, whatever its lock). Every token below it is stale for this write.
import type { FencedKv } from './fencedKv';
import type { LockRecord } from './locks';
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
  | { ok: false; reason: WriteRefusalReason; watermark: number; key?: string };

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
    if (r !== undefined && r.lock !== q.lock) return refuse(Reason.WRONG_LOCK, key);
  }
  if (q.record === undefined) {
    return q.token > q.gcFloor ? refuse(Reason.WRONG_LOCK) : refuse(Reason.LOCK_NOT_HELD);
  }
  if (q.token > latest) return refuse(Reason.WRONG_LOCK);
  if (q.token < latest) return refuse(Reason.STALE_TOKEN);
  if (q.record.holder !== null && q.record.holder.id === q.sessionId) {
    for (const key of q.keys) {
      const r = q.kv.record(key);
      if (r !== undefined && r.watermark > q.token) return refuse(Reason.STALE_TOKEN, key);
    }
    return { ok: true };
  }
  if (!q.sessionOpen && q.record.latestHolder !== q.sessionId) return refuse(Reason.UNKNOWN_SESSION);
  return refuse(Reason.LOCK_NOT_HELD);
}

// The fencing decision for a Write under a semaphore's permit (issue 33; docs/architecture.md#semaphores):
// fencing.ts's rules, with the slot in the place of the lock. Each (semaphore, slot) is a resource of its own:
// its keys are bound to it, and its watermark is the slot's latest token, so a stale holder of slot 2 is
// refused once slot 2 has a newer grant while the other slots' holders write on.
//
//   1. WRONG_LOCK      a touched key is bound to something else: a lock, or another semaphore or slot.
//   2. LOCK_NOT_HELD   the semaphore has no record (never used, or idle and forgotten: no permit is held, so
//                      certainly not this one), or the slot was never taken since it was made.
//   3. WRONG_LOCK      the token is above the slot's latest token: it was not issued for this slot.
//   4. STALE_TOKEN     the token is below the slot's latest token (a newer grant of the slot exists), or a
//                      touched key's watermark is above the token.
//   5. UNKNOWN_SESSION the session is not open and was not this grant's holder.
//   6. NOT_HOLDER      the session is open but was not this grant's holder.
//   7. LOCK_NOT_HELD   the session was this grant's holder and the grant has ended.
//
// The refusal's watermark = max(the slot's latest token, watermark of every touched key that exists).
import type { FenceDecision } from './fencing';
import { keyOwner, type FencedKv } from './fencedKv';
import { Reason, type WriteRefusalReason } from './results';
import type { SemaphoreRecord } from './semaphores';

export interface SlotFenceQuery {
  semaphore: string;
  slot: number;
  sessionId: string;
  token: number;
  keys: readonly string[];
  record: SemaphoreRecord | undefined;
  sessionOpen: boolean;
  kv: FencedKv;
}

export function checkSlotFence(q: SlotFenceQuery): FenceDecision {
  const slot = q.record?.slots[q.slot];
  const latest = slot?.latestToken ?? 0;
  let watermark = latest;
  for (const key of q.keys) {
    const r = q.kv.record(key);
    if (r !== undefined && r.watermark > watermark) watermark = r.watermark;
  }
  const refuse = (reason: WriteRefusalReason, key?: string): FenceDecision =>
    key === undefined ? { ok: false, reason, watermark } : { ok: false, reason, watermark, key };

  for (const key of q.keys) {
    const r = q.kv.record(key);
    if (r !== undefined && (r.lock !== q.semaphore || r.slot !== q.slot)) return { ok: false, reason: Reason.WRONG_LOCK, watermark, key, owner: keyOwner(r) };
  }
  if (slot === undefined) return refuse(Reason.LOCK_NOT_HELD);
  if (q.token > latest) return refuse(Reason.WRONG_LOCK);
  if (q.token < latest) return refuse(Reason.STALE_TOKEN);
  for (const key of q.keys) {
    const r = q.kv.record(key);
    if (r !== undefined && r.watermark > q.token) return refuse(Reason.STALE_TOKEN, key);
  }
  if (slot.latestHolder !== q.sessionId) return refuse(q.sessionOpen ? Reason.NOT_HOLDER : Reason.UNKNOWN_SESSION);
  if (slot.holder !== null && slot.holder.id === q.sessionId) return { ok: true };
  return refuse(Reason.LOCK_NOT_HELD);
}

// Semaphores as queries report them (Describe, a blocked Acquire's wait). Holds session ids, which are bearer
// secrets: for the node's own use, never shown to other clients as they are.
import type { SessionLabels } from '../protocol/labels';
import type { Session } from './records';
import type { SemaphoreRecord } from './semaphores';

export interface PermitSlotInfo {
  slot: number;
  holder: { sessionId: string; clientName: string; labels: SessionLabels; token: number; grantedAt: number } | null;
  /** The slot's watermark: the highest token it issued. */
  latestToken: number;
}

export interface SemaphoreInfo {
  name: string;
  permits: number;
  /** Permits held now. */
  held: number;
  /** The slots taken at least once since the semaphore was last idle, in slot order. */
  slots: PermitSlotInfo[];
  /** Queued session ids, FIFO. */
  waiters: string[];
  waiterSessions: { sessionId: string; clientName: string; labels: SessionLabels }[];
}

export type SessionPermitState =
  | { state: 'holder'; slot: number; token: number; permits: number }
  | { state: 'waiting'; position: number }
  | { state: 'none' };

export function semaphoreInfo(rec: SemaphoreRecord | undefined): SemaphoreInfo | undefined {
  if (rec === undefined) return undefined;
  const slots = rec.slots.map((x, slot): PermitSlotInfo => ({
    slot,
    holder: x.holder === null ? null : { sessionId: x.holder.id, clientName: x.holder.clientName, labels: x.holder.labels, token: x.latestToken, grantedAt: x.grantedAt },
    latestToken: x.latestToken,
  }));
  const queue = rec.waiters === null ? [] : Array.from(rec.waiters.keys());
  return {
    name: rec.name,
    permits: rec.permits,
    held: rec.held,
    slots,
    waiters: queue.map((s) => s.id),
    waiterSessions: queue.map((s) => ({ sessionId: s.id, clientName: s.clientName, labels: s.labels })),
  };
}

export function permitStateOf(rec: SemaphoreRecord | undefined, s: Session | undefined): SessionPermitState {
  if (rec === undefined || s === undefined) return { state: 'none' };
  const slot = rec.slots.findIndex((x) => x.holder === s);
  const held = rec.slots[slot];
  if (held !== undefined) return { state: 'holder', slot, token: held.latestToken, permits: rec.permits };
  let position = 0;
  for (const w of rec.waiters?.keys() ?? []) {
    position++;
    if (w === s) return { state: 'waiting', position };
  }
  return { state: 'none' };
}

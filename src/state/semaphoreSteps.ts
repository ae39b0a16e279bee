// The steps semaphore commands and session ends share: handing a freed permit to the first live waiter,
// and a session's permits and waits ending with it.
import type { GrantEndCause, LockEvent, SessionEndCause } from './results';
import type { Session } from './records';
import type { SemaphoreRecord, SemaphoreTable } from './semaphores';
import type { SessionTable } from './sessions';

export interface Handover {
  sessionId: string;
  slot: number;
  token: number;
}

/** Grants a just-freed permit to the first live waiter (token = `index`); undefined when nobody waits. */
export function handOverPermit(table: SemaphoreTable, sessions: SessionTable, rec: SemaphoreRecord, index: number, now: number, cause: GrantEndCause, events: LockEvent[]): Handover | undefined {
  for (const s of rec.waiters?.keys() ?? []) {
    table.dequeue(rec, s);
    if (sessions.get(s.id) !== s) continue; // cannot happen (a session's end drops its waits); never grant the dead
    const slot = table.grant(rec, s, index, now);
    events.push({ type: 'permit_granted', semaphore: rec.name, sessionId: s.id, slot, token: index, cause });
    return { sessionId: s.id, slot, token: index };
  }
  return undefined;
}

/** The first half of a session's end: its semaphore waits end (before any permit is handed on). */
export function leaveSemaphores(table: SemaphoreTable, s: Session, cause: SessionEndCause, events: LockEvent[]): void {
  for (const rec of table.ofSession(s)) {
    if (table.dequeue(rec, s)) events.push({ type: 'permit_wait_ended', semaphore: rec.name, sessionId: s.id, cause });
  }
}

/** The second half: its permits are released in semaphore name order, each handed to the next live waiter. */
export function releasePermits(table: SemaphoreTable, sessions: SessionTable, s: Session, index: number, now: number, cause: SessionEndCause, events: LockEvent[]): void {
  for (const rec of table.ofSession(s)) {
    const slot = table.slotOf(rec, s);
    if (slot < 0) continue;
    const token = table.clearSlot(rec, slot);
    events.push({ type: 'permit_released', semaphore: rec.name, sessionId: s.id, slot, token, cause });
    handOverPermit(table, sessions, rec, index, now, cause, events);
    table.collectIfIdle(rec);
  }
}

// The semaphore section of a snapshot (format 9 on; issue 33), after the auth section:
//
//   list(semaphore)
//   semaphore = str name | varint permits | list(slot) | list(waiter)
//   slot      = sref holder (0 = free) | varint grantedAt | varint latestToken | str latestHolder
//   waiter    = sref session | varint since
//
// Semaphores in name order (code point order), slots in slot order, waiters FIFO. Holders and waiters are
// open sessions (sref >= 2, snapshot.ts). Older formats have no semaphores.
import { MAX_PERMITS, MAX_WAITERS_PER_LOCK } from './limits';
import type { Session } from './records';
import type { PermitSlot, SemaphoreImage, SemaphoreRecord, SemaphoreTable } from './semaphores';
import { SnapshotError, type Reader, type Writer } from './snapshotWire';
import { compareStrings } from './text';

const SREF_FREE = 0;

export function writeSemaphores(w: Writer, images: readonly SemaphoreImage[], srefOf: (s: Session) => number): void {
  w.varint(images.length);
  for (const x of images) {
    w.str(x.name);
    w.varint(x.permits);
    w.varint(x.slots.length);
    for (const slot of x.slots) {
      w.varint(slot.holder === null ? SREF_FREE : srefOf(slot.holder));
      w.varint(slot.grantedAt);
      w.varint(slot.latestToken);
      w.str(slot.latestHolder);
    }
    w.varint(x.waiters.length);
    for (const [s, since] of x.waiters) {
      w.varint(srefOf(s));
      w.varint(since);
    }
  }
}

/** Reads the section into `table`; `sessionAt` resolves an sref of an open session (throws otherwise). */
export function readSemaphores(r: Reader, table: SemaphoreTable, sessionAt: (ref: number) => Session, lastApplied: number): void {
  const count = r.count(4);
  let previous = '';
  for (let i = 0; i < count; i++) {
    const name = r.str();
    if (i > 0 && compareStrings(previous, name) >= 0) bad(`semaphore ${JSON.stringify(name)} out of order`);
    previous = name;
    const permits = r.varint();
    if (permits < 1 || permits > MAX_PERMITS) bad(`semaphore ${JSON.stringify(name)}: permits ${permits} out of range`);
    const slots: PermitSlot[] = [];
    let held = 0;
    const slotCount = r.count(4);
    if (slotCount > permits) bad(`semaphore ${JSON.stringify(name)} has more slots than permits`);
    for (let j = 0; j < slotCount; j++) {
      const ref = r.varint();
      const holder = ref === SREF_FREE ? null : sessionAt(ref);
      const grantedAt = r.varint();
      const latestToken = r.varint();
      const latestHolder = r.str();
      if (latestToken < 1 || latestToken > lastApplied) bad(`semaphore ${JSON.stringify(name)} slot ${j}: token out of range`);
      if (holder !== null && holder.id !== latestHolder) bad(`semaphore ${JSON.stringify(name)} slot ${j}: holder is not its latest holder`);
      if (holder === null && grantedAt !== 0) bad(`semaphore ${JSON.stringify(name)} slot ${j}: free with a grant time`);
      if (holder !== null) held++;
      slots.push({ holder, grantedAt, latestToken, latestHolder });
    }
    const waiterCount = r.count(2);
    if (waiterCount > MAX_WAITERS_PER_LOCK) bad(`semaphore ${JSON.stringify(name)} has too many waiters`);
    const waiters = new Map<Session, number>();
    for (let j = 0; j < waiterCount; j++) {
      const s = sessionAt(r.varint());
      if (waiters.has(s)) bad(`semaphore ${JSON.stringify(name)}: a session waits twice`);
      waiters.set(s, r.varint());
    }
    const rec: SemaphoreRecord = { name, permits, slots, held, waiters: waiters.size === 0 ? null : waiters };
    table.restore(rec);
  }
}

function bad(message: string): never {
  throw new SnapshotError(message);
}

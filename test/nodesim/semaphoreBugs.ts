/**
 * Defects in issue 33's semaphores and atomic multi-lock, planted for one simulated run (`--bug NAME`) by
 * patching the state machine's objects, as rwBugs.ts does: the state machine has no switch for them.
 */
import { LockStateMachine } from '../../src/state/lockStateMachine';
import { isReady } from '../../src/state/multiLocks';
import { firstWaiter, type LockRecord, type Session } from '../../src/state/records';
import { SemaphoreTable, type PermitSlot, type SemaphoreRecord } from '../../src/state/semaphores';
import type { ClientBug } from './clientBugs';
import { patchMember } from './patchMember';

interface TableInternals {
  link(s: Session, rec: SemaphoreRecord): void;
  count(s: Session, what: 'locks', delta: number): void;
}

export const SEMAPHORE_BUGS: Readonly<Record<string, ClientBug>> = {
  // A permit goes to slot number `held` (the count of permits held) instead of the first free slot: once a
  // lower slot is freed while a higher one is held, the higher slot is handed to a second holder.
  'permit-slot-by-count': {
    plant: () =>
      patchMember(SemaphoreTable.prototype, 'grant', () => function (this: SemaphoreTable, rec: SemaphoreRecord, s: Session, index: number, now: number) {
        const slot = rec.held;
        const x: PermitSlot = rec.slots[slot] ?? { holder: null, grantedAt: 0, latestToken: 0, latestHolder: '' };
        if (rec.slots[slot] === undefined) rec.slots.push(x);
        Object.assign(x, { holder: s, grantedAt: now, latestToken: index, latestHolder: s.id });
        rec.held++;
        const self = this as unknown as TableInternals;
        self.link(s, rec);
        self.count(s, 'locks', 1);
        return slot;
      }),
  },
  // A freed lock whose queue a waiting set heads is handed to that set's session alone, before the set's other
  // locks are free: the set is granted part by part.
  'acquire-all-grants-early': {
    plant: () =>
      patchMember(LockStateMachine.prototype, 'grantFromQueue', (original) => function (this: LockStateMachine, rec: LockRecord, ...rest: unknown[]) {
        const head = firstWaiter(rec);
        const set = head === undefined ? undefined : rec.multiWaiters?.get(head);
        if (head !== undefined && set !== undefined && !isReady(set) && rec.holder === null && rec.sharers === null) {
          // Saved first, as every change of a record is: a snapshot being encoded keeps the record as it was.
          (this as unknown as { locks: { capture: { save(r: LockRecord): void } } }).locks.capture.save(rec);
          rec.multiWaiters!.delete(head);
          if (rec.multiWaiters!.size === 0) rec.multiWaiters = null;
        }
        return (original as (...a: unknown[]) => unknown).call(this, rec, ...rest);
      }),
  },
};

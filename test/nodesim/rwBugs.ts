/**
 * Defects in issue 33's read-write locks, planted for one simulated run (`--bug NAME`) by patching the state
 * machine's objects, as featureBugs.ts does: the state machine has no switch for them.
 */
import { LockTable } from '../../src/state/locks';
import type { Session } from '../../src/state/records';
import { write } from '../../src/state/registry/write';
import type { ClientBug } from './clientBugs';
import { patchMember } from './patchMember';

type ShareMap = Map<Session, { token: number }> | null;
interface RecordLike {
  holder: Session | null;
  sharers: ShareMap;
  latestToken: number;
  latestHolder: string;
}

export const RW_BUGS: Readonly<Record<string, ClientBug>> = {
  // The fence takes a reader's shared grant for an exclusive one: its write is accepted.
  'shared-grant-writes': {
    plant: () =>
      patchMember(write, 'execute', (original) => function (this: unknown, ...args: unknown[]) {
        const [m, , c] = args as [{ locks: LockTable }, number, { lock: string; sessionId: string; token: number }];
        const rec = m.locks.get(c.lock) as unknown as RecordLike | undefined;
        const reader = rec?.holder === null ? [...(rec.sharers ?? new Map()).entries()].find(([s, g]) => s.id === c.sessionId && g.token === c.token)?.[0] : undefined;
        if (rec === undefined || reader === undefined) return (original as (...a: unknown[]) => unknown).apply(this, args);
        const saved = { sharers: rec.sharers, latestToken: rec.latestToken, latestHolder: rec.latestHolder };
        Object.assign(rec, { sharers: null, holder: reader, latestToken: c.token, latestHolder: c.sessionId });
        try {
          return (original as (...a: unknown[]) => unknown).apply(this, args);
        } finally {
          Object.assign(rec, saved, { holder: null });
        }
      }),
  },
  // One reader's end ends every shared grant of the lock: the other readers are dropped without a word, and a
  // waiting writer is granted the lock while they still believe they hold it.
  'one-reader-ends-all': {
    plant: () =>
      patchMember(LockTable.prototype, 'clearSharer', (original) => function (this: LockTable, rec: RecordLike, session: Session) {
        const token = (original as (r: RecordLike, s: Session) => number).call(this, rec, session);
        rec.sharers = null;
        return token;
      }),
  },
};

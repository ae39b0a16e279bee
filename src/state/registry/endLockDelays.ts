// EndLockDelays: the leader ends lock-delays whose time is over by its clock (docs/architecture.md#lock-delay),
// as it expires sessions: each lock goes to its first live waiter, with this entry's index as token. A delay
// is named by the entry that started it, so an entry proposed for one delay never ends a later one of the same
// lock (two leaders may both propose the end of a delay). Not de-duplicated: it is idempotent.
import * as L from '../limits';
import { strs, type StatusTable } from '../results';
import { checkList, checkLockName, isNonNegativeInt, isRecord } from './checks';
import type { CommandEntry } from './entry';

/** A delay to end: its lock and the index of the entry that started it. */
export interface LockDelayRef {
  lock: string;
  since: number;
}

export interface EndLockDelaysCommand {
  type: 'EndLockDelays';
  now: number;
  delays: LockDelayRef[];
}

function checkDelayRef(v: unknown): string | null {
  if (!isRecord(v)) return 'a lock-delay must be an object';
  if (!isNonNegativeInt(v.since) || v.since === 0) return 'since must be an integer >= 1 (the index that started the delay)';
  return checkLockName(v.lock);
}

/** Its own status: the locks whose delay it ended (a delay already ended, or a later one, is skipped). */
const RESULTS = { delays_ended: { no: 16, fields: [strs(1, 'ended')] } } as const satisfies StatusTable;

export const endLockDelays: CommandEntry<EndLockDelaysCommand, 'delays_ended', typeof RESULTS> = {
  type: 'EndLockDelays',
  kind: 'lease',
  statuses: ['delays_ended'],
  results: RESULTS,
  member: 'endLockDelays',
  encode: (c) => ({ delays: c.delays.map((d) => ({ lock: d.lock, since: d.since })) }),
  decode: (b, meta) => ({
    type: 'EndLockDelays',
    now: meta.now,
    delays: b.list('delays').map((d) => ({ lock: d.str('lock'), since: d.num('since') })),
  }),
  validate: (c) => checkList(c.delays, 'delays', L.MAX_DELAYS_PER_ENTRY, checkDelayRef),
  execute(m, index, c, events) {
    const ended: string[] = [];
    for (const { lock, since } of c.delays) {
      const rec = m.locks.get(lock);
      if (rec === undefined || rec.delayedSince !== since) continue; // ended already, or a later delay
      m.locks.endDelay(rec);
      m.handOver(rec, index, c.now, 'delay_ended', events);
      m.locks.collectIfIdle(rec);
      ended.push(lock);
    }
    return { status: 'delays_ended', ended };
  },
};

// CheckpointLeases (as etcd's): the time each session had left on the leader. A next leader starts a
// session's deadline from its checkpoint rather than from a full TTL, so leader changes cannot postpone an
// expiry forever. Up to MAX_CHECKPOINTS_PER_ENTRY per entry; not de-duplicated (unknown sessions are
// skipped); a checkpoint above the session's TTL counts as the TTL.
import * as L from '../limits';
import { checkList, checkSessionId, isNonNegativeInt, isRecord } from './checks';
import { uint, type StatusTable } from '../results';
import type { CommandEntry } from './entry';

/** The lease time a session had left on the leader when it proposed a checkpoint. */
export interface LeaseCheckpoint {
  sessionId: string;
  remainingMs: number;
}

export interface CheckpointLeasesCommand {
  type: 'CheckpointLeases';
  now: number;
  leases: LeaseCheckpoint[];
}

function checkLeaseCheckpoint(v: unknown): string | null {
  if (!isRecord(v)) return 'a lease checkpoint must be an object';
  if (!isNonNegativeInt(v.remainingMs) || v.remainingMs > L.MAX_SESSION_TTL_MS) return `remainingMs must be an integer in [0, ${L.MAX_SESSION_TTL_MS}]`;
  return checkSessionId(v.sessionId);
}

/** Its own status: how many open sessions got their checkpoint (unknown ones were skipped). */
const RESULTS = { checkpointed: { no: 4, fields: [uint(1, 'sessions')] } } as const satisfies StatusTable;

export const checkpointLeases: CommandEntry<CheckpointLeasesCommand, 'checkpointed', typeof RESULTS> = {
  type: 'CheckpointLeases',
  kind: 'lease',
  statuses: ['checkpointed'],
  results: RESULTS,
  member: 'checkpointLeases',
  encode: (c) => ({ leases: c.leases.map((l) => ({ sessionId: l.sessionId, remainingMs: l.remainingMs })) }),
  decode: (b, meta) => ({
    type: 'CheckpointLeases',
    now: meta.now,
    leases: b.list('leases').map((l) => ({ sessionId: l.str('sessionId'), remainingMs: l.num('remainingMs') })),
  }),
  validate: (c) => checkList(c.leases, 'leases', L.MAX_CHECKPOINTS_PER_ENTRY, checkLeaseCheckpoint),
  execute(m, _index, c) {
    let sessions = 0;
    for (const { sessionId, remainingMs } of c.leases) {
      const s = m.sessions.get(sessionId);
      if (s === undefined) continue;
      m.sessions.checkpoint(s, remainingMs);
      sessions++;
    }
    return { status: 'checkpointed', sessions };
  },
};

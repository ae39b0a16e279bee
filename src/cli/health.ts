// `fencelock status` as a health check: its exit code says whether the cluster can serve (a leader is known)
// and whether every node that answered keeps up with it, so that a probe needs no parsing.
import type { EndpointStatus } from '../client';
import { EXIT } from './exitCodes';
import { statusLags } from './output';

/** A node whose applied index trails the leader's commit index by more than this many entries is behind. */
export const DEFAULT_MAX_LAG = 1000;

export interface Health {
  exitCode: number;
  /** Why the exit code is not 0, in words (undefined when healthy). */
  problem?: string;
}

/**
 * The verdict on a status of every endpoint: EXIT.UNAVAILABLE when no node answers, or when none of those
 * that answer leads or knows a leader (quorum lost: the rest is down, or cut off); EXIT.BEHIND when one that
 * answers has applied more than `maxLag` entries fewer than the leader has committed (known only when the
 * leader is among the endpoints that answered); else EXIT.OK.
 */
export function health(rows: EndpointStatus[], maxLag: number = DEFAULT_MAX_LAG): Health {
  const up = rows.flatMap((r) => (r.ok ? [r] : []));
  if (up.length === 0) return { exitCode: EXIT.UNAVAILABLE, problem: `no node answered (0 of ${rows.length})` };
  if (!up.some((r) => r.status.role === 'leader' || r.status.leader !== '')) {
    const roles = up.map((r) => `${r.status.id || r.endpoint} ${r.status.role}`).join(', ');
    return { exitCode: EXIT.UNAVAILABLE, problem: `no leader: ${up.length} of ${rows.length} nodes answered (${roles}) and none leads or knows a leader; a majority is down or cut off` };
  }
  const lags = statusLags(rows);
  const behind = rows.flatMap((r, i) => {
    const lag = lags[i];
    return r.ok && lag !== null && lag !== undefined && lag > BigInt(maxLag) ? [`${r.status.id || r.endpoint} (${lag} entries)`] : [];
  });
  if (behind.length > 0) {
    return { exitCode: EXIT.BEHIND, problem: `behind the leader by more than ${maxLag} applied entries (--max-lag): ${behind.join(', ')}` };
  }
  return { exitCode: EXIT.OK };
}

// Majority arithmetic over the voters of the configuration.

import { invariant } from './errors';
import type { NodeId } from './types';

export function quorumSize(voterCount: number): number {
  return Math.floor(voterCount / 2) + 1;
}

/** The largest index that a majority of `matches` (one per voter) has reached. */
export function committedIndex(matches: number[]): number {
  if (matches.length === 0) return 0;
  const sorted = [...matches].sort((a, b) => b - a);
  const committed = sorted[quorumSize(matches.length) - 1];
  invariant(committed !== undefined, 'a quorum is never larger than the voters');
  return committed;
}

export type VoteResult = 'won' | 'lost' | 'pending';

/** Tally of an election: won once a majority granted, lost once a majority can no longer grant. */
export function voteResult(voters: readonly NodeId[], votes: ReadonlyMap<NodeId, boolean>): VoteResult {
  let granted = 0;
  let rejected = 0;
  for (const v of voters) {
    const vote = votes.get(v);
    if (vote === true) granted++;
    else if (vote === false) rejected++;
  }
  const q = quorumSize(voters.length);
  if (granted >= q) return 'won';
  if (voters.length - rejected < q) return 'lost';
  return 'pending';
}

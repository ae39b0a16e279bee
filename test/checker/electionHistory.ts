// Checks of an election run (issue 34): what the campaigners claimed, which of their fenced writes the cluster
// accepted, and what each observer reported. Each finding is a sentence naming the tokens involved.
//
//   one-leader      a token belongs to one leadership: no two campaigners (or one twice) took it.
//   write-leader    a write accepted under a token came from the campaigner that led under it.
//   write-order     in log order, no write was accepted under a token below one already accepted.
//   observer-order  each observer reported leaderships in strictly increasing token order.
//   observer-value  each leadership an observer reported was one that a campaigner claimed, with its value.

/** A campaign that returned: `by` leads under `token`, with `by` as its value. */
export interface Leadership {
  token: bigint;
  by: string;
}

/** A fenced write the cluster accepted under `token`, applied at log `index`. */
export interface AcceptedWrite {
  token: bigint;
  index: bigint;
  by: string;
}

/** A leadership as an observer reported it: its token and the leader's value. */
export interface ObservedLeader {
  token: bigint;
  text: string;
}

export interface ElectionHistory {
  leaderships: Leadership[];
  accepted: AcceptedWrite[];
  /** One list per observer, in the order it reported. */
  observed: ObservedLeader[][];
}

/** What went wrong in a run (empty: the run is sound). */
export function checkElection(h: ElectionHistory): string[] {
  const { leaderOf, problems } = leadersByToken(h.leaderships);
  problems.push(...checkWrites(h.accepted, leaderOf));
  h.observed.forEach((seen, i) => problems.push(...checkObserver(i, seen, leaderOf)));
  return problems;
}

function leadersByToken(leaderships: Leadership[]): { leaderOf: Map<bigint, string>; problems: string[] } {
  const leaderOf = new Map<bigint, string>();
  const problems: string[] = [];
  for (const { token, by } of leaderships) {
    const first = leaderOf.get(token);
    if (first === undefined) leaderOf.set(token, by);
    else problems.push(`one-leader: token ${token} was led by ${first} and again by ${by}`);
  }
  return { leaderOf, problems };
}

function checkWrites(accepted: AcceptedWrite[], leaderOf: Map<bigint, string>): string[] {
  const problems: string[] = [];
  let newest: AcceptedWrite | undefined;
  for (const w of [...accepted].sort((a, b) => (a.index < b.index ? -1 : a.index > b.index ? 1 : 0))) {
    const leader = leaderOf.get(w.token);
    if (leader !== w.by) problems.push(`write-leader: ${w.by} wrote under token ${w.token} (index ${w.index}), led by ${leader ?? 'nobody'}`);
    if (newest && w.token < newest.token) {
      problems.push(`write-order: token ${w.token} was accepted at index ${w.index}, after token ${newest.token} at index ${newest.index}`);
    }
    if (!newest || w.token > newest.token) newest = w;
  }
  return problems;
}

function checkObserver(i: number, seen: ObservedLeader[], leaderOf: Map<bigint, string>): string[] {
  const problems: string[] = [];
  seen.forEach((l, j) => {
    const before = seen[j - 1];
    if (before && l.token <= before.token) problems.push(`observer-order: observer ${i} reported token ${l.token} after token ${before.token}`);
    const leader = leaderOf.get(l.token);
    if (leader !== l.text) problems.push(`observer-value: observer ${i} reported token ${l.token} with value ${l.text}, led by ${leader ?? 'nobody'}`);
  });
  return problems;
}

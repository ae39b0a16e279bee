/**
 * The Raft core with one of its safety rules broken, for the simulators' self-tests: each must be caught.
 * The production core has no switch for this; its rules are protected methods overridden here.
 */
import { RawNode } from '../../src/raft';
import type { Message } from '../../src/raft/types';

export interface RaftBugs {
  /** Commit an entry of a previous term by counting replicas (the paper's Figure 8). */
  commitPreviousTermByCounting?: boolean;
  /** Grant votes without checking that the candidate's log is at least as up to date. */
  voteWithoutLogCheck?: boolean;
  /** Send acknowledgements (votes, append responses) before the state they vouch for is durable. */
  ackBeforeSync?: boolean;
  /** Propose a membership change while another is still uncommitted (two changes in flight). */
  twoConfChangesInFlight?: boolean;
}

/** A RawNode class with `bugs` planted (RawNode itself when none is set). */
export function brokenRawNode(bugs: RaftBugs = {}): typeof RawNode {
  if (!bugs.commitPreviousTermByCounting && !bugs.voteWithoutLogCheck && !bugs.ackBeforeSync && !bugs.twoConfChangesInFlight) return RawNode;
  return class BrokenRawNode extends RawNode {
    protected override candidateIsUpToDate(lastLogIndex: number, lastLogTerm: number): boolean {
      return bugs.voteWithoutLogCheck === true || super.candidateIsUpToDate(lastLogIndex, lastLogTerm);
    }

    protected override mayCommitByCounting(index: number): boolean {
      return bugs.commitPreviousTermByCounting === true || super.mayCommitByCounting(index);
    }

    protected override waitsForPersist(m: Message): boolean {
      return bugs.ackBeforeSync !== true && super.waitsForPersist(m);
    }

    protected override confChangeBlocked(): 'conf-change-not-ready' | 'conf-change-pending' | undefined {
      const blocked = super.confChangeBlocked();
      return bugs.twoConfChangesInFlight === true && blocked === 'conf-change-pending' ? undefined : blocked;
    }
  };
}

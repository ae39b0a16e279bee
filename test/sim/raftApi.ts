/**
 * The slice of the core's RawNode API the simulator drives. The simulator takes a factory, so harness
 * tests can run it against a stand-in, and the CLI/tests against the real src/raft RawNode.
 */
import type { RaftConfig } from '../../src/raft/config';
import type { Entry, Message, NodeId, PersistedState, Ready, Role } from '../../src/raft/types';

export interface SimStatus {
  id: NodeId;
  term: number;
  vote: NodeId;
  commit: number;
  applied: number;
  leader: NodeId;
  role: Role;
  lastIndex: number;
  snapshotIndex: number;
  /** Leader only, when the core reports it: replication progress per peer (for diagnostics). */
  progress?: Record<NodeId, { match: number; next: number; state: string; inflight?: number }>;
}

export interface SimRaftNode {
  tick(): void;
  step(msg: Message): void;
  propose(data: Uint8Array): { index: number; term: number };
  readIndex(context: Uint8Array): void;
  transferLeadership(to: NodeId): void;
  campaign(): void;
  hasReady(): boolean;
  ready(): Ready;
  advance(ready: Ready): void;
  /** Committed entries handed out outside the Ready cycle (optional: stand-ins may lack it). */
  takeCommittedEntries?(): Entry[];
  compact(index: number, data: Uint8Array): void;
  reportUnreachable(id: NodeId): void;
  status(): SimStatus;
}

export type RaftFactory = (config: RaftConfig, persisted?: PersistedState) => SimRaftNode;

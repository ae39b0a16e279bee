import type { Message, NodeId } from '../raft/types';

/**
 * How a node's Ready loop reaches its peers. Implemented by PeerPolicy (peerPolicy.ts) over a carrier: the
 * server's over the network, the simulator's over memory, so the policy that runs under seeded faults is the
 * one that ships.
 */
export interface PeerTransport {
  send(messages: Message[]): void;
  /** Sends what is queued now rather than at the end of the turn: a Ready's messages are already one batch. */
  flush?(): void;
  onMessages(handler: (messages: Message[]) => void): void;
  onUnreachable(handler: (peer: NodeId) => void): void;
  /** The members changed: id -> address of every other member (the simulator's network needs none). */
  setPeers?(peers: Record<NodeId, string>): void;
  /** Streams from a node `check` names are refused with the removal notice (removalNotice.ts). */
  answerRemovedMembers?(check: (id: NodeId) => boolean): void;
  /** Called once, with the member that said so, when a member answers that this node was removed. */
  onRemoved?(handler: (by: NodeId) => void): void;
  close(): Promise<void>;
}

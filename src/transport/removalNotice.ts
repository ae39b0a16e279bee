// A member removed while it was cut off or down never hears the leader commit its removal: when it comes back
// it campaigns in vain for ever, logging refusals. Any member it dials can tell it instead (etcd's members do
// the same), answering its peer stream with this refusal. A member says so only from a committed
// configuration, and a removed name is never given again (confChange.ts), so the notice is final: the node
// that gets it from an authenticated member may stop. Only a member of the cluster can send it (the stream
// is mutual TLS, and the dialler checks the identity of the node it reached).
import * as grpc from '@grpc/grpc-js';
import type { NodeId } from '../raft/types';

/** Trailer key of the refusal: the node id the answering member's committed configuration removed. */
export const REMOVED_METADATA = 'fencelock-removed';

/** The status a member ends the peer stream of `id` with, `id` being removed by its committed configuration. */
export function removedRefusal(id: NodeId, by: NodeId): grpc.StatusObject {
  const metadata = new grpc.Metadata();
  metadata.set(REMOVED_METADATA, id);
  return {
    code: grpc.status.FAILED_PRECONDITION,
    details: `${id} was removed from this cluster (said by ${by}, from its committed configuration); it should stop, and its data folder can be deleted`,
    metadata,
  };
}

/** A transport's side of the notice: whom it refuses as removed, and whom it tells when it is told (once). */
export class RemovalNotices {
  private removed: (id: NodeId) => boolean = () => false;
  private handler: ((by: NodeId) => void) | undefined;
  private heard = false;

  /** `check` names the nodes the committed configuration removed (set by the node). */
  answerFor(check: (id: NodeId) => boolean): void {
    this.removed = check;
  }

  onRemoved(handler: (by: NodeId) => void): void {
    this.handler = handler;
  }

  isRemoved(id: NodeId): boolean {
    return this.removed(id);
  }

  /** Member `by` said this node was removed: the handler hears it the first time. */
  told(by: NodeId): void {
    if (this.heard) return;
    this.heard = true;
    this.handler?.(by);
  }
}

/** Whether a peer stream's end is a member's notice that `selfId` was removed. */
export function isRemovalNotice(selfId: NodeId, code: grpc.status | undefined, metadata: grpc.Metadata | undefined): boolean {
  return code === grpc.status.FAILED_PRECONDITION && metadata?.get(REMOVED_METADATA)[0] === selfId;
}

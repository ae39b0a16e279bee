// Addresses of nodes that are not (yet) our members but reached us: a leader that a member which missed
// some configuration changes does not know of. Until that member has appended the entries that name the
// leader (and so its address), it can answer only by the address the leader gave on its stream. Bounded,
// so that nodes dialling in cannot grow it; the oldest route goes first.
import type { NodeId } from '../raft/types';

/** More than a cluster has members (64): room for every member another configuration may name. */
export const MAX_RETURN_ROUTES = 64;
const HOST_PORT = /^[A-Za-z0-9.\-_[\]:]{1,249}:\d{1,5}$/;

export class ReturnRoutes {
  private readonly routes = new Map<NodeId, string>();

  /** Remembers `address` for `id`; false when the address is not host:port. */
  remember(id: NodeId, address: string): boolean {
    if (!HOST_PORT.test(address)) return false;
    this.routes.delete(id);
    this.routes.set(id, address);
    while (this.routes.size > MAX_RETURN_ROUTES) this.routes.delete(this.routes.keys().next().value as NodeId);
    return true;
  }

  /** Forgets the routes of nodes that are members now: their configured address counts. */
  forgetMembers(members: Record<NodeId, string>): void {
    for (const id of Object.keys(members)) this.routes.delete(id);
  }

  all(): Record<NodeId, string> {
    return Object.fromEntries(this.routes);
  }
}

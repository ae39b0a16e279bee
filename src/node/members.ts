// Who the members are and where they are reached: the configuration in force (the log's), with the
// addresses it carries; the node's config file fills in addresses only for members of a log that predates
// membership changes (whose configurations carry none).
import type { FullConfig, NodeId } from '../raft';
import type { MemberAddresses, NodeConfig } from './config';

export interface MemberInfo extends MemberAddresses {
  id: NodeId;
  learner: boolean;
}

export class MemberDirectory {
  constructor(
    private readonly config: NodeConfig,
    private readonly current: () => FullConfig,
  ) {}

  addressesOf(id: NodeId): MemberAddresses | undefined {
    return this.current().addresses[id] ?? this.config.members[id];
  }

  clientAddressOf(id: NodeId): string | undefined {
    return this.addressesOf(id)?.client;
  }

  /** Every member, voters first, in id order. */
  list(): MemberInfo[] {
    const c = this.current();
    const info = (id: NodeId, learner: boolean): MemberInfo => ({ id, learner, ...(this.addressesOf(id) ?? { client: '', peer: '' }) });
    return [...c.voters.map((id) => info(id, false)), ...c.learners.map((id) => info(id, true))];
  }

  /** Where this node dials each other member: the file's `peerAddresses` (tests' proxies) override the log's. */
  peerDialAddresses(): Record<NodeId, string> {
    const out: Record<NodeId, string> = {};
    for (const m of this.list()) if (m.id !== this.config.id && m.peer) out[m.id] = this.config.peerAddresses?.[m.id] ?? m.peer;
    return out;
  }
}

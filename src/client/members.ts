// client.members: membership changes (docs/operations.md). Every change is safe to retry: one already made
// answers as done, so the router's retries (leader changes, lost answers) never make a change twice.
import { FenceLockError } from './errors';
import type { MemberChangeResponse__Output } from '../protocol/generated/fencelock/v1/MemberChangeResponse';
import type { MemberListResponse__Output } from '../protocol/generated/fencelock/v1/MemberListResponse';
import { wireToBigInt } from '../protocol/wireInt';
import type { MethodDesc, Methods } from './proto';

export interface MemberRecord {
  id: string;
  clientAddress: string;
  peerAddress: string;
  /** Not voting yet: catching up, or not promoted. */
  learner: boolean;
  /** The leader's view of how far the member holds the log. */
  match: bigint;
}

export interface MemberListing {
  members: MemberRecord[];
  /** The cluster id a joining node's configuration must name ("clusterId"). */
  clusterId: string;
  /** The leader's commit index: a learner whose match is near it has caught up. */
  commit: bigint;
  /** Names of removed members, never given to another member. */
  removed: string[];
}

export interface MemberChange {
  /** Index of the change's log entry; 0 when it had been made already. */
  index: bigint;
  members: MemberListing;
}

type Call = <Req, Res>(m: MethodDesc<Req, Res>, req: Req, what: string) => Promise<Res>;

function listing(w: MemberListResponse__Output): MemberListing {
  return {
    members: w.members.map((m) => ({ id: m.id, clientAddress: m.clientAddress, peerAddress: m.peerAddress, learner: m.learner, match: wireToBigInt(m.match) })),
    clusterId: w.clusterId,
    commit: wireToBigInt(w.commit),
    removed: [...w.removed],
  };
}

function changed(w: MemberChangeResponse__Output): MemberChange {
  if (!w.members) throw new FenceLockError('INTERNAL', `membership change at index ${w.index}: the server's answer lists no members; run \`fencelock member list\``);
  return { index: wireToBigInt(w.index), members: listing(w.members) };
}

export class MembersClient {
  constructor(
    private readonly call: Call,
    private readonly methods: () => Methods['Cluster'],
  ) {}

  async list(): Promise<MemberListing> {
    return listing(await this.call(this.methods().MemberList, {}, 'member list'));
  }

  /** Adds a learner: start its node with --join, wait until it has caught up, then promote it. */
  async add(id: string, addresses: { client: string; peer: string }): Promise<MemberChange> {
    const req = { id, clientAddress: addresses.client, peerAddress: addresses.peer };
    return changed(await this.call(this.methods().MemberAdd, req, `member add ${id}`));
  }

  /** Makes a caught-up learner a voter (FAILED_PRECONDITION, reason LEARNER_BEHIND, until it has caught up). */
  async promote(id: string): Promise<MemberChange> {
    return changed(await this.call(this.methods().MemberPromote, { id }, `member promote ${id}`));
  }

  /** Removes a member; the leader hands leadership over first when it is the one removed. */
  async remove(id: string): Promise<MemberChange> {
    return changed(await this.call(this.methods().MemberRemove, { id }, `member remove ${id}`));
  }
}

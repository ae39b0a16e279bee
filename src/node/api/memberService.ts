// Cluster.Member*: membership changes (docs/operations.md). The leader proposes one change at a time; a
// change that is already made answers as done, so that a retry after a lost answer is harmless.
import * as grpc from '@grpc/grpc-js';
import { ConfChangeRefusedError, type ConfChange, type FullConfig } from '../../raft';
import { isLoopback, isNodeId, MAX_ADDRESS_LENGTH, memberAddressProblem, NODE_ID_RULE, sameMemberAddress } from '../memberAddress';
import type { MemberInfo } from '../members';
import { NodeStoppedError, NotLeaderError, OutcomeUnknownError } from '../raftDriver';
import type { MemberAddRequest__Output } from '../../protocol/generated/fencelock/v1/MemberAddRequest';
import type { MemberChangeResponse__Output } from '../../protocol/generated/fencelock/v1/MemberChangeResponse';
import type { MemberListRequest__Output } from '../../protocol/generated/fencelock/v1/MemberListRequest';
import type { MemberListResponse__Output } from '../../protocol/generated/fencelock/v1/MemberListResponse';
import type { MemberRequest__Output } from '../../protocol/generated/fencelock/v1/MemberRequest';
import { intToWire } from '../../protocol/wireInt';
import { unary, type NodeContext } from './context';
import { ApiError, invalidArgument, notLeader, reasonMetadata } from './errors';
import * as v from './validate';
import type { ApiReason } from '../../protocol/reasons';

/** Leadership hand-over before the leader removes itself: a few election timeouts at most. */
const HAND_OVER_MS = 3_000;

function nodeId(value: unknown): string {
  const id = v.text('id', value, 32);
  if (!isNodeId(id)) throw invalidArgument('id', `node ids are ${NODE_ID_RULE}`);
  return id;
}

function address(field: string, value: unknown): string {
  const a = v.text(field, value, MAX_ADDRESS_LENGTH);
  const problem = memberAddressProblem(a);
  if (problem) throw invalidArgument(field, problem);
  return a;
}

const refused = (why: string, reason: ApiReason): ApiError => new ApiError(grpc.status.FAILED_PRECONDITION, why, reasonMetadata(reason));

/**
 * Refuses addresses a current member (voter or learner) other than `id` uses, as its client or its peer
 * address, however either is spelt (sameMemberAddress: localhost is 127.0.0.1): a second name for one
 * machine would count twice toward the quorum (promoted, the phantom's vote is the real member's, and
 * losing that one node loses two votes).
 */
function checkAddressesFree(members: MemberInfo[], id: string, wanted: { client: string; peer: string }): void {
  for (const m of members) {
    if (m.id === id) continue;
    for (const [field, value] of [['peer_address', wanted.peer], ['client_address', wanted.client]] as const) {
      const use = m.peer && sameMemberAddress(value, m.peer) ? 'peer' : m.client && sameMemberAddress(value, m.client) ? 'client' : undefined;
      if (use !== undefined) {
        const named = m.client === value || m.peer === value ? '' : ` (given as ${use === 'peer' ? m.peer : m.client})`;
        throw refused(`${field}: ${value} is the ${use} address of member ${m.id}${named}${m.learner ? ' (a learner)' : ''}; a new member needs addresses of its own (remove ${m.id} first if it moved)`, 'MEMBERSHIP_REFUSED');
      }
    }
  }
}

export function memberService(ctx: NodeContext): grpc.UntypedServiceImplementation {
  const { driver } = ctx;

  const list = (): MemberListResponse__Output => {
    const config = driver.config();
    return {
      members: ctx.members.list().map((m) => ({
        id: m.id,
        clientAddress: m.client,
        peerAddress: m.peer,
        learner: m.learner,
        match: intToWire('match', m.id === ctx.config.id ? driver.core.basicStatus().lastIndex : driver.core.matchOf(m.id)),
      })),
      clusterId: ctx.config.clusterId,
      commit: intToWire('commit', driver.core.basicStatus().commit),
      removed: config.removed,
    };
  };

  /** Proposes `change` unless `done(config)` says it is made already; answers with the members after it. */
  const changeMembers = async (change: ConfChange, done: (c: FullConfig) => boolean): Promise<MemberChangeResponse__Output> => {
    ctx.requireLeader();
    if (done(driver.config())) return { index: intToWire('index', 0), members: list() };
    let index: number;
    try {
      index = await driver.proposeConfChange(change);
    } catch (err) {
      throw changeError(ctx, err);
    }
    return { index: intToWire('index', index), members: list() };
  };

  return {
    MemberList: unary(ctx, 'Cluster.MemberList', async (_req: MemberListRequest__Output, call): Promise<MemberListResponse__Output> => {
      ctx.access.permitAdmin(call.caller);
      ctx.requireLeader();
      return list();
    }),
    MemberAdd: unary(ctx, 'Cluster.MemberAdd', async (req: MemberAddRequest__Output, call) => {
      const id = nodeId(req.id);
      const client = address('client_address', req.clientAddress);
      const peer = address('peer_address', req.peerAddress);
      ctx.access.permitAdmin(call.caller);
      // Plaintext members stay on loopback, as the config file requires of every node.
      if (ctx.config.insecure && !(isLoopback(client) && isLoopback(peer))) {
        throw invalidArgument('peer_address', 'this cluster runs without TLS ("insecure"), so its members must be on loopback');
      }
      if (sameMemberAddress(client, peer)) throw invalidArgument('peer_address', `is the client address too (${peer}); a member has a peer listener apart from its client listener`);
      ctx.requireLeader();
      checkAddressesFree(ctx.members.list(), id, { client, peer });
      return changeMembers({ type: 'add-learner', node: id, address: { client, peer } }, (c) => {
        const known = c.addresses[id];
        return c.learners.includes(id) && known?.client === client && known.peer === peer;
      });
    }),
    MemberPromote: unary(ctx, 'Cluster.MemberPromote', async (req: MemberRequest__Output, call) => {
      const id = nodeId(req.id);
      ctx.access.permitAdmin(call.caller);
      return changeMembers({ type: 'promote', node: id }, (c) => c.voters.includes(id));
    }),
    MemberRemove: unary(ctx, 'Cluster.MemberRemove', async (req: MemberRequest__Output, call) => {
      const id = nodeId(req.id);
      ctx.access.permitAdmin(call.caller);
      ctx.requireLeader();
      if (id === ctx.config.id && driver.config().voters.length > 1) {
        // A leader removing itself would leave the cluster without a leader until an election: hand over
        // first; the caller retries at the new leader, which removes this node.
        await driver.handOver(HAND_OVER_MS);
        throw notLeader(ctx.leaderAddress());
      }
      return changeMembers({ type: 'remove', node: id }, (c) => c.removed.includes(id));
    }),
  };
}

function changeError(ctx: NodeContext, err: unknown): unknown {
  if (err instanceof ConfChangeRefusedError) return refused(err.why, err.kind === 'learner-behind' ? 'LEARNER_BEHIND' : 'MEMBERSHIP_REFUSED');
  if (err instanceof NotLeaderError) {
    if (/conf-change-pending/.test(err.message)) {
      return new ApiError(grpc.status.UNAVAILABLE, 'another membership change is in progress; retry shortly', reasonMetadata('CHANGE_IN_PROGRESS'));
    }
    if (/conf-change-not-ready/.test(err.message)) {
      return new ApiError(grpc.status.UNAVAILABLE, 'this leader was just elected and is catching up; retry shortly', reasonMetadata('NOT_LEADER'));
    }
    return notLeader(ctx.leaderAddress());
  }
  if (err instanceof NodeStoppedError || err instanceof OutcomeUnknownError) {
    return new ApiError(grpc.status.UNAVAILABLE, `${err.message}; retry: a change already made answers as done`);
  }
  return err;
}

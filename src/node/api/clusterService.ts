import type * as grpc from '@grpc/grpc-js';
import { snapshotStream } from '../backup/snapshotStream';
import type { StatusRequest__Output } from '../../protocol/generated/fencelock/v1/StatusRequest';
import type { StatusResponse__Output } from '../../protocol/generated/fencelock/v1/StatusResponse';
import { intToWire } from '../../protocol/wireInt';
import { unary, type NodeContext } from './context';
import { memberService } from './memberService';

export function clusterService(ctx: NodeContext): grpc.UntypedServiceImplementation {
  return {
    ...memberService(ctx),
    Status: unary(ctx, 'Cluster.Status', async (_req: StatusRequest__Output, call): Promise<StatusResponse__Output> => {
      ctx.access.permitUser(call.caller);
      const st = ctx.driver.core.status();
      const progress = st.progress ?? {};
      const state = ctx.machine.stats();
      return {
        id: ctx.config.id,
        // Where others reach this node (advertised), not what it binds: `listen` may be 0.0.0.0.
        address: ctx.config.members[ctx.config.id]?.client ?? ctx.config.listen,
        role: st.role,
        term: intToWire('term', st.term),
        leader: st.leader,
        leaderAddress: ctx.leaderAddress() ?? '',
        commit: intToWire('commit', st.commit),
        applied: intToWire('applied', st.applied),
        snapshotIndex: intToWire('snapshot_index', st.snapshotIndex),
        lastIndex: intToWire('last_index', st.lastIndex),
        sessions: intToWire('sessions', state.sessions),
        locksHeld: intToWire('locks_held', state.heldLocks),
        waiters: intToWire('waiters', state.waiters),
        peers: ctx.members.list()
          .filter(({ id }) => id !== ctx.config.id)
          .map(({ id, client, learner }) => ({
            id,
            address: client,
            learner,
            match: intToWire('match', progress[id]?.match ?? 0),
            next: intToWire('next', progress[id]?.next ?? 0),
            state: progress[id]?.state ?? '',
          })),
      };
    }),
    Snapshot: snapshotStream(ctx),
  };
}

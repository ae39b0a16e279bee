import type * as grpc from '@grpc/grpc-js';
import { snapshotStream } from '../backup/snapshotStream';
import { unary, type NodeContext } from './context';
import { memberService } from './memberService';

export function clusterService(ctx: NodeContext): grpc.UntypedServiceImplementation {
  return {
    ...memberService(ctx),
    Status: unary(ctx, 'Cluster.Status', async (_req: unknown, call) => {
      ctx.access.permitUser(call.caller);
      const st = ctx.driver.core.status();
      const progress = st.progress ?? {};
      const state = ctx.machine.stats();
      return {
        id: ctx.config.id,
        // Where others reach this node (advertised), not what it binds: `listen` may be 0.0.0.0.
        address: ctx.config.members[ctx.config.id]?.client ?? ctx.config.listen,
        role: st.role,
        term: String(st.term),
        leader: st.leader,
        leaderAddress: ctx.leaderAddress() ?? '',
        commit: String(st.commit),
        applied: String(st.applied),
        snapshotIndex: String(st.snapshotIndex),
        lastIndex: String(st.lastIndex),
        sessions: String(state.sessions),
        locksHeld: String(state.heldLocks),
        waiters: String(state.waiters),
        peers: ctx.members.list()
          .filter(({ id }) => id !== ctx.config.id)
          .map(({ id, client, learner }) => ({
            id,
            address: client,
            learner,
            match: String(progress[id]?.match ?? 0),
            next: String(progress[id]?.next ?? 0),
            state: progress[id]?.state ?? '',
          })),
      };
    }),
    Snapshot: snapshotStream(ctx),
  };
}

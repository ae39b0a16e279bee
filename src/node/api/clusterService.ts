import type * as grpc from '@grpc/grpc-js';
import { snapshotStream } from '../backup/snapshotStream';
import { unary, type NodeContext } from './context';

export function clusterService(ctx: NodeContext): grpc.UntypedServiceImplementation {
  return {
    Status: unary(ctx, 'Cluster.Status', async (_req: unknown, call) => {
      ctx.access.permitUser(call.caller);
      const st = ctx.driver.core.status();
      const progress = st.progress ?? {};
      return {
        id: ctx.config.id,
        address: ctx.config.listen,
        role: st.role,
        term: String(st.term),
        leader: st.leader,
        leaderAddress: ctx.leaderAddress() ?? '',
        commit: String(st.commit),
        applied: String(st.applied),
        snapshotIndex: String(st.snapshotIndex),
        lastIndex: String(st.lastIndex),
        peers: Object.entries(ctx.config.members)
          .filter(([id]) => id !== ctx.config.id)
          .map(([id, addresses]) => ({
            id,
            address: addresses.client,
            match: String(progress[id]?.match ?? 0),
            next: String(progress[id]?.next ?? 0),
            state: progress[id]?.state ?? '',
          })),
      };
    }),
    Snapshot: snapshotStream(ctx),
  };
}

// Cluster.Snapshot (docs/backup.md): a consistent backup of the whole state, streamed by the leader.
import { createHash } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { ApiError } from '../api/errors';
import { toServiceError, type NodeContext } from '../api/context';

/** Bytes of state per message: far below the 4 MiB message limit, large enough to cost little per byte. */
export const SNAPSHOT_CHUNK_BYTES = 256 * 1024;

/**
 * Backups streamed by one node at once. Each holds the encoded state until its client has read it all, so
 * this bounds that memory to a few copies of the state; a backup is an operator's occasional call.
 */
export const MAX_SNAPSHOT_STREAMS = 2;

type SnapshotCall = grpc.ServerWritableStream<unknown, unknown>;

/** The state at one applied index, with the term of that entry. */
interface TakenState {
  index: number;
  term: number;
  data: Uint8Array;
  voters: string[];
}

export function snapshotStream(ctx: NodeContext): grpc.handleServerStreamingCall<unknown, unknown> {
  let streaming = 0;
  return (call: SnapshotCall) => {
    let cancelled = false;
    call.on('cancelled', () => (cancelled = true));
    const run = async (): Promise<void> => {
      ctx.access.permitAdmin(ctx.access.callerOf(call));
      if (streaming >= MAX_SNAPSHOT_STREAMS) {
        throw new ApiError(grpc.status.RESOURCE_EXHAUSTED, `this node is streaming ${streaming} backups already (at most ${MAX_SNAPSHOT_STREAMS} at once); retry when one has finished`);
      }
      streaming++;
      try {
        // ReadIndex: once applied reaches the leader's commit index of this moment, the state holds every
        // write acknowledged before the call (a leader acknowledges only what it has applied).
        await ctx.linearizableRead();
        if (cancelled) return; // the caller left: no encoding for nobody
        const taken = takeState(ctx);
        await send(call, taken, () => cancelled);
      } finally {
        streaming--;
      }
    };
    run().catch((err: unknown) => {
      if (!cancelled) call.emit('error', toServiceError(ctx.logger, 'Cluster.Snapshot', err));
    });
  };
}

/**
 * The state and its index, read in one synchronous step (nothing is applied in between). Encoded at once
 * rather than from a capture in slices: the node's own snapshots use the one capture a state machine has
 * at a time. This blocks the event loop for the encoding, about 0.2 s at the state's limits (README).
 */
function takeState(ctx: NodeContext): TakenState {
  const st = ctx.driver.core.basicStatus();
  if (st.appliedTerm === 0) throw new ApiError(grpc.status.UNAVAILABLE, 'this leader has applied nothing yet; retry shortly');
  return { index: st.applied, term: st.appliedTerm, data: ctx.app.snapshot(), voters: [...ctx.driver.config().voters] };
}

/** The header, then the data in chunks, each written once the stream has room (the client reads at its pace). */
async function send(call: SnapshotCall, taken: TakenState, cancelled: () => boolean): Promise<void> {
  const { data } = taken;
  const sha256 = createHash('sha256').update(data).digest();
  const header = { index: String(taken.index), term: String(taken.term), size: String(data.length), sha256, voters: taken.voters };
  if (!call.write({ header, data: Buffer.alloc(0) })) await drained(call);
  for (let off = 0; off < data.length; off += SNAPSHOT_CHUNK_BYTES) {
    if (cancelled()) return;
    const chunk = Buffer.from(data.buffer, data.byteOffset + off, Math.min(SNAPSHOT_CHUNK_BYTES, data.length - off));
    if (!call.write({ data: chunk })) await drained(call);
  }
  call.end();
}

/** Resolves when the stream's buffer has room again, or the call ended. */
function drained(call: SnapshotCall): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = (): void => {
      call.off('drain', done);
      call.off('close', done);
      call.off('cancelled', done);
      resolve();
    };
    call.on('drain', done);
    call.on('close', done);
    call.on('cancelled', done);
  });
}

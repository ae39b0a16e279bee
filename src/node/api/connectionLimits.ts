// Per-connection counts of what a client holds open on the client listener (streams of each kind, Pipeline
// calls), refused beyond their caps (streamLimits.ts) with RESOURCE_EXHAUSTED naming the cap.
//
// A connection is told apart by call.getPeer(): grpc-js gives the remote address and port of the call's
// HTTP/2 session socket, which are fixed for the life of one TCP connection and differ between two open ones.
// A count is released when its stream closes (grpc-js emits 'close' on every ending: status sent, client
// cancel, connection lost), so a stream whose end is still queued behind unsent messages keeps counting.
import * as grpc from '@grpc/grpc-js';
import { ApiError, REASON_METADATA_KEY } from './errors';
import {
  MAX_KEEPALIVES_PER_CONNECTION,
  MAX_PIPELINE_CALLS_PER_CONNECTION,
  MAX_PIPELINES_PER_CONNECTION,
  MAX_WATCHES_PER_CONNECTION,
} from './streamLimits';

/** What is counted per connection, and its cap (the names appear in refusals). */
export const CONNECTION_CAPS = {
  'Watch streams': MAX_WATCHES_PER_CONNECTION,
  'Pipeline streams': MAX_PIPELINES_PER_CONNECTION,
  'KeepAlive streams': MAX_KEEPALIVES_PER_CONNECTION,
  'Pipeline calls in flight': MAX_PIPELINE_CALLS_PER_CONNECTION,
} as const;

export type Counted = keyof typeof CONNECTION_CAPS;

const ADVICE: Record<Counted, string> = {
  'Watch streams': 'end a watch first',
  'Pipeline streams': 'send more calls on one stream instead',
  'KeepAlive streams': 'renew every session on one stream instead',
  'Pipeline calls in flight': 'wait for answers before sending more',
};

export class ConnectionLimits {
  private readonly counts = new Map<string, Map<Counted, number>>();

  constructor(private readonly caps: Record<Counted, number> = CONNECTION_CAPS) {}

  /**
   * Counts one `what` for the connection; returns its release (safe to call more than once). At the cap,
   * throws RESOURCE_EXHAUSTED (reason TOO_MANY_STREAMS or TOO_MANY_CALLS) naming it.
   */
  take(connection: string, what: Counted): () => void {
    const own = this.counts.get(connection) ?? new Map<Counted, number>();
    const n = own.get(what) ?? 0;
    const cap = this.caps[what];
    if (n >= cap) {
      const reason = what === 'Pipeline calls in flight' ? 'TOO_MANY_CALLS' : 'TOO_MANY_STREAMS';
      throw new ApiError(grpc.status.RESOURCE_EXHAUSTED, `this connection already has ${cap} ${what}, the most one connection may have; ${ADVICE[what]}`, {
        [REASON_METADATA_KEY]: reason,
      });
    }
    own.set(what, n + 1);
    this.counts.set(connection, own);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.release(connection, what);
    };
  }

  private release(connection: string, what: Counted): void {
    const own = this.counts.get(connection);
    const n = own?.get(what) ?? 0;
    if (!own || n <= 1) own?.delete(what);
    else own.set(what, n - 1);
    if (own?.size === 0) this.counts.delete(connection);
  }
}

type StreamCall = grpc.ServerWritableStream<unknown, unknown> | grpc.ServerDuplexStream<unknown, unknown>;

/**
 * `implementation` with its streaming `methods` counted per connection: a stream over its cap ends at once
 * with the refusal, before the handler sees it.
 */
export function capStreams(
  implementation: grpc.UntypedServiceImplementation,
  methods: Record<string, Counted>,
  limits: ConnectionLimits,
): grpc.UntypedServiceImplementation {
  const capped: grpc.UntypedServiceImplementation = { ...implementation };
  for (const [method, what] of Object.entries(methods)) {
    const handler = implementation[method] as ((call: StreamCall) => void) | undefined;
    if (!handler) throw new Error(`capStreams: no method ${method}`);
    capped[method] = ((call: StreamCall) => {
      let release: () => void;
      try {
        release = limits.take(call.getPeer(), what);
      } catch (err) {
        call.emit('error', (err as ApiError).toServiceError());
        return;
      }
      call.once('close', release);
      call.once('cancelled', release);
      handler(call);
    }) as grpc.UntypedHandleCall;
  }
  return capped;
}

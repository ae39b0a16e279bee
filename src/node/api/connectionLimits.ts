// Per-connection counts of what a client holds open on the client listener (streams of each kind, Pipeline
// calls), refused beyond their caps (streamLimits.ts) with RESOURCE_EXHAUSTED naming the cap.
//
// A connection is told apart by call.getPeer(): grpc-js gives the remote address and port of the call's
// HTTP/2 session socket, which are fixed for the life of one TCP connection and differ between two open ones.
// A count is released when its stream closes (grpc-js emits 'close' on every ending: status sent, client
// cancel, connection lost), so a stream whose end is still queued behind unsent messages keeps counting.
import * as grpc from '@grpc/grpc-js';
import type { Caller } from '../auth/caller';
import type { StreamQuotaName } from '../../state/auth/names';
import { ApiError, QUOTA_METADATA_KEY, reasonMetadata } from './errors';
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

/** The quota (docs/auth.md) that bounds each count per identity, over all of its connections. */
export const IDENTITY_QUOTA: Record<Counted, StreamQuotaName> = {
  'Watch streams': 'watch_streams',
  'Pipeline streams': 'pipeline_streams',
  'KeepAlive streams': 'keepalive_streams',
  'Pipeline calls in flight': 'calls_in_flight',
};

/** An identity's cap for a count (its quota); undefined: not counted per identity. */
export type IdentityCap = (identity: string, quota: StreamQuotaName) => number | undefined;

/** The key of one count: what is counted, for whom ('connection <peer>' or 'identity <name>'). */
function countKey(owner: string, what: Counted): string {
  return `${owner}\u0000${what}`;
}

export class ConnectionLimits {
  /** Counts by countKey; a count that drops to 0 is deleted, so a closed connection leaves nothing behind. */
  private readonly counts = new Map<string, number>();

  constructor(
    private readonly caps: Record<Counted, number> = CONNECTION_CAPS,
    private readonly identityCap: IdentityCap = () => undefined,
  ) {}

  /**
   * Counts one `what` for the connection and for the caller's identity (when it has one); returns its
   * release (safe to call more than once). At a cap, throws RESOURCE_EXHAUSTED naming it: reason
   * TOO_MANY_STREAMS or TOO_MANY_CALLS for the connection's, QUOTA_EXCEEDED for the identity's.
   */
  take(connection: string, what: Counted, identity = ''): () => void {
    return this.counter(connection, what, identity).take();
  }

  /** take() for the many calls of one stream: its keys are built once, not per call. */
  counter(connection: string, what: Counted, identity = ''): { take(): () => void } {
    const connectionKey = countKey(`connection ${connection}`, what);
    const identityKey = identity === '' ? undefined : countKey(`identity ${identity}`, what);
    return { take: () => this.takeCounted(connectionKey, identityKey, what, identity) };
  }

  private takeCounted(connectionKey: string, identityKey: string | undefined, what: Counted, identity: string): () => void {
    const cap = this.caps[what];
    if (this.count(connectionKey) >= cap) {
      const reason = what === 'Pipeline calls in flight' ? 'TOO_MANY_CALLS' : 'TOO_MANY_STREAMS';
      throw new ApiError(grpc.status.RESOURCE_EXHAUSTED, `this connection already has ${cap} ${what}, the most one connection may have; ${ADVICE[what]}`, reasonMetadata(reason));
    }
    const quota = IDENTITY_QUOTA[what];
    // The quota is read at each take: an admin may change it while the stream is open.
    const identityCap = identityKey === undefined ? undefined : this.identityCap(identity, quota);
    if (identityKey !== undefined && identityCap !== undefined && this.count(identityKey) >= identityCap) {
      throw new ApiError(
        grpc.status.RESOURCE_EXHAUSTED,
        `QUOTA_EXCEEDED: ${JSON.stringify(identity)} already has ${identityCap} ${what} over all its connections (quota ${quota}); ${ADVICE[what]}, or an admin raises it for a role with \`fencelock auth role quota ROLE ${quota} VALUE\``,
        reasonMetadata('QUOTA_EXCEEDED', { [QUOTA_METADATA_KEY]: quota }),
      );
    }
    const counted = identityCap === undefined ? undefined : identityKey;
    this.add(connectionKey, 1);
    if (counted !== undefined) this.add(counted, 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.add(connectionKey, -1);
      if (counted !== undefined) this.add(counted, -1);
    };
  }

  private count(key: string): number {
    return this.counts.get(key) ?? 0;
  }

  // One flat map: a connection with one call at a time no longer builds and drops a map of its own per call.
  private add(key: string, delta: number): void {
    const n = (this.counts.get(key) ?? 0) + delta;
    if (n <= 0) this.counts.delete(key);
    else this.counts.set(key, n);
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
  identify: (call: StreamCall) => Caller | undefined = () => undefined,
  onRefused?: (method: string, err: ApiError) => void,
): grpc.UntypedServiceImplementation {
  const capped: grpc.UntypedServiceImplementation = { ...implementation };
  for (const [method, what] of Object.entries(methods)) {
    const handler = implementation[method] as ((call: StreamCall) => void) | undefined;
    if (!handler) throw new Error(`capStreams: no method ${method}`);
    capped[method] = ((call: StreamCall) => {
      let release: () => void;
      try {
        release = limits.take(call.getPeer(), what, identify(call)?.identity);
      } catch (err) {
        onRefused?.(method, err as ApiError);
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

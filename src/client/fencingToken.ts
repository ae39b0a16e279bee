// A held lock's token in the forms downstream resources take: a bigint for pg parameters and the fencing
// helpers, a decimal string, and the HTTP headers of the fencing convention (src/protocol/fencingHeaders.ts).
import type { Context } from '@opentelemetry/api';
import { fencingHeaders } from '../protocol/fencingHeaders';
import { traceHeaders, tracingActive } from '../protocol/traceContext';

export interface LockFencing {
  lock: string;
  token: bigint;
  /** Decimal, for a `$1::bigint` parameter, an environment variable or a log line. */
  tokenString: string;
  /**
   * Fencing-Token and Fencing-Lock (and Fencing-Step when a step is given) for an HTTP request; with tracing on
   * also traceparent and baggage (fencelock.lock, fencelock.token), so the resource's check joins the trace.
   */
  headers(step?: bigint): Record<string, string>;
  /** The claim the fencing helpers take (fencedUpdate, withFence, ...), for this step of the work. */
  claim(step?: bigint, operationId?: string): { lock: string; token: bigint; step?: bigint; operationId?: string };
}

/**
 * `traceContext`, while tracing is on: the context a downstream request continues (the active span, else the
 * lock's hold span, with the grant in baggage), sent as traceparent and baggage beside the token.
 */
export function lockFencing(lock: string, token: bigint, traceContext?: () => Context): LockFencing {
  return {
    lock,
    token,
    tokenString: token.toString(),
    headers: (step) => {
      const h = fencingHeaders(lock, token, step);
      return traceContext === undefined || !tracingActive() ? h : { ...h, ...traceHeaders(traceContext()) };
    },
    claim: (step, operationId) => ({ lock, token, step, operationId }),
  };
}

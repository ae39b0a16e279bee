// A held lock's token in the forms downstream resources take: a bigint for pg parameters and the fencing
// helpers, a decimal string, and the HTTP headers of the fencing convention (src/protocol/fencingHeaders.ts).
import { fencingHeaders } from '../protocol/fencingHeaders';

export interface LockFencing {
  lock: string;
  token: bigint;
  /** Decimal, for a `$1::bigint` parameter, an environment variable or a log line. */
  tokenString: string;
  /** Fencing-Token and Fencing-Lock (and Fencing-Step when a step is given) for an HTTP request. */
  headers(step?: bigint): Record<string, string>;
  /** The claim the fencing helpers take (fencedUpdate, withFence, ...), for this step of the work. */
  claim(step?: bigint, operationId?: string): { lock: string; token: bigint; step?: bigint; operationId?: string };
}

export function lockFencing(lock: string, token: bigint): LockFencing {
  return {
    lock,
    token,
    tokenString: token.toString(),
    headers: (step) => fencingHeaders(lock, token, step),
    claim: (step, operationId) => ({ lock, token, step, operationId }),
  };
}

// What `fencelock check-resource` needs of a fenced resource: one fenced write of a dedicated resource, told
// back as the resource decided it. One file per kind of resource (postgresTarget.ts, httpTarget.ts); a new
// kind (MariaDB, Redis) is one more file implementing CheckTarget.
import type { CheckedClaim } from '../token';

/** How the resource answered one write, in the terms of the fencing rules (docs/fencing-downstream.md, section 1). */
export type WriteStatus = 'APPLIED' | 'REPLAYED' | 'STALE' | 'STALE_STEP' | 'WRONG_LOCK' | 'OTHER';

export interface WriteOutcome {
  status: WriteStatus;
  /** What the resource said besides the status (its watermark, the HTTP status, a row's fence), for the table. */
  detail: string;
}

/** The resource cannot be checked at all (unreachable, not set up): the command stops before taking any token. */
export class ResourceNotReady extends Error {
  constructor(
    message: string,
    /** True when the resource could not be reached (as opposed to reached but not set up for the check). */
    readonly unreachable: boolean,
  ) {
    super(message);
    this.name = 'ResourceNotReady';
  }
}

export interface CheckTarget {
  /** `postgres`, `http`, ...: the adapter's name, as the report shows it. */
  readonly kind: string;
  /** The resource in words: `table account, id = 7`. */
  readonly resource: string;
  /**
   * Whether a same-token retry with the same operation id must be answered REPLAYED (the resource stores each
   * applied operation's answer), or may be refused STALE_STEP (it stores none, like the proxy): either way
   * nothing may be applied twice.
   */
  readonly storesAnswers: boolean;
  /** Checks, before any token is taken, that the resource is reachable and ready; throws ResourceNotReady. Writes nothing. */
  prepare(lock: string): Promise<void>;
  /** One fenced write of the dedicated resource under the claim. Throws only when no answer came. */
  write(claim: CheckedClaim): Promise<WriteOutcome>;
  /**
   * What a restore does: raises the resource's watermark to minToken (step 0) if it is lower. Only targets that
   * keep their watermark where the command can reach it have it.
   */
  raise?(minToken: bigint): Promise<void>;
  close(): Promise<void>;
}

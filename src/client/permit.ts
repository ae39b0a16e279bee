// A semaphore's permit as the client holds it (issue 33; docs/architecture.md#semaphores): its slot, its
// token, and the session whose lease keeps it. Fencing is per slot, so the permit's `fencing` names the
// resource `NAME#SLOT` (docs/fencing-downstream.md "Semaphores") where a lock's names the lock.
import { MAX_PERMITS } from '../protocol/limits';
import { slotResource } from '../protocol/fencingHeaders';
import { FenceLockError, isFenceLockError } from './errors';
import { lockFencing, type LockFencing } from './fencingToken';
import type { SessionDetails, WriteOp, WriteResult } from './types';

/** What a permit needs of the session that holds it (a Session; named here so that session.ts may import this file). */
export interface PermitSession {
  readonly id: string;
  readonly publicId: string;
  isPresumedLost(): boolean;
  presumedLostAt(): number;
  presumptionError(): FenceLockError;
  whenPresumedLost(cb: (err: FenceLockError) => void): () => void;
  abandon(reason: string): void;
}

/** What a permit needs from the client that granted it (implemented by FenceLockClient). */
export interface PermitHost {
  acquirePermitFor(session: PermitSession, name: string, permits: number, waitTimeoutMs: number): Promise<PermitGrant>;
  releasePermitFor(session: PermitSession, name: string, token: bigint): Promise<void>;
  writePermitFor(permit: PermitHandle, ops: WriteOp[]): Promise<WriteResult>;
}

/** The server's answer to an Acquire of a permit. */
export interface PermitGrant {
  acquired: boolean;
  token: bigint;
  slot: number;
  /** The number of permits in force. */
  permits: number;
}

export interface AcquirePermitOptions {
  /** The semaphore's number of permits, 1..1024 (required: the first Acquire of an idle semaphore sets it). */
  permits: number;
  /** How long to wait in the semaphore's FIFO queue; default 30,000 ms; 0: try once. */
  waitTimeoutMs?: number;
}

/** A permit's token in the forms downstream resources take, for the resource of its slot. */
export interface PermitFencing extends LockFencing {
  semaphore: string;
  slot: number;
}

export { slotResource };

/** A held permit: its slot and fencing token. */
export class PermitHandle {
  private released = false;
  private releasing: Promise<void> | undefined;
  private lostError: FenceLockError | undefined;
  private aborter: AbortController | undefined;
  private unsubscribe: (() => void) | undefined;
  private readonly lostCallbacks: Array<(err: FenceLockError) => void> = [];

  constructor(
    private readonly host: PermitHost,
    readonly session: PermitSession,
    readonly name: string,
    readonly slot: number,
    readonly token: bigint,
    readonly permits: number,
  ) {}

  toJSON(): { semaphore: string; slot: number; token: string; session: string } {
    return { semaphore: this.name, slot: this.slot, token: this.token.toString(), session: this.session.publicId };
  }

  /** The token for downstream resources, whose `lock` is the slot's resource (`NAME#SLOT`). */
  get fencing(): PermitFencing {
    return { ...lockFencing(slotResource(this.name, this.slot), this.token), semaphore: this.name, slot: this.slot };
  }

  /**
   * Aborts once this client presumes the permit lost (as LockHandle.signal: PRESUMED_LOST, the session lost,
   * a write refused as stale), or with reason RELEASED once it released the permit or closed the session.
   */
  get signal(): AbortSignal {
    if (!this.aborter) {
      const aborter = new AbortController();
      this.aborter = aborter;
      if (this.released) aborter.abort(this.releasedError('RELEASED'));
      else if (this.lostError) aborter.abort(this.lostError);
      else if (this.session.isPresumedLost()) aborter.abort(this.session.presumptionError());
      else this.unsubscribe = this.session.whenPresumedLost((err) => aborter.abort(err));
    }
    return this.aborter.signal;
  }

  /** True once this client released the permit. */
  isReleased(): boolean {
    return this.released;
  }

  isPresumedLost(): boolean {
    return this.released || this.lostError !== undefined || this.session.isPresumedLost();
  }

  /** Monotonic time (the client's clock) after which the holder must presume the permit lost. */
  presumedLostAt(): number {
    return this.session.presumedLostAt();
  }

  /** Runs cb once when a write finds the permit lost (STALE_TOKEN, LOCK_NOT_HELD); at once if it is. Not for a release. */
  onLost(cb: (err: FenceLockError) => void): void {
    const err = this.lostError;
    if (err) queueMicrotask(() => cb(err));
    else if (!this.released) this.lostCallbacks.push(cb);
  }

  /**
   * A fenced write under this permit (docs/architecture.md#semaphores): its keys are bound to the permit's
   * slot, and it is refused once the slot has a newer holder (STALE_TOKEN) or this grant ended
   * (LOCK_NOT_HELD), which this handle then takes as the permit lost.
   */
  write(ops: WriteOp[]): Promise<WriteResult> {
    if (this.released) return Promise.reject(this.releasedError());
    if (this.lostError) return Promise.reject(this.lostError);
    return this.host.writePermitFor(this, ops).catch((err: unknown) => {
      if (isFenceLockError(err, 'FAILED_PRECONDITION') && (err.reason === 'STALE_TOKEN' || err.reason === 'LOCK_NOT_HELD')) this.lose(err);
      throw err;
    });
  }

  /** Releases the permit (the server hands its slot to the next waiter). Idempotent; failures reject. */
  release(): Promise<void> {
    if (!this.releasing) {
      if (this.released) return Promise.resolve();
      this.releasing = this.host.releasePermitFor(this.session, this.name, this.token).then(
        () => this.markReleased(),
        (err: unknown) => {
          this.releasing = undefined;
          throw err;
        },
      );
    }
    return this.releasing;
  }

  private lose(err: FenceLockError): void {
    if (this.released || this.lostError) return;
    this.lostError = err;
    this.unsubscribe?.();
    this.aborter?.abort(err);
    for (const cb of this.lostCallbacks.splice(0)) cb(err);
  }

  private markReleased(): void {
    this.released = true;
    this.lostCallbacks.length = 0;
    this.unsubscribe?.();
    this.aborter?.abort(this.releasedError('RELEASED'));
  }

  private releasedError(reason: 'LOCK_NOT_HELD' | 'RELEASED' = 'LOCK_NOT_HELD'): FenceLockError {
    return new FenceLockError('FAILED_PRECONDITION', `permit of semaphore ${JSON.stringify(this.name)} (slot ${this.slot}, token ${this.token}) was released by this client`, { reason });
  }
}

/** Checks the options of acquirePermit; throws INVALID_ARGUMENT naming the option. */
export function checkPermitOptions(opts: AcquirePermitOptions, defaultWaitMs: number): { permits: number; waitTimeoutMs: number } {
  const permits = opts.permits;
  if (!Number.isSafeInteger(permits) || permits < 1 || permits > MAX_PERMITS) {
    throw new FenceLockError('INVALID_ARGUMENT', `permits must be an integer in [1, ${MAX_PERMITS}], got ${String(permits)}`);
  }
  const waitTimeoutMs = opts.waitTimeoutMs ?? defaultWaitMs;
  if (!Number.isSafeInteger(waitTimeoutMs) || waitTimeoutMs < 0) {
    throw new FenceLockError('INVALID_ARGUMENT', `waitTimeoutMs must be a non-negative integer, got ${waitTimeoutMs}`);
  }
  return { permits, waitTimeoutMs };
}

/** A semaphore as Describe shows it. */
export interface SemaphoreDescription {
  name: string;
  /** The number of permits in force; 0 for an unknown semaphore (never used, or idle and forgotten). */
  permits: number;
  /** The permits held, in slot order. */
  holders: Array<{ slot: number; token: bigint; session: SessionDetails | null; grantedAtMs: number }>;
  /** The queue, FIFO. */
  waiters: SessionDetails[];
  /** The latest token of each slot taken since the semaphore was last idle: the slots' watermarks. */
  slotTokens: bigint[];
}

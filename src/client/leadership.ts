// A won election: the lock grant that makes this process the leader, and the fenced value under it.
import { FenceLockError, isFenceLockError } from './errors';
import type { LockFencing } from './fencingToken';
import type { LockHandle } from './session';

/** A value as the store takes it: a string is written as UTF-8. */
export function electionValue(value: string | Uint8Array, what: string): Uint8Array {
  if (typeof value === 'string') return Buffer.from(value, 'utf8');
  if (value instanceof Uint8Array) return value;
  throw new FenceLockError('INVALID_ARGUMENT', `${what}: the value must be a string or a Uint8Array`);
}

/**
 * This client's leadership of an election. Its token is the grant's fencing token: pass `fencing` to the
 * resources the leader changes, so that a deposed leader is refused there too. `signal` aborts when the
 * leadership ends: presumed lost (no renewal acknowledged in time: PRESUMED_LOST), lost (SESSION_EXPIRED,
 * KEEPALIVE_TIMEOUT, REVOKED, ...), a proclaim refused because a newer leader exists (STALE_TOKEN, ...), or
 * resigned (RELEASED: no loss, `signal.reason.reason` tells them apart).
 */
export class Leadership {
  private current: Uint8Array;
  private readonly aborter = new AbortController();

  constructor(
    readonly election: string,
    /** The election's lock as held by this leadership (its session is the leadership's own). */
    readonly lock: LockHandle,
    value: Uint8Array,
  ) {
    this.current = value;
    const follow = (): void => this.aborter.abort(lock.signal.reason);
    if (lock.signal.aborted) follow();
    else lock.signal.addEventListener('abort', follow, { once: true });
  }

  get token(): bigint {
    return this.lock.token;
  }

  /** The value last written by campaign() or proclaim(). */
  get value(): Uint8Array {
    return this.current;
  }

  get text(): string {
    return Buffer.from(this.current).toString('utf8');
  }

  /** The public handle of the leadership's session, as observers see it. */
  get holder(): string {
    return this.lock.session.publicId;
  }

  get signal(): AbortSignal {
    return this.aborter.signal;
  }

  /** The token for downstream resources (pg parameters, HTTP headers, fencing claims). */
  get fencing(): LockFencing {
    return this.lock.fencing;
  }

  /**
   * Replaces the value: a fenced write under the leadership's token, refused by the cluster once a newer leader
   * exists (and here once `signal` has aborted). A refusal by fencing ends the leadership (`signal` aborts).
   */
  async proclaim(value: string | Uint8Array): Promise<void> {
    const bytes = electionValue(value, `proclaim in election ${JSON.stringify(this.election)}`);
    if (this.signal.aborted) throw this.overError();
    try {
      await this.lock.write([{ put: this.election, value: bytes }]);
    } catch (err) {
      if (isFenceLockError(err, 'FAILED_PRECONDITION') || (isFenceLockError(err, 'NOT_FOUND') && err.reason === 'UNKNOWN_SESSION')) this.aborter.abort(err);
      throw err;
    }
    this.current = bytes;
  }

  /**
   * Ends the leadership: closes its session, which releases the lock (the next campaigner in line is granted
   * it) in one entry. The value stays in the store under this token, so that it records the last leader; a
   * reader tells a resigned leader by the lock, which is no longer held under its token. Idempotent. If the
   * cluster does not confirm, the session expires after its TTL and the lock is freed then.
   */
  resign(): Promise<void> {
    // Closing the session releases the lock: `signal` follows the lock's, which aborts with RELEASED.
    return this.lock.session.close();
  }

  private overError(): FenceLockError {
    const why = this.signal.reason instanceof Error ? this.signal.reason.message : String(this.signal.reason);
    return new FenceLockError('FAILED_PRECONDITION', `election ${JSON.stringify(this.election)}: the leadership under token ${this.token} is over (${why})`, {
      reason: 'LOCK_NOT_HELD',
    });
  }
}

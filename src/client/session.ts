import { FenceLockError, isFenceLockError } from './errors';
import { publicSessionId } from './publicId';
import type { Context } from '@opentelemetry/api';
import { lockFencing, type LockFencing } from './fencingToken';
import { HoldTrace, tracedAcquire } from './lockTrace';
import { tracingActive } from '../protocol/traceContext';
import type { HeldGrant, Renewable } from './keepalive';
import type { Logger } from './logger';
import type { ClientPorts, ClientTimer } from './ports';
import type { LockMode, WriteOp, WriteResult } from './types';
import { MAX_LOCK_DELAY_MS } from '../protocol/limits';
import { checkPermitOptions, PermitHandle, type AcquirePermitOptions, type PermitGrant, type PermitHost } from './permit';

/** Default session TTL, and the default wait of a blocking acquire. */
export const DEFAULT_TTL_MS = 10_000;
export const DEFAULT_WAIT_TIMEOUT_MS = 30_000;

/**
 * The clock-rate error assumed on every machine (client and nodes): a monotonic clock gains or loses at most
 * this fraction of the time it measures. Ordinary oscillators stay within 0.01%; 1% leaves room for VMs.
 */
export const CLOCK_RATE_BOUND = 0.01;

/**
 * How long before the estimated end of the lease a holder is presumed to have lost it. It must cover the
 * clock-rate error between this client and the leaders that time the lease, over the TTL plus two election
 * timeouts (a new leader adds one election timeout to every deadline, for the acknowledgements a deposed
 * leader may still give during one): 2 x CLOCK_RATE_BOUND x (ttl + 2 x election timeout). It is at least 10%
 * of the TTL and 500 ms (time for a holder to stop), and at most half the TTL.
 */
export function safetyMarginMs(ttlMs: number, electionTimeoutMs = 0): number {
  const clockError = 2 * CLOCK_RATE_BOUND * (ttlMs + 2 * electionTimeoutMs);
  return Math.min(Math.max(ttlMs * 0.1, 500, clockError), ttlMs / 2);
}

/** What a session needs from the client that opened it (implemented by FenceLockClient). */
export interface SessionHost extends PermitHost {
  readonly logger: Logger;
  /** The clock and timers the lease is timed on. */
  readonly ports: Pick<ClientPorts, 'clock' | 'timers'>;
  acquireFor(session: Session, lock: string, waitTimeoutMs: number, lockDelayMs?: number, mode?: LockMode): Promise<{ acquired: boolean; token: bigint; holderSession: string }>;
  releaseFor(session: Session, lock: string, token: bigint): Promise<void>;
  /** Lock.AcquireAll: the set's one token when granted (acquired false: a try found a lock of it busy). */
  acquireAllFor(session: Session, locks: readonly string[], waitTimeoutMs: number): Promise<{ acquired: boolean; token: bigint; busyLock: string }>;
  writeFor(lock: string, token: bigint, sessionId: string, ops: WriteOp[]): Promise<WriteResult>;
  closeSessionFor(session: Session, timeoutMs?: number): Promise<void>;
  startRenewing(session: Session): void;
  stopRenewing(session: Session): void;
}

export interface AcquireOptions {
  /** How long to wait in the lock's FIFO queue; default 30,000 ms. */
  waitTimeoutMs?: number;
  /**
   * Lock-delay of this grant, 0..60,000 ms (default 0: none): if the grant ends by the session's expiry or a
   * revoke (not by release() or close()), nobody gets the lock for this long (docs/architecture.md#lock-delay),
   * so that side effects the lost holder started without a token can finish or time out.
   */
  lockDelayMs?: number;
  /**
   * 'exclusive' (default): one holder. 'shared': held together with other shared holders, each with its own
   * token, queued FIFO behind any waiting exclusive request; its writes are refused SHARED_GRANT; no
   * lockDelayMs. A session holding or waiting in one mode is refused MODE_CONFLICT in the other.
   */
  mode?: LockMode;
}

/** The options of a try-lock: its grant's lock-delay and mode (see AcquireOptions). */
export type TryAcquireOptions = Pick<AcquireOptions, 'lockDelayMs' | 'mode'>;

/**
 * A session: a lease the leader keeps alive while renewals arrive. Locks belong to sessions; when the session
 * ends (closed, or expired on the leader) every lock it holds is released.
 */
export class Session implements Renewable {
  private leaseEndsAt: number;
  private lostError: FenceLockError | undefined;
  private closed = false;
  private closing: Promise<void> | undefined;
  private lossTimer: ClientTimer | undefined;
  private presumeTimer: ClientTimer | undefined;
  /** Called once when the session is first presumed lost, lost or closed (LockHandle.signal). */
  private readonly presumeListeners = new Set<(err: FenceLockError) => void>();
  private readonly lostCallbacks: Array<(err: FenceLockError) => void> = [];
  private readonly held = new Map<string, LockHandle>();
  /** The permit handles this client gave out, by semaphore (a session holds one permit of a semaphore). */
  private readonly permitHandles = new Map<string, PermitHandle>();
  /** Where the next renewal starts naming held grants, when there are more than one renewal names. */
  private heldCursor = 0;
  /**
   * The handle other clients see for this session in describe() and watch() (the id itself is a secret).
   * Everything the library logs or puts in an error message names a session by this handle, never by its id.
   */
  readonly publicId: string;

  /**
   * @param openSentAt monotonic time the Open request was first sent: the server's lease cannot have started
   *   earlier, so the first estimate of its end is conservative.
   */
  constructor(
    private readonly host: SessionHost,
    readonly id: string,
    readonly ttlMs: number,
    readonly name: string,
    openSentAt: number,
    /** The cluster's election timeout as the server reported it (0: not reported). */
    readonly electionTimeoutMs = 0,
  ) {
    this.publicId = publicSessionId(id);
    this.leaseEndsAt = openSentAt + ttlMs;
    this.armLossTimer();
  }

  /** What JSON.stringify (and so a pino logger) shows of a session: its handle, never its id. */
  toJSON(): { session: string; name: string; ttlMs: number } {
    return { session: this.publicId, name: this.name, ttlMs: this.ttlMs };
  }

  /** Monotonic time (the client's clock) after which holders must presume their locks lost. */
  presumedLostAt(): number {
    return this.leaseEndsAt - safetyMarginMs(this.ttlMs, this.electionTimeoutMs);
  }

  /** True once the session is lost or closed, or when no renewal was acknowledged recently enough. */
  isPresumedLost(): boolean {
    return this.lostError !== undefined || this.closed || this.now() >= this.presumedLostAt();
  }

  /** True once the session is known to be gone (alive=false, or no acknowledged renewal for a whole TTL). */
  isLost(): boolean {
    return this.lostError !== undefined;
  }

  isClosed(): boolean {
    return this.closed;
  }

  /** Registers a callback run once when the session is lost (at once, asynchronously, if it already is). */
  onLost(cb: (err: FenceLockError) => void): void {
    if (this.lostError) {
      const err = this.lostError;
      queueMicrotask(() => this.runCallback(cb, err));
      return;
    }
    this.lostCallbacks.push(cb);
  }

  /**
   * @internal Calls cb once, with the cause, when the session is first presumed lost (past presumedLostAt()),
   * lost or closed. Returns the unsubscribe. The caller checks isPresumedLost() first: cb is not called for a
   * session presumed lost already.
   */
  whenPresumedLost(cb: (err: FenceLockError) => void): () => void {
    this.presumeListeners.add(cb);
    return () => this.presumeListeners.delete(cb);
  }

  /** @internal Why this session's locks are presumed lost now: its loss, its close, or no recent renewal. */
  presumptionError(): FenceLockError {
    if (this.lostError) return this.lostError;
    if (this.closed) return new FenceLockError('CANCELLED', `session ${this.publicId} was closed by this client`, { reason: 'SESSION_CLOSED' });
    return new FenceLockError(
      'DEADLINE_EXCEEDED',
      `session ${this.publicId}: no renewal acknowledged recently enough; its locks are presumed lost (the server may still hold them until their lease ends there)`,
      { reason: 'PRESUMED_LOST' },
    );
  }

  /**
   * Blocking acquire: waits in the lock's FIFO queue up to waitTimeoutMs; rejects DEADLINE_EXCEEDED after it.
   * Re-entrant without a count: when this session already holds the lock, the server answers the current grant
   * and this resolves to the same LockHandle (same token), and one release() ends the grant for every caller
   * that got it. A token names one grant; a hold count would let an inner release leave the lock held while
   * its caller believes it free, or free it while an outer holder believes it held (docs/architecture.md).
   */
  async acquire(lock: string, opts: AcquireOptions = {}): Promise<LockHandle> {
    const wait = opts.waitTimeoutMs ?? DEFAULT_WAIT_TIMEOUT_MS;
    if (!Number.isSafeInteger(wait) || wait < 0) {
      throw new FenceLockError('INVALID_ARGUMENT', `waitTimeoutMs must be a non-negative integer, got ${wait}`);
    }
    const { res, acquireContext } = await tracedAcquire(lock, this.publicId, wait, () => this.acquireRaw(lock, wait, opts.lockDelayMs, opts.mode));
    if (!res.acquired) {
      throw new FenceLockError('DEADLINE_EXCEEDED', `acquire lock ${JSON.stringify(lock)}: still held by session ${res.holderSession} after ${wait} ms`, {
        reason: 'LOCK_HELD',
      });
    }
    return this.handleFor(lock, res.token, acquireContext);
  }

  /**
   * Try-lock: one attempt with wait_timeout_ms = 0; null when another session holds the lock. Re-entrant as
   * acquire() is: the same handle when this session holds it already. Rejects FAILED_PRECONDITION with reason
   * LOCK_DELAYED (and `delayedUntil`) while the lock is free but in its lock-delay.
   */
  async tryAcquire(lock: string, opts: TryAcquireOptions = {}): Promise<LockHandle | null> {
    const { res, acquireContext } = await tracedAcquire(lock, this.publicId, 0, () => this.acquireRaw(lock, 0, opts.lockDelayMs, opts.mode));
    return res.acquired ? this.handleFor(lock, res.token, acquireContext) : null;
  }

  /**
   * A permit of semaphore `name` (docs/architecture.md#semaphores): waits in its FIFO queue up to
   * waitTimeoutMs (default 30,000 ms) and rejects DEADLINE_EXCEEDED (reason PERMITS_FULL) after it.
   * Re-entrant as acquire(): a session holds at most one permit of a semaphore, and asking again answers
   * the same slot and token. FAILED_PRECONDITION PERMITS_MISMATCH when `permits` is not the number in force.
   */
  async acquirePermit(name: string, opts: AcquirePermitOptions): Promise<PermitHandle> {
    const { permits, waitTimeoutMs } = checkPermitOptions(opts, DEFAULT_WAIT_TIMEOUT_MS);
    const grant = await this.permitRaw(name, permits, waitTimeoutMs);
    if (!grant.acquired) {
      throw new FenceLockError('DEADLINE_EXCEEDED', `acquire a permit of semaphore ${JSON.stringify(name)}: all ${grant.permits} taken after ${waitTimeoutMs} ms`, { reason: 'PERMITS_FULL' });
    }
    return this.permitHandle(name, grant);
  }

  /** One attempt at a permit (wait 0): null when all are taken. */
  async tryAcquirePermit(name: string, opts: Omit<AcquirePermitOptions, 'waitTimeoutMs'>): Promise<PermitHandle | null> {
    const { permits } = checkPermitOptions({ ...opts, waitTimeoutMs: 0 }, 0);
    const grant = await this.permitRaw(name, permits, 0);
    return grant.acquired ? this.permitHandle(name, grant) : null;
  }

  private permitHandle(name: string, grant: PermitGrant): PermitHandle {
    // Released handles are dropped here, so the map holds about as many as the permits held.
    for (const [n, h] of this.permitHandles) if (h.isReleased()) this.permitHandles.delete(n);
    const handle = new PermitHandle(this.host, this, name, grant.slot, grant.token, grant.permits);
    this.permitHandles.set(name, handle);
    return handle;
  }

  /** True when this client gave out a permit of `name` through this session that it has not released. */
  holdsPermitHandle(name: string): boolean {
    const h = this.permitHandles.get(name);
    return h !== undefined && !h.isReleased();
  }

  private permitRaw(name: string, permits: number, waitTimeoutMs: number): ReturnType<PermitHost['acquirePermitFor']> {
    if (this.closed) return Promise.reject(new FenceLockError('FAILED_PRECONDITION', `session ${this.publicId} is closed`, { reason: 'SESSION_CLOSED' }));
    if (this.lostError) return Promise.reject(new FenceLockError(this.lostError.code, `session ${this.publicId} is lost: ${this.lostError.message}`, { reason: this.lostError.reason }));
    return this.host.acquirePermitFor(this, name, permits, waitTimeoutMs);
  }

  /**
   * Atomic multi-lock (docs/architecture.md#atomic-multi-lock): every lock of `locks` (1..64 distinct names)
   * in one grant, or none; waits in every lock's FIFO queue up to waitTimeoutMs as one waiter, so two callers
   * naming the same locks in different orders never deadlock. Resolves to one handle per lock, in the order
   * given, all with the same token; each is released on its own. Rejects DEADLINE_EXCEEDED after the wait;
   * FAILED_PRECONDITION SET_OVERLAP when this session holds or waits for one of them other than as this set.
   */
  async acquireAll(locks: readonly string[], opts: { waitTimeoutMs?: number } = {}): Promise<LockHandle[]> {
    const wait = opts.waitTimeoutMs ?? DEFAULT_WAIT_TIMEOUT_MS;
    if (!Number.isSafeInteger(wait) || wait < 0) throw new FenceLockError('INVALID_ARGUMENT', `waitTimeoutMs must be a non-negative integer, got ${wait}`);
    const res = await this.acquireAllRaw(locks, wait);
    if (!res.acquired) {
      throw new FenceLockError('DEADLINE_EXCEEDED', `acquire locks ${JSON.stringify(locks)}: ${JSON.stringify(res.busyLock)} still busy after ${wait} ms`, { reason: 'LOCK_HELD' });
    }
    return locks.map((lock) => this.handleFor(lock, res.token));
  }

  /** Try-lock of a set: one attempt; null when any lock of it is held, awaited or delayed (nothing is taken). */
  async tryAcquireAll(locks: readonly string[]): Promise<LockHandle[] | null> {
    const res = await this.acquireAllRaw(locks, 0);
    return res.acquired ? locks.map((lock) => this.handleFor(lock, res.token)) : null;
  }

  private acquireAllRaw(locks: readonly string[], wait: number): Promise<{ acquired: boolean; token: bigint; busyLock: string }> {
    if (this.closed) throw new FenceLockError('FAILED_PRECONDITION', `session ${this.publicId} is closed`, { reason: 'SESSION_CLOSED' });
    if (this.lostError) throw new FenceLockError(this.lostError.code, `session ${this.publicId} is lost: ${this.lostError.message}`, { reason: this.lostError.reason });
    return this.host.acquireAllFor(this, locks, wait);
  }

  /**
   * Closes the session on the leader, which releases every lock it holds. Idempotent. `timeoutMs` bounds the
   * attempt (default: the client's totalTimeoutMs); if it fails, the session still expires after its TTL.
   */
  close(opts: { timeoutMs?: number } = {}): Promise<void> {
    if (!this.closing) {
      this.closed = true;
      this.stopTimers();
      // Handles first: closing releases their grants (signal reason RELEASED, as LockHandle.signal promises),
      // so the presumed-lost notice below must not reach them first with SESSION_CLOSED.
      for (const h of this.held.values()) h.markReleased();
      this.held.clear();
      this.notifyPresumedLost();
      this.host.stopRenewing(this);
      this.closing = this.lostError?.reason === 'SESSION_EXPIRED' || this.lostError?.reason === 'REVOKED' ? Promise.resolve() : this.host.closeSessionFor(this, opts.timeoutMs);
    }
    return this.closing;
  }

  /**
   * Stops renewing without telling the server, so the session expires there after its TTL and its locks are
   * freed. Used when a release could not be confirmed. Counts as losing the session.
   */
  abandon(reason: string): void {
    this.markLost(new FenceLockError('UNAVAILABLE', `session ${this.publicId} abandoned: ${reason}`, { reason: 'ABANDONED' }));
  }

  // --- Renewable (called by the keepalive stream) ---

  renewed(sentAt: number, remainingMs: number): void {
    if (this.lostError || this.closed) return;
    const lease = remainingMs > 0 ? Math.min(this.ttlMs, remainingMs) : this.ttlMs;
    const end = sentAt + lease;
    if (end > this.leaseEndsAt) {
      this.leaseEndsAt = end;
      this.armLossTimer();
    }
    if (tracingActive()) for (const h of this.held.values()) h.renewed();
  }

  expired(err: FenceLockError): void {
    this.markLost(err);
  }

  heldGrants(max: number): HeldGrant[] {
    if (this.lostError || this.closed) return [];
    // A grant being released is left out: the leader would report its end, which is no revoke.
    const grants = [...this.held.values()].filter((h) => h.isHeld()).map((h) => ({ lock: h.name, token: h.token }));
    if (grants.length <= max) return grants;
    const start = this.heldCursor % grants.length;
    this.heldCursor = start + max;
    return [...grants, ...grants].slice(start, start + max);
  }

  grantsRevoked(grants: HeldGrant[]): void {
    for (const g of grants) {
      const h = this.held.get(g.lock);
      // Only the very grant asked about: the lock may have been released and granted again since the renewal.
      if (h === undefined || h.token !== g.token || !h.isHeld()) continue;
      h.lose(
        new FenceLockError('FAILED_PRECONDITION', `lock ${JSON.stringify(g.lock)} (token ${g.token}) was revoked by an admin; session ${this.publicId} goes on`, {
          reason: 'REVOKED',
        }),
      );
    }
  }

  // --- internals ---

  /** True when this client holds an unreleased handle on the lock through this session. */
  holdsHandle(lock: string): boolean {
    const h = this.held.get(lock);
    return h !== undefined && !h.isReleased();
  }

  /** Forgets a handle once released. */
  forget(handle: LockHandle): void {
    if (this.held.get(handle.name) === handle) this.held.delete(handle.name);
  }

  private async acquireRaw(lock: string, wait: number, lockDelayMs = 0, mode: LockMode = 'exclusive'): Promise<{ acquired: boolean; token: bigint; holderSession: string }> {
    if (!Number.isSafeInteger(lockDelayMs) || lockDelayMs < 0 || lockDelayMs > MAX_LOCK_DELAY_MS) {
      throw new FenceLockError('INVALID_ARGUMENT', `lockDelayMs must be an integer in [0, ${MAX_LOCK_DELAY_MS}], got ${lockDelayMs}`);
    }
    if (mode !== 'exclusive' && mode !== 'shared') throw new FenceLockError('INVALID_ARGUMENT', `mode must be 'exclusive' or 'shared', got ${String(mode)}`);
    if (this.closed) throw new FenceLockError('FAILED_PRECONDITION', `session ${this.publicId} is closed`, { reason: 'SESSION_CLOSED' });
    if (this.lostError) throw new FenceLockError(this.lostError.code, `session ${this.publicId} is lost: ${this.lostError.message}`, { reason: this.lostError.reason });
    return this.host.acquireFor(this, lock, wait, lockDelayMs, mode);
  }

  private handleFor(lock: string, token: bigint, acquireContext?: Context): LockHandle {
    const existing = this.held.get(lock);
    if (existing && existing.token === token && !existing.isReleased()) return existing;
    const handle = new LockHandle(this.host, this, lock, token, acquireContext && HoldTrace.begin(acquireContext, lock, token, this.publicId));
    this.held.set(lock, handle);
    return handle;
  }

  private now(): number {
    return this.host.ports.clock.monotonicMs();
  }

  // Both timers are unref'd: they watch a lease in the background and must not keep a finished process alive.
  private armLossTimer(): void {
    this.armPresumeTimer();
    const timers = this.host.ports.timers;
    timers.clearTimeout(this.lossTimer);
    const delay = Math.max(0, this.leaseEndsAt - this.now());
    this.lossTimer = timers.setTimeout(() => {
      this.lossTimer = undefined;
      if (this.now() >= this.leaseEndsAt) {
        this.markLost(
          new FenceLockError('DEADLINE_EXCEEDED', `session ${this.publicId}: no renewal acknowledged within its ${this.ttlMs} ms TTL`, {
            reason: 'KEEPALIVE_TIMEOUT',
          }),
        );
      } else {
        this.armLossTimer();
      }
    }, Math.ceil(delay) + 1);
    this.lossTimer.unref();
  }

  private armPresumeTimer(): void {
    const timers = this.host.ports.timers;
    timers.clearTimeout(this.presumeTimer);
    const delay = Math.max(0, this.presumedLostAt() - this.now());
    this.presumeTimer = timers.setTimeout(() => {
      this.presumeTimer = undefined;
      if (this.now() >= this.presumedLostAt()) this.notifyPresumedLost();
      else this.armPresumeTimer();
    }, Math.ceil(delay) + 1);
    this.presumeTimer.unref();
  }

  private notifyPresumedLost(): void {
    if (this.presumeListeners.size === 0) return;
    const err = this.presumptionError();
    const listeners = [...this.presumeListeners];
    this.presumeListeners.clear();
    for (const cb of listeners) this.runCallback(cb, err);
  }

  private stopTimers(): void {
    this.host.ports.timers.clearTimeout(this.lossTimer);
    this.lossTimer = undefined;
    this.host.ports.timers.clearTimeout(this.presumeTimer);
    this.presumeTimer = undefined;
  }

  private markLost(err: FenceLockError): void {
    if (this.lostError || this.closed) return;
    this.lostError = err;
    this.stopTimers();
    this.host.stopRenewing(this);
    this.host.logger.warn({ session: this.publicId, reason: err.reason }, `fencelock: session lost: ${err.message}`);
    const callbacks = this.lostCallbacks.splice(0);
    for (const cb of callbacks) this.runCallback(cb, err);
    for (const h of [...this.held.values()]) h.lose(err);
    this.notifyPresumedLost();
  }

  /** @internal Runs a loss callback, logging what it throws. */
  runCallback(cb: (err: FenceLockError) => void, err: FenceLockError): void {
    try {
      cb(err);
    } catch (cbErr) {
      this.host.logger.error({ err: cbErr, session: this.publicId }, 'fencelock: onLost callback threw');
    }
  }
}

/** A held lock: its fencing token, and the session whose lease keeps it. */
export class LockHandle {
  private released = false;
  private releasing: Promise<void> | undefined;
  /** Why the grant is known to be over without this client's release: revoked, fenced out, session lost. */
  private lostError: FenceLockError | undefined;
  private readonly lostCallbacks: Array<(err: FenceLockError) => void> = [];
  private aborter: AbortController | undefined;
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly host: SessionHost,
    readonly session: Session,
    readonly name: string,
    readonly token: bigint,
    /** The grant's spans, while tracing is on (lockTrace.ts). */
    private readonly trace?: HoldTrace,
  ) {}

  /** What JSON.stringify (and so a pino logger) shows of a lock: name, token and the session's handle. */
  toJSON(): { lock: string; token: string; session: string } {
    return { lock: this.name, token: this.token.toString(), session: this.session.publicId };
  }

  /** The token ready for downstream resources: pg parameters, HTTP headers, fencing claims. */
  get fencing(): LockFencing {
    const t = this.trace;
    return lockFencing(this.name, this.token, t && (() => t.downstream()));
  }

  /** Monotonic time (the client's clock) after which the holder must presume the lock lost. */
  presumedLostAt(): number {
    return this.session.presumedLostAt();
  }

  /**
   * Aborts, with a FenceLockError as its `reason`, once this client presumes the lock lost: no renewal was
   * acknowledged recently enough (reason PRESUMED_LOST), the session was lost (KEEPALIVE_TIMEOUT,
   * SESSION_EXPIRED, ABANDONED, ...). "Presumed lost" means this client stopped being sure, not that the server
   * gave the lock away: the lease may still run on the server, and a write with the token may still be accepted
   * if it did. It also aborts when this client releases the lock (or closes its session), with reason RELEASED:
   * the grant is over, so work bound to the signal stops too, but that is no loss (`signal.reason.reason`
   * tells the two apart). Once aborted it stays aborted.
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

  /** True once released or lost (revoked, fenced out), or when the session is lost or presumed lost. */
  isPresumedLost(): boolean {
    return this.released || this.lostError !== undefined || this.session.isPresumedLost();
  }

  /**
   * Registers a callback run once when this client learns the grant is over without its own release: an
   * admin revoked it (reason REVOKED, from the next renewal), a fenced write under it was refused because a
   * newer grant exists or it ended (STALE_TOKEN, LOCK_NOT_HELD), or its session was lost. At once,
   * asynchronously, if it already is. Not called for this client's own release.
   */
  onLost(cb: (err: FenceLockError) => void): void {
    const err = this.lostError;
    if (err) queueMicrotask(() => this.session.runCallback(cb, err));
    else if (!this.released) this.lostCallbacks.push(cb);
  }

  /** The reason the grant is known lost (undefined: not known lost). */
  lossError(): FenceLockError | undefined {
    return this.lostError;
  }

  /** @internal Held as far as this client knows: not released, not being released, not known lost. */
  isHeld(): boolean {
    return !this.released && this.releasing === undefined && this.lostError === undefined;
  }

  /** @internal The grant is over without this client's release: the first cause wins. */
  lose(err: FenceLockError): void {
    if (this.released || this.lostError) return;
    this.lostError = err;
    this.trace?.lost(err);
    this.session.forget(this);
    this.unsubscribe?.();
    this.aborter?.abort(err);
    for (const cb of this.lostCallbacks.splice(0)) this.session.runCallback(cb, err);
  }

  /** @internal A renewal of the session was acknowledged: an event on the grant's span. */
  renewed(): void {
    this.trace?.renewed();
  }

  isReleased(): boolean {
    return this.released;
  }

  /** A fenced write under this lock's token: the server refuses it if a newer holder exists. */
  write(ops: WriteOp[]): Promise<WriteResult> {
    if (this.released) return Promise.reject(this.releasedError());
    if (this.lostError) return Promise.reject(this.lostError);
    const send = (): Promise<WriteResult> => this.host.writeFor(this.name, this.token, this.session.id, ops);
    return (this.trace === undefined ? send() : this.trace.write(ops.length, send)).catch((err: unknown) => {
      // The server says a newer grant exists or this one ended: the lock is lost, whatever renewals say.
      if (isFenceLockError(err, 'FAILED_PRECONDITION') && (err.reason === 'STALE_TOKEN' || err.reason === 'LOCK_NOT_HELD')) this.lose(err);
      throw err;
    });
  }

  /**
   * Releases the lock (the server hands it to the next waiter). Idempotent; failures reject. One release ends
   * the grant, however many acquires of this session returned this handle (there is no hold count).
   */
  release(): Promise<void> {
    if (!this.releasing) {
      if (this.released) return Promise.resolve();
      const send = (): Promise<void> => this.host.releaseFor(this.session, this.name, this.token);
      this.releasing = (this.trace === undefined ? send() : this.trace.run(send)).then(
        () => {
          this.markReleased();
        },
        (err: unknown) => {
          this.releasing = undefined;
          throw err;
        },
      );
    }
    return this.releasing;
  }

  /** Marks the handle released without a call (the session was closed). */
  markReleased(): void {
    this.released = true;
    this.trace?.released();
    this.lostCallbacks.length = 0;
    this.session.forget(this);
    this.unsubscribe?.();
    this.aborter?.abort(this.releasedError('RELEASED'));
  }

  /**
   * A write after the release is refused here as the server would refuse it (LOCK_NOT_HELD); the signal says
   * RELEASED, so that a listener does not take the holder's own release for a loss.
   */
  private releasedError(reason: 'LOCK_NOT_HELD' | 'RELEASED' = 'LOCK_NOT_HELD'): FenceLockError {
    return new FenceLockError('FAILED_PRECONDITION', `lock ${JSON.stringify(this.name)} (token ${this.token}) was released by this client`, { reason });
  }
}

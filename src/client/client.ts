import { MAX_CLIENT_ID_BYTES } from '../protocol/limits';
import { AuthClient, bearerInterceptor, checkAuthToken } from './auth';
import { MembersClient } from './members';
import { resolveCredentials, type CredentialSource } from './credentials';
import { FenceLockError, isFenceLockError, toFenceLockError } from './errors';
import { GrpcTransport } from './grpcTransport';
import { KeepAliveStream } from './keepalive';
import { allLocks, listLocksRequest, lockSummary } from './lockList';
import { processLabels, sessionLabels, toSessionDetails } from './sessionLabels';
import { silentLogger, type Logger } from './logger';
import type { Op } from '../protocol/generated/fencelock/v1/Op';
import type { RequestHeader } from '../protocol/generated/fencelock/v1/RequestHeader';
import type { StatusResponse__Output } from '../protocol/generated/fencelock/v1/StatusResponse';
import { bigIntToWire, intToWire, wireToBigInt, wireToNumber } from '../protocol/wireInt';
import type { ClientPorts, ClientTimer } from './ports';
import { methods, type MethodDesc } from './proto';
import { realClock, realRandom, realTimers } from './realPorts';
import { CHANNEL_OPTIONS, neverProposed, RequestIds, Router, type CallOptions } from './router';
import { streamSnapshot, type SnapshotInfo, type SnapshotSink } from './snapshot';
import { DEFAULT_TTL_MS, LockHandle, Session, type SessionHost } from './session';
import type { AcquirePermitOptions, PermitGrant, PermitHandle, SemaphoreDescription } from './permit';
import { Election, type ElectionOptions } from './election';
import type {
  CloseOptions,
  EndpointStatus,
  FenceLockClientOptions,
  GetOptions,
  GetResult,
  ListLocksOptions,
  ListLocksResult,
  ListOptions,
  ListResult,
  LockDescription,
  LockSummary,
  LockEvent,
  PermitEvent,
  MoveResult,
  MoveTarget,
  NodeStatus,
  OpenSessionOptions,
  RevokeLockOptions,
  RevokeLockResult,
  WatchHandle,
  WatchOptions,
  WithLockOptions,
  LockMode,
  WriteArgs,
  WriteOp,
  WriteResult,
} from './types';
import { Watcher, lockSubject, semaphoreSubject } from './watch';

export const DEFAULT_REQUEST_TIMEOUT_MS = 2_000;
export const DEFAULT_TOTAL_TIMEOUT_MS = 10_000;
/** How long close() waits for the cluster to confirm the sessions' close, unless told otherwise. */
export const DEFAULT_CLOSE_TIMEOUT_MS = 2_000;

function isLoopback(endpoint: string): boolean {
  const host = endpoint.slice(0, endpoint.lastIndexOf(':')).replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** A positive exact integer (an unsafe one would not reach the wire exactly), else INVALID_ARGUMENT. */
function positiveInt(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value <= 0) throw new FenceLockError('INVALID_ARGUMENT', `${name} must be a positive integer, got ${value}`);
  return value;
}

function toWireOps(ops: WriteOp[]): Op[] {
  if (!Array.isArray(ops) || ops.length === 0) throw new FenceLockError('INVALID_ARGUMENT', 'ops: a write needs at least one operation');
  return ops.map((op, i): Op => {
    if (op && 'put' in op && typeof op.put === 'string') {
      const v = op.value;
      let value: Buffer;
      if (typeof v === 'string') value = Buffer.from(v, 'utf8');
      else if (v instanceof Uint8Array) value = Buffer.from(v.buffer, v.byteOffset, v.byteLength);
      else throw new FenceLockError('INVALID_ARGUMENT', `ops[${i}].value must be a string or a Uint8Array`);
      return { type: 'PUT', key: op.put, value };
    }
    if (op && 'delete' in op && typeof op.delete === 'string') return { type: 'DELETE', key: op.delete, value: Buffer.alloc(0) };
    throw new FenceLockError('INVALID_ARGUMENT', `ops[${i}] must be { put: key, value } or { delete: key }`);
  });
}

function toNodeStatus(s: StatusResponse__Output): NodeStatus {
  return {
    id: s.id,
    address: s.address,
    role: s.role,
    term: wireToBigInt(s.term),
    leader: s.leader,
    leaderAddress: s.leaderAddress,
    commit: wireToBigInt(s.commit),
    applied: wireToBigInt(s.applied),
    snapshotIndex: wireToBigInt(s.snapshotIndex),
    lastIndex: wireToBigInt(s.lastIndex),
    sessions: wireToBigInt(s.sessions),
    locksHeld: wireToBigInt(s.locksHeld),
    waiters: wireToBigInt(s.waiters),
    peers: (s.peers ?? []).map((p) => ({ id: p.id, address: p.address, match: wireToBigInt(p.match), next: wireToBigInt(p.next), state: p.state })),
  };
}

/**
 * The fencelock client: finds the leader, retries safely (a retried request keeps its request id, so the
 * server answers it from its dedup table), keeps sessions alive over one KeepAlive stream, and hands out locks
 * with fencing tokens.
 */
/** A signal that aborts with the reason of the first of `signals` to abort (AbortSignal.any needs Node 20.3). */
function firstAbort(signals: AbortSignal[]): AbortSignal {
  const aborter = new AbortController();
  const already = signals.find((sig) => sig.aborted);
  if (already) {
    aborter.abort(already.reason);
    return aborter.signal;
  }
  const onAbort = (ev: Event): void => {
    for (const sig of signals) sig.removeEventListener('abort', onAbort);
    aborter.abort((ev.target as AbortSignal).reason);
  };
  for (const sig of signals) sig.addEventListener('abort', onAbort, { once: true });
  return aborter.signal;
}

export class FenceLockClient implements SessionHost {
  /** The client id of the requests sent from now on (a fresh one replaces it if the cluster forgot it). */
  get clientId(): string {
    return this.ids.clientId;
  }

  readonly logger: Logger;
  readonly requestTimeoutMs: number;
  readonly totalTimeoutMs: number;
  /** Where the channel credentials came from (options, env, local-cluster, system-roots, insecure-*). */
  readonly credentialSource: CredentialSource;
  /** The id (16 hex digits, no secret) of the bearer token every call carries, when one was given. */
  readonly authTokenId: string | undefined;
  /** Users, roles, permissions, quotas and tokens (docs/auth.md). */
  readonly auth: AuthClient;
  /** Membership changes (docs/operations.md): list, add a learner, promote, remove. */
  readonly members: MembersClient;
  /** @internal The clock, timers, randomness and transport everything runs on (FenceLockClientOptions.ports). */
  readonly ports: ClientPorts;
  private readonly router: Router;
  private ids: RequestIds;
  private readonly keepalive: KeepAliveStream;
  private readonly sessions = new Set<Session>();
  private readonly shared = new Map<number, Promise<Session>>();
  private readonly watchers = new Set<WatchHandle>();
  private readonly cleanupTimers = new Set<ClientTimer>();
  private closing: Promise<void> | undefined;
  /** Defaults of every session this client opens (FenceLockClientOptions.clientName, labels). */
  private readonly clientName: string | undefined;
  private readonly labels: Record<string, string>;

  constructor(opts: FenceLockClientOptions) {
    this.logger = opts.logger ?? silentLogger;
    const random = opts.ports?.random ?? realRandom;
    const clientId = opts.clientId ?? Buffer.from(random.bytes(16)).toString('hex');
    const idBytes = Buffer.byteLength(clientId, 'utf8');
    if (idBytes < 1 || idBytes > MAX_CLIENT_ID_BYTES) throw new FenceLockError('INVALID_ARGUMENT', `clientId must be 1..${MAX_CLIENT_ID_BYTES} bytes (UTF-8), got ${idBytes}`);
    this.requestTimeoutMs = positiveInt('requestTimeoutMs', opts.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS);
    this.totalTimeoutMs = positiveInt('totalTimeoutMs', opts.totalTimeoutMs ?? DEFAULT_TOTAL_TIMEOUT_MS);
    this.clientName = opts.clientName;
    this.labels = sessionLabels(opts.processLabels === false ? undefined : processLabels(), opts.labels);
    // The token is checked first and then kept only in the interceptor's closure: never a field, never logged.
    this.authTokenId = opts.token === undefined ? undefined : checkAuthToken(opts.token, 'token');
    const interceptors = opts.token === undefined ? [] : [bearerInterceptor(opts.token)];
    const creds = resolveCredentials({ tls: opts.tls, insecure: opts.insecure });
    this.credentialSource = creds.source;
    const endpoints = opts.endpoints ?? [];
    this.ports = {
      clock: opts.ports?.clock ?? realClock,
      timers: opts.ports?.timers ?? realTimers,
      random,
      transport: opts.ports?.transport ?? new GrpcTransport(creds.credentials, { ...CHANNEL_OPTIONS, ...creds.channelOptions }, interceptors),
    };
    this.router = new Router(endpoints, this.requestTimeoutMs, this.totalTimeoutMs, this.logger, opts.pipeline ?? true, this.ports, creds.trust);
    this.logger.debug(
      { credentials: creds.source, clientCert: creds.clientCert, files: creds.files, bearerTokenId: this.authTokenId ?? null },
      'fencelock: channel credentials',
    );
    if (creds.insecure) {
      const remote = endpoints.filter((e) => !isLoopback(e));
      if (remote.length > 0) this.logger.warn({ endpoints: remote }, 'fencelock: plaintext (insecure) connections to non-loopback endpoints: session ids travel in clear');
    }
    this.ids = new RequestIds(clientId);
    this.keepalive = new KeepAliveStream(this.router, this.requestTimeoutMs, this.logger);
    this.auth = new AuthClient({
      read: (m, req, what) => {
        this.assertOpen();
        return this.router.call(m, req, { what });
      },
      mutate: (m, build, what) => {
        this.assertOpen();
        return this.mutate(m, build, { what });
      },
      methods,
    });
    this.members = new MembersClient((m, req, what) => {
      this.assertOpen();
      return this.router.call(m, req, { what });
    }, () => methods().Cluster);
  }

  /** The configured endpoints (leader hints never add to them). */
  endpoints(): string[] {
    return this.router.knownEndpoints();
  }

  /** The endpoint calls go to now (the leader, once found). */
  currentEndpoint(): string {
    return this.router.current();
  }

  // ----- sessions and locks -----

  /** Opens a session with a lease of ttlMs (default 10 s), renewed every ttl/3 until closed or lost. */
  async openSession(opts: OpenSessionOptions = {}): Promise<Session> {
    this.assertOpen();
    const ttl = positiveInt('ttlMs', opts.ttlMs ?? DEFAULT_TTL_MS);
    const name = opts.name ?? this.clientName ?? '';
    const labels = sessionLabels(this.labels, opts.labels);
    const sentAt = this.ports.clock.monotonicMs();
    const res = await this.mutate(methods().Session.Open, (header) => ({ header, ttlMs: intToWire('ttl_ms', ttl), clientName: name, labels }), { what: 'open session' });
    const granted = wireToNumber(res.ttlMs);
    const session = new Session(this, res.sessionId, granted > 0 ? granted : ttl, name, sentAt, wireToNumber(res.electionTimeoutMs));
    if (this.closing) {
      void session.close().catch(() => undefined);
      throw new FenceLockError('CANCELLED', 'open session: the fencelock client is closed');
    }
    this.sessions.add(session);
    this.keepalive.add(session);
    return session;
  }

  /**
   * Runs fn while holding the lock: opens (or reuses) a session with this TTL, acquires (blocking), runs fn with
   * the fencing token, and releases in finally. fn's own error wins over a release error. When a release cannot
   * be confirmed, the shared session is abandoned so the server frees the lock when its lease runs out.
   * `signal` (lock.signal) aborts when this client presumes the lock lost: fn should stop its work then (pass
   * it to fetch, pg, timers, ...), because the lock may be handed to someone else soon. withLock does not
   * interrupt fn by itself. A withLock nested in fn for the same lock and TTL runs on the same shared session,
   * so it shares the grant (same token) and its release ends it for fn too: `signal` aborts with reason
   * RELEASED. There is no hold count (Session.acquire).
   */
  async withLock<T>(name: string, fn: (token: bigint, lock: LockHandle, signal: AbortSignal) => Promise<T>, opts: WithLockOptions = {}): Promise<T> {
    const ttl = positiveInt('ttlMs', opts.ttlMs ?? DEFAULT_TTL_MS);
    const lock = await this.acquireOnSharedSession(ttl, (session) =>
      session.acquire(name, { waitTimeoutMs: opts.waitTimeoutMs, lockDelayMs: opts.lockDelayMs, ...(opts.mode === undefined ? {} : { mode: opts.mode }) }),
    );
    return this.runThenRelease(() => fn(lock.token, lock, lock.signal), () => this.releaseForWithLock(lock), { lock: name }, 'withLock');
  }

  /** withLock with a shared grant: for readers; the token lets a downstream reader check that no writer came after it. */
  withReadLock<T>(name: string, fn: (token: bigint, lock: LockHandle, signal: AbortSignal) => Promise<T>, opts: Omit<WithLockOptions, 'mode'> = {}): Promise<T> {
    return this.withLock(name, fn, { ...opts, mode: 'shared' });
  }

  /** withLock with an exclusive grant (the default), named for symmetry with withReadLock. */
  withWriteLock<T>(name: string, fn: (token: bigint, lock: LockHandle, signal: AbortSignal) => Promise<T>, opts: Omit<WithLockOptions, 'mode'> = {}): Promise<T> {
    return this.withLock(name, fn, { ...opts, mode: 'exclusive' });
  }

  /**
   * Runs fn while holding a permit of semaphore `name` (docs/architecture.md#semaphores), on the shared
   * session of the TTL as withLock; fn gets the permit (its slot, token and fencing) and a signal that
   * aborts when the permit is presumed lost. The permit is released after fn, whatever it does.
   */
  async withPermit<T>(name: string, opts: AcquirePermitOptions & { ttlMs?: number }, fn: (permit: PermitHandle, signal: AbortSignal) => Promise<T>): Promise<T> {
    const ttl = positiveInt('ttlMs', opts.ttlMs ?? DEFAULT_TTL_MS);
    const permit = await this.acquireOnSharedSession(ttl, (session) =>
      session.acquirePermit(name, { permits: opts.permits, waitTimeoutMs: opts.waitTimeoutMs }),
    );
    return this.runThenRelease(() => fn(permit, permit.signal), () => this.releasePermitOf(permit), { semaphore: name }, 'withPermit');
  }

  /**
   * Runs fn while holding every lock of `names` at once (session.acquireAll, docs/architecture.md#atomic-multi-lock):
   * on the shared session of the TTL, as withLock, waits up to waitTimeoutMs for the whole set (never a part of
   * it, so callers naming the same locks in other orders do not deadlock). fn gets the set's one token, the
   * handles in the order given, and a signal that aborts when any of them is presumed or known lost (revoked
   * alone, fenced out, session lost), with that lock's reason, or when fn releases one itself (RELEASED). Every
   * lock is released after fn, also when fn throws; fn's own error wins over a release error. A withLocks nested
   * in a withLock (or the other way) naming a lock already held on the same shared session fails SET_OVERLAP.
   */
  async withLocks<T>(
    names: readonly string[],
    fn: (token: bigint, locks: LockHandle[], signal: AbortSignal) => Promise<T>,
    opts: { ttlMs?: number; waitTimeoutMs?: number } = {},
  ): Promise<T> {
    const ttl = positiveInt('ttlMs', opts.ttlMs ?? DEFAULT_TTL_MS);
    const locks = await this.acquireOnSharedSession(ttl, (session) => session.acquireAll(names, { waitTimeoutMs: opts.waitTimeoutMs }));
    return this.runThenRelease(
      () => fn(locks[0]?.token ?? 0n, locks, firstAbort(locks.map((l) => l.signal))),
      () => this.releaseAllForWithLocks(locks),
      { locks: names },
      'withLocks',
    );
  }

  /** Takes a grant on the shared session of this TTL; when that session vanished on the server (expired while idle), retries once on a fresh one. */
  private async acquireOnSharedSession<H>(ttl: number, take: (session: Session) => Promise<H>): Promise<H> {
    for (let attempt = 1; ; attempt++) {
      const session = await this.sharedSession(ttl);
      try {
        return await take(session);
      } catch (err) {
        const vanished = session.isLost() || (isFenceLockError(err, 'NOT_FOUND') && err.reason === 'UNKNOWN_SESSION');
        if (attempt === 1 && vanished) continue;
        throw err;
      }
    }
  }

  /** Runs the body, then releases whatever it did; the body's own error wins over a release error, which is logged. */
  private async runThenRelease<T>(body: () => Promise<T>, release: () => Promise<void>, about: Record<string, unknown>, helper: string): Promise<T> {
    let result: T;
    try {
      result = await body();
    } catch (bodyErr) {
      await release().catch((relErr: unknown) => {
        this.logger.warn({ err: relErr, ...about }, `fencelock: release after a failed ${helper} body failed`);
      });
      throw bodyErr;
    }
    await release();
    return result;
  }

  /** Releases every lock even when one release fails (each release may abandon the session); then throws the first failure. */
  private async releaseAllForWithLocks(locks: LockHandle[]): Promise<void> {
    const results = await Promise.allSettled(locks.map((l) => this.releaseForWithLock(l)));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }

  private async releasePermitOf(permit: PermitHandle): Promise<void> {
    try {
      await permit.release();
    } catch (err) {
      if (isFenceLockError(err) && (err.indeterminate || err.code === 'UNAVAILABLE' || err.code === 'DEADLINE_EXCEEDED')) {
        permit.session.abandon(`release of a permit of semaphore ${JSON.stringify(permit.name)} could not be confirmed`);
      }
      throw err;
    }
  }

  private async releaseForWithLock(lock: LockHandle): Promise<void> {
    try {
      await lock.release();
    } catch (err) {
      if (isFenceLockError(err) && (err.indeterminate || err.code === 'UNAVAILABLE' || err.code === 'DEADLINE_EXCEEDED')) {
        lock.session.abandon(`release of lock ${JSON.stringify(lock.name)} could not be confirmed`);
      }
      throw err;
    }
  }

  private sharedSession(ttl: number): Promise<Session> {
    const existing = this.shared.get(ttl);
    if (existing) {
      return existing.then(
        (s) => {
          if (!s.isLost() && !s.isClosed()) return s;
          if (this.shared.get(ttl) === existing) this.shared.delete(ttl);
          return this.sharedSession(ttl);
        },
        () => {
          if (this.shared.get(ttl) === existing) this.shared.delete(ttl);
          return this.sharedSession(ttl);
        },
      );
    }
    const p = this.openSession({ ttlMs: ttl, name: this.clientName ?? 'withLock' });
    this.shared.set(ttl, p);
    p.catch(() => {
      if (this.shared.get(ttl) === p) this.shared.delete(ttl);
    });
    return p;
  }

  /**
   * An election by name, on lock NAME and key NAME (README, "Elections"): campaign() to lead, leader() to read
   * who leads, observe() to follow each new leadership.
   */
  election(name: string, opts: ElectionOptions = {}): Election {
    this.assertOpen();
    return new Election(this, name, opts);
  }

  // ----- SessionHost -----

  /** @internal */
  async acquireFor(session: Session, lock: string, waitTimeoutMs: number, lockDelayMs = 0, mode: LockMode = 'exclusive'): Promise<{ acquired: boolean; token: bigint; holderSession: string }> {
    this.assertOpen();
    try {
      const res = await this.mutate(
        methods().Lock.Acquire,
        (header) => ({ header, lock, sessionId: session.id, waitTimeoutMs: intToWire('wait_timeout_ms', waitTimeoutMs), lockDelayMs: intToWire('lock_delay_ms', lockDelayMs), mode: mode === 'shared' ? ('LOCK_MODE_SHARED' as const) : ('LOCK_MODE_EXCLUSIVE' as const) }),
        {
          what: `acquire lock ${JSON.stringify(lock)}`,
          attemptTimeoutMs: waitTimeoutMs + this.requestTimeoutMs,
          totalTimeoutMs: waitTimeoutMs + this.totalTimeoutMs,
          serverDeadlineIsFinal: true,
        },
      );
      return { acquired: res.acquired, token: wireToBigInt(res.token), holderSession: res.holderSession };
    } catch (err) {
      this.noticeSessionGone(session, err);
      if (isFenceLockError(err) && err.indeterminate) this.scheduleOrphanCheck(session, lock, waitTimeoutMs);
      throw err;
    }
  }

  /** @internal */
  async acquireAllFor(session: Session, locks: readonly string[], waitTimeoutMs: number): Promise<{ acquired: boolean; token: bigint; busyLock: string }> {
    this.assertOpen();
    try {
      const res = await this.mutate(
        methods().Lock.AcquireAll,
        (header) => ({ header, locks: [...locks], sessionId: session.id, waitTimeoutMs: intToWire('wait_timeout_ms', waitTimeoutMs) }),
        {
          what: `acquire locks ${JSON.stringify(locks)}`,
          attemptTimeoutMs: waitTimeoutMs + this.requestTimeoutMs,
          totalTimeoutMs: waitTimeoutMs + this.totalTimeoutMs,
          serverDeadlineIsFinal: true,
        },
      );
      return { acquired: res.acquired, token: wireToBigInt(res.token), busyLock: res.busyLock };
    } catch (err) {
      this.noticeSessionGone(session, err);
      // A set granted after the caller gave up is released lock by lock, as an orphaned single grant.
      if (isFenceLockError(err) && err.indeterminate) for (const lock of locks) this.scheduleOrphanCheck(session, lock, waitTimeoutMs);
      throw err;
    }
  }

  /** @internal */
  async releaseFor(session: Session, lock: string, token: bigint): Promise<void> {
    this.assertOpen();
    try {
      await this.mutate(methods().Lock.Release, (header) => ({ header, lock, sessionId: session.id, token: bigIntToWire(token) }), {
        what: `release lock ${JSON.stringify(lock)} (token ${token})`,
      });
    } catch (err) {
      this.noticeSessionGone(session, err);
      throw err;
    }
  }

  /** @internal */
  async acquirePermitFor(session: Session, name: string, permits: number, waitTimeoutMs: number): Promise<PermitGrant> {
    this.assertOpen();
    try {
      const res = await this.mutate(
        methods().Semaphore.Acquire,
        (header) => ({ header, name, sessionId: session.id, permits, waitTimeoutMs: intToWire('wait_timeout_ms', waitTimeoutMs) }),
        {
          what: `acquire a permit of semaphore ${JSON.stringify(name)}`,
          attemptTimeoutMs: waitTimeoutMs + this.requestTimeoutMs,
          totalTimeoutMs: waitTimeoutMs + this.totalTimeoutMs,
          serverDeadlineIsFinal: true,
        },
      );
      return { acquired: res.acquired, token: wireToBigInt(res.token), slot: res.slot, permits: res.permits };
    } catch (err) {
      this.noticeSessionGone(session, err);
      if (isFenceLockError(err) && err.indeterminate) this.schedulePermitOrphanCheck(session, name, waitTimeoutMs);
      throw err;
    }
  }

  /** @internal */
  async releasePermitFor(session: Session, name: string, token: bigint): Promise<void> {
    this.assertOpen();
    try {
      await this.mutate(methods().Semaphore.Release, (header) => ({ header, name, sessionId: session.id, token: bigIntToWire(token) }), {
        what: `release a permit of semaphore ${JSON.stringify(name)} (token ${token})`,
      });
    } catch (err) {
      this.noticeSessionGone(session, err);
      throw err;
    }
  }

  /** @internal A fenced write under a permit: its keys are bound to the permit's slot. */
  async writePermitFor(permit: PermitHandle, ops: WriteOp[]): Promise<WriteResult> {
    this.assertOpen();
    const wireOps = toWireOps(ops);
    const res = await this.mutate(
      methods().KV.Write,
      (header) => ({ header, lock: permit.name, token: bigIntToWire(permit.token), sessionId: permit.session.id, ops: wireOps, semaphore: true, slot: permit.slot }),
      { what: `write under a permit of semaphore ${JSON.stringify(permit.name)} (slot ${permit.slot}, token ${permit.token})` },
    );
    return { index: wireToBigInt(res.index) };
  }

  /** @internal */
  writeFor(lock: string, token: bigint, sessionId: string, ops: WriteOp[]): Promise<WriteResult> {
    return this.write({ lock, token, sessionId, ops });
  }

  /** @internal */
  async closeSessionFor(session: Session, timeoutMs?: number): Promise<void> {
    this.sessions.delete(session);
    if (this.router.isClosed()) return;
    try {
      await this.mutate(methods().Session.Close, (header) => ({ header, sessionId: session.id }), {
        what: `close session ${session.publicId}`,
        totalTimeoutMs: timeoutMs ?? (this.closing ? this.requestTimeoutMs : this.totalTimeoutMs),
      });
    } catch (err) {
      if (isFenceLockError(err, 'NOT_FOUND')) return; // already gone: the goal is reached
      throw err;
    }
  }

  /** @internal */
  startRenewing(session: Session): void {
    this.keepalive.add(session);
  }

  /** @internal */
  stopRenewing(session: Session): void {
    this.keepalive.remove(session.id);
  }

  /** A server that no longer knows a session means it has expired: tell the session, which stops renewing. */
  private noticeSessionGone(session: Session, err: unknown): void {
    if (isFenceLockError(err, 'NOT_FOUND') && err.reason === 'UNKNOWN_SESSION') {
      session.expired(new FenceLockError('NOT_FOUND', `session ${session.publicId} is unknown to the leader (expired)`, { reason: 'SESSION_EXPIRED', cause: err }));
    }
  }

  /**
   * After an acquire whose outcome is unknown (every attempt timed out), the request may still be granted on
   * the server and leave a lock held by this session that nobody knows of. Once the server-side wait must be
   * over, look, and release such an orphan grant.
   */
  private scheduleOrphanCheck(session: Session, lock: string, waitTimeoutMs: number): void {
    this.afterServerWait(session, waitTimeoutMs, { lock }, () => session.holdsHandle(lock), async () => {
      const d = await this.describe(lock);
      if (session.holdsHandle(lock) || session.isClosed()) return;
      const ours = (handle: string | undefined): boolean => handle === session.publicId || handle === session.id;
      // A shared (read) grant is no `held`: it is among the shared holders.
      const token = d.held && ours(d.holderSession) ? d.token : d.sharedHolders.find((h) => ours(h.session?.handle))?.token;
      if (token === undefined) return;
      this.logger.warn({ lock, token: token.toString() }, 'fencelock: releasing a grant whose acquire had timed out');
      await this.releaseFor(session, lock, token);
    });
  }

  /**
   * The same for a permit (docs/architecture.md#semaphores): a permit granted after the caller gave up would
   * otherwise stay held, its slot lost to everyone, until the session ends.
   */
  private schedulePermitOrphanCheck(session: Session, name: string, waitTimeoutMs: number): void {
    this.afterServerWait(session, waitTimeoutMs, { semaphore: name }, () => session.holdsPermitHandle(name), async () => {
      const d = await this.describeSemaphore(name);
      const mine = d.holders.find((h) => h.session?.handle === session.publicId);
      if (mine === undefined || session.holdsPermitHandle(name) || session.isClosed()) return;
      this.logger.warn({ semaphore: name, slot: mine.slot, token: mine.token.toString() }, 'fencelock: releasing a permit whose acquire had timed out');
      await this.releasePermitFor(session, name, mine.token);
    });
  }

  /** Runs `check` once the server-side wait of an uncertain acquire must be over, unless the application holds what it asked for. */
  private afterServerWait(session: Session, waitTimeoutMs: number, about: Record<string, string>, heldByApplication: () => boolean, check: () => Promise<void>): void {
    const timer = this.ports.timers.setTimeout(() => {
      this.cleanupTimers.delete(timer);
      if (this.closing || session.isLost() || session.isClosed() || heldByApplication()) return;
      check().catch((err: unknown) => this.logger.debug({ err, ...about }, 'fencelock: orphan-grant check failed'));
    }, waitTimeoutMs + this.requestTimeoutMs);
    timer.unref();
    this.cleanupTimers.add(timer);
  }

  // ----- fenced KV -----

  /** A fenced write: applied atomically only if (lock, token, session) still holds the lock when it applies. */
  async write(args: WriteArgs): Promise<WriteResult> {
    this.assertOpen();
    const ops = toWireOps(args.ops);
    let token: string;
    try {
      token = bigIntToWire(args.token);
    } catch (err) {
      throw new FenceLockError('INVALID_ARGUMENT', `token: ${(err as Error).message}`);
    }
    const res = await this.mutate(methods().KV.Write, (header) => ({ header, lock: args.lock, token, sessionId: args.sessionId, ops }), {
      what: `write under lock ${JSON.stringify(args.lock)} (token ${args.token})`,
    });
    return { index: wireToBigInt(res.index) };
  }

  /** Reads a key; linearizable unless staleOk. */
  async get(key: string, opts: GetOptions = {}): Promise<GetResult> {
    this.assertOpen();
    const res = await this.router.call(methods().KV.Get, { key, staleOk: opts.staleOk ?? false }, { what: `get ${JSON.stringify(key)}` });
    const found = { found: res.found, value: new Uint8Array(res.value ?? Buffer.alloc(0)), token: wireToBigInt(res.token), lock: res.lock, deleted: res.deleted === true };
    return res.semaphore === true ? { ...found, slot: res.slot } : found;
  }

  /** Lists keys with a prefix, in key order, one page at a time; deleted keys too with `includeDeleted`. */
  async list(prefix = '', opts: ListOptions = {}): Promise<ListResult> {
    this.assertOpen();
    const limit = opts.limit ?? 0;
    if (!Number.isInteger(limit) || limit < 0 || limit > 0xffffffff) throw new FenceLockError('INVALID_ARGUMENT', `limit must be a non-negative integer, got ${limit}`);
    const req = { prefix, startAfter: opts.startAfter ?? '', limit, includeDeleted: opts.includeDeleted === true };
    const res = await this.router.call(methods().KV.List, req, { what: `list ${JSON.stringify(prefix)}` });
    return {
      items: (res.items ?? []).map((kv) => ({
        key: kv.key,
        value: new Uint8Array(kv.value ?? Buffer.alloc(0)),
        token: wireToBigInt(kv.token),
        lock: kv.lock,
        deleted: kv.deleted === true,
      })),
      more: res.more,
    };
  }

  /**
   * Binds a key, or every key under a prefix (at most 10,000), to another lock that nobody holds or waits for
   * (needs the `admin` permission). Watermarks stay; the lock's latest token is raised to the highest of them,
   * so no token it granted before gets in. Retried like every mutation (same request id).
   */
  async move(what: MoveTarget, toLock: string): Promise<MoveResult> {
    this.assertOpen();
    const w = (typeof what === 'object' && what !== null ? what : {}) as { key?: unknown; prefix?: unknown };
    if ((w.key === undefined) === (w.prefix === undefined)) throw new FenceLockError('INVALID_ARGUMENT', 'move: give { key } or { prefix }, not both or neither');
    if (w.key !== undefined && (typeof w.key !== 'string' || w.key === '')) throw new FenceLockError('INVALID_ARGUMENT', 'move: key must be a non-empty string');
    if (w.prefix !== undefined && typeof w.prefix !== 'string') throw new FenceLockError('INVALID_ARGUMENT', "move: prefix must be a string ('' moves every key)");
    if (typeof toLock !== 'string' || toLock === '') throw new FenceLockError('INVALID_ARGUMENT', 'move: the lock to move to must be a non-empty string');
    const target = typeof w.key === 'string' ? { key: w.key } : { prefix: w.prefix as string };
    const subject = 'key' in target ? `key ${JSON.stringify(target.key)}` : `keys under ${JSON.stringify(target.prefix)}`;
    const res = await this.mutate(methods().KV.Move, (header) => ({ header, ...target, toLock }), { what: `move ${subject} to lock ${JSON.stringify(toLock)}` });
    return { moved: wireToNumber(res.moved), index: wireToBigInt(res.index) };
  }

  /**
   * Ends the lock's current grant without ending its holder's session (needs the `admin` permission): the
   * next waiter gets the lock with a higher token, so the old holder's fenced writes are refused; its client
   * learns REVOKED from its next renewal. FAILED_PRECONDITION (LOCK_NOT_HELD) when nobody holds the lock;
   * with `token`, WRONG_TOKEN when that grant is no longer the current one. Retried like every mutation.
   */
  async revokeLock(lock: string, opts: RevokeLockOptions = {}): Promise<RevokeLockResult> {
    this.assertOpen();
    if (typeof lock !== 'string' || lock === '') throw new FenceLockError('INVALID_ARGUMENT', 'revokeLock: the lock name must be a non-empty string');
    const reason = opts.reason ?? '';
    if (opts.token !== undefined && opts.token < 1n) throw new FenceLockError('INVALID_ARGUMENT', `revokeLock: token must be at least 1 (tokens start at 1), got ${opts.token}`);
    const token = opts.token === undefined ? {} : { token: bigIntToWire(opts.token) };
    const res = await this.mutate(methods().Lock.Revoke, (header) => ({ header, lock, reason, ...token }), { what: `revoke lock ${JSON.stringify(lock)}` });
    return { endedToken: wireToBigInt(res.endedToken), nextHolderSession: res.nextHolderSession, nextToken: wireToBigInt(res.nextToken) };
  }

  // ----- inspection -----

  async describe(lock: string): Promise<LockDescription> {
    this.assertOpen();
    const d = await this.router.call(methods().Lock.Describe, { lock }, { what: `describe lock ${JSON.stringify(lock)}` });
    return {
      lock,
      held: d.held,
      holderSession: d.holderSession,
      token: wireToBigInt(d.token),
      grantedAtMs: wireToNumber(d.grantedAtMs),
      waiters: d.waiters ?? [],
      latestToken: wireToBigInt(d.latestToken),
      holder: d.held ? toSessionDetails(d.holder) : null,
      waiterSessions: (d.waiterSessions ?? []).flatMap((w) => toSessionDetails(w) ?? []),
      lockDelayMs: wireToNumber(d.lockDelayMs),
      delayedUntilMs: wireToNumber(d.delayedUntilMs),
      delayRemainingMs: wireToNumber(d.delayRemainingMs),
      sharedHolders: (d.sharedHolders ?? []).map((x) => ({ session: toSessionDetails(x.session), token: wireToBigInt(x.token), grantedAtMs: wireToNumber(x.grantedAtMs) })),
      waiterShared: d.waiterShared ?? [],
    };
  }

  /** A semaphore's permits in force, holders by slot and waiters; permits 0 for an unknown (or idle, forgotten) one. */
  async describeSemaphore(name: string): Promise<SemaphoreDescription> {
    this.assertOpen();
    const d = await this.router.call(methods().Semaphore.Describe, { name }, { what: `describe semaphore ${JSON.stringify(name)}` });
    return {
      name,
      permits: d.permits,
      holders: (d.holders ?? []).map((h) => ({ slot: h.slot, token: wireToBigInt(h.token), session: toSessionDetails(h.session), grantedAtMs: wireToNumber(h.grantedAtMs) })),
      waiters: (d.waiters ?? []).flatMap((w) => toSessionDetails(w) ?? []),
      slotTokens: (d.slotTokens ?? []).map((t) => wireToBigInt(t)),
    };
  }

  /**
   * One page of the locks under `prefix` that are held or awaited (and idle ones kept for their keys, with
   * `includeIdle`), in name order: holder, token, hold time and the head of the queue. With auth on, only
   * the locks the caller may lock; the others are left out as if they did not exist.
   */
  async listLocks(opts: ListLocksOptions = {}): Promise<ListLocksResult> {
    this.assertOpen();
    const req = listLocksRequest(opts);
    const res = await this.router.call(methods().Lock.List, req, { what: `list locks ${JSON.stringify(req.prefix)}` });
    return { locks: (res.locks ?? []).map(lockSummary), more: res.more };
  }

  /** Every lock listLocks would show, page after page (`limit` is the page size). */
  locks(opts: Omit<ListLocksOptions, 'startAfter'> = {}): AsyncGenerator<LockSummary> {
    return allLocks((page) => this.listLocks(page), opts);
  }

  /** Streams the lock's grants, releases and expiries until cancel(); reconnects across node failures. */
  watch(lock: string, onEvent: (ev: LockEvent) => void, opts: WatchOptions = {}): WatchHandle {
    this.assertOpen();
    const w = new Watcher(this.router, lockSubject(lock), onEvent, opts, this.logger, (stopped) => this.watchers.delete(stopped));
    this.watchers.add(w);
    w.start();
    return w;
  }

  /**
   * Streams the permits of semaphore `name` (each granted, released or expired, with its slot and token) until
   * cancel(); reconnects across node failures as watch() does, with the same options and the same caveats
   * about events missed while no stream was open. Needs the `lock` permission on the name.
   */
  watchSemaphore(name: string, onEvent: (ev: PermitEvent) => void, opts: WatchOptions = {}): WatchHandle {
    this.assertOpen();
    const w = new Watcher(this.router, semaphoreSubject(name), onEvent, opts, this.logger, (stopped) => this.watchers.delete(stopped));
    this.watchers.add(w);
    w.start();
    return w;
  }

  /**
   * Status of one node: of `endpoint` (one attempt, no redirection), or of whichever node answers when omitted.
   */
  async status(endpoint?: string): Promise<NodeStatus> {
    this.assertOpen();
    const m = methods().Cluster.Status;
    if (endpoint === undefined) return toNodeStatus(await this.router.call(m, {}, { what: 'status' }));
    try {
      return toNodeStatus(await this.router.once(endpoint, m, {}, this.requestTimeoutMs));
    } catch (err) {
      throw toFenceLockError(err, `status of ${endpoint}`);
    }
  }

  /**
   * A consistent backup of the cluster's state (Cluster.Snapshot, docs/backup.md), taken by the leader and
   * streamed into `sink`: its header first, then the data in order. Admin only when auth is on.
   */
  async snapshot(sink: SnapshotSink): Promise<SnapshotInfo> {
    this.assertOpen();
    return streamSnapshot(this.router, sink, this.totalTimeoutMs);
  }

  /** Status of every known endpoint, in parallel; an unreachable node gives an error row, never a throw. */
  async statusAll(): Promise<EndpointStatus[]> {
    this.assertOpen();
    return Promise.all(
      this.router.knownEndpoints().map(async (endpoint): Promise<EndpointStatus> => {
        try {
          return { endpoint, ok: true, status: await this.status(endpoint) };
        } catch (err) {
          return { endpoint, ok: false, error: toFenceLockError(err, `status of ${endpoint}`) };
        }
      }),
    );
  }

  /**
   * Closes every session this client opened (releasing their locks), stops watches and closes the channels.
   * Waits at most `timeoutMs` (default 2 s) for the cluster to confirm the sessions' close; a session it did
   * not confirm (the cluster is unreachable) expires on the server after its TTL. Idempotent: a second call
   * returns the first one's promise.
   */
  close(opts: CloseOptions = {}): Promise<void> {
    if (!this.closing) {
      const timeoutMs = opts.timeoutMs ?? DEFAULT_CLOSE_TIMEOUT_MS;
      if (!Number.isInteger(timeoutMs) || timeoutMs < 0) {
        return Promise.reject(new FenceLockError('INVALID_ARGUMENT', `close: timeoutMs must be a non-negative integer, got ${timeoutMs}`));
      }
      this.closing = this.doClose(timeoutMs);
    }
    return this.closing;
  }

  private async doClose(timeoutMs: number): Promise<void> {
    for (const w of [...this.watchers]) w.cancel();
    for (const t of this.cleanupTimers) this.ports.timers.clearTimeout(t);
    this.cleanupTimers.clear();
    const sessions = [...this.sessions];
    const closed = Promise.allSettled(sessions.map((s) => s.close({ timeoutMs: Math.max(1, timeoutMs) })));
    if (timeoutMs > 0) {
      let timer: ClientTimer | undefined;
      const waited = new Promise<'timeout'>((resolve) => (timer = this.ports.timers.setTimeout(() => resolve('timeout'), timeoutMs)));
      const outcome = await Promise.race([closed, waited]);
      this.ports.timers.clearTimeout(timer);
      if (outcome === 'timeout') this.logger.warn({ sessions: sessions.length, timeoutMs }, 'fencelock: close not confirmed in time; unconfirmed sessions expire on the server after their TTL');
    }
    this.keepalive.close();
    this.router.close();
  }

  // ----- plumbing -----

  private assertOpen(): void {
    if (this.closing) throw new FenceLockError('CANCELLED', 'the fencelock client is closed');
  }

  /**
   * A mutating call: a fresh request id, reused unchanged by every retry of this call. REQUEST_TOO_OLD before
   * the request had reached any leader means the cluster has no record of this client id (its first request
   * never reached the log, or its records were forgotten: docs/auth.md) while this request was never
   * applied: it goes again once, under a fresh client id. After an attempt that may have reached a leader,
   * it may have been applied, so the refusal stands.
   */
  private async mutate<Req, Res>(m: MethodDesc<Req, Res>, build: (header: RequestHeader) => Req, opts: CallOptions): Promise<Res> {
    for (let renewed = false; ; renewed = true) {
      const ids = this.ids;
      const { header, done } = ids.begin();
      try {
        return await this.router.call(m, build(header), opts);
      } catch (err) {
        if (renewed || !(err instanceof FenceLockError) || err.reason !== 'REQUEST_TOO_OLD' || !neverProposed(err)) throw err;
        this.renewClientId(ids.clientId);
      } finally {
        done();
      }
    }
  }

  /** A new client id in place of `forgotten` (unless another call renewed it already). */
  private renewClientId(forgotten: string): void {
    if (this.ids.clientId !== forgotten) return;
    const fresh = `${forgotten.slice(0, 100)}~${Buffer.from(this.ports.random.bytes(6)).toString('hex')}`;
    this.logger.info({ clientId: fresh }, 'fencelock: the cluster has no record of this client id; continuing under a new one');
    this.ids = new RequestIds(fresh);
  }
}

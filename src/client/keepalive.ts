import { FenceLockError, toFenceLockError } from './errors';
import type { Logger } from './logger';
import type { KeepAliveRequest } from '../protocol/generated/fencelock/v1/KeepAliveRequest';
import type { KeepAliveResponse__Output } from '../protocol/generated/fencelock/v1/KeepAliveResponse';
import { MAX_HELD_PER_RENEWAL } from '../protocol/limits';
import { bigIntToWire, uintToWire, wireToBigInt, wireToNumber } from '../protocol/wireInt';
import type { ClientTimer } from './ports';
import { methods } from './proto';
import { publicSessionId } from './publicId';
import { nextBackoff, type Router } from './router';
import type { BidiStreamCall } from './transport';

/** What the keepalive stream needs from a session. */
export interface Renewable {
  readonly id: string;
  readonly ttlMs: number;
  /** A renewal sent at monotonic time `sentAt` was acknowledged; the leader reports `remainingMs` left (0: not said). */
  renewed(sentAt: number, remainingMs: number): void;
  /** The leader answered alive=false: the session is gone for good. */
  expired(err: FenceLockError): void;
  /** Up to `max` grants the session holds, to ask the leader about (KeepAliveRequest.held); in turns when more. */
  heldGrants(max: number): HeldGrant[];
  /** The leader says these grants ended while the session lives: an admin revoked them. */
  grantsRevoked(grants: HeldGrant[]): void;
}

/** A grant as a renewal names it. */
export interface HeldGrant {
  lock: string;
  token: bigint;
}

interface Entry {
  session: Renewable;
  timer: ClientTimer;
  /**
   * Renewals of this session on the current stream that may still be answered: renewal id (decimal) ->
   * monotonic send time, in send order (a Map iterates in insertion order). At most MAX_PENDING.
   */
  pending: Map<string, number>;
}

/**
 * Unanswered renewals kept per session. A session is presumed lost one TTL (three renewals) after its last
 * acknowledgement and the stall timer reopens a silent stream sooner, so this is only a bound on memory: when
 * it is reached no renewal is sent until one is answered or the stream is reopened. Nothing is ever dropped to
 * make room: with an older server, which answers oldest-first without ids, a dropped send time would shift
 * every later match to a newer renewal.
 */
const MAX_PENDING = 16;

type Stream = BidiStreamCall<KeepAliveRequest, KeepAliveResponse__Output>;

/**
 * The one bidirectional KeepAlive stream of a client. Each registered session is renewed every ttl/3 on it.
 * The stream follows the leader: when it breaks it is reopened on the hinted leader, or on the next endpoint
 * after a short backoff; when renewals go unanswered for `stallMs` it is abandoned and reopened elsewhere
 * (a paused or cut-off leader keeps the TCP connection but stops answering).
 *
 * Each renewal carries a renewal id, unique on the stream, which the server echoes in its acknowledgement; the
 * session learns the time exactly that renewal was SENT, never received: the server's deadline cannot start
 * before the renewal was sent, so the client's estimate of the lease end is never later than the server's.
 * An acknowledgement whose id is unknown (already credited, sent on another stream, never sent) proves
 * nothing and is ignored. The server answers a stream's renewals in order and skips some (while it is not
 * sure it still leads), so an acknowledgement also retires the renewals of the session sent before it: they
 * will not be answered. An acknowledgement without an id (renewal_id 0, a server older than the field) is
 * matched to the session's oldest unanswered renewal, the earliest it can be for.
 *
 * Nothing here keeps a finished process alive: the timers are unref'd, and once every renewal sent is
 * answered the stream is ended (an open gRPC call holds the process), to be opened again for the next
 * renewal. A process that forgets close() exits; its sessions then expire on the server after their TTL.
 */
export class KeepAliveStream {
  private readonly entries = new Map<string, Entry>();
  private stream: Stream | undefined;
  private streamAddress = '';
  private reconnectTimer: ClientTimer | undefined;
  private stallTimer: ClientTimer | undefined;
  private backoff = 0;
  private hintsInARow = 0;
  private closed = false;
  /** The stream was ended with nothing unanswered (retireIfIdle); the next renewal opens one. */
  private idle = false;
  /** The last renewal id sent (ids start at 1: 0 means "not set" on the wire). */
  private lastRenewalId = 0;

  constructor(
    private readonly router: Router,
    private readonly stallMs: number,
    private readonly logger: Logger,
  ) {}

  private get timers() {
    return this.router.ports.timers;
  }

  /** Starts renewing a session (every ttl/3). */
  add(session: Renewable): void {
    if (this.closed || this.entries.has(session.id)) return;
    const interval = Math.max(1, Math.floor(session.ttlMs / 3));
    const entry: Entry = { session, pending: new Map(), timer: this.timers.setInterval(() => this.renew(entry), interval).unref() };
    this.entries.set(session.id, entry);
    if (!this.stream && !this.reconnectTimer) this.open();
  }

  /** Stops renewing a session; the stream is closed once no session is left. */
  remove(sessionId: string): void {
    const entry = this.entries.get(sessionId);
    if (!entry) return;
    this.timers.clearInterval(entry.timer);
    this.entries.delete(sessionId);
    if (this.entries.size === 0) this.shutdownStream();
  }

  /** For tests and diagnostics: the endpoint of the open stream, if any. */
  currentAddress(): string | undefined {
    return this.stream ? this.streamAddress : undefined;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const entry of this.entries.values()) this.timers.clearInterval(entry.timer);
    this.entries.clear();
    this.shutdownStream();
  }

  private shutdownStream(): void {
    this.timers.clearTimeout(this.reconnectTimer);
    this.reconnectTimer = undefined;
    this.timers.clearTimeout(this.stallTimer);
    this.stallTimer = undefined;
    const s = this.stream;
    this.stream = undefined;
    if (s) {
      s.end();
      s.cancel();
    }
  }

  /** Opens the stream; renews every session on it (after a break: the new leader hears from us promptly), or only `first`. */
  private open(first?: Entry): void {
    this.reconnectTimer = undefined;
    this.idle = false;
    if (this.closed || this.entries.size === 0 || this.router.isClosed()) return;
    const address = this.router.current();
    let stream: Stream;
    try {
      stream = this.router.bidiStream(address, methods().Session.KeepAlive);
    } catch (err) {
      this.logger.warn({ err, endpoint: address }, 'fencelock: cannot open keepalive stream');
      this.router.rotateFrom(address);
      this.scheduleReopen(false);
      return;
    }
    this.stream = stream;
    this.streamAddress = address;
    for (const entry of this.entries.values()) entry.pending.clear();
    stream.on('data', (res: KeepAliveResponse__Output) => this.onResponse(stream, res));
    stream.on('error', (err: unknown) => this.onBroken(stream, err));
    stream.on('end', () => this.onBroken(stream, undefined));
    if (first) this.renew(first);
    else for (const entry of this.entries.values()) this.renew(entry);
  }

  private renew(entry: Entry): void {
    if (this.closed) return;
    if (this.idle && !this.reconnectTimer) {
      this.idle = false;
      this.open(entry);
      return;
    }
    const s = this.stream;
    if (!s) return;
    // Too many unanswered: skip this renewal (see MAX_PENDING). The stall timer is armed, it reopens the stream.
    if (entry.pending.size >= MAX_PENDING) return;
    const renewalId = uintToWire('renewal_id', ++this.lastRenewalId);
    entry.pending.set(renewalId, this.router.ports.clock.monotonicMs());
    const held = entry.session.heldGrants(MAX_HELD_PER_RENEWAL).map((g) => ({ lock: g.lock, token: bigIntToWire(g.token) }));
    s.write({ sessionId: entry.session.id, renewalId, held });
    if (!this.stallTimer) this.armStallTimer(this.stallMs);
  }

  private armStallTimer(ms: number): void {
    this.stallTimer = this.timers.setTimeout(() => this.checkStall(), Math.max(1, ms)).unref();
  }

  /**
   * Every renewal sent on the stream is answered: end it, so that no open call keeps the process alive
   * between renewals. The next renewal opens a new stream on the same endpoint (the channel stays).
   */
  private retireIfIdle(): void {
    for (const entry of this.entries.values()) if (entry.pending.size > 0) return;
    const s = this.stream;
    if (!s) return;
    this.stream = undefined;
    this.idle = true;
    this.timers.clearTimeout(this.stallTimer);
    this.stallTimer = undefined;
    s.end();
  }

  private checkStall(): void {
    this.stallTimer = undefined;
    if (!this.stream) return;
    let oldest = Infinity;
    for (const entry of this.entries.values()) {
      const first = entry.pending.values().next(); // the oldest unanswered renewal of the session
      if (!first.done) oldest = Math.min(oldest, first.value);
    }
    if (oldest === Infinity) return;
    const age = this.router.ports.clock.monotonicMs() - oldest;
    if (age >= this.stallMs) {
      this.logger.warn({ endpoint: this.streamAddress, waitedMs: Math.round(age) }, 'fencelock: keepalive stream stalled, switching endpoint');
      this.breakAndReopen(undefined);
    } else {
      this.armStallTimer(this.stallMs - age);
    }
  }

  private onResponse(stream: Stream, res: KeepAliveResponse__Output): void {
    if (stream !== this.stream) return;
    this.backoff = 0;
    this.hintsInARow = 0;
    const entry = this.entries.get(res.sessionId);
    if (!entry) return;
    if (!res.alive) {
      this.remove(res.sessionId);
      const revoked = res.reason === 'REVOKED';
      const why = revoked ? 'was ended by an admin (Session.Revoke, or its user was deleted); its locks are lost' : 'has expired or is unknown to the leader';
      entry.session.expired(new FenceLockError('NOT_FOUND', `session ${publicSessionId(res.sessionId)} ${why}`, { reason: revoked ? 'REVOKED' : 'SESSION_EXPIRED' }));
      return;
    }
    const sentAt = takeSendTime(entry.pending, res.renewalId);
    if (sentAt === undefined) return; // an answer to no renewal we know: its send time is unknown, so it proves nothing
    entry.session.renewed(sentAt, wireToNumber(res.remainingMs));
    // A server older than the field leaves it out: nothing learned, as before.
    const revoked = (res.revoked ?? []).map((g) => ({ lock: g.lock, token: wireToBigInt(g.token) }));
    if (revoked.length > 0) entry.session.grantsRevoked(revoked);
    this.retireIfIdle();
  }

  private onBroken(stream: Stream, raw: unknown): void {
    if (stream !== this.stream) return;
    this.breakAndReopen(raw);
  }

  private breakAndReopen(raw: unknown): void {
    const old = this.stream;
    const address = this.streamAddress;
    this.stream = undefined;
    this.timers.clearTimeout(this.stallTimer);
    this.stallTimer = undefined;
    for (const entry of this.entries.values()) entry.pending.clear();
    if (old) old.cancel();
    if (this.closed || this.entries.size === 0) return;
    const err = raw === undefined ? undefined : toFenceLockError(raw, 'keepalive stream');
    if (err !== undefined && REFUSED_FOR_GOOD.has(err.code)) {
      this.loseAll(err);
      return;
    }
    if (err?.leader && err.leader !== address && this.hintsInARow <= this.router.knownEndpoints().length && this.router.noteLeader(err.leader)) {
      this.hintsInARow++;
      this.scheduleReopen(true);
      return;
    }
    this.hintsInARow = 0;
    this.logger.debug({ endpoint: address, code: err?.code }, 'fencelock: keepalive stream broke, rotating');
    this.router.rotateFrom(address);
    this.scheduleReopen(false);
  }

  /**
   * The cluster refused this client's identity (a revoked token) or its right to these sessions: no
   * renewal can succeed, so every session is lost now, with that error, rather than renewed in vain until
   * its TTL runs out.
   */
  private loseAll(err: FenceLockError): void {
    this.logger.warn({ code: err.code, reason: err.reason }, 'fencelock: the keepalive stream was refused; its sessions are lost');
    for (const [id, entry] of [...this.entries]) {
      this.remove(id);
      entry.session.expired(new FenceLockError(err.code, `session ${publicSessionId(id)} can no longer be renewed: ${err.message}`, { reason: err.reason }));
    }
  }

  private scheduleReopen(immediately: boolean): void {
    if (this.reconnectTimer || this.closed) return;
    let delay = 0;
    if (!immediately) {
      this.backoff = nextBackoff(this.backoff);
      delay = this.backoff;
    }
    this.reconnectTimer = this.timers.setTimeout(() => this.open(), delay).unref();
  }
}

/** Stream refusals no retry can cure: the identity is refused, or may not use the sessions. */
const REFUSED_FOR_GOOD = new Set(['UNAUTHENTICATED', 'PERMISSION_DENIED']);

/**
 * The send time of the renewal an acknowledgement answers, removed from `pending` with every renewal sent
 * before it; undefined when it answers none of them. `renewalId` '0' (also what an absent field decodes to): a
 * server older than the field, matched to the oldest unanswered renewal.
 */
function takeSendTime(pending: Map<string, number>, renewalId: KeepAliveResponse__Output['renewalId']): number | undefined {
  const id = renewalId === '' ? '0' : renewalId;
  if (id === '0') {
    const oldest = pending.entries().next();
    if (oldest.done) return undefined;
    pending.delete(oldest.value[0]);
    return oldest.value[1];
  }
  const sentAt = pending.get(id);
  if (sentAt === undefined) return undefined;
  for (const earlier of pending.keys()) {
    pending.delete(earlier);
    if (earlier === id) break;
  }
  return sentAt;
}

import { FenceLockError, toFenceLockError } from './errors';
import type { Logger } from './logger';
import type { LockEvent__Output } from '../protocol/generated/fencelock/v1/LockEvent';
import { wireToBigInt } from '../protocol/wireInt';
import type { ClientTimer } from './ports';
import { methods } from './proto';
import { toSessionDetails } from './sessionLabels';
import { nextBackoff, type Router } from './router';
import type { ServerStreamCall } from './transport';
import type { LockEvent, LockEventKind, PermitEvent, WatchHandle, WatchOptions } from './types';

/**
 * Statuses after which a watch gives up instead of reconnecting. Not ABORTED: the node lost events to a
 * snapshot (reason EVENTS_MISSED); a new stream serves what follows. RESOURCE_EXHAUSTED is final (too many
 * streams on the connection) except with reason WATCH_BEHIND: this client read too slowly, events were lost,
 * and a new stream serves what follows.
 */
const FINAL_CODES = new Set(['INVALID_ARGUMENT', 'NOT_FOUND', 'FAILED_PRECONDITION', 'RESOURCE_EXHAUSTED', 'UNIMPLEMENTED', 'PERMISSION_DENIED', 'UNAUTHENTICATED', 'OUT_OF_RANGE']);

function eventKind(ev: LockEvent__Output): LockEventKind {
  return ev.kind === 'GRANTED' || ev.kind === 'RELEASED' || ev.kind === 'EXPIRED' || ev.kind === 'REVOKED' ? ev.kind : 'UNSPECIFIED';
}

export function toLockEvent(ev: LockEvent__Output): LockEvent {
  const kind = eventKind(ev);
  const base: LockEvent = { kind, lock: ev.lock, sessionId: ev.sessionId, token: wireToBigInt(ev.token), index: wireToBigInt(ev.index), holder: toSessionDetails(ev.holder) };
  const event = ev.shared ? { ...base, shared: true } : base;
  return kind === 'REVOKED' ? { ...event, revokedBy: ev.revokedBy, reason: ev.reason } : event;
}

export function toPermitEvent(ev: LockEvent__Output): PermitEvent {
  const kind = eventKind(ev);
  const event: PermitEvent = { kind, semaphore: ev.semaphore, slot: ev.slot, sessionId: ev.sessionId, token: wireToBigInt(ev.token), index: wireToBigInt(ev.index), holder: toSessionDetails(ev.holder) };
  return kind === 'REVOKED' ? { ...event, revokedBy: ev.revokedBy, reason: ev.reason } : event;
}

/** What one watch follows: a lock or a semaphore's permits, as asked of Lock.Watch and as its events read. */
export interface WatchSubject<E extends { index: bigint }> {
  readonly request: { lock: string } | { semaphore: string };
  /** Names it in messages: `lock "jobs"`, `semaphore "pool"`. */
  readonly title: string;
  readonly logFields: Record<string, string>;
  readonly toEvent: (ev: LockEvent__Output) => E;
}

export const lockSubject = (lock: string): WatchSubject<LockEvent> => ({
  request: { lock },
  title: `lock ${JSON.stringify(lock)}`,
  logFields: { lock },
  toEvent: toLockEvent,
});

export const semaphoreSubject = (semaphore: string): WatchSubject<PermitEvent> => ({
  request: { semaphore },
  title: `semaphore ${JSON.stringify(semaphore)}`,
  logFields: { semaphore },
  toEvent: toPermitEvent,
});

/**
 * A Watch stream that survives node failures: it reconnects (leader hint first, else the next endpoint with
 * backoff) and drops events it has already delivered (by log index). Events that happened while no stream was
 * open may be missed; call describe() after a reconnect if every transition matters.
 *
 * A node that installs a snapshot from the leader (a follower that fell behind) cannot send the events of the
 * entries the snapshot covers: it ends the stream with ABORTED, reason EVENTS_MISSED; a node whose events for
 * this stream went unread too long ends it with RESOURCE_EXHAUSTED, reason WATCH_BEHIND. The watcher then
 * tells the application through `onMissed` (or logs a warning without it) and reconnects like after any
 * broken stream; the watch does not stop, and `onError` stays reserved for the end of the watch.
 */
export class Watcher<E extends { index: bigint }> implements WatchHandle {
  private call: ServerStreamCall<LockEvent__Output> | undefined;
  private address = '';
  private timer: ClientTimer | undefined;
  private backoff = 0;
  private hintsInARow = 0;
  private lastIndex = 0n;
  /**
   * Events delivered of entry lastIndex: one entry may cause several (a release and the handover's grant),
   * so a stream's events at lastIndex beyond this many are new, not repeats of an earlier stream's.
   */
  private deliveredAtLast = 0;
  private cancelled = false;
  private opened = false;

  constructor(
    private readonly router: Router,
    private readonly subject: WatchSubject<E>,
    private readonly onEvent: (ev: E) => void,
    private readonly opts: WatchOptions,
    private readonly logger: Logger,
    private readonly onStop: (w: WatchHandle) => void,
  ) {}

  start(): void {
    this.open();
  }

  cancel(): void {
    if (this.cancelled) return;
    this.cancelled = true;
    this.router.ports.timers.clearTimeout(this.timer);
    this.timer = undefined;
    const c = this.call;
    this.call = undefined;
    c?.cancel();
    this.onStop(this);
  }

  private open(): void {
    this.timer = undefined;
    if (this.cancelled) return;
    if (this.router.isClosed()) {
      this.fail(new FenceLockError('CANCELLED', `watch ${this.subject.title}: the fencelock client is closed`));
      return;
    }
    const address = this.router.current();
    const call = this.router.serverStream(address, methods().Lock.Watch, this.subject.request);
    this.call = call;
    this.address = address;
    let seenAtLast = 0;
    if (this.opened) this.reconnected();
    this.opened = true;
    call.on('data', (ev: LockEvent__Output) => {
      if (call !== this.call) return;
      this.backoff = 0;
      this.hintsInARow = 0;
      let event: E;
      try {
        event = this.subject.toEvent(ev);
      } catch (err) {
        this.logger.warn({ err }, 'fencelock: malformed watch event ignored');
        return;
      }
      if (event.index !== 0n) {
        if (event.index < this.lastIndex) return;
        if (event.index > this.lastIndex) {
          this.lastIndex = event.index;
          this.deliveredAtLast = 0;
          seenAtLast = 0;
        }
        seenAtLast++;
        if (seenAtLast <= this.deliveredAtLast) return;
        this.deliveredAtLast = seenAtLast;
      }
      try {
        this.onEvent(event);
      } catch (err) {
        this.logger.error({ err }, 'fencelock: watch callback threw');
      }
    });
    call.on('error', (err: unknown) => this.broken(call, err));
    call.on('end', () => this.broken(call, undefined));
  }

  private broken(call: ServerStreamCall<LockEvent__Output>, raw: unknown): void {
    if (call !== this.call || this.cancelled) return;
    this.call = undefined;
    const err = raw === undefined ? undefined : toFenceLockError(raw, `watch ${this.subject.title} (via ${this.address})`);
    const lostEvents = err?.code === 'ABORTED' || err?.reason === 'WATCH_BEHIND';
    if (err && FINAL_CODES.has(err.code) && !lostEvents) {
      this.fail(err);
      return;
    }
    if (err && lostEvents) {
      this.missed(err);
      if (this.cancelled) return; // onMissed may cancel the watch
    }
    if (err?.leader && err.leader !== this.address && this.hintsInARow <= this.router.knownEndpoints().length && this.router.noteLeader(err.leader)) {
      this.hintsInARow++;
      this.timer = this.router.ports.timers.setTimeout(() => this.open(), 0);
      return;
    }
    this.hintsInARow = 0;
    this.router.rotateFrom(this.address);
    this.backoff = nextBackoff(this.backoff);
    this.logger.debug({ ...this.subject.logFields, code: err?.code, retryInMs: this.backoff }, 'fencelock: watch stream broke, reconnecting');
    this.timer = this.router.ports.timers.setTimeout(() => this.open(), this.backoff);
  }

  private reconnected(): void {
    try {
      this.opts.onReconnect?.();
    } catch (err) {
      this.logger.error({ err }, 'fencelock: watch onReconnect callback threw');
    }
  }

  /** Events were lost to a snapshot on the node: said to the application, and the watch goes on. */
  private missed(err: FenceLockError): void {
    if (!this.opts.onMissed) {
      this.logger.warn(this.subject.logFields, `fencelock: watch missed events, reconnecting: ${err.message}`);
      return;
    }
    try {
      this.opts.onMissed(err);
    } catch (cbErr) {
      this.logger.error({ err: cbErr }, 'fencelock: watch onMissed callback threw');
    }
  }

  private fail(err: FenceLockError): void {
    this.cancel();
    if (this.opts.onError) {
      try {
        this.opts.onError(err);
      } catch (cbErr) {
        this.logger.error({ err: cbErr }, 'fencelock: watch onError callback threw');
      }
    } else {
      this.logger.warn(this.subject.logFields, `fencelock: watch stopped: ${err.message}`);
    }
  }
}

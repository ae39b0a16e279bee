// Election.observe(): each new leadership, in token order, from whichever node the watch is served by. The
// lock's events only say that something changed; the state is always read again (the value, then the lock),
// so a reconnection, missed events or an event kind this client does not know cannot mislead it.
import { createSleeper, type Sleeper } from './clock';
import { isFenceLockError } from './errors';
import { readElection, type ElectionReader, type ElectionState, type Leader } from './electionState';
import type { Logger } from './logger';
import type { ClientPorts } from './ports';
import { nextBackoff } from './router';
import type { LockEvent, WatchHandle, WatchOptions } from './types';

/** How often the state is read again without any event: bounds how long a change lost in a gap goes unseen. */
export const DEFAULT_RESYNC_MS = 5_000;
/** While a new holder has not yet written its value, the state is polled from this delay, doubling to the cap. */
const PENDING_POLL_FIRST_MS = 20;
const PENDING_POLL_MAX_MS = 1_000;

/** Errors after which reading again cannot help: the observer stops and reports it. */
const FINAL_CODES = new Set(['INVALID_ARGUMENT', 'PERMISSION_DENIED', 'UNAUTHENTICATED', 'UNIMPLEMENTED']);

export interface ObserveOptions {
  /** Stops observing when aborted. */
  signal?: AbortSignal;
  /** Called when the leadership last reported ends (resigned, expired) before a newer one is seen. */
  onVacant?: (endedToken: bigint) => void;
  /** Called once when observing stops for good (permission denied, ...); not after cancel() or client close. */
  onError?: (err: Error) => void;
  /** Re-read the state this often without events (default 5,000 ms). */
  resyncMs?: number;
}

export interface ObserverHost extends ElectionReader {
  readonly logger: Logger;
  /** The client's timers (FenceLockClientOptions.ports), so that the observer's pauses run on them too. */
  readonly ports: Pick<ClientPorts, 'timers'>;
  watch(lock: string, onEvent: (ev: LockEvent) => void, opts: WatchOptions): WatchHandle;
}

export class ElectionObserver implements WatchHandle {
  /** The highest token reported: onLeader is never called for it or a lower one again. */
  private lastToken = 0n;
  /** The reported leadership while it is believed current. */
  private current: bigint | undefined;
  private stopped = false;
  private dirty = true;
  private readonly sleeper: Sleeper;
  private watch: WatchHandle | undefined;
  private readonly resyncMs: number;

  constructor(
    private readonly host: ObserverHost,
    private readonly name: string,
    private readonly onLeader: (leader: Leader) => void,
    private readonly opts: ObserveOptions,
  ) {
    this.resyncMs = opts.resyncMs ?? DEFAULT_RESYNC_MS;
    this.sleeper = createSleeper(host.ports.timers);
  }

  start(): void {
    if (this.opts.signal?.aborted) return;
    this.opts.signal?.addEventListener('abort', this.cancel, { once: true });
    this.watch = this.host.watch(this.name, this.kick, { onMissed: this.kick, onReconnect: this.kick, onError: (err) => this.fail(err) });
    void this.run();
  }

  readonly cancel = (): void => {
    if (this.stopped) return;
    this.stopped = true;
    this.opts.signal?.removeEventListener('abort', this.cancel);
    this.watch?.cancel();
    this.sleeper.wakeAll();
  };

  private readonly kick = (): void => {
    this.dirty = true;
    this.sleeper.wakeAll();
  };

  private async run(): Promise<void> {
    let pendingPoll = 0;
    let retry = 0;
    while (!this.stopped) {
      this.dirty = false;
      let delay = this.resyncMs;
      try {
        const state = await readElection(this.host, this.name);
        retry = 0;
        if (this.stopped) return;
        this.apply(state);
        pendingPoll = state.kind === 'pending' ? Math.min(PENDING_POLL_MAX_MS, Math.max(PENDING_POLL_FIRST_MS, pendingPoll * 2)) : 0;
        if (pendingPoll > 0) delay = pendingPoll;
      } catch (err) {
        if (this.stopped) return;
        if (isFenceLockError(err, 'CANCELLED')) return this.cancel(); // the client was closed
        if (isFenceLockError(err) && FINAL_CODES.has(err.code)) return this.fail(err);
        retry = nextBackoff(retry);
        delay = retry;
        this.host.logger.debug({ err, election: this.name, retryInMs: delay }, 'fencelock: election observer read failed');
      }
      if (!this.dirty) await this.sleeper.sleep(delay);
    }
  }

  private apply(state: ElectionState): void {
    if (state.kind === 'leader') {
      const { leader } = state;
      if (leader.token <= this.lastToken) return; // seen already (or older: never go back)
      this.lastToken = leader.token;
      this.current = leader.token;
      this.call(() => this.onLeader(leader));
      return;
    }
    // Vacant, or a newer holder that has not written its value yet: the reported leadership is over either way.
    const ended = this.current;
    if (ended === undefined || (state.kind === 'pending' && state.token <= ended)) return;
    this.current = undefined;
    this.call(() => this.opts.onVacant?.(ended));
  }

  private fail(err: Error): void {
    if (this.stopped) return;
    this.cancel();
    if (this.opts.onError) this.call(() => this.opts.onError?.(err));
    else this.host.logger.warn({ election: this.name }, `fencelock: election observer stopped: ${err.message}`);
  }

  private call(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.host.logger.error({ err, election: this.name }, 'fencelock: election observer callback threw');
    }
  }
}

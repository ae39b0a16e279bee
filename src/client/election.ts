// Elections on top of a lock and the fenced store (issue 34). Election NAME is lock NAME, and the leader's
// value is key NAME, bound to lock NAME: `describe NAME` shows the leader's session, `kv get NAME` its value
// and token, and one auth prefix covers all three permissions it needs (lock, write, read).
import { MAX_WAIT_TIMEOUT_MS } from '../protocol/limits';
import { monotonicNow } from './clock';
import { ElectionObserver, type ObserveOptions, type ObserverHost } from './electionObserver';
import { readElection, type Leader } from './electionState';
import { FenceLockError, isFenceLockError } from './errors';
import { electionValue, Leadership } from './leadership';
import type { LockHandle, Session } from './session';
import type { OpenSessionOptions, WatchHandle } from './types';

/** The informational session name, within the server's 128 bytes (a character takes at most 4). */
function sessionName(election: string): string {
  return `election ${election.length > 29 ? `${election.slice(0, 28)}…` : election}`;
}

export interface ElectionOptions {
  /** TTL of each campaign's session (default: the client's, 10,000 ms): how long a crashed leader leads on. */
  ttlMs?: number;
}

export interface CampaignOptions {
  /** Gives up the wait (the place in line is left) and rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Longest wait to become leader; default: no limit. 0: lead now or fail. DEADLINE_EXCEEDED (LOCK_HELD) after it. */
  waitMs?: number;
}

export interface ElectionHost extends ObserverHost {
  openSession(opts: OpenSessionOptions): Promise<Session>;
}

/**
 * One election, by name (client.election(name)). Campaigners wait in the lock's FIFO line; the one granted the
 * lock writes its value under the grant's token and leads until it resigns or its session ends. A leadership
 * begins when its value is written: until then nobody, the campaigner included, takes the holder for leader.
 */
export class Election {
  constructor(
    private readonly host: ElectionHost,
    readonly name: string,
    private readonly opts: ElectionOptions = {},
  ) {
    if (typeof name !== 'string' || name === '') throw new FenceLockError('INVALID_ARGUMENT', 'election: the name must be a non-empty string');
  }

  /**
   * Blocks until this campaigner leads, then writes `value` under the leadership's token and returns the
   * Leadership. Each campaign has a session of its own (closed by resign()), so two campaigns of one client
   * never share a grant. On failure or abort the session is closed, which leaves the line.
   */
  async campaign(value: string | Uint8Array, opts: CampaignOptions = {}): Promise<Leadership> {
    const bytes = electionValue(value, `campaign in election ${JSON.stringify(this.name)}`);
    const waitMs = opts.waitMs;
    if (waitMs !== undefined && (!Number.isSafeInteger(waitMs) || waitMs < 0)) throw new FenceLockError('INVALID_ARGUMENT', `waitMs must be a non-negative integer, got ${waitMs}`);
    const { signal } = opts;
    signal?.throwIfAborted();
    const session = await this.host.openSession({ ttlMs: this.opts.ttlMs, name: sessionName(this.name) });
    const leave = (): void => void session.close().catch(() => undefined);
    signal?.addEventListener('abort', leave, { once: true });
    try {
      const lock = await this.waitForLock(session, waitMs, signal);
      await lock.write([{ put: this.name, value: bytes }]);
      signal?.throwIfAborted();
      return new Leadership(this.name, lock, bytes);
    } catch (err) {
      await session.close().catch(() => undefined);
      if (signal?.aborted) throw signal.reason;
      throw err;
    } finally {
      signal?.removeEventListener('abort', leave);
    }
  }

  /** The current leader, or null when nobody leads (the lock is free, or its holder has not written its value yet). */
  async leader(): Promise<Leader | null> {
    const state = await readElection(this.host, this.name);
    return state.kind === 'leader' ? state.leader : null;
  }

  /**
   * Calls onLeader for each new leadership, in increasing token order (never the same or an older one again),
   * until cancel() or `signal`. It watches the lock from whichever node serves it, reconnecting, and reads the
   * state again after every event, reconnection or missed events, and every `resyncMs`. A leadership that
   * begins and ends between two reads is not reported; one that is over when read never is. A proclaim does
   * not start a new leadership (leader() reads the latest value).
   */
  observe(onLeader: (leader: Leader) => void, opts: ObserveOptions = {}): WatchHandle {
    const observer = new ElectionObserver(this.host, this.name, onLeader, opts);
    observer.start();
    return observer;
  }

  /** Acquires the lock, waiting in line up to waitMs (undefined: for ever, one server-side wait at a time). */
  private async waitForLock(session: Session, waitMs: number | undefined, signal: AbortSignal | undefined): Promise<LockHandle> {
    const deadline = waitMs === undefined ? Infinity : monotonicNow() + waitMs;
    for (;;) {
      const wait = Math.min(MAX_WAIT_TIMEOUT_MS, Math.max(0, Math.ceil(deadline - monotonicNow())));
      try {
        return await session.acquire(this.name, { waitTimeoutMs: wait });
      } catch (err) {
        const waitOver = isFenceLockError(err, 'DEADLINE_EXCEEDED') && err.reason === 'LOCK_HELD';
        if (!waitOver || monotonicNow() >= deadline || signal?.aborted) throw err;
      }
    }
  }
}

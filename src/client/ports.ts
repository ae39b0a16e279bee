/**
 * What the client takes from the world: time, timers, randomness and the way calls reach the nodes. A real
 * process gets the real ones (realPorts.ts, grpcTransport.ts); the whole-node simulator passes virtual ones,
 * so it runs this very client from a seed. Applications never set them (FenceLockClientOptions.ports).
 */
import type { ClientTransport } from './transport';

/** Time as the client sees it. */
export interface ClientClock {
  /** Monotonic milliseconds: every lease estimate, deadline and backoff is measured on this. */
  monotonicMs(): number;
}

/** An armed timer. */
export interface ClientTimer {
  /** Lets a finished process exit while the timer is pending (background work: leases, renewals). */
  unref(): ClientTimer;
}

export interface ClientTimers {
  /** Runs fn once after `ms` of monotonic time. */
  setTimeout(fn: () => void, ms: number): ClientTimer;
  clearTimeout(timer: ClientTimer | undefined): void;
  /** Runs fn every `ms` until cleared. */
  setInterval(fn: () => void, ms: number): ClientTimer;
  clearInterval(timer: ClientTimer | undefined): void;
  /** Runs fn on a later turn, after everything queued in this one (setImmediate). None: a 0 ms timer. */
  defer?(fn: () => void): void;
}

export interface ClientRandom {
  /** Unpredictable bytes: client ids. */
  bytes(size: number): Uint8Array;
}

export interface ClientPorts {
  clock: ClientClock;
  timers: ClientTimers;
  random: ClientRandom;
  transport: ClientTransport;
}

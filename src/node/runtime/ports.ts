/**
 * What a node takes from the world besides storage and the network: time, timers and randomness. The server
 * passes the real ones (realPorts); the simulator passes virtual ones, so a whole node replays from a seed.
 */

/** Time as the node sees it. */
export interface Clock {
  /** Monotonic milliseconds: every deadline and duration (leases, waits, ticks) is measured on this. */
  monotonicMs(): number;
  /** Wall-clock milliseconds since the epoch: only stamps records (a grant's time) and is never compared. */
  wallMs(): number;
}

export interface TimerHandle {
  readonly id: number;
}

export interface Timers {
  /** Runs fn once after `ms` of monotonic time. */
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle | undefined): void;
  /** Runs fn on a later turn, after everything queued in this one (setImmediate). */
  defer(fn: () => void): void;
}

export interface Random {
  /** Uniform in [0, 1): election jitter. */
  fraction(): number;
  /** Unpredictable bytes: session ids and ReadIndex contexts. */
  bytes(size: number): Uint8Array;
}

export interface NodePorts {
  clock: Clock;
  timers: Timers;
  random: Random;
}

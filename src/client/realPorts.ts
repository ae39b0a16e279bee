import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { ClientClock, ClientRandom, ClientTimers } from './ports';

// The ports of a real process: performance.now, Node's timers, node:crypto. The only raw ones in src/client
// (with grpcTransport.ts), as the lint rule in eslint.config.mjs keeps it.

export const realClock: ClientClock = { monotonicMs: () => performance.now() };

/** Node's own timers: a ClientTimer is a NodeJS.Timeout here. */
export const realTimers: ClientTimers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (timer) => clearTimeout(timer as NodeJS.Timeout | undefined),
  setInterval: (fn, ms) => setInterval(fn, ms),
  clearInterval: (timer) => clearInterval(timer as NodeJS.Timeout | undefined),
  defer: (fn) => void setImmediate(fn),
};

export const realRandom: ClientRandom = { bytes: (size) => randomBytes(size) };

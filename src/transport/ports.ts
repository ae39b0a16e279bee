// Time, timers and randomness of the peer policy. The server's are Node's own (unref'd: a transport never
// keeps a process alive); the whole-node simulator passes its virtual ones, so the shipped policy replays
// from a seed. The shapes match the node runtime's ports (src/node/runtime/ports.ts) without importing them.
import { performance } from 'node:perf_hooks';

export interface TransportTimerHandle {
  readonly id: number;
}

export interface TransportPorts {
  clock: { monotonicMs(): number };
  timers: {
    setTimeout(fn: () => void, ms: number): TransportTimerHandle;
    clearTimeout(handle: TransportTimerHandle | undefined): void;
    /** Runs fn on a later turn, after everything queued in this one (setImmediate). */
    defer(fn: () => void): void;
  };
  random: { fraction(): number };
}

export function realTransportPorts(): TransportPorts {
  const live = new Map<number, NodeJS.Timeout>();
  let next = 1;
  return {
    clock: { monotonicMs: () => performance.now() },
    timers: {
      setTimeout(fn, ms) {
        const id = next++;
        const timer = setTimeout(() => {
          live.delete(id);
          fn();
        }, Math.max(0, ms));
        timer.unref();
        live.set(id, timer);
        return { id };
      },
      clearTimeout(handle) {
        if (!handle) return;
        clearTimeout(live.get(handle.id));
        live.delete(handle.id);
      },
      defer: (fn) => void setImmediate(fn),
    },
    // Backoff jitter only spreads redials: it need not be unpredictable.
    random: { fraction: () => Math.random() },
  };
}

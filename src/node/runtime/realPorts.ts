import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { NodePorts, TimerHandle } from './ports';

/** The ports of a real process: performance.now, Date.now, Node's timers, node:crypto. */
export function realPorts(): NodePorts {
  const live = new Map<number, NodeJS.Timeout>();
  let next = 1;
  return {
    clock: { monotonicMs: () => performance.now(), wallMs: () => Date.now() },
    timers: {
      setTimeout(fn, ms): TimerHandle {
        const id = next++;
        live.set(
          id,
          setTimeout(() => {
            live.delete(id);
            fn();
          }, Math.max(0, ms)),
        );
        return { id };
      },
      clearTimeout(handle): void {
        if (!handle) return;
        clearTimeout(live.get(handle.id));
        live.delete(handle.id);
      },
      defer: (fn) => void setImmediate(fn),
    },
    random: {
      // Cryptographic jitter: unpredictable elections in production.
      fraction: () => randomBytes(4).readUInt32BE(0) / 2 ** 32,
      bytes: (size) => randomBytes(size),
    },
  };
}

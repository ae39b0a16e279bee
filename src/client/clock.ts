import type { ClientTimers } from './ports';
import { realClock } from './realPorts';

/** Monotonic milliseconds of the real clock (performance.now): immune to wall-clock steps, comparable within this process only. */
export function monotonicNow(): number {
  return realClock.monotonicMs();
}

/** A sleep that can be cut short: `wake()` resolves it at once (used when the client closes). */
export interface Sleeper {
  sleep(ms: number): Promise<void>;
  wakeAll(): void;
}

export function createSleeper(timers: ClientTimers): Sleeper {
  const pending = new Set<() => void>();
  return {
    sleep(ms: number): Promise<void> {
      if (ms <= 0) return Promise.resolve();
      return new Promise((resolve) => {
        const done = (): void => {
          timers.clearTimeout(timer);
          pending.delete(done);
          resolve();
        };
        const timer = timers.setTimeout(done, ms);
        pending.add(done);
      });
    },
    wakeAll(): void {
      for (const done of [...pending]) done();
    },
  };
}

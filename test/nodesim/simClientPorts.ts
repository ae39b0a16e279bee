/**
 * The real client's ports in the simulator: its actor's drifting monotonic clock, timers on that clock (a
 * stalled client runs them late, as a paused process does), seeded randomness and the simulated transport.
 */
import type { ClientPorts, ClientTimer } from '../../src/client/ports';
import type { Prng } from '../support/prng';
import type { SimTransport } from './simTransport';
import type { Actor } from './world';

interface SimTimer extends ClientTimer {
  id: number;
}

export function simClientPorts(actor: Actor, prng: Prng, transport: SimTransport): ClientPorts {
  const timer = (id: number): SimTimer => ({ id, unref: function (this: SimTimer) { return this; } });
  const clear = (t: ClientTimer | undefined): void => {
    if (t) actor.cancel((t as SimTimer).id);
  };
  return {
    clock: { monotonicMs: () => actor.monotonicMs() },
    timers: {
      setTimeout: (fn, ms) => timer(actor.world.at(actor.realAfter(ms), actor, fn)),
      clearTimeout: clear,
      setInterval: (fn, ms) => {
        // One handle for every round: each round re-arms under the same handle's current id.
        const handle = timer(0);
        const arm = (): void => {
          handle.id = actor.world.at(actor.realAfter(Math.max(1, ms)), actor, () => {
            arm();
            fn();
          });
        };
        arm();
        return handle;
      },
      clearInterval: clear,
    },
    random: {
      bytes: (size) => {
        const out = new Uint8Array(size);
        for (let i = 0; i < size; i++) out[i] = Math.floor(prng.next() * 256);
        return out;
      },
    },
    transport,
  };
}

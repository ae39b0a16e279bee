/**
 * Virtual time for the whole-node simulator: one event queue in simulated real time (ms), and for every
 * actor (node or client) its own clocks, timers and stalls.
 *
 * Each actor's monotonic clock runs at its own rate (1 + error, |error| <= the documented bound) from its own
 * origin; its wall clock is the monotonic one plus an offset that steps forward and back (NTP steps, VM
 * resumes). A stalled actor runs nothing until the stall ends, then catches up on everything that came due,
 * in order, as a paused event loop does. An actor's events belong to one incarnation: a crash drops them.
 */
import { EventQueue } from '../support/eventQueue';
import type { Clock, NodePorts, Random, TimerHandle, Timers } from '../../src/node/runtime/ports';
import type { Prng } from '../support/prng';

export interface WorldEvent {
  actor: Actor;
  incarnation: number;
  run: () => void;
  timerId?: number;
  /** Set on an event put off by a stall: true once it ran, was dropped, or was moved by resume(). */
  settled?: boolean;
}

export class Actor {
  incarnation = 0;
  stalledUntil = 0;
  /** Wall clock minus monotonic clock: changed by steps. */
  wallOffset: number;
  private readonly cancelled = new Set<number>();
  /** Events put off by the current stall, so that ending it early brings them back to now. */
  private deferred: WorldEvent[] = [];

  constructor(
    readonly world: World,
    readonly name: string,
    /** Monotonic ms per real ms. */
    readonly rate: number,
    /** The monotonic clock's reading at real time 0. */
    readonly origin: number,
    wallOffset: number,
  ) {
    this.wallOffset = wallOffset;
  }

  monotonicMs(): number {
    return this.origin + this.world.now * this.rate;
  }

  wallMs(): number {
    return this.monotonicMs() + this.wallOffset;
  }

  /** Real time at which this actor's monotonic clock will have advanced by `ms` from now. */
  realAfter(ms: number): number {
    return this.world.now + Math.max(0, ms) / this.rate;
  }

  isStalled(): boolean {
    return this.world.now < this.stalledUntil;
  }

  /** Puts off `e` to the end of the stall. */
  defer(e: WorldEvent): WorldEvent {
    const later: WorldEvent = { ...e, settled: false };
    if (this.deferred.length > 64) this.deferred = this.deferred.filter((d) => d.settled === false);
    this.deferred.push(later);
    return later;
  }

  /**
   * Ends a stall early (a heal): what the stall put off runs now, in order, as a process resumed early would
   * run it. Lowering stalledUntil alone would leave those events waiting for the stall's original end.
   */
  resume(): void {
    const pending = this.deferred.filter((d) => d.settled === false);
    this.deferred = [];
    if (!this.isStalled()) return;
    this.stalledUntil = this.world.now;
    for (const d of pending) {
      d.settled = true;
      this.world.at(this.world.now, this, d.run, d.incarnation, d.timerId);
    }
  }

  /** A crash: every event of the old incarnation is dropped. */
  restartIncarnation(): void {
    this.incarnation++;
    this.cancelled.clear();
    this.deferred = [];
    this.stalledUntil = 0;
  }

  cancel(timerId: number): void {
    this.cancelled.add(timerId);
  }

  /** Consumes a cancellation: true when this timer was cleared. */
  wasCancelled(timerId: number): boolean {
    return this.cancelled.delete(timerId);
  }

  /**
   * The ports a NodeRuntime (or a client model) gets: this actor's clocks and timers, the given randomness.
   * They belong to the current incarnation: after a crash, whatever the dead instance still schedules (from a
   * promise job, or an event another actor delivers to it) never runs.
   */
  ports(random: Random): NodePorts {
    const incarnation = this.incarnation;
    const clock: Clock = { monotonicMs: () => this.monotonicMs(), wallMs: () => this.wallMs() };
    const timers: Timers = {
      setTimeout: (fn, ms): TimerHandle => ({ id: this.world.at(this.realAfter(ms), this, fn, incarnation) }),
      clearTimeout: (h) => {
        if (h) this.cancel(h.id);
      },
      defer: (fn) => void this.world.at(this.world.now, this, fn, incarnation),
    };
    return { clock, timers, random };
  }
}

export class World {
  now = 0;
  private readonly queue = new EventQueue<WorldEvent>();
  private nextTimer = 1;
  events = 0;

  /** Schedules `run` for `actor`'s current incarnation at real time `time`; returns a timer id. */
  at(time: number, actor: Actor, run: () => void, incarnation = actor.incarnation, timerId = this.nextTimer++): number {
    this.queue.push(Math.max(time, this.now), { actor, incarnation, run, timerId });
    return timerId;
  }

  actor(name: string, rate: number, origin: number, wallOffset: number): Actor {
    return new Actor(this, name, rate, origin, wallOffset);
  }

  /**
   * Runs the next event due at or before `until`; false when none is. A stalled actor's event waits for the
   * end of the stall (re-queued in order). Each run is followed by draining promise jobs (see step()).
   */
  popNext(until: number): WorldEvent | undefined {
    for (;;) {
      const t = this.queue.peekTime();
      if (t === undefined || t > until) return undefined;
      const ev = this.queue.pop()!;
      this.now = Math.max(this.now, ev.time);
      const e = ev.item;
      if (e.settled === true) continue;
      if (e.settled === false) e.settled = true;
      if (e.incarnation !== e.actor.incarnation) continue;
      if (e.timerId !== undefined && e.actor.wasCancelled(e.timerId)) continue;
      if (e.actor.isStalled()) {
        this.queue.push(e.actor.stalledUntil, e.actor.defer(e));
        continue;
      }
      this.events++;
      return e;
    }
  }

  nextTime(): number | undefined {
    return this.queue.peekTime();
  }
}

/** The randomness a node gets: election jitter and id bytes from its own seeded stream. */
export function seededRandom(prng: Prng): Random {
  return {
    fraction: () => prng.next(),
    bytes: (size) => {
      const out = new Uint8Array(size);
      for (let i = 0; i < size; i++) out[i] = Math.floor(prng.next() * 256);
      return out;
    },
  };
}

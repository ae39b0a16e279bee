// The simulator's clocks and stalls (world.ts): what a stall puts off runs when the stall ends, also when a
// heal ends it early. Found by sim seed 128 (partitions): a client stalled for 4.5 s was healed after 2.5 s,
// but its timers still waited for the stall's original end, so withLock's signal fired 2 s late while the
// client counted as running, and the check blamed the client library.
import { describe, expect, it } from 'vitest';
import { World } from './world';

function stalledActor(): { world: World; ran: Array<[string, number]>; actor: ReturnType<World['actor']> } {
  const world = new World();
  const actor = world.actor('c1', 1, 0, 0);
  const ran: Array<[string, number]> = [];
  const timers = actor.ports({ fraction: () => 0, bytes: (n) => new Uint8Array(n) }).timers;
  timers.setTimeout(() => ran.push(['first', world.now]), 100);
  timers.setTimeout(() => ran.push(['second', world.now]), 200);
  const cancelled = timers.setTimeout(() => ran.push(['cancelled', world.now]), 150);
  timers.clearTimeout(cancelled);
  actor.stalledUntil = 1_000;
  return { world, ran, actor };
}

function runUntil(world: World, until: number): void {
  for (let e = world.popNext(until); e; e = world.popNext(until)) e.run();
}

describe('World stalls', () => {
  it('a stall that runs its course puts the timers due during it off to its end, in order', () => {
    const { world, ran } = stalledActor();
    runUntil(world, 5_000);
    expect(ran).toEqual([['first', 1_000], ['second', 1_000]]);
  });

  it('resume() ends a stall early: what it put off runs then, once, in order; a cleared timer stays cleared', () => {
    const { world, ran, actor } = stalledActor();
    runUntil(world, 400);
    expect(ran).toEqual([]);
    world.at(400, actor, () => undefined);
    runUntil(world, 400);
    actor.resume();
    expect(actor.isStalled()).toBe(false);
    runUntil(world, 5_000);
    expect(ran).toEqual([['first', 400], ['second', 400]]);
  });
});

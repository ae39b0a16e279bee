// The deterministic building blocks of the simulators and seeded tests: the PRNG and the event queue.
import { describe, expect, it } from 'vitest';
import { EventQueue } from './eventQueue';
import { Prng } from './prng';

describe('Prng', () => {
  it('replays the same sequence for the same seed and differs across seeds and streams', () => {
    const a = new Prng(42);
    const b = new Prng(42);
    const xs = Array.from({ length: 100 }, () => a.nextU32());
    expect(Array.from({ length: 100 }, () => b.nextU32())).toEqual(xs);
    const c = new Prng(43);
    expect(Array.from({ length: 100 }, () => c.nextU32())).not.toEqual(xs);
    const d1 = Prng.derive(7, 'net');
    const d2 = Prng.derive(7, 'faults');
    expect(d1.nextU32()).not.toBe(d2.nextU32());
    expect(Prng.derive(7, 'net').nextU32()).toBe(Prng.derive(7, 'net').nextU32());
  });

  it('is roughly uniform and stays in range', () => {
    const r = new Prng(1);
    const buckets = new Array(10).fill(0);
    let outOfRange = 0;
    for (let i = 0; i < 100_000; i++) {
      const x = r.next();
      if (!(x >= 0 && x < 1)) outOfRange++;
      else buckets[Math.floor(x * 10)]++;
    }
    expect(outOfRange).toBe(0);
    for (const b of buckets) expect(Math.abs(b - 10_000)).toBeLessThan(600);
    const seen = new Set<number>();
    for (let i = 0; i < 1000; i++) seen.add(r.range(3, 7));
    expect([...seen].sort()).toEqual([3, 4, 5, 6, 7]);
    let hits = 0;
    for (let i = 0; i < 10_000; i++) if (r.chance(0.3)) hits++;
    expect(Math.abs(hits - 3000)).toBeLessThan(250);
    expect(r.chance(0)).toBe(false);
    const w = { a: 1, b: 0, c: 3 };
    const counts = { a: 0, b: 0, c: 0 };
    for (let i = 0; i < 4000; i++) counts[r.weighted(w)]++;
    expect(counts.b).toBe(0);
    expect(counts.c).toBeGreaterThan(counts.a * 2);
  });
});

describe('EventQueue', () => {
  it('pops by time, then in scheduling order', () => {
    const q = new EventQueue<string>();
    q.push(5, 'c');
    q.push(1, 'a');
    q.push(5, 'd');
    q.push(3, 'b');
    q.push(1, 'a2');
    const out: string[] = [];
    for (let e = q.pop(); e; e = q.pop()) out.push(e.item);
    expect(out).toEqual(['a', 'a2', 'b', 'c', 'd']);
  });

  it('stays ordered under random use', () => {
    const r = new Prng(9);
    const q = new EventQueue<number>();
    for (let i = 0; i < 2000; i++) q.push(r.int(100), i);
    let last = -1;
    while (q.size > 0) {
      const t = q.peekTime()!;
      expect(t).toBeGreaterThanOrEqual(last);
      last = q.pop()!.time;
    }
  });
});

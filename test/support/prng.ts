/**
 * The simulator's only source of randomness: xoshiro128** seeded through splitmix32.
 *
 * Every random choice of a run (election jitter, faults, delays, workload) comes from streams derived from
 * the run's seed, so the same seed replays the same run exactly. Streams are derived per purpose (network,
 * faults, each node's election jitter, ...) so that a change in how often one consumer draws does not shift
 * the numbers another consumer sees.
 */

function splitmix32(state: number): [value: number, next: number] {
  const next = (state + 0x9e3779b9) | 0;
  let z = next;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  z ^= z >>> 16;
  return [z >>> 0, next];
}

/** FNV-1a over a string: turns a stream label into 32 bits. */
function hashLabel(label: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < label.length; i++) {
    h ^= label.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

const rotl = (x: number, k: number): number => (x << k) | (x >>> (32 - k));

export class Prng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    let s = seed | 0;
    let v: number;
    [v, s] = splitmix32(s);
    this.a = v;
    [v, s] = splitmix32(s);
    this.b = v;
    [v, s] = splitmix32(s);
    this.c = v;
    [v, s] = splitmix32(s);
    this.d = v;
    if ((this.a | this.b | this.c | this.d) === 0) this.a = 1; // the all-zero state is a fixed point
  }

  /** An independent stream for one purpose, derived from a seed and a label. */
  static derive(seed: number, label: string): Prng {
    // Mix the (possibly large) seed's high and low halves with the label's hash.
    const lo = seed >>> 0;
    const hi = Math.floor(seed / 0x1_0000_0000) >>> 0;
    const [m] = splitmix32(lo ^ Math.imul(hi, 0x27d4eb2d) ^ hashLabel(label));
    return new Prng(m);
  }

  /** 32 uniformly random bits as an unsigned integer. */
  nextU32(): number {
    const result = Math.imul(rotl(Math.imul(this.b, 5), 7), 9) >>> 0;
    const t = this.b << 9;
    this.c ^= this.a;
    this.d ^= this.b;
    this.b ^= this.c;
    this.a ^= this.d;
    this.c ^= t;
    this.d = rotl(this.d, 11);
    return result;
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.nextU32() / 0x1_0000_0000;
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    if (!(n >= 1)) throw new RangeError(`Prng.int needs n >= 1, got ${n}`);
    return Math.floor(this.next() * n);
  }

  /** Uniform integer in [lo, hi], both inclusive. */
  range(lo: number, hi: number): number {
    if (hi < lo) throw new RangeError(`Prng.range needs lo <= hi, got [${lo}, ${hi}]`);
    return lo + this.int(hi - lo + 1);
  }

  /** True with probability p. */
  chance(p: number): boolean {
    return p > 0 && this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('Prng.pick from an empty list');
    return items[this.int(items.length)]!;
  }

  /** Picks a key with probability proportional to its (non-negative) weight. */
  weighted<K extends string>(weights: Readonly<Record<K, number>>): K {
    const keys = Object.keys(weights) as K[];
    const total = keys.reduce((s, k) => s + Math.max(0, weights[k]), 0);
    if (!(total > 0)) throw new RangeError('Prng.weighted needs a positive total weight');
    let r = this.next() * total;
    for (const k of keys) {
      r -= Math.max(0, weights[k]);
      if (r < 0) return k;
    }
    return keys[keys.length - 1]!;
  }

  /** Fisher-Yates, in place; returns the array. */
  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      const tmp = items[i]!;
      items[i] = items[j]!;
      items[j] = tmp;
    }
    return items;
  }
}

/**
 * mulberry32: a small seeded generator of floats in [0, 1), for tests and workloads that need one stream and
 * no per-purpose derivation (the raft unit tests, the checker's simulated histories, the chaos workloads).
 */
export function mulberry32(seed: number): () => number {
  let a = seed | 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

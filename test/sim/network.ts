/**
 * The simulated network between the nodes: which links are cut (symmetric partitions, one-way partitions,
 * a leader isolated with a minority) and what happens to each message sent over an open link (loss,
 * duplication, random delay, which also reorders, and now and then a much longer delay so that stale
 * messages arrive late).
 */
import type { NodeId } from '../../src/raft/types';
import type { Prng } from './prng';
import type { PartitionKind } from './profiles';

export interface LinkProfile {
  loss: number;
  dup: number;
  delay: [number, number];
  longDelayRate: number;
  longDelay: [number, number];
}

export interface PartitionShape {
  kind: PartitionKind;
  /** Side A; B is everyone else. */
  a: NodeId[];
  b: NodeId[];
  /** One-way: A's messages still reach B, B's messages to A are dropped. Otherwise both directions are cut. */
  oneWay: boolean;
}

export class Network {
  private readonly index = new Map<NodeId, number>();
  /** blocked[from][to]. */
  private blocked: boolean[][];
  current: PartitionShape | undefined;

  constructor(
    readonly ids: readonly NodeId[],
    private readonly rng: Prng,
    public profile: LinkProfile,
  ) {
    ids.forEach((id, i) => this.index.set(id, i));
    this.blocked = this.fresh();
  }

  private fresh(): boolean[][] {
    return this.ids.map(() => this.ids.map(() => false));
  }

  isBlocked(from: NodeId, to: NodeId): boolean {
    return this.blocked[this.index.get(from)!]![this.index.get(to)!]!;
  }

  /**
   * Cuts the network, choosing sides with `choose`: symmetric (a random minority vs the rest), one-way
   * (random sides; A -> B open, B -> A cut) or leaderMinority (`leader` plus others up to a minority:
   * 5 nodes -> leader + 1 vs 3; 3 nodes -> leader alone vs 2).
   */
  partition(kind: PartitionKind, choose: Prng, leader?: NodeId): PartitionShape {
    this.heal();
    const n = this.ids.length;
    const shuffled = choose.shuffle(this.ids.slice());
    let a: NodeId[];
    if (kind === 'leaderMinority') {
      const l = leader ?? choose.pick(this.ids);
      const minority = Math.max(1, Math.floor((n - 1) / 2));
      a = [l, ...shuffled.filter((x) => x !== l).slice(0, minority - 1)];
    } else if (kind === 'symmetric') {
      a = shuffled.slice(0, choose.range(1, Math.max(1, Math.floor(n / 2))));
    } else {
      a = shuffled.slice(0, choose.range(1, Math.max(1, n - 1)));
    }
    const inA = new Set(a);
    const b = this.ids.filter((x) => !inA.has(x));
    const oneWay = kind === 'oneWay';
    for (const x of a) {
      for (const y of b) {
        if (!oneWay) this.blocked[this.index.get(x)!]![this.index.get(y)!] = true;
        this.blocked[this.index.get(y)!]![this.index.get(x)!] = true;
      }
    }
    this.current = { kind, a, b, oneWay };
    return this.current;
  }

  heal(): void {
    this.blocked = this.fresh();
    this.current = undefined;
  }

  /** Delivery delays for one message sent over an open link: none if lost, two if duplicated. */
  deliveries(): number[] {
    const p = this.profile;
    if (this.rng.chance(p.loss)) return [];
    const out = [this.delay()];
    if (this.rng.chance(p.dup)) out.push(this.delay());
    return out;
  }

  private delay(): number {
    const p = this.profile;
    let d = this.rng.range(p.delay[0], p.delay[1]);
    if (this.rng.chance(p.longDelayRate)) d += this.rng.range(p.longDelay[0], p.longDelay[1]);
    return d;
  }
}

export function describePartition(s: PartitionShape): string {
  return `${s.kind} {${s.a.join(',')}} ${s.oneWay ? '-> (one-way, no replies)' : '|'} {${s.b.join(',')}}`;
}

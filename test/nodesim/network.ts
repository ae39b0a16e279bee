import type { Prng } from '../support/prng';

/** Link behaviour between any two actors (nodes and clients), chosen by the fault schedule. */
export interface LinkFaults {
  /** Probability that one message (a peer batch, a request or an answer) is lost. */
  drop: number;
  /** Probability that a peer batch is delivered twice. */
  duplicate: number;
  /** One-way delay range in real ms. */
  minDelayMs: number;
  maxDelayMs: number;
}

export const CALM: LinkFaults = { drop: 0, duplicate: 0, minDelayMs: 0.2, maxDelayMs: 2 };

/**
 * Who can reach whom: cut links (both directions) and per-message faults. Partitions are sets of actor names
 * that can only talk among themselves.
 */
export class Network {
  private readonly cut = new Set<string>();
  faults: LinkFaults = CALM;
  /** Messages lost to the loss fault (not those into a cut link), and messages delivered twice. */
  dropped = 0;
  duplicated = 0;

  constructor(private readonly prng: Prng) {}

  private static pair(a: string, b: string): string {
    return a < b ? `${a}|${b}` : `${b}|${a}`;
  }

  isCut(a: string, b: string): boolean {
    return this.cut.has(Network.pair(a, b));
  }

  cutLink(a: string, b: string): void {
    if (a !== b) this.cut.add(Network.pair(a, b));
  }

  /** Splits actors into groups that only reach their own group. */
  partition(groups: string[][]): void {
    this.cut.clear();
    for (let i = 0; i < groups.length; i++) {
      for (let j = i + 1; j < groups.length; j++) for (const a of groups[i]!) for (const b of groups[j]!) this.cutLink(a, b);
    }
  }

  heal(): void {
    this.cut.clear();
  }

  cutCount(): number {
    return this.cut.size;
  }

  /** Delivery delays for one message: [] when lost, two when duplicated. */
  delays(from: string, to: string, mayDuplicate: boolean): number[] {
    if (this.isCut(from, to)) return [];
    if (this.prng.chance(this.faults.drop)) {
      this.dropped++;
      return [];
    }
    const { minDelayMs, maxDelayMs } = this.faults;
    const d = (): number => minDelayMs + this.prng.next() * (maxDelayMs - minDelayMs);
    if (!mayDuplicate || !this.prng.chance(this.faults.duplicate)) return [d()];
    this.duplicated++;
    return [d(), d()];
  }
}

// Link cuts counted per directed link: faults overlap, and a link cut by two of them heals only when the
// last one heals.
import type { ClusterControl, Link } from '../../support/clusterControl';

/** Every directed link between the nodes, in id order. */
export function allLinks(ids: readonly string[]): Link[] {
  const out: Link[] = [];
  for (const from of ids) for (const to of ids) if (from !== to) out.push({ from, to });
  return out;
}

/** The links that cross the border of `group`, both ways (a symmetric partition group | rest). */
export function linksAround(ids: readonly string[], group: readonly string[]): Link[] {
  const inside = new Set(group);
  return allLinks(ids).filter((l) => inside.has(l.from) !== inside.has(l.to));
}

const key = (l: Link): string => `${l.from}>${l.to}`;

export class LinkCuts {
  private readonly count = new Map<string, number>();

  constructor(private readonly control: ClusterControl) {}

  /** Cuts the links not cut yet, in one call; counts every one. */
  async cut(links: readonly Link[], existing: 'freeze' | 'reset'): Promise<void> {
    const fresh = links.filter((l) => {
      const n = this.count.get(key(l)) ?? 0;
      this.count.set(key(l), n + 1);
      return n === 0;
    });
    await this.control.cut(fresh, { existing });
  }

  /** Uncounts the links; heals those no other fault holds cut, in one call. */
  async heal(links: readonly Link[]): Promise<void> {
    const last = links.filter((l) => {
      const n = this.count.get(key(l)) ?? 0;
      if (n > 1) this.count.set(key(l), n - 1);
      else this.count.delete(key(l));
      return n <= 1;
    });
    await this.control.heal(last);
  }

  /** Forgets every count (the whole cluster was healed at once). */
  clear(): void {
    this.count.clear();
  }
}

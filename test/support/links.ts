// Peer links over ClusterControl, for any cluster: their geometry, the fault shapes tests cut (isolate,
// partition, one-way drops), and LinkCuts, which lets faults that overlap share links.
import type { ClusterControl, CutOptions, Link } from './clusterControl';

/** A link as a string, "from>to". */
export const linkKey = (l: Link): string => `${l.from}>${l.to}`;

/** Every directed link between the nodes, in id order. */
export function allLinks(ids: readonly string[]): Link[] {
  const out: Link[] = [];
  for (const from of ids) for (const to of ids) if (from !== to) out.push({ from, to });
  return out;
}

/** The links between nodes of different groups, both ways; a node in no group is cut off from everyone. */
export function linksBetween(ids: readonly string[], groups: readonly (readonly string[])[]): Link[] {
  const groupOf = new Map<string, number>();
  groups.forEach((g, i) =>
    g.forEach((id) => {
      if (!ids.includes(id)) throw new Error(`no node ${id} (have ${ids.join(', ')})`);
      groupOf.set(id, i);
    }),
  );
  return allLinks(ids).filter((l) => groupOf.get(l.from) === undefined || groupOf.get(l.from) !== groupOf.get(l.to));
}

/** The links that cross the border of `group`, both ways (a symmetric partition group | rest). */
export function linksAround(ids: readonly string[], group: readonly string[]): Link[] {
  return linksBetween(ids, [group, ids.filter((id) => !group.includes(id))]);
}

/** The links from each of `from` to each of `to` (one way). */
export function linksFrom(from: string | readonly string[], to: string | readonly string[]): Link[] {
  return [from].flat().flatMap((a) => [to].flat().filter((b) => b !== a).map((b) => ({ from: a, to: b })));
}

/** Cuts `id` off from every other node, both ways. */
export function isolate(cluster: ClusterControl, id: string, opts?: CutOptions): void | Promise<void> {
  return cluster.cut(linksAround(cluster.ids, [id]), opts);
}

/**
 * A symmetric partition: nodes of different groups cannot talk, a node in no group talks to nobody. Adds
 * to the current cuts (heal() first to replace them).
 */
export function partition(cluster: ClusterControl, groups: readonly (readonly string[])[], opts?: CutOptions): void | Promise<void> {
  return cluster.cut(linksBetween(cluster.ids, groups), opts);
}

/** A one-way partition: each of `from` cannot send to each of `to`; their messages still arrive. */
export function dropOneWay(cluster: ClusterControl, from: string | readonly string[], to: string | readonly string[], opts?: CutOptions): void | Promise<void> {
  return cluster.cut(linksFrom(from, to), opts);
}

/**
 * Link cuts counted per directed link: faults overlap, and a link cut by two of them heals only when the
 * last one heals.
 */
export class LinkCuts {
  private readonly count = new Map<string, number>();

  constructor(private readonly control: ClusterControl) {}

  /** Cuts the links not cut yet, in one call; counts every one. */
  async cut(links: readonly Link[], opts?: CutOptions): Promise<void> {
    const fresh = links.filter((l) => {
      const n = this.count.get(linkKey(l)) ?? 0;
      this.count.set(linkKey(l), n + 1);
      return n === 0;
    });
    await this.control.cut(fresh, opts);
  }

  /** Uncounts the links; heals those no other fault holds cut, in one call. */
  async heal(links: readonly Link[]): Promise<void> {
    const last = links.filter((l) => {
      const n = this.count.get(linkKey(l)) ?? 0;
      if (n > 1) this.count.set(linkKey(l), n - 1);
      else this.count.delete(linkKey(l));
      return n <= 1;
    });
    await this.control.heal(last);
  }

  /** Forgets every count (the whole cluster was healed at once). */
  clear(): void {
    this.count.clear();
  }
}

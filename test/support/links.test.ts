// Link geometry and LinkCuts over a fake ClusterControl that records each cut and heal call.
import { describe, expect, it } from 'vitest';
import type { ClusterControl, CutOptions, Link } from './clusterControl';
import { allLinks, dropOneWay, isolate, linkKey, LinkCuts, linksAround, linksBetween, partition } from './links';

const keys = (links: readonly Link[]): string[] => links.map(linkKey).sort();

/** Records the batches; every process verb is a no-op. */
function recording(ids: string[]): ClusterControl & { calls: string[] } {
  const calls: string[] = [];
  const none = (): void => undefined;
  return {
    ids,
    calls,
    start: none,
    stop: async () => undefined,
    kill: async () => undefined,
    pause: none,
    resume: none,
    cut: (links: readonly Link[], opts?: CutOptions) => void calls.push(`cut ${keys(links).join(' ')}${opts?.existing ? ` (${opts.existing})` : ''}`),
    heal: (links?: readonly Link[]) => void calls.push(links ? `heal ${keys(links).join(' ')}` : 'heal all'),
  };
}

describe('link geometry', () => {
  const ids = ['n1', 'n2', 'n3', 'n4', 'n5'];

  it('every directed link; the links around a group, both ways', () => {
    expect(allLinks(ids)).toHaveLength(20);
    expect(keys(linksAround(ids.slice(0, 3), ['n1']))).toEqual(['n1>n2', 'n1>n3', 'n2>n1', 'n3>n1']);
  });

  it('a partition cuts between groups; a node in no group is cut off from everyone', () => {
    const cut = keys(linksBetween(ids, [['n1', 'n2'], ['n3', 'n4']]));
    expect(cut).not.toContain('n1>n2');
    expect(cut).not.toContain('n4>n3');
    expect(cut).toContain('n2>n3');
    expect(cut.filter((k) => k.includes('n5'))).toHaveLength(8);
    expect(cut).toHaveLength(16);
    expect(() => linksBetween(ids, [['n1', 'n9']])).toThrow(/no node n9/);
  });

  it('the shapes cut one batch each; one-way drops skip a node to itself', async () => {
    const c = recording(['n1', 'n2', 'n3']);
    await isolate(c, 'n2', { existing: 'reset' });
    await partition(c, [['n1'], ['n2', 'n3']]);
    await dropOneWay(c, ['n2', 'n3'], 'n3');
    expect(c.calls).toEqual(['cut n1>n2 n2>n1 n2>n3 n3>n2 (reset)', 'cut n1>n2 n1>n3 n2>n1 n3>n1', 'cut n2>n3']);
  });
});

describe('LinkCuts', () => {
  it('cuts a link once however many faults hold it, and heals it when the last one heals', async () => {
    const c = recording(['n1', 'n2', 'n3']);
    const cuts = new LinkCuts(c);
    await cuts.cut(linksAround(c.ids, ['n1']), { existing: 'freeze' });
    await cuts.cut([{ from: 'n1', to: 'n2' }, { from: 'n2', to: 'n3' }]);
    await cuts.heal(linksAround(c.ids, ['n1']));
    await cuts.heal([{ from: 'n1', to: 'n2' }, { from: 'n2', to: 'n3' }]);
    expect(c.calls).toEqual(['cut n1>n2 n1>n3 n2>n1 n3>n1 (freeze)', 'cut n2>n3', 'heal n1>n3 n2>n1 n3>n1', 'heal n1>n2 n2>n3']);
  });
});

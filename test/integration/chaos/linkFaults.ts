// Node faults on peer links: partitions of four shapes, flapping links, delays. A partition that leaves a
// minority side records it (its nodes' endpoints) and probes that side while it lasts; one-way cuts of a
// single link and delays name no minority.
import { performance } from 'node:perf_hooks';
import type { NodeStatus } from '../../../src/client';
import type { Link } from '../../support/clusterControl';
import { allLinks, linksAround } from '../../support/links';
import { mulberry32 } from '../../support/prng';
import { pickFrom } from './context';
import type { NodeFault } from './nodeFault';
import type { ScheduledFault } from './schedule';

/** What a partition cuts, the side it leaves in the minority (if any), and how to say it. */
interface Cut {
  links: Link[];
  minority?: string[];
  what: string;
}

type Shape = (ids: string[], f: ScheduledFault, leader: NodeStatus | undefined) => Cut;

/** isolate-leader: every link to and from the leader (a node picked at random when none is known). */
const isolateLeader: Shape = (ids, f, leader) => {
  const target = leader?.id ?? pickFrom(ids, f.pick)!;
  return { links: linksAround(ids, [target]), minority: [target], what: `isolate ${target}${leader ? ` (leader, term ${leader.term})` : ' (no leader known)'}` };
};

/** split: a 2-node side chosen by `pick` among the pairs; the leader may be on either side. */
const split: Shape = (ids, f, leader) => {
  const pairs: string[][] = [];
  for (let a = 0; a < ids.length; a++) for (let b = a + 1; b < ids.length; b++) pairs.push([ids[a]!, ids[b]!]);
  const minority = pickFrom(pairs, f.pick)!;
  const rest = ids.filter((id) => !minority.includes(id)).join(',');
  return { links: linksAround(ids, minority), minority, what: `split ${minority.join(',')} | ${rest}${leader ? ` (leader ${leader.id}, term ${leader.term})` : ''}` };
};

/** one-way-leader: the leader cannot send to anyone; it still hears everyone. */
const oneWayLeader: Shape = (ids, f, leader) => {
  const target = leader?.id ?? pickFrom(ids, f.pick)!;
  const others = ids.filter((id) => id !== target);
  return { links: others.map((to) => ({ from: target, to })), minority: [target], what: `one-way: ${target}${leader ? ' (leader)' : ''} cannot send to ${others.join(',')}` };
};

/** one-way: one random directed link. */
const oneWay: Shape = (ids, f) => {
  const { from, to } = pickFrom(allLinks(ids), f.pick)!;
  return { links: [{ from, to }], what: `one-way: ${from} cannot send to ${to}` };
};

/** A partition of the given shape: cut, record, probe the minority, hold, heal. */
const partition =
  (shape: Shape): NodeFault =>
  async (ctx, f, leader, hold) => {
    const { links, minority, what } = shape(ctx.ids, f, leader);
    await ctx.cuts.cut(links, { existing: f.existing });
    const addresses = minority?.map((id) => ctx.cluster.node(id).address);
    const ev = ctx.recorder.fault('partition', minority ?? [], addresses ? { minority: addresses, note: f.kind } : { note: `${f.kind} ${what}` });
    ctx.note(`${what} (${f.existing}) for ${f.holdMs} ms`);
    if (leader && minority?.includes(leader.id)) hold.failover(leader.id, leader.term, true);
    if (minority) ctx.probes.start(minority, hold.healed);
    await ctx.pause(f.holdMs);
    ctx.recorder.endFault(ev);
    hold.end();
    await ctx.cuts.heal(links);
    ctx.note(`heal ${what}`);
  };

export const PARTITIONS = {
  'isolate-leader': partition(isolateLeader),
  split: partition(split),
  'one-way-leader': partition(oneWayLeader),
  'one-way': partition(oneWay),
} satisfies Record<string, NodeFault>;

/** flap: random directed links go down and up every 100-400 ms (connections reset), for the hold. */
export const flap: NodeFault = async (ctx, f) => {
  // Its own generator, seeded by the schedule's pick: the same seed flaps the same links.
  const rnd = mulberry32(Math.floor(f.pick * 2 ** 31));
  const links = allLinks(ctx.ids);
  const ev = ctx.recorder.fault('flap', [], { note: 'random links cut and healed every 100-400 ms' });
  ctx.note(`flap: random links cut and healed every 100-400 ms for ${f.holdMs} ms`);
  const end = performance.now() + f.holdMs;
  let down: Link[] = [];
  let flips = 0;
  while (performance.now() < end && !ctx.signal.aborted) {
    await ctx.cuts.heal(down);
    down = links.filter(() => rnd() < 0.3);
    await ctx.cuts.cut(down, { existing: 'reset' });
    flips++;
    await ctx.pause(100 + rnd() * 300);
  }
  await ctx.cuts.heal(down);
  ctx.recorder.endFault(ev);
  ctx.note(`flap over (${flips} flips)`);
};

/** delay: latency on every link (the proxies delay each chunk), one delay at a time. */
export const delay: NodeFault = async (ctx, f) => {
  if (ctx.delayOwner) return ctx.note('delay: skipped (a delay is active)');
  ctx.delayOwner = f;
  for (const p of ctx.cluster.links()) p.delay(f.delayMs ?? 50);
  const ev = ctx.recorder.fault('delay', [], { note: `${f.delayMs} ms per chunk on every link` });
  ctx.note(`delay ${f.delayMs} ms per chunk on every link for ${f.holdMs} ms`);
  await ctx.pause(f.holdMs);
  for (const p of ctx.cluster.links()) p.delay(0);
  ctx.delayOwner = undefined;
  ctx.recorder.endFault(ev);
  ctx.note('delay off');
};

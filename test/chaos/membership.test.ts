// A membership change across a partition, in containers (issue 12): the leader is cut off from the others
// (iptables in each network namespace), and while it is cut off the majority removes it and adds a new
// machine in its place (a new container on an empty data folder, its own certificate from the cluster's CA,
// join mode), which catches up and is promoted. Then the partition heals. The removed node never saw its
// removal commit (it was cut off): it must never lead again, no vote of it may count (the members keep their
// leader and term), and once it reaches a member it is told that it was removed and exits 0
// (src/transport/removalNotice.ts; before that notice existed it ran on, out of the configuration).
// The workload's history (the workload knows the new machine's address from the start: leader hints never
// add endpoints) goes through the checker as in every scenario (scenarioKit.ts), and grant tokens must keep
// increasing across the change.
//
//   npx tsc -p tsconfig.json && npx vitest run --project chaos test/chaos/membership.test.ts
import { afterEach, describe, expect, it } from 'vitest';
import { PEER_PORT } from './containerCluster';
import { runScenario, stopActiveClusters, type Scenario } from './scenarioKit';
import { isolate } from '../support/links';

const SPARE = 'n4';
/** How long the members are watched after the heal for a disturbance by the removed node. */
const WATCH_MS = 4_000;

/** The highest token granted (acknowledged acquires) so far, and the lowest granted after `since`. */
function tokens(s: Scenario, since = Number.NEGATIVE_INFINITY): { max: bigint; minAfter: bigint | undefined } {
  let max = 0n;
  let minAfter: bigint | undefined;
  for (const o of s.recorder.operations()) {
    const t = o.op === 'acquire' && o.outcome === 'ok' ? o.result?.token : undefined;
    if (t === undefined) continue;
    if (t > max) max = t;
    if (o.call > since && (minAfter === undefined || t < minAfter)) minAfter = t;
  }
  return { max, minAfter };
}

/**
 * Asks every container that runs, every 100 ms for `ms`: what the removed node claims, and whether the
 * members' leader or term ever moved. Returns the distinct leader@term the members reported and the roles
 * and terms the removed node reported.
 */
async function watchAfterHeal(s: Scenario, removed: string, members: string[], ms: number): Promise<{ members: Set<string>; removed: Set<string> }> {
  const seen = { members: new Set<string>(), removed: new Set<string>() };
  const end = s.now() + ms;
  while (s.now() < end) {
    const st = await s.cluster.statuses([...members, removed]);
    for (const [id, x] of st) {
      if (id === removed) seen.removed.add(`${x.role}@${x.term}`);
      else if (x.leader !== '') seen.members.add(`${x.leader}@${x.term}`);
    }
    await s.sleep(100);
  }
  return seen;
}

describe('membership changes in containers (recorded workload, history checker)', () => {
  afterEach(async () => {
    await stopActiveClusters();
  });

  it('replaces the leader while it is partitioned away; after the heal the removed node never leads and no vote of it counts', async () => {
    await runScenario({ name: 'replace-partitioned', cluster: { spares: [SPARE] } }, async (s) => {
      const { cluster } = s;
      const old = await s.leader();
      const majority = cluster.ids.filter((id) => id !== old.id && id !== SPARE);
      const fresh = await s.failover('isolate the leader', old, async () => {
        await isolate(cluster, old.id);
        s.minority([old.id]);
      }, majority);

      // While the old leader is cut off, the majority removes it and adds the new machine.
      const admin = s.client({ requestTimeoutMs: 2_000, totalTimeoutMs: 10_000 });
      const changeFrom = s.now();
      const before = tokens(s);
      const removed = await admin.members.remove(old.id);
      expect(removed.members.removed).toEqual([old.id]);
      await admin.members.add(SPARE, { client: cluster.node(SPARE).endpoint, peer: `${SPARE}:${PEER_PORT}` });
      await cluster.join(SPARE, majority);
      const catchUpMs = await cluster.waitUntil(`${SPARE} catches up`, async () => {
        const l = await admin.members.list();
        const m = l.members.find((x) => x.id === SPARE);
        // match 0: it has not answered yet, and the leader would refuse to promote it (LEARNER_BEHIND).
        return m !== undefined && m.match > 0n && m.match + 5n >= l.commit;
      }, 30_000);
      await admin.members.promote(SPARE);
      const voters = [...majority, SPARE].sort();
      const list = await admin.members.list();
      expect(list.members.map((m) => [m.id, m.learner])).toEqual(voters.map((id) => [id, false]));
      expect(list.removed).toEqual([old.id]);
      s.note(`while ${old.id} was cut off: removed it, ${SPARE} joined (caught up in ${catchUpMs} ms) and was promoted; leader ${fresh.id}`);
      await s.waitServed(s.now());

      // Heal. The removed node rejoins the network, believing itself a voter of the old configuration.
      const leaderBefore = await s.leader(voters);
      s.endMinority();
      await cluster.heal();
      const seen = await watchAfterHeal(s, old.id, voters, WATCH_MS);
      const exit = await cluster.markRemoved(old.id, 10_000);
      const after = await s.leader(voters);
      s.note(
        `after the heal: members reported ${[...seen.members].join(', ')}; removed ${old.id} reported ${[...seen.removed].join(', ') || 'nothing'}; ` +
          `it ${exit === undefined ? 'still runs, out of the configuration' : `exited with ${exit}`}; leader ${leaderBefore.id}@${leaderBefore.term} -> ${after.id}@${after.term}`,
      );
      expect([...seen.removed].filter((r) => r.startsWith('leader')), `${old.id} never leads again`).toEqual([]);
      expect([...seen.members], 'the members kept their leader and term: no vote of the removed node counted').toEqual([`${leaderBefore.id}@${leaderBefore.term}`]);
      expect(`${after.id}@${after.term}`).toBe(`${leaderBefore.id}@${leaderBefore.term}`);
      expect(exit, `${old.id}, told by a member that it was removed, exits 0`).toBe(0);
      expect((await admin.members.list()).members.map((m) => m.id)).toEqual(voters);

      // Tokens kept increasing across the change: every grant called after it is above every one before.
      await s.waitServed(s.now());
      const later = tokens(s, changeFrom);
      s.note(`tokens: highest before the change ${before.max}, lowest granted after it ${later.minAfter}`);
      expect(later.minAfter, 'grants after the change').toBeDefined();
      expect(later.minAfter! > before.max, `${later.minAfter} > ${before.max}`).toBe(true);
    });
  }, 150_000);
});

// Chaos for issue 33's primitives (docs/architecture.md#read-write-locks, #semaphores, #atomic-multi-lock):
// the recorded workload runs permits with fenced writes per slot, shared and exclusive grants (readers'
// writes refused SHARED_GRANT), AcquireAll of 2-3 locks in random orders, and a few plain lock cycles, while
// the leader is killed (and restarted on its data) and then the new leader is cut off from both followers.
// The history must pass the extended checker: per resource (lock, semaphore slot) linearizability and
// the invariants, among them per-slot and per-mode exclusion (shared-write, permit-slot), token order per
// resource and across resources (grant-order), one token per set (set-token). See scenarioKit.ts for the
// frame (recovery, final reads, minority windows) and primitiveCycles.ts for the cycles.
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { runScenario, stopActiveClusters, writeScenarioReports, type Scenario } from './scenarioKit';
import { isolate } from '../support/links';

const SCENARIO_TIMEOUT_MS = 150_000;

async function killAndRestartLeader(s: Scenario): Promise<void> {
  const { cluster } = s;
  const old = await s.leader();
  const kill = s.fault('kill', [old.id], 'SIGKILL of the leader');
  const fresh = await s.failover('kill the leader', old, () => cluster.kill(old.id));
  await s.sleep(2_000);
  await cluster.start(old.id);
  s.endFault(kill);
  await cluster.waitUntil(`${old.id} catches up`, async () => {
    const [me, l] = await Promise.all([cluster.status(old.id), cluster.status(fresh.id)]);
    return me.role === 'follower' && me.applied >= l.commit;
  });
}

async function isolateLeader(s: Scenario): Promise<void> {
  const { cluster } = s;
  const old = await s.leader();
  const majority = s.cluster.ids.filter((id) => id !== old.id);
  await s.failover(
    'isolate the leader',
    old,
    async () => {
      await isolate(cluster, old.id);
      s.minority([old.id]);
    },
    majority,
  );
  await s.sleep(2_000);
  s.endMinority();
  await cluster.heal();
  const leader = await s.leader(majority);
  await cluster.waitUntil(`${old.id} follows ${leader.id}`, async () => {
    const st = await cluster.status(old.id);
    return st.role === 'follower' && st.leader === leader.id;
  });
}

describe('chaos: semaphores, read-write locks and AcquireAll (containers, recorded workload, history checker)', () => {
  afterEach(async () => {
    await stopActiveClusters();
  });

  afterAll(() => {
    writeScenarioReports();
  });

  it(
    'a mixed workload of the three primitives through a leader kill and a leader isolation passes the checker',
    async () => {
      const report = await runScenario(
        {
          name: 'primitives',
          // Deadlines shorter than a failover, so that the faults leave outcomes unknown (the checker's hard case).
          workload: { mix: { permit: 0.3, rw: 0.3, set: 0.3 }, hotLocks: 2, requestTimeoutMs: 400, totalTimeoutMs: 1_000 },
        },
        async (s) => {
          await killAndRestartLeader(s);
          await isolateLeader(s);
        },
      );
      const kinds = Object.entries(report.byKind)
        .map(([kind, c]) => `${kind} ${c.ok}/${c.fail}/${c.unknown}`)
        .join(', ');
      const p = report.workload.primitives;
      process.stdout.write(
        `[chaos primitives] history: ${report.historyOps} ops (ok/fail/unknown ${report.outcomes.ok}/${report.outcomes.fail}/${report.outcomes.unknown}); by kind (ok/fail/unknown): ${kinds}\n` +
          `[chaos primitives] grants: permits ${p.permitsGranted}, shared ${p.sharedGranted}, exclusive ${p.exclusiveGranted}, sets ${p.setsGranted}; readers' writes refused SHARED_GRANT ${p.sharedWritesRefused}\n` +
          `[chaos primitives] checker: ${report.verdict} over ${report.partitions} resources, ${report.opsChecked} ops in ${report.checkMs} ms; ${report.invariantViolations} invariant violation(s)\n`,
      );
      expect(report.verdict).toBe('ok');
      // The run exercised every primitive, under the faults and around them.
      expect(p.permitsGranted).toBeGreaterThan(20);
      expect(p.sharedGranted).toBeGreaterThan(10);
      expect(p.exclusiveGranted).toBeGreaterThan(5);
      expect(p.setsGranted).toBeGreaterThan(10);
      expect(p.sharedWritesRefused).toBeGreaterThan(0);
      expect(report.byKind.releasePermit?.ok ?? 0).toBeGreaterThan(10);
    },
    SCENARIO_TIMEOUT_MS,
  );
});

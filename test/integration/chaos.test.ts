// Chaos against real processes (issue 4): 3- and 5-node clusters of real node processes on 127.0.0.1 with a
// fault-injecting proxy on every directed peer link, many concurrent recorded clients (in-process and in two
// client worker processes), a seeded nemesis (kills, pauses, partitions, one-way cuts, delays, frozen
// clients), then: everything healed, the cluster must elect a leader and serve within a bound, and the whole
// history must pass test/checker (linearizable, no invariant broken; 'unknown' is a failure).
//
// The runner is test/integration/chaosRunner.ts (shared with the soak, scripts/chaos.ts). The seed of each
// randomized run is printed; replay its schedule with
//   CHAOS_SEED=<seed> npx vitest run test/integration/chaos.test.ts
//   node dist/scripts/chaos.js --seed <seed> --nodes 3|5 --round-seconds 10 --rounds 1
// A failing run dumps its history, final reads and fault timeline (path printed) for test/checker.
import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { FenceLockClient, publicSessionId } from '../../src/client';
import { Recorder } from '../chaos/recorder';
import { checkHistory, formatOps, type FaultEvent, type Operation } from '../checker';
import { CHECK_BUDGET_MS, checkedChaos as chaos, out } from './chaos/checked';
import { calibrateWorker, holderWrites, mergeOps, sanitize, startClientWorker, type ScheduledFault } from './chaosRunner';
import { runClock } from './clientWorker';
import { eventually, LocalCluster } from './harness';

const NEMESIS_MS = Number(process.env.CHAOS_MS ?? 10_000);

function seedFor(offset: number): number {
  if (process.env.CHAOS_SEED) return Number(process.env.CHAOS_SEED);
  // A new schedule every run (CI explores), printed so that a failure replays.
  return (Math.floor(Date.now() / 1000) % 1_000_000) + offset;
}

describe('chaos against real node processes (proxies on every peer link)', () => {
  it('3 nodes: kills, pauses, leader isolation, one-way cuts, delays, frozen clients', async () => {
    const { run } = await chaos({ nodes: 3, seed: seedFor(0), durationMs: NEMESIS_MS });
    expect(run.history.ops.length).toBeGreaterThan(200);
  });

  it('5 nodes: the same plus 2/3 splits moved around', async () => {
    const { run } = await chaos({ nodes: 5, seed: seedFor(1), durationMs: NEMESIS_MS });
    expect(run.history.ops.length).toBeGreaterThan(200);
  });
});

// Scripted scenarios: fixed schedules for the properties the random runs hit only by chance. Each names what
// it guards; bugs found by the nemesis become entries here (or fixed seeds) with a comment on what broke.
const at = (kind: ScheduledFault['kind'], atMs: number, holdMs: number, extra: Partial<ScheduledFault> = {}): ScheduledFault => ({
  kind,
  at: atMs,
  holdMs,
  pick: 0,
  existing: 'freeze',
  ...extra,
});

describe('chaos scenarios', () => {
  it('the frozen holder: SIGSTOPped right after its grant for longer than its lease, it wakes up and its write is refused', async () => {
    // No node faults, so no failover restarts the lease (a new leader starts every deadline afresh): the
    // 3 s session must expire during a 5 s freeze, the lock move on, and the old token be fenced off.
    const schedule = [at('pause-holder', 500, 5_000, { pick: 0 }), at('pause-holder', 6_500, 5_000, { pick: 0.99 })];
    const { run } = await chaos({ nodes: 3, seed: 101, durationMs: 12_000, schedule });
    const w = holderWrites(run.history);
    const refused = Object.entries(w).filter(([k]) => k.startsWith('refused')).reduce((s, [, v]) => s + v, 0);
    expect(refused, `holder writes: ${JSON.stringify(w)}`).toBeGreaterThanOrEqual(1);
  });

  it('an isolated leader steps down and grants nothing while the majority elects and serves; then a kill of every node loses nothing', async () => {
    // isolate-leader with frozen connections (a real partition: no RST), then a one-way cut of the new leader,
    // then SIGKILL of all nodes at once and a restart on their data: the final reads must find every
    // acknowledged write (lost-write), and no operation may complete on the cut-off side (minority-answer).
    const schedule = [
      at('isolate-leader', 500, 2_500),
      at('one-way-leader', 4_000, 2_000, { existing: 'reset' }),
      at('kill-all', 7_000, 1_000),
    ];
    const { run } = await chaos({ nodes: 3, seed: 102, durationMs: 9_000, schedule });
    const iso = run.failovers.find((f) => f.kind === 'isolate-leader');
    expect(iso?.to, 'a new leader among the majority').toBeDefined();
    expect(iso?.stepDownMs, 'the isolated leader stepped down').toBeDefined();
  });
});

describe('chaos regressions', () => {
  it('seed 14: an operation answered by the majority is not blamed on a minority node the client library happened to point at', () => {
    // What broke (a test bug, found by seed 14 on 5 nodes): during a split n1,n4 | n2,n3,n5 a release was
    // answered by the majority's leader n5 (every operation of that client before and after went to n5), but
    // the recorder stamped it with n1: it records client.currentEndpoint() at return, the client's SHARED
    // current endpoint, which the client's keepalive stream moves on its own. minority-answer then reported
    // "op 1065 (release) was answered ok by n1 while it was on a minority side". The operations below are
    // the original ones. sanitize() drops workload endpoints; minority answers are tested by the runner's
    // raw single-node probes instead (see chaosRunner.ts).
    const n1 = '127.0.0.1:42881';
    const n5 = '127.0.0.1:32945';
    const session = 'fe40adf106ae1b9946bc56e71499708e';
    const lock = 'chaos-14/cold-76';
    const base = { process: 'chaos-14-c5', outcome: 'ok' as const };
    const ops: Operation[] = [
      { ...base, id: 1062, op: 'acquire', args: { lock, session, waitMs: 1500 }, call: 17020.27, ret: 17026.96, result: { token: 954n }, endpoint: n5 },
      { ...base, id: 1064, op: 'write', args: { lock, session, token: 954n, writes: [{ key: `${lock}/k`, value: 'chaos-14-c5#34' }] }, call: 17026.97, ret: 17031.87, result: { token: 954n, index: 956n }, endpoint: n5 },
      { ...base, id: 1065, op: 'release', args: { lock, session, token: 954n }, call: 17031.88, ret: 17060.45, result: {}, endpoint: n1 },
    ];
    const faults: FaultEvent[] = [{ at: 15436.45, end: 17114.81, kind: 'partition', targets: ['n1', 'n4'], minority: [n1, '127.0.0.1:46663'], note: 'split' }];
    expect(checkHistory({ ops, faults }).invariants.map((v) => v.invariant)).toEqual(['minority-answer']);
    const clean = sanitize(ops);
    expect(clean.endpoints[1065]).toBe(n1);
    expect(checkHistory({ ops: clean.ops, faults }).ok).toBe(true);
    // A probe (process probe-*) keeps its endpoint: it went to that one node, so an ok there IS a violation.
    const probe: Operation = { id: 2000, process: 'probe-n1', op: 'get', args: { key: 'p/k', lock: 'p' }, call: 16000, ret: 16010, outcome: 'ok', result: { found: false, value: null, token: 0n, lock: '' }, endpoint: n1 };
    expect(checkHistory({ ops: sanitize([...ops, probe]).ops, faults }).invariants.map((v) => v.invariant)).toEqual(['minority-answer']);
  });

  it('seed 11: a waiter frozen in the queue is handed the lock, its session expires, its retried acquire answers UNKNOWN_SESSION', async () => {
    // What broke (a test bug, found by seed 11 on 3 nodes): a worker SIGSTOPped while queued on a hot lock
    // was handed the lock by the holder's release; its session expired while it was frozen; after SIGCONT
    // the client's attempt had timed out, its retry (same request id) found no session and got NOT_FOUND /
    // UNKNOWN_SESSION, which the recorder records as a definite failure. The checker then saw a lock that no
    // session of the history held, yet refused to every other client for seconds: a false "not
    // linearizable". The grant was real; chaosRunner.sanitize() now checks such acquires as unknown.
    // This scenario reproduces the shape on purpose, step by step.
    const cluster = await LocalCluster.create({ size: 3 });
    const epoch = performance.timeOrigin + performance.now();
    const clock = runClock(epoch);
    const rec = new Recorder({ now: clock });
    const client = new FenceLockClient({ endpoints: cluster.endpoints, clientId: 'fw-main', requestTimeoutMs: 1_000, totalTimeoutMs: 5_000 });
    const lock = 'fw/hot';
    let worker: ReturnType<typeof startClientWorker> | undefined;
    try {
      cluster.startAll();
      await eventually(async () => (await client.status()).leader !== '' || undefined, 20_000, 'a leader');
      const a = (await rec.open('fw-a', client, 10_000)).value!;
      const held = (await rec.acquire('fw-a', client, a, lock, 0)).value!;
      expect(held).toBeDefined();

      worker = startClientWorker({
        name: 'fw',
        epoch,
        workload: { endpoints: cluster.endpoints, namespace: 'fw', clients: 0, requestTimeoutMs: 1_000, totalTimeoutMs: 4_000 },
        waiter: { lock, waitMs: 2_000, ttlMs: 3_000 },
      });
      await worker.ready;
      const clocks = [await calibrateWorker(worker, clock)];
      const sid = await eventually(() => worker!.events.find((e) => e.k === 'session')?.id as string | undefined, 10_000, "the waiter's session");
      await eventually(async () => (await client.describe(lock)).waiters.includes(publicSessionId(sid)) || undefined, 10_000, 'the waiter queued');
      worker.child.kill('SIGSTOP');

      // The release hands the lock to the frozen waiter; another session finds it held.
      expect((await rec.release('fw-a', client, held)).op.outcome).toBe('ok');
      const b = (await rec.open('fw-b', client, 10_000)).value!;
      const tryB = await rec.acquire('fw-b', client, b, lock, 0);
      expect(tryB.op.error?.reason).toBe('LOCK_HELD');
      // The frozen waiter's session (3 s TTL) expires; the lock is free again for b, under a newer token.
      const got = await rec.acquire('fw-b', client, b, lock, 8_000);
      expect(got.value, JSON.stringify(got.op.error)).toBeDefined();
      await rec.write('fw-b', client, b, lock, got.value!.token, [{ key: `${lock}/k`, value: 'fw-b#0' }]);
      await rec.release('fw-b', client, got.value!);

      worker.child.kill('SIGCONT');
      await eventually(() => worker!.events.find((e) => e.k === 'waiter-done'), 20_000, 'the waiter to finish');
      worker.child.stdin!.write('stop\n');
      await worker.exited;

      const merged = mergeOps(rec.operations(), [worker], clocks);
      const waiterAcquire = merged.find((o) => o.process.endsWith('-waiter') && o.op === 'acquire')!;
      out(`[chaos] frozen waiter:\n${formatOps(merged.filter((o) => o.args.lock === lock || o.args.key === `${lock}/k`))}`);
      const { ops, reclassified } = sanitize(merged);
      const verdict = checkHistory({ ops, faults: [] }, { budgetMs: CHECK_BUDGET_MS });
      expect(verdict.ok, verdict.report).toBe(true);
      if (waiterAcquire.outcome === 'fail' && waiterAcquire.error?.reason === 'UNKNOWN_SESSION') {
        // The shape of seed 11: unsanitized, the history is (falsely) rejected.
        expect(reclassified).toContain(waiterAcquire.id);
        expect(checkHistory({ ops: merged, faults: [] }, { budgetMs: CHECK_BUDGET_MS }).ok).toBe(false);
      } else {
        // The waiter read its grant before its deadline fired: then its write under that token was refused.
        out(`[chaos] frozen waiter ended ${waiterAcquire.outcome} (not the UNKNOWN_SESSION shape this time)`);
      }
    } finally {
      if (worker && worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill('SIGKILL');
      await client.close().catch(() => undefined);
      await cluster.destroy();
    }
  });
});

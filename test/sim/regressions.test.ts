// Named regression seeds: every bug the simulator found, and the seeds that first caught each
// deliberately broken core. Replay any of them with `npm run sim:raft -- --seed N --ticks T [--bug FLAG]`.
//
// Seeds pin trajectories, and trajectories depend on the core's exact behaviour: a legitimate change in
// src/raft (say, one more message per election) can move a bug-variant catch to another seed. If a
// "caught" regression below stops reproducing after such a change, bugs.test.ts still proves that the
// variant is caught within the CI range and prints the new first seed to pin here.
import { describe, expect, it } from 'vitest';
import type { TestOnlyBugs } from '../../src/raft/types';
import { rawNodeFactory } from './rawNodeFactory';
import { runSeed, type SimOptions, type SimResult } from './simulator';

function run(seed: number, ticks: number, extra: Partial<SimOptions> = {}): SimResult {
  return runSeed({ seed, factory: rawNodeFactory, safetyTicks: ticks, ...extra });
}

function explain(r: SimResult): string {
  return r.ok ? 'ok' : `${r.violation!.invariant} at tick ${r.violation!.tick}: ${r.violation!.detail}`;
}

describe('regressions: bugs found by the simulator', () => {
  // Core bug (fixed in rawNode.sendResync, which now falls back to probing and so to a snapshot).
  // Liveness: a follower in replicate state whose in-flight window is full (its Apps were lost in a
  // partition) is never caught up once the leader has compacted past its `next - 1`. Every heartbeat
  // response calls sendResync(), which returns silently when log.term(next - 1) is compacted away, while
  // isPaused() (full window) keeps sendAppend() from noticing that a snapshot is needed. No App, no
  // snapshot, forever. Seed 1242 (5 nodes, churn, maxInflight 2): n2 has match 9, next 12, inflight 2
  // from t=79.8; the leader n3 compacts at 20 at t=85.1 before any resync left; 600 healed ticks later n2
  // is still at 9 while the others applied 126.
  it('seed 1242: a paused follower behind the leader\'s compaction is caught up', () => {
    const r = run(1242, 150);
    expect(r.ok, explain(r)).toBe(true);
  });

  // Simulator bug (fixed): the first durability check demanded that an append acknowledgement be
  // durable *when sent*. But an ack produced while a write is outstanding goes out with the next
  // Ready's messagesAfterPersist, and if a newer leader truncated the log in between, the acked index is
  // gone by then. That is legal Raft: the ack was true (durably, in the ack's term) when the earlier
  // write synced, exactly like a reply that crosses a leader change in flight. The check now applies only
  // to acknowledgements sent before their Ready's write syncs. These seeds produce such stale acks
  // (stats.staleAcks) and must pass.
  it('stale append acknowledgements sent after persist are not flagged', () => {
    const seeds = [2550, 4394, 6574, 6586, 9308, 11374];
    let stale = 0;
    for (const seed of seeds) {
      const r = run(seed, 150);
      expect(r.ok, `seed ${seed}: ${explain(r)}`).toBe(true);
      stale += r.stats.staleAcks;
    }
    expect(stale, 'none of these seeds produces a stale ack any more: pick new ones (stats.staleAcks > 0)').toBeGreaterThan(0);
  });
});

interface Catch {
  name: string;
  flag: keyof TestOnlyBugs;
  seed: number;
  durabilityChecks: boolean;
  invariant: string;
}

// The first seed of the CI range (1000 ticks) that caught each deliberately broken core, and how.
const CATCHES: Catch[] = [
  {
    // Figure 8 (3 nodes, profile figure8): a leader committed an entry of an earlier term (a no-op of term 21
    // at index 14) by counting replicas; a later leader (n2, term 44) that never held it still won an
    // election. Was seed 29 until seeds 16..31 began to run with lazy commit notices, which moved it.
    name: 'Figure 8: an earlier term committed by counting replicas, then overwritten',
    flag: 'commitPreviousTermByCounting',
    seed: 77,
    durabilityChecks: true,
    invariant: 'LeaderCompleteness',
  },
  {
    // A voter ignoring the log comparison elects a leader lacking a committed entry: its no-op lands on
    // an index where an entry was already committed.
    name: 'votes granted without the log check elect a leader lacking committed entries',
    flag: 'voteWithoutLogCheck',
    seed: 2,
    durabilityChecks: true,
    invariant: 'LeaderCompleteness',
  },
  {
    // The first vote of the run is granted before the voter's hard state is durable.
    name: 'acks before sync: a vote granted before it is durable',
    flag: 'ackBeforeSync',
    seed: 1,
    durabilityChecks: true,
    invariant: 'DurableBeforeAck',
  },
  {
    // Without the direct check, a crash loses acknowledged-but-unsynced entries: a later leader lacks an
    // entry that was committed on the strength of those acks.
    name: 'acks before sync: a crash loses an acknowledged entry, which a later leader lacks',
    flag: 'ackBeforeSync',
    seed: 9,
    durabilityChecks: false,
    invariant: 'LeaderCompleteness',
  },
];

describe('regressions: seeds that catch the deliberately broken cores', () => {
  for (const c of CATCHES) {
    it(`${c.flag}, seed ${c.seed}: ${c.name}`, () => {
      const broken = run(c.seed, 1000, { bugs: { [c.flag]: true }, durabilityChecks: c.durabilityChecks });
      expect(broken.ok, `seed ${c.seed} no longer catches ${c.flag} (see the note at the top)`).toBe(false);
      expect(broken.violation!.invariant, explain(broken)).toBe(c.invariant);
      const healthy = run(c.seed, 1000, { durabilityChecks: c.durabilityChecks });
      expect(healthy.ok, `the same seed without the bug: ${explain(healthy)}`).toBe(true);
    });
  }
});

// The run's summary totals what each seed did, and names the check behind each violation.
import { describe, expect, it } from 'vitest';
import { addResult, checkOf, emptySummary, formatSummary, mergeSummaries } from './runSummary';
import { runNodeSeed, type NodeSimResult } from './simulation';

function result(seed: number, violation: string | undefined, stats: Partial<NodeSimResult['stats']>): NodeSimResult {
  return { seed, nodes: 3, profile: 'mixed', ok: violation === undefined, violation, stats: stats as NodeSimResult['stats'] };
}

describe('the run summary', () => {
  it('names the check of a violation: the Raft rule, else the words before the first colon', () => {
    expect(checkOf("raft: DurableBeforeAck: n1 granted its vote to n2 in term 1 while its durable hard state is term 0 vote ''")).toBe('raft: DurableBeforeAck');
    expect(checkOf('lease promise: c1 still believes it holds L1 under token 3 (at 12.0 ms)')).toBe('lease promise');
    expect(checkOf('liveness: 1 client(s) still running 60000 ms after every fault healed')).toBe('liveness');
  });

  it('totals every counter over the seeds and merges the workers\' totals', () => {
    const a = emptySummary();
    addResult(a, result(1, undefined, { events: 10, simulatedMs: 1_000, crashes: 2, messagesDropped: 5 }));
    addResult(a, result(4, 'raft: LeaderCompleteness: n2 ...', { events: 20, simulatedMs: 2_000, crashes: 1, messagesDropped: 0 }));
    const b = emptySummary();
    addResult(b, result(2, 'lease promise: c1 ...', { events: 5, simulatedMs: 500, crashes: 0, messagesDropped: 7, partitions: 3 }));
    a.cpuMs = 300;
    b.cpuMs = 200;
    const all = mergeSummaries([a, b]);
    expect(all).toMatchObject({ seeds: 3, passed: 1, failed: 2, failedSeeds: [2, 4], simulatedMs: 3_500, events: 35, cpuMs: 500 });
    expect(all.totals).toEqual({ crashes: 3, messagesDropped: 12, partitions: 3 });
    expect(all.violations).toEqual({ 'raft: LeaderCompleteness': 1, 'lease promise': 1 });
    const text = formatSummary(all, 'seeds 1..3');
    expect(text).toContain('3 seeds, 1 passed, 2 failed (seeds 2, 4)');
    expect(text).toContain('3 crashes');
    expect(text).toContain('12 messages dropped');
    expect(text).toContain('violations by check: raft: LeaderCompleteness 1, lease promise 1');
  });

  it('counts the faults a lossy seed injects', async () => {
    const r = await runNodeSeed({ seed: 21, profile: 'lossy', faultyMs: 3_000 });
    const s = emptySummary();
    addResult(s, r);
    expect(r.ok).toBe(true);
    expect(s.totals['messagesDropped']).toBeGreaterThan(0);
    expect(s.totals['messagesDuplicated']).toBeGreaterThan(0);
    expect(s.simulatedMs).toBe(r.stats.simulatedMs);
  });
});

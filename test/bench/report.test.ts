// The benchmark report's comparison with the best peer, on hand-made summaries: which peer is best per figure
// (most ops/s, lowest p50; a different peer for each if so), the ratios against it, that each fencelock system
// meets the peers of its own transport, and how the table names them. Also where zookeeper sits among the
// variants (plaintext only, once).
import { describe, expect, it } from 'vitest';
import { compareRow, renderTable, summarize, type RowResult, type Summary } from '../../scripts/bench/report';
import type { Measurement } from '../../scripts/bench/runner';
import { systemVariants } from '../../scripts/bench/systems';

function summary(opsPerSec: number, p50Ms: number): Summary {
  return { opsPerSec, p50Ms, p99Ms: p50Ms * 3, serverCpuPct: 100, clientCpuPct: 20, errors: 0, measuredRounds: 1 };
}

function measurement(opsPerSec: number, p50Ms: number): Measurement {
  return { ops: opsPerSec, errors: 0, elapsedS: 1, opsPerSec, p50Ms, p99Ms: p50Ms * 3, serverCpuPct: 100, clientCpuPct: 20 };
}

describe('bench report: ratio to the best peer', () => {
  it('takes the peer with the most ops/s and the peer with the lowest p50, which may differ', () => {
    const row = compareRow({
      fencelock: summary(1_000, 2),
      etcd: summary(400, 1.6),
      zookeeper: summary(800, 4),
    });
    expect(row.vsBestPeer.fencelock).toEqual({
      bestPeer: { opsPerSec: { system: 'zookeeper', value: 800 }, p50: { system: 'etcd', value: 1.6 } },
      opsPerSec: 1.25,
      p50: 1.25,
    });
  });

  it('compares fencelock-plain with etcd-plain and zookeeper, never with etcd (TLS)', () => {
    const row = compareRow({
      'fencelock-plain': summary(900, 1),
      etcd: summary(5_000, 0.1),
      'etcd-plain': summary(600, 2),
      zookeeper: summary(300, 0.5),
    });
    expect(row.vsBestPeer['fencelock-plain']?.bestPeer).toEqual({ opsPerSec: { system: 'etcd-plain', value: 600 }, p50: { system: 'zookeeper', value: 0.5 } });
    expect(row.vsBestPeer['fencelock-plain']?.opsPerSec).toBe(1.5);
    expect(row.vsBestPeer['fencelock-plain']?.p50).toBe(2);
    // fencelock (TLS) was not measured: no entry for it.
    expect(row.vsBestPeer.fencelock).toBeUndefined();
  });

  it('compares fencelock-auth with the TLS peers, and takes whichever peer was measured', () => {
    const row = compareRow({ fencelock: summary(100, 10), 'fencelock-auth': summary(90, 12), zookeeper: summary(200, 5) });
    expect(row.vsBestPeer['fencelock-auth']).toEqual({
      bestPeer: { opsPerSec: { system: 'zookeeper', value: 200 }, p50: { system: 'zookeeper', value: 5 } },
      opsPerSec: 0.45,
      p50: 2.4,
    });
    expect(row.authCost).toEqual({ opsPerSecPct: 90, p50Pct: 120 });
    // zookeeper has no TLS variant, so no TLS cost of its own.
    expect(row.tlsCost).toEqual({});
  });

  it('has no comparison without a peer', () => {
    expect(compareRow({ fencelock: summary(100, 10), 'fencelock-plain': summary(120, 8) }).vsBestPeer).toEqual({});
  });

  it('names the best peer next to each ratio in the table', () => {
    const rows: RowResult[] = [
      { workload: 'reads', clients: 8, systems: { fencelock: [measurement(3_000, 0.5)], etcd: [measurement(1_000, 2)], zookeeper: [measurement(1_500, 1)] } },
    ];
    const table = renderTable(rows, ['fencelock', 'etcd', 'zookeeper']);
    expect(table).toMatch(/fencelock\/best peer/);
    expect(table).toMatch(/reads\s+8 \|.*\|\s+2\.0x zookeeper\s+0\.5x zookeeper$/m);
    expect(table).toMatch(/zookeeper: plaintext/);
  });

  it('shows a row a system lacks the primitive for as n/a, says why once, and compares with the peers that ran it', () => {
    const why = 'etcd has no semaphore';
    const rows: RowResult[] = [1, 8].map((clients) => ({
      workload: 'semaphore',
      clients,
      systems: { fencelock: [measurement(900, 1)], etcd: [{ notApplicable: why }], zookeeper: [measurement(300, 3)] },
    }));
    const table = renderTable(rows, ['fencelock', 'etcd', 'zookeeper']);
    expect(table).toMatch(/^semaphore\s+8 \|\s+900\s+1\.00\s+3\.00\s+100%\s+20% \|\s+n\/a\s+-\s+-\s+-\s+- \|\s+300 .*\|\s+3\.0x zookeeper\s+0\.3x zookeeper$/m);
    expect(table.split('\n').filter((l) => l === `semaphore on etcd: n/a, ${why}.`)).toHaveLength(1);
    // Not a failure: no '!' note, no 'failed' cell.
    expect(table).not.toMatch(/failed|^!/m);
    expect(table).toMatch(/^semaphore: each client takes a permit of one semaphore of 4/m);
    expect(summarize([{ notApplicable: why }])).toBeUndefined();
  });
});

describe('bench systems', () => {
  it('measures zookeeper once, in plaintext, whatever --tls says', () => {
    const names = (tls: 'on' | 'off' | 'both'): string[] => systemVariants(['fencelock', 'etcd', 'zookeeper'], tls, 'both').map((v) => v.name);
    expect(names('both')).toEqual(['fencelock', 'fencelock-auth', 'etcd', 'zookeeper', 'fencelock-plain', 'etcd-plain']);
    expect(names('on')).toEqual(['fencelock', 'fencelock-auth', 'etcd', 'zookeeper']);
    expect(names('off')).toEqual(['fencelock-plain', 'etcd-plain', 'zookeeper']);
    expect(systemVariants(['zookeeper'], 'on').every((v) => !v.tls && !v.auth)).toBe(true);
  });
});

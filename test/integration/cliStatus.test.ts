// Issue 30, item 6: `fencelock status` is a health check. Exit 0 with a leader and every answering node caught
// up; exit 3 when the nodes that answer have no leader (two of three down: the third cannot be elected);
// exit 10 when an answering node is behind the leader by more than --max-lag applied entries (cut off from its
// peers, it still answers clients). The rows are printed in every case.
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FenceLockClient } from '../../src/client';
import { eventually, LocalCluster, PROJECT_ROOT, runNode } from './harness';

const CLI = path.join(PROJECT_ROOT, 'dist', 'src', 'cli', 'main.js');

describe('fencelock status exit codes (a real 3-node cluster)', () => {
  let cluster: LocalCluster;
  let client: FenceLockClient;
  const status = (args: string[] = []): Promise<{ code: number | null; stdout: string; stderr: string }> =>
    runNode([CLI, '--endpoints', cluster.endpoints.join(','), '--timeout', '3000', 'status', ...args], { timeoutMs: 30_000 });

  beforeAll(async () => {
    cluster = await LocalCluster.create({ proxies: true });
    cluster.startAll();
    client = new FenceLockClient({ endpoints: cluster.endpoints, totalTimeoutMs: 5_000 });
    await eventually(async () => ((await client.statusAll()).some((r) => r.ok && r.status.role === 'leader') ? true : undefined), 30_000, 'a leader');
  }, 120_000);

  afterAll(async () => {
    await client?.close({ timeoutMs: 0 });
    await cluster?.destroy();
  });

  it('exit 0 when a leader is known and every node is caught up', async () => {
    const ok = await eventually(async () => {
      const r = await status();
      return r.code === 0 ? r : undefined;
    }, 20_000, 'status exit 0');
    expect(ok.stdout).toContain('leader');
    expect(ok.stderr).toBe('');
  });

  it('exit 10 when a node that answers is behind the leader (cut off from its peers) by more than --max-lag', async () => {
    const rows = await client.statusAll();
    const leader = rows.find((r) => r.ok && r.status.role === 'leader');
    if (!leader?.ok) throw new Error('no leader');
    const lagger = cluster.ids.find((id) => id !== leader.status.id)!;
    const others = cluster.ids.filter((id) => id !== lagger);
    cluster.cut(others.flatMap((o) => [{ from: o, to: lagger }, { from: lagger, to: o }]), { existing: 'reset' });
    try {
      const s = await client.openSession({ ttlMs: 10_000 });
      for (let i = 0; i < 5; i++) await (await s.acquire(`status/${i}`)).release();
      await s.close();
      const behind = await eventually(async () => {
        const r = await status(['--max-lag', '2']);
        return r.code === 10 ? r : undefined;
      }, 20_000, 'status exit 10');
      expect(behind.stderr).toMatch(new RegExp(`behind the leader by more than 2 applied entries \\(--max-lag\\): ${lagger} \\(\\d+ entries\\)`));
      expect(behind.stdout).toContain(lagger);
      // The same lag is within a looser bound.
      expect((await status(['--max-lag', '100000'])).code).toBe(0);
    } finally {
      cluster.heal();
    }
  }, 60_000);

  it('exit 3 when the nodes that answer have no leader (two of three down)', async () => {
    const rows = await client.statusAll();
    const survivor = rows.find((r) => r.ok && r.status.role !== 'leader');
    if (!survivor?.ok) throw new Error('no follower');
    for (const id of cluster.ids.filter((id) => id !== survivor.status.id)) await cluster.kill(id);
    const lost = await eventually(async () => {
      const r = await status();
      return r.code === 3 ? r : undefined;
    }, 30_000, 'status exit 3');
    expect(lost.stderr).toMatch(new RegExp(`no leader: 1 of 3 nodes answered \\(${survivor.status.id} [a-z-]+\\) and none leads or knows a leader`));
    const json = await runNode([CLI, '--endpoints', cluster.endpoints.join(','), '--timeout', '3000', '--json', 'status'], { timeoutMs: 30_000 });
    expect(json.code).toBe(3);
    const parsed = JSON.parse(json.stdout) as Array<{ ok: boolean; id?: string; role?: string }>;
    expect(parsed.filter((r) => r.ok).map((r) => r.id)).toEqual([survivor.status.id]);
  }, 60_000);
});

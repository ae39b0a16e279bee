// The metrics listener starts and stops with the node, and two nodes in one process keep their metrics apart.
import { mkdtempSync, rmSync } from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/node/config';
import { createLogger } from '../../src/node/logger';
import { FenceLockServer } from '../../src/node/server';
import { eventually, freePorts } from '../integration/harness';
import { scrape, sumOf, valueOf } from '../support/prometheusText';

const dirs: string[] = [];
const running: FenceLockServer[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A one-member plaintext node in this process, with a metrics listener. */
async function soloNode(id: string): Promise<{ server: FenceLockServer; metrics: string }> {
  const [client, peer, metrics] = await freePorts(3);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'fencelock-metrics-'));
  dirs.push(dir);
  const config = validateConfig({
    id,
    listen: `127.0.0.1:${client}`,
    peerListen: `127.0.0.1:${peer}`,
    metricsListen: `127.0.0.1:${metrics}`,
    members: { [id]: { client: `127.0.0.1:${client}`, peer: `127.0.0.1:${peer}` } },
    insecure: true,
    auth: { enabled: false },
    dataDir: path.join(dir, 'data'),
    logLevel: 'silent',
  });
  const server = await FenceLockServer.start(config, createLogger(id, 'silent'));
  running.push(server);
  return { server, metrics: `127.0.0.1:${metrics}` };
}

describe('the metrics listener', () => {
  it('serves while the node runs and is closed by its graceful stop', async () => {
    const { server, metrics } = await soloNode('solo');
    const m = await eventually(async () => {
      const s = await scrape(metrics);
      // The role is read from the core at once; the leader change is counted when the driver announces it.
      return valueOf(s, 'fencelock_raft_role', { role: 'leader' }) === 1 && sumOf(s, 'fencelock_raft_leader_changes_total') > 0 ? s : undefined;
    }, 10_000, 'the single member to lead');
    expect(valueOf(m, 'fencelock_raft_term')).toBeGreaterThan(0);
    expect(sumOf(m, 'fencelock_raft_leader_changes_total')).toBe(1);
    running.splice(running.indexOf(server), 1);
    await server.stop();
    // A new connection, not one of fetch's pooled ones (the stop ended those).
    const [host, port] = metrics.split(':');
    const after = await new Promise<string>((resolve) => {
      const socket = net.connect(Number(port), host, () => {
        socket.destroy();
        resolve('connected');
      });
      socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    });
    expect(after).toBe('ECONNREFUSED');
  });

  it('keeps two nodes of one process apart: each scrape has its own node label and figures', async () => {
    const a = await soloNode('a');
    const b = await soloNode('b');
    await eventually(async () => valueOf(await scrape(a.metrics), 'fencelock_raft_has_leader') === 1 || undefined, 10_000, 'a to lead');
    await a.server.runtime.context.propose({ type: 'OpenSession', clientId: '', requestId: 0, now: 0, sessionId: 'ab'.repeat(16), ttlMs: 10_000, clientName: 'only-a' });
    const [ma, mb] = [await scrape(a.metrics), await scrape(b.metrics)];
    expect(new Set(ma.samples.map((s) => s.labels.node))).toEqual(new Set(['a']));
    expect(new Set(mb.samples.map((s) => s.labels.node))).toEqual(new Set(['b']));
    expect(valueOf(ma, 'fencelock_sessions')).toBe(1);
    expect(valueOf(mb, 'fencelock_sessions')).toBe(0);
    expect(sumOf(ma, 'fencelock_sessions_opened_total')).toBe(1);
    expect(sumOf(mb, 'fencelock_sessions_opened_total')).toBe(0);
  });
});

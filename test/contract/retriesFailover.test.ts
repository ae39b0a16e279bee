// Guarantee 4 through generated stubs: every mutating call, retried with the same (client id, request id)
// on the new leader after the old one was SIGKILLed, returns its original answer and applies nothing again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, LocalCluster } from '../integration/harness';
import { rawClient, type RawNodeClient } from '../integration/rawClient';

let cluster: LocalCluster;
const clients = new Map<string, RawNodeClient>();

beforeAll(async () => {
  cluster = await LocalCluster.create();
  cluster.startAll();
  for (const n of cluster.nodes) clients.set(n.id, rawClient(n.address));
});

afterAll(async () => {
  for (const c of clients.values()) c.close();
  await cluster?.destroy();
});

async function leaderAmong(ids: string[]): Promise<{ id: string; raw: RawNodeClient }> {
  return eventually(async () => {
    for (const id of ids) {
      const st = await clients.get(id)!.call('Cluster', 'Status', {}).catch(() => undefined);
      if (st?.role === 'leader') return { id, raw: clients.get(id)! };
    }
    return undefined;
  }, 20_000, 'a leader');
}

describe('retries across a leader kill', () => {
  it('Open, Acquire, Write, Release and Close retried on the new leader return their original answers', async () => {
    const first = await leaderAmong(cluster.nodes.map((n) => n.id));
    const h = (requestId: number): Record<string, unknown> => ({ clientId: 'contract-retry-failover', requestId: String(requestId) });
    type Call = [service: 'Session' | 'Lock' | 'KV', method: string, req: () => Record<string, unknown>];
    let sessionId = '';
    let closedSession = '';
    let token = '';
    const calls: Call[] = [
      ['Session', 'Open', () => ({ header: h(1), ttlMs: '60000' })],
      ['Lock', 'Acquire', () => ({ header: h(2), lock: 'contract/rf', sessionId, waitTimeoutMs: '0' })],
      ['KV', 'Write', () => ({ header: h(3), lock: 'contract/rf', token, sessionId, ops: [{ type: 'PUT', key: 'contract/rf/k', value: Buffer.from('once') }] })],
      ['Lock', 'Release', () => ({ header: h(4), lock: 'contract/rf', sessionId, token })],
      ['Session', 'Open', () => ({ header: h(5), ttlMs: '60000' })],
      ['Session', 'Close', () => ({ header: h(6), sessionId: closedSession })],
    ];
    const answers: Array<Record<string, unknown>> = [];
    for (const [i, [service, method, req]] of calls.entries()) {
      const answer = await first.raw.call(service, method, req());
      answers.push(answer);
      if (i === 0) sessionId = answer.sessionId as string;
      if (i === 1) token = answer.token as string;
      if (i === 4) closedSession = answer.sessionId as string;
    }
    const before = await first.raw.call('KV', 'Get', { key: 'contract/rf/k' });

    await cluster.kill(first.id);
    const second = await leaderAmong(cluster.nodes.map((n) => n.id).filter((id) => id !== first.id));
    expect(second.id).not.toBe(first.id);
    for (const [i, [service, method, req]] of calls.entries()) {
      expect(await second.raw.call(service, method, req()), `${service}.${method} retried`).toEqual(answers[i]);
    }
    // Applied once: the value and its token are the first write's; the released lock is free.
    expect(await second.raw.call('KV', 'Get', { key: 'contract/rf/k' })).toEqual(before);
    const lock = await second.raw.call('Lock', 'Describe', { lock: 'contract/rf' });
    expect(lock.held).toBe(false);
  });
});

// A stopped node says so: calls fail with UNAVAILABLE and a message telling the client to retry at another
// node (with the same request id for writes, whose outcome is unknown), not with "not the leader".
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/node/api/errors';
import { NodeStoppedError } from '../../src/node/raftDriver';
import { ScriptedCluster } from '../nodesim/scriptedCluster';

describe('a stopped node', () => {
  it('answers reads and writes with UNAVAILABLE: shutting down, retry at another node', async () => {
    const c = new ScriptedCluster(1);
    const leader = await c.elect();
    const runtime = leader.runtime!;
    const stopping = runtime.stop();
    await c.run(3_000);
    await stopping;
    const read = await runtime.context.linearizableRead().catch((err: unknown) => err);
    expect(read).toBeInstanceOf(ApiError);
    expect((read as ApiError).code).toBe(14);
    expect((read as ApiError).message).toBe('this node is shutting down; retry at another node');
    const write = await runtime.context.propose({ type: 'ExpireSession', now: 0, sessionIds: ['gone'] }).catch((err: unknown) => err);
    expect((write as ApiError).message).toMatch(/^this node is shutting down; retry at another node with the same request id/);
    c.stop();
  });

  it('fails a proposal in flight with NodeStoppedError when its storage fails', async () => {
    const c = new ScriptedCluster(1);
    const leader = await c.elect();
    const driver = leader.runtime!.driver;
    const storage = (driver as unknown as { opts: { storage: { persist: () => Promise<void> } } }).opts.storage;
    storage.persist = () => Promise.reject(new Error('disk gone'));
    let outcome: unknown;
    driver.propose(new Uint8Array([1])).catch((err: unknown) => (outcome = err));
    await c.run(1_000, () => outcome !== undefined);
    expect(outcome).toBeInstanceOf(NodeStoppedError);
    expect((outcome as Error).message).toBe('this node stopped after a storage or apply failure');
    c.stop();
  });
});

// The benchmark's ZooKeeper side against a real 3-server ensemble: the lock recipe hands a held lock over only
// when the holder's session ends, the fenced write lands while the lock znode exists and is refused once it is
// gone (nothing applied), sync over the library's connection answers without costing the connection, and stop()
// leaves no JVM and no data behind.
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Client } from 'node-zookeeper-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startZookeeperEnsemble, type ZookeeperTarget } from '../../scripts/bench/zookeeperTarget';
import { sync } from '../../scripts/bench/zookeeper/sync';
import { connect } from '../../scripts/bench/zookeeper/worker';

const work = mkdtempSync(path.join(os.tmpdir(), 'fencelock-zk-test-'));
let target: ZookeeperTarget;
let raw: Client;

beforeAll(async () => {
  target = await startZookeeperEnsemble({ dataRoot: work });
  raw = await connect(target.leaderAddress);
});

afterAll(async () => {
  raw?.close();
  await target?.stop();
  rmSync(work, { recursive: true, force: true });
});

function getData(znode: string): Promise<string | undefined> {
  return new Promise((resolve, reject) => raw.getData(znode, (e, data) => (e ? reject(e) : resolve(data?.toString('utf8')))));
}

function children(znode: string): Promise<string[]> {
  return new Promise((resolve, reject) => raw.getChildren(znode, (e, names) => (e ? reject(e) : resolve(names))));
}

function remove(znode: string): Promise<void> {
  return new Promise((resolve, reject) => raw.remove(znode, -1, (e) => (e ? reject(e) : resolve())));
}

describe('bench: ZooKeeper target', () => {
  it('grants a held lock to the next waiter only when the holder closes, and fences its writes by the lock znode', async () => {
    const a = await target.newWorker(0);
    const b = await target.newWorker(1);
    try {
      await a.holdLock('bench/t');
      let bHolds = false;
      const bAcquired = b.holdLock('bench/t').then(() => (bHolds = true));
      await new Promise((r) => setTimeout(r, 500));
      expect(bHolds, 'b was granted a lock a still holds').toBe(false);
      expect(await children('/locks/bench/t')).toHaveLength(2);

      await a.fencedWrite('bench/t/value', 'from a');
      expect(await getData('/data/bench/t/value')).toBe('from a');

      await a.close(); // its session ends, so its ephemeral lock znode goes
      await bAcquired;
      await b.fencedWrite('bench/t/value', 'from b');
      expect(await getData('/data/bench/t/value')).toBe('from b');

      // b's lock znode disappears (as when its session expires): its next fenced write is refused, nothing lands.
      const [own] = await children('/locks/bench/t');
      await remove(`/locks/bench/t/${own}`);
      await expect(b.fencedWrite('bench/t/value', 'after the lock is gone')).rejects.toThrow(/multi \{check, setData\}.*NO_NODE/);
      expect(await getData('/data/bench/t/value')).toBe('from b');
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('runs sync over the library connection: it answers, the session goes on, and a read of a missing znode fails clearly', async () => {
    for (let i = 0; i < 20; i++) await sync(raw, '/data');
    const worker = await target.newWorker(2);
    try {
      await worker.holdLock('bench/r');
      await worker.fencedWrite('bench/r/value', 'read me');
      await worker.linearizableRead('bench/r/value');
      // The same connection still serves ordinary calls after the syncs: the reply dispatch kept it open.
      expect(await getData('/data/bench/r/value')).toBe('read me');
      await expect(worker.linearizableRead('bench/never-written')).rejects.toThrow(/getData \/data\/bench\/never-written: .*NO_NODE/);
    } finally {
      await worker.close();
    }
  });

  it('stops every server and removes the data', async () => {
    const second = await startZookeeperEnsemble({ dataRoot: work });
    const pids = second.pids;
    expect(pids).toHaveLength(3);
    for (const pid of pids) expect(existsSync(`/proc/${pid}`)).toBe(true);
    await second.stop();
    for (const pid of pids) expect(existsSync(`/proc/${pid}`), `server ${pid} still running`).toBe(false);
    expect(readdirSync(work).filter((d) => d.startsWith('fencelock-bench-zk-'))).toHaveLength(1); // only the shared one
  });
});

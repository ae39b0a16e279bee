// The benchmark's ZooKeeper side against a real 3-server ensemble: the lock recipe hands a held lock over only
// when the holder's session ends, the fenced write lands while the lock znode exists and is refused once it is
// gone (nothing applied), sync over the library's connection answers without costing the connection, the
// semaphore recipe grants no more leases than permits and hands a freed one to the waiter, the read-write lock
// lets readers share and makes writers and later readers wait, and stop() leaves no JVM and no data behind.
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Client } from 'node-zookeeper-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startZookeeperEnsemble, type ZookeeperTarget } from '../../scripts/bench/zookeeperTarget';
import { acquireReadWrite } from '../../scripts/bench/zookeeper/readWriteLock';
import { acquireLease } from '../../scripts/bench/zookeeper/semaphore';
import { sync } from '../../scripts/bench/zookeeper/sync';
import { connect } from '../../scripts/bench/zookeeper/worker';
import { mkdirp } from '../../scripts/bench/zookeeper/znodes';

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

/** Whether `promise` settled within `ms` (it keeps running either way). */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let settled = false;
  void promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  await new Promise((r) => setTimeout(r, ms));
  return settled;
}

/** `n` more sessions on the leader, closed by the returned function. */
async function sessions(n: number): Promise<{ clients: Client[]; closeAll: () => void }> {
  const clients = await Promise.all(Array.from({ length: n }, () => connect(target.leaderAddress)));
  return { clients, closeAll: () => clients.forEach((c) => c.close()) };
}

const WAIT_MS = 20_000;

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

  it('semaphore recipe: no more leases than permits, a freed lease goes to the waiter, and the guarding lock is let go', async () => {
    const { clients, closeAll } = await sessions(3);
    const [a, b, c] = clients;
    const dir = '/semaphores/bench/two';
    const ensure = async (znode: string): Promise<void> => void (await mkdirp(raw, znode));
    try {
      const leaseA = await acquireLease(a, dir, 2, WAIT_MS, ensure);
      const leaseB = await acquireLease(b, dir, 2, WAIT_MS, ensure);
      expect([leaseA.rank, leaseB.rank].sort()).toEqual([0, 1]);
      const third = acquireLease(c, dir, 2, WAIT_MS, ensure);
      expect(await settlesWithin(third, 500), 'a third lease of two was granted').toBe(false);
      // The waiter created its lease and keeps the lock that guards lease creation while it waits.
      expect(await children(`${dir}/leases`)).toHaveLength(3);
      expect(await children(`${dir}/locks`)).toHaveLength(1);

      await remove(leaseA.znode);
      const leaseC = await third;
      expect(leaseC.rank).toBeLessThan(2);
      expect(await children(`${dir}/leases`)).toHaveLength(2);
      expect(await children(`${dir}/locks`)).toEqual([]);
    } finally {
      closeAll();
    }
  });

  it("semaphore cycle: the worker's fenced write lands on its slot's key and its lease is gone after", async () => {
    const worker = await target.newWorker(3);
    try {
      await worker.permitCycle!('bench/cycle', 4);
      expect(await getData('/data/bench/cycle/slot-0')).toMatch(/^holder \/semaphores\/bench\/cycle\/leases\/lease-\d{10}$/);
      expect(await children('/semaphores/bench/cycle/leases')).toEqual([]);
    } finally {
      await worker.close();
    }
  });

  it('read-write lock recipe: readers share it, a writer waits for them, a reader after a waiting writer waits for it', async () => {
    const { clients, closeAll } = await sessions(4);
    const [r1, r2, w, r3] = clients;
    const dir = '/rwlocks/bench/rw-test';
    await mkdirp(raw, dir);
    try {
      const read1 = await acquireReadWrite(r1, dir, false, WAIT_MS);
      const read2 = await acquireReadWrite(r2, dir, false, WAIT_MS);
      const write = acquireReadWrite(w, dir, true, WAIT_MS);
      expect(await settlesWithin(write, 500), 'the writer got the lock while readers held it').toBe(false);
      const read3 = acquireReadWrite(r3, dir, false, WAIT_MS);
      expect(await settlesWithin(read3, 500), 'a reader got ahead of an earlier waiting writer').toBe(false);

      await remove(read1);
      expect(await settlesWithin(write, 300), 'the writer got the lock while a reader held it').toBe(false);
      await remove(read2);
      const written = await write;
      expect(await settlesWithin(read3, 300), 'a reader got the lock while the writer held it').toBe(false);
      await remove(written);
      await read3;
    } finally {
      closeAll();
    }
  });

  it("read-write cycles: the worker's exclusive cycle writes fenced, its shared cycle reads it, and no znode is left", async () => {
    const worker = await target.newWorker(4);
    try {
      await worker.readWriteCycle!('bench/rwc', true);
      expect(await getData('/data/bench/rwc/value')).toMatch(/^holder \/rwlocks\/bench\/rwc\/write-\d{10}$/);
      await worker.readWriteCycle!('bench/rwc', false);
      expect(await children('/rwlocks/bench/rwc')).toEqual([]);
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

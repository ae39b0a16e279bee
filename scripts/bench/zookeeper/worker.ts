// One benchmark client of ZooKeeper: one node-zookeeper-client connection, so one ZooKeeper session, like one
// fencelock session per worker. Locks are ZooKeeper's standard lock recipe (./lock.ts), semaphores and
// read-write locks Curator's shapes of them (./semaphore.ts, ./readWriteLock.ts). A fenced write is a multi
// that applies the write only while the holder's lock (or lease) znode still exists.
import { createClient, type Client } from 'node-zookeeper-client';
import type { BenchWorker } from '../target';
import { acquireLock } from './lock';
import { acquireReadWrite } from './readWriteLock';
import { acquireLease } from './semaphore';
import { sync } from './sync';
import { call, mkdirp, remove } from './znodes';

/** Lock znodes and data znodes live in disjoint trees, as etcd's lock and data keys do. */
const LOCKS_ROOT = '/locks';
const SEMAPHORES_ROOT = '/semaphores';
const READ_WRITE_LOCKS_ROOT = '/rwlocks';
const DATA_ROOT = '/data';
/** Created once per ensemble, before any worker opens. */
export const ZNODE_ROOTS = [LOCKS_ROOT, SEMAPHORES_ROOT, READ_WRITE_LOCKS_ROOT, DATA_ROOT];
const CONNECT_TIMEOUT_MS = 10_000;
// A waiter of the hot lock queues behind every other client; the other systems' acquires wait as long.
const ACQUIRE_WAIT_MS = 30_000;
const CLOSE_TIMEOUT_MS = 5_000;

/** A client with a session on `address`; rejects (and closes it) when none is established in time. */
export function connect(address: string): Promise<Client> {
  // The session timeout is the library's default (30 s), within what the servers grant by default (4-40 s).
  const client = createClient(address);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      client.close();
      reject(new Error(`no ZooKeeper session on ${address} within ${CONNECT_TIMEOUT_MS / 1000} s`));
    }, CONNECT_TIMEOUT_MS);
    client.once('connected', () => {
      clearTimeout(timer);
      resolve(client);
    });
    client.connect();
  });
}

export class ZookeeperWorker implements BenchWorker {
  /** The lock znode taken by holdLock. */
  private held: string | undefined;
  /** Znodes this worker created or found, so that each is made sure of once per worker. */
  private readonly known = new Set<string>();
  private failure: Error | undefined;
  private closed = false;

  private constructor(private readonly client: Client) {
    client.once('expired', () => (this.failure ??= new Error('ZooKeeper session expired: its lock znodes are gone')));
  }

  static async open(address: string): Promise<ZookeeperWorker> {
    return new ZookeeperWorker(await connect(address));
  }

  private check(): void {
    if (this.failure) throw this.failure;
  }

  private async ensure(znode: string): Promise<void> {
    if (this.known.has(znode)) return;
    await mkdirp(this.client, znode);
    this.known.add(znode);
  }

  /** The lock recipe on `lock`'s znode: resolves with this worker's lock znode once it holds the lock. */
  private async acquire(lock: string): Promise<string> {
    const dir = `${LOCKS_ROOT}/${lock}`;
    await this.ensure(dir);
    return acquireLock(this.client, dir, ACQUIRE_WAIT_MS);
  }

  private remove(znode: string): Promise<void> {
    return remove(this.client, znode);
  }

  /**
   * The fenced write: one multi that applies setData only if the lock znode still exists. Existence is enough
   * to name this holder: a sequential name is never reused under its parent, and an ephemeral znode is gone once
   * its session is (the library would also turn a version check of 0 into -1, "any version").
   */
  private async fenced(lockZnode: string, key: string, value: string): Promise<void> {
    const resource = `${DATA_ROOT}/${key}`;
    await this.ensure(resource);
    await call('multi {check, setData}', `${lockZnode} -> ${resource}`, (done) =>
      this.client.transaction().check(lockZnode).setData(resource, Buffer.from(value), -1).commit(done),
    );
  }

  async lockCycle(lock: string): Promise<void> {
    this.check();
    const own = await this.acquire(lock);
    try {
      await this.fenced(own, `${lock}/value`, `holder ${own}`);
    } finally {
      // Released even when the write failed, or every later cycle of this worker would wait on itself.
      await this.remove(own);
    }
  }

  async holdLock(lock: string): Promise<void> {
    this.check();
    this.held = await this.acquire(lock);
  }

  async fencedWrite(key: string, value: string): Promise<void> {
    this.check();
    if (!this.held) throw new Error('fencedWrite before holdLock');
    await this.fenced(this.held, key, value);
  }

  async permitCycle(semaphore: string, permits: number): Promise<void> {
    this.check();
    const lease = await acquireLease(this.client, `${SEMAPHORES_ROOT}/${semaphore}`, permits, ACQUIRE_WAIT_MS, (znode) => this.ensure(znode));
    try {
      await this.fenced(lease.znode, `${semaphore}/slot-${lease.rank}`, `holder ${lease.znode}`);
    } finally {
      await this.remove(lease.znode);
    }
  }

  async readWriteCycle(lock: string, exclusive: boolean): Promise<void> {
    this.check();
    const dir = `${READ_WRITE_LOCKS_ROOT}/${lock}`;
    await this.ensure(dir);
    const own = await acquireReadWrite(this.client, dir, exclusive, ACQUIRE_WAIT_MS);
    try {
      if (exclusive) await this.fenced(own, `${lock}/value`, `holder ${own}`);
      else await this.linearizableRead(`${lock}/value`);
    } finally {
      await this.remove(own);
    }
  }

  /** sync then getData: a read that sees every write completed before the sync, ZooKeeper's linearizable read. */
  async linearizableRead(key: string): Promise<void> {
    this.check();
    const znode = `${DATA_ROOT}/${key}`;
    await sync(this.client, znode).catch((e: Error) => {
      throw new Error(`ZooKeeper sync ${znode}: ${e.message}`);
    });
    await call('getData', znode, (done) => this.client.getData(znode, done));
  }

  /** Closing the session deletes its ephemeral znodes, so a lock taken by holdLock is released too. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, CLOSE_TIMEOUT_MS);
      this.client.once('disconnected', () => {
        clearTimeout(timer);
        resolve();
      });
      this.client.close();
    });
  }
}

// A counting semaphore on znodes in the shape of Curator's InterProcessSemaphoreV2: under the semaphore's
// znode, `locks` holds a lock (the standard recipe) that serializes lease creation, and `leases` the
// ephemeral sequential lease znodes. An acquirer takes the lock, creates its lease, and while there are more
// leases than permits waits for any change of the leases (a release), still holding the lock, so the waiters
// queue fairly on the lock and only the head of the queue watches the leases; then it releases the lock. The
// lease is the permit: deleting it (or the session ending) releases it.
import type { Client } from 'node-zookeeper-client';
import { acquireLock } from './lock';
import { createEphemeralSequential, remove, watchChildren, within } from './znodes';

const LEASE_PREFIX = 'lease-';

export interface Lease {
  /** The lease znode: a fenced write checks that it still exists. */
  znode: string;
  /**
   * The lease's rank among the leases when it was granted, below `permits`. The recipe has no slots; the rank
   * stands in for one so the fenced writes go to as many keys as fencelock's slots (two live leases may share
   * a rank, which ZooKeeper's unbound keys allow).
   */
  rank: number;
}

/** Takes one of `permits` leases of the semaphore at `dir`; `ensure` makes sure a znode exists. */
export async function acquireLease(client: Client, dir: string, permits: number, waitMs: number, ensure: (znode: string) => Promise<void>): Promise<Lease> {
  const locks = `${dir}/locks`;
  const leases = `${dir}/leases`;
  await ensure(locks);
  await ensure(leases);
  const deadline = Date.now() + waitMs;
  const lock = await acquireLock(client, locks, waitMs);
  try {
    const znode = await createEphemeralSequential(client, leases, LEASE_PREFIX);
    const name = znode.slice(leases.length + 1);
    try {
      for (;;) {
        const { children, changed } = await watchChildren(client, leases);
        const rank = children.indexOf(name);
        if (rank < 0) throw new Error(`lease ${znode} is gone (session expired?)`);
        if (children.length <= permits) return { znode, rank };
        await within(changed, Math.max(0, deadline - Date.now()), `no lease of ${dir} free (${children.length - 1} held)`);
      }
    } catch (e) {
      await remove(client, znode).catch(() => undefined);
      throw e;
    }
  } finally {
    await remove(client, lock);
  }
}

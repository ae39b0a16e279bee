// ZooKeeper's standard lock recipe (Curator's InterProcessMutex shape): an ephemeral sequential znode under the
// lock's znode; the lowest sequence holds the lock, every other waits for the deletion of the one just below
// its own (no herd on a release).
import type { Client } from 'node-zookeeper-client';
import { createEphemeralSequential, remove, sortedChildren, untilDeleted, within } from './znodes';

const LOCK_PREFIX = 'lock-';

/** Resolves with this session's lock znode under `dir` (which exists) once it is the lowest there. */
export async function acquireLock(client: Client, dir: string, waitMs: number): Promise<string> {
  const own = await createEphemeralSequential(client, dir, LOCK_PREFIX);
  const ownName = own.slice(dir.length + 1);
  try {
    for (;;) {
      const children = (await sortedChildren(client, dir)).filter((c) => c.startsWith(LOCK_PREFIX));
      const i = children.indexOf(ownName);
      if (i < 0) throw new Error(`lock znode ${own} is gone (session expired?)`);
      if (i === 0) return own;
      // Re-checking the children after the deletion: the predecessor may have left the queue without holding.
      const predecessor = `${dir}/${children[i - 1]}`;
      await within(untilDeleted(client, predecessor), waitMs, `lock not granted (waiting for ${predecessor})`);
    }
  } catch (e) {
    await remove(client, own).catch(() => undefined);
    throw e;
  }
}

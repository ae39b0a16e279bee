// A read-write lock on znodes in the shape of Curator's InterProcessReadWriteLock: readers and writers create
// ephemeral sequential znodes (`read-`, `write-`) under the lock's znode, in one sequence. A writer holds the
// lock once its znode is the lowest of all, and waits for the one just below its own; a reader holds it once
// no writer's znode is below its own (readers never wait for readers), and waits for the lowest such writer.
import type { Client } from 'node-zookeeper-client';
import { createEphemeralSequential, remove, sortedChildren, untilDeleted, within } from './znodes';

const READ_PREFIX = 'read-';
const WRITE_PREFIX = 'write-';

/** The znode `own` must see deleted before it holds the lock, or undefined when it holds it. */
function blocker(children: string[], own: string, exclusive: boolean): string | undefined {
  const i = children.indexOf(own);
  if (exclusive) return i > 0 ? children[i - 1] : undefined;
  return children.slice(0, i).find((c) => c.startsWith(WRITE_PREFIX));
}

/** Resolves with this session's znode under `dir` (which exists) once it holds the lock in its mode. */
export async function acquireReadWrite(client: Client, dir: string, exclusive: boolean, waitMs: number): Promise<string> {
  const own = await createEphemeralSequential(client, dir, exclusive ? WRITE_PREFIX : READ_PREFIX);
  const ownName = own.slice(dir.length + 1);
  const deadline = Date.now() + waitMs;
  try {
    for (;;) {
      const children = await sortedChildren(client, dir);
      if (!children.includes(ownName)) throw new Error(`lock znode ${own} is gone (session expired?)`);
      const waitFor = blocker(children, ownName, exclusive);
      if (waitFor === undefined) return own;
      await within(untilDeleted(client, `${dir}/${waitFor}`), Math.max(0, deadline - Date.now()), `${exclusive ? 'write' : 'read'} lock not granted (waiting for ${dir}/${waitFor})`);
    }
  } catch (e) {
    await remove(client, own).catch(() => undefined);
    throw e;
  }
}

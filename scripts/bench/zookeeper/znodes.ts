// Promise forms of the node-zookeeper-client calls the benchmark's recipes share (lock, semaphore, read-write
// lock): each error names the operation and the znode.
import { CreateMode, type Client, type Exception } from 'node-zookeeper-client';

/** A call of the callback-style client as a promise; its error names the operation and the znode. */
export function call<T>(what: string, znode: string, run: (done: (error: Exception | null, result: T) => void) => void): Promise<T> {
  return new Promise((resolve, reject) =>
    run((error, result) => (error ? reject(new Error(`ZooKeeper ${what} ${znode}: ${error.message}`)) : resolve(result))),
  );
}

export function mkdirp(client: Client, znode: string): Promise<string> {
  return call('mkdirp', znode, (done) => client.mkdirp(znode, done));
}

/** Creates `<dir>/<prefix><sequence>`, ephemeral; resolves with its full path. */
export function createEphemeralSequential(client: Client, dir: string, prefix: string): Promise<string> {
  const znode = `${dir}/${prefix}`;
  return call<string>('create', znode, (done) => client.create(znode, null, CreateMode.EPHEMERAL_SEQUENTIAL, done));
}

export function remove(client: Client, znode: string): Promise<void> {
  return call<void>('delete', znode, (done) => client.remove(znode, -1, (error) => done(error, undefined)));
}

/** The children of `dir` sorted by their sequence number (ZooKeeper's 10-digit suffix, whatever the prefix). */
export async function sortedChildren(client: Client, dir: string): Promise<string[]> {
  return bySequence(await call<string[]>('getChildren', dir, (done) => client.getChildren(dir, done)));
}

function bySequence(names: string[]): string[] {
  const sequence = (name: string): string => name.slice(-10);
  return [...names].sort((a, b) => (sequence(a) < sequence(b) ? -1 : sequence(a) > sequence(b) ? 1 : 0));
}

/** The children of `dir` (sorted by sequence) and a promise that resolves on the next change of them. */
export async function watchChildren(client: Client, dir: string): Promise<{ children: string[]; changed: Promise<void> }> {
  let fire!: () => void;
  const changed = new Promise<void>((resolve) => (fire = resolve));
  const names = await call<string[]>('getChildren', dir, (done) => client.getChildren(dir, () => fire(), done));
  return { children: bySequence(names), changed };
}

/** Resolves once `znode` is gone (or already was); any event on the watch means: look again. */
export async function untilDeleted(client: Client, znode: string): Promise<void> {
  let fire!: () => void;
  const event = new Promise<void>((resolve) => (fire = resolve));
  const stat = await call('exists', znode, (done) => client.exists(znode, () => fire(), done));
  if (stat) await event;
}

/** `promise`, or a rejection saying what was not done once `ms` have passed. */
export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} within ${ms / 1000} s`)), ms)));
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

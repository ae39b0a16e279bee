// Waiting for the cluster to reach a state, and saying why it did not: the nodes' process states, the cut
// links and the tail of the cluster log go into the error, since a chaos failure is hard to replay.
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { LocalCluster } from '../harness';

/** Polls `fn` every 50 ms until it returns a value; throws after `timeoutMs` with diagnose(cluster). */
export async function waitFor<T>(cluster: LocalCluster, what: string, fn: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastErr: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (err) {
      lastErr = err;
    }
    await sleep(50);
  }
  throw new Error(`chaos: timed out after ${timeoutMs} ms waiting for ${what}${lastErr ? `: ${String(lastErr)}` : ''}\n${diagnose(cluster)}`);
}

/** Node process states, faulty links and the tail of the cluster log, for a failure message. */
export function diagnose(cluster: LocalCluster): string {
  const states = cluster.nodes
    .map((n) => `${n.id} ${n.paused ? 'paused' : cluster.isRunning(n.id) ? 'running' : `down (exit ${n.process?.exitCode ?? n.process?.signalCode ?? '?'})`}`)
    .join(', ');
  let tail = '';
  try {
    tail = readFileSync(path.join(cluster.dir, 'cluster.log'), 'utf8').split('\n').slice(-30).join('\n');
  } catch {
    /* no log yet */
  }
  return `nodes: ${states}; links: ${cluster.links().filter((p) => p.faulty).map((p) => p.describe()).join('; ') || 'all healed'}\ncluster.log (tail):\n${tail}`;
}

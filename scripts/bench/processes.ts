// What the benchmark targets need to run a cluster of child processes: ports, exits, stopping, log tails.
import type { ChildProcess } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import * as net from 'node:net';

/** A port free on 127.0.0.1 right now (another process may still take it before it is bound). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

export function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/** Resolves true once the child exited, false when it is still running after `ms`. */
export function waitExit(child: ChildProcess, ms: number): Promise<boolean> {
  if (exited(child)) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(exited(child)), ms);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/** SIGTERM to every child still running, then SIGKILL to those still running after `graceMs`; waits for their exits. */
export async function terminate(children: ChildProcess[], graceMs = 3_000): Promise<void> {
  for (const c of children) if (!exited(c)) c.kill('SIGTERM');
  await Promise.all(
    children.map(async (c) => {
      if (await waitExit(c, graceMs)) return;
      c.kill('SIGKILL');
      await waitExit(c, 3_000);
    }),
  );
}

/**
 * process.exit() and uncaught errors skip a target's stop(), and its servers must not outlive the benchmark:
 * on exit, SIGKILL every child still running and remove `dir`. Returns what removes the hook (for stop()).
 */
export function killOnExit(children: ChildProcess[], dir: string): () => void {
  const hook = (): void => {
    for (const c of children) if (!exited(c)) c.kill('SIGKILL');
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // best effort: a server may still be writing while it dies
    }
  };
  process.on('exit', hook);
  return () => process.removeListener('exit', hook);
}

/** The last lines of a log file, for an error message that says why a process did not come up. */
export function logTail(file: string, lines = 15): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch (e) {
    return `(cannot read ${file}: ${(e as Error).message})`;
  }
}

// What the benchmark targets need to run a cluster of child processes: ports, exits, stopping, log tails.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';

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

/** The guardian script, found from the sources (tests) and from the build (dist/scripts/bench) alike. */
function guardianScript(): string {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json'))) return path.join(dir, 'scripts/bench/guardian.cjs');
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${__dirname}: cannot find the bench guardian`);
  }
}

/** Field 22 of /proc/<pid>/stat (start time in clock ticks since boot): names one process, unlike a pid. */
export function processStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[22 - 3];
  } catch {
    return undefined;
  }
}

/**
 * Makes sure a cluster's servers cannot outlive the benchmark. Two layers: an exit hook SIGKILLs them and removes
 * the data when process.exit() or an uncaught error skips the target's stop(); and a guardian process
 * (guardian.cjs) does the same when the benchmark dies without running any hook (SIGKILL, the OOM killer): it
 * holds the read end of a pipe from this process, which the kernel closes whenever this process dies, and
 * knows each server by pid and start time. release() after a clean stop lets the guardian go without acting.
 */
export class ServerGuard {
  private readonly children: ChildProcess[] = [];
  private readonly guardian: ChildProcess;
  private readonly exitHook = (): void => {
    for (const c of this.children) if (!exited(c)) c.kill('SIGKILL');
    try {
      rmSync(this.dir, { recursive: true, force: true });
    } catch {
      // best effort: a server may still be writing while it dies
    }
  };

  constructor(private readonly dir: string) {
    this.guardian = spawn(process.execPath, [guardianScript(), dir], { stdio: ['pipe', 'ignore', 'ignore'] });
    // A guardian that could not start or died leaves the exit hook; it must not crash the benchmark.
    this.guardian.on('error', () => undefined);
    this.guardian.stdin!.on('error', () => undefined);
    // Neither the guardian nor its pipe keeps this process alive.
    this.guardian.unref();
    (this.guardian.stdin as net.Socket).unref();
    process.on('exit', this.exitHook);
  }

  /** Call right after spawning each server. */
  watch(child: ChildProcess): void {
    this.children.push(child);
    const start = child.pid === undefined ? undefined : processStartTime(child.pid);
    if (start !== undefined) this.guardian.stdin!.write(`${child.pid} ${start}\n`);
  }

  /**
   * After a clean stop (every server exited, the data removed): the guardian exits without acting. Waits for
   * that (briefly), so that a stopped target leaves no process behind, not even for a moment.
   */
  async release(): Promise<void> {
    process.removeListener('exit', this.exitHook);
    this.guardian.stdin!.end('release\n');
    await waitExit(this.guardian, 2_000);
  }
}

/** The last lines of a log file, for an error message that says why a process did not come up. */
export function logTail(file: string, lines = 15): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch (e) {
    return `(cannot read ${file}: ${(e as Error).message})`;
  }
}

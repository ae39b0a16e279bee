// Processes a test starts (the CLI, workers): their output as it arrives, their exit, and one place that
// kills whatever a test left running (call killAll in afterEach).
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import * as path from 'node:path';
import { PROJECT_ROOT } from './harness';

export const CLI = path.join(PROJECT_ROOT, 'dist/src/cli/main.js');

export interface Running {
  child: ChildProcessWithoutNullStreams;
  exited: Promise<number | null>;
  out(): string;
  err(): string;
  /** The first line on stdout; rejects if the process exits before printing one. */
  firstLine: Promise<string>;
}

export class ChildProcesses {
  private readonly children: ChildProcessWithoutNullStreams[] = [];

  /** Starts `node ARGS` with stdin a pipe the test holds open. */
  node(args: string[]): Running {
    const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    this.children.push(child);
    return watch(child);
  }

  /** Starts the CLI against `endpoints`. */
  cli(endpoints: string[], args: string[]): Running {
    return this.node([CLI, '--endpoints', endpoints.join(','), ...args]);
  }

  /** Adopts a process started elsewhere, so that killAll stops it too. */
  adopt(child: ChildProcessWithoutNullStreams): void {
    this.children.push(child);
  }

  killAll(): void {
    for (const c of this.children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  }
}

function watch(child: ChildProcessWithoutNullStreams): Running {
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const firstLine = new Promise<string>((resolve, reject) => {
    child.stdout.on('data', () => {
      const nl = out.indexOf('\n');
      if (nl >= 0) resolve(out.slice(0, nl));
    });
    child.on('exit', (code) => reject(new Error(`exited ${code} before printing a line: ${out} ${err}`)));
  });
  firstLine.catch(() => undefined);
  return { child, exited, out: () => out, err: () => err, firstLine };
}

/** The process's exit code, or 'running' if it has not exited within `ms`. */
export function exitWithin(r: Running, ms: number): Promise<number | null | 'running'> {
  return Promise.race([r.exited, new Promise<'running'>((res) => setTimeout(() => res('running'), ms))]);
}

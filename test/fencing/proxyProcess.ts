// `fencelock proxy` as a real process (the compiled CLI), and a service behind it that checks nothing and
// records every request that reaches it.
import { spawn, type ChildProcess } from 'node:child_process';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { PROJECT_ROOT } from '../integration/harness';

export const CLI_MAIN = path.join(PROJECT_ROOT, 'dist/src/cli/main.js');

/** For tests of the proxy's own rules with made-up tokens: no cluster to check claims with. */
export const UNCHECKED = ['--unchecked-claims'];

export interface ProxyProcess {
  url: string;
  child: ChildProcess;
  stderr: () => string;
  /** SIGTERM (graceful) or SIGKILL (a crash), and the exit. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const c of running) c.kill('SIGKILL');
});

export function startProxy(target: string, stateFile: string, extra: string[] = [], port = 0): Promise<ProxyProcess> {
  const child = spawn(process.execPath, [CLI_MAIN, 'proxy', '--listen', `127.0.0.1:${port}`, '--target', target, '--state', stateFile, ...extra], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => (running.delete(child), resolve(code))));
  return new Promise((resolve, reject) => {
    const lines = readline.createInterface({ input: child.stdout! });
    lines.once('line', (line) => {
      const m = /listening on ([\d.]+:\d+)/.exec(line);
      if (!m) return reject(new Error(`unexpected proxy output: ${line}`));
      resolve({
        url: `http://${m[1]}`,
        child,
        stderr: () => err,
        stop: async (signal = 'SIGTERM') => {
          if (child.exitCode === null && child.signalCode === null) child.kill(signal);
          return exited;
        },
      });
    });
    void exited.then((code) => reject(new Error(`proxy exited (${code}) before listening: ${err}`)));
  });
}

export interface Received {
  method: string;
  path: string;
  token: string | undefined;
  step: string | undefined;
  body: string;
  start: number;
  end: number;
}

/**
 * A service that cannot check tokens: it applies (records) whatever reaches it, after `delayMs(req)`, and
 * answers `statusOf(path)` (default 200).
 */
export async function startBlindService(
  delayMs: (path: string, body: string) => number = () => 0,
  statusOf: (path: string) => number = () => 200,
): Promise<{ url: string; received: Received[]; close(): Promise<void> }> {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      const start = performance.now();
      setTimeout(() => {
        received.push({ method: req.method ?? '', path: req.url ?? '', token: req.headers['fencing-token'] as string | undefined, step: req.headers['fencing-step'] as string | undefined, body, start, end: performance.now() });
        res.writeHead(statusOf(req.url ?? ''), { 'content-type': 'application/json' });
        res.end(JSON.stringify({ applied: body }));
      }, delayMs(req.url ?? '', body));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';

describe('GrpcPeerTransport.close()', () => {
  it('leaves no open handles: a process that closed its transports and servers exits by itself', async () => {
    const dir = path.join(__dirname, 'fixtures');
    const child = spawn(process.execPath, [path.join(dir, 'run-ts.cjs'), path.join(dir, 'closeScenario.ts')], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<{ code: number | null; at: number }>((resolve) =>
      child.on('exit', (code) => resolve({ code, at: Date.now() })));
    const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    try {
      const { code, at } = await exited;
      expect(stderr).toBe('');
      expect(code).toBe(0);
      const closedAt = Number(/closed (\d+)/.exec(stdout)?.[1]);
      expect(closedAt).toBeGreaterThan(0);
      // Exits promptly once closed: nothing keeps the event loop alive.
      expect(at - closedAt).toBeLessThan(2_000);
    } finally {
      clearTimeout(killer);
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});

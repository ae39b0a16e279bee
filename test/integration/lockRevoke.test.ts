// Lock.Revoke over real processes (issue 34, "force release"): an admin revokes the grant of a holder whose
// process is paused (SIGSTOP); the waiter gets the lock with a higher token; after SIGCONT the holder's
// client learns REVOKED from its next renewal, its late fenced write is refused, and its session, still
// open, may acquire again. The revoke is audited (the node's log, the Watch event). And the CLI:
// `fencelock revoke`, and `fencelock lock NAME -- CMD` exiting 4 when its grant is revoked.
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FenceLockClient, type LockEvent } from '../../src/client';
import { ChildProcesses, CLI } from './childProcesses';
import { clusterWithLeader } from './clusterWithLeader';
import { eventually, LocalCluster, PROJECT_ROOT, runNode } from './harness';

const WORKER = path.join(PROJECT_ROOT, 'dist/test/integration/revokeHolderWorker.js');

let cluster: LocalCluster;
let client: FenceLockClient;
const children = new ChildProcesses();

/** A spawned process and the JSON lines it printed so far. */
interface Worker {
  child: ChildProcessWithoutNullStreams;
  lines: Array<Record<string, string>>;
  line(k: string, timeoutMs?: number): Promise<Record<string, string>>;
}

function startWorker(lock: string): Worker {
  const { child } = children.node([WORKER, cluster.endpoints.join(','), lock]);
  const lines: Array<Record<string, string>> = [];
  let buf = '';
  child.stdout.on('data', (d: Buffer) => {
    buf += d.toString();
    for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
      lines.push(JSON.parse(buf.slice(0, nl)) as Record<string, string>);
      buf = buf.slice(nl + 1);
    }
  });
  const line = (k: string, timeoutMs = 15_000): Promise<Record<string, string>> => eventually(() => lines.find((l) => l.k === k), timeoutMs, `worker line ${k}`);
  return { child, lines, line };
}

function cli(args: string[], timeoutMs = 30_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runNode([CLI, '--endpoints', cluster.endpoints.join(','), ...args], { timeoutMs });
}

beforeAll(async () => {
  ({ cluster, client } = await clusterWithLeader());
}, 60_000);

afterEach(() => children.killAll());

afterAll(async () => {
  await client?.close();
  await cluster?.destroy();
});

describe('Lock.Revoke', () => {
  it('revokes a paused holder: the waiter gets a higher token; after SIGCONT the holder learns REVOKED, its late write is refused, its session acquires again', async () => {
    const lock = 'revoke/paused';
    const worker = startWorker(lock);
    const token = BigInt((await worker.line('holding')).token!);
    const events: LockEvent[] = [];
    const watch = client.watch(lock, (e) => events.push(e));
    const waiterSession = await client.openSession({ ttlMs: 10_000 });
    const waiting = waiterSession.acquire(lock, { waitTimeoutMs: 20_000 });
    await eventually(async () => ((await client.describe(lock)).waiters.length === 1 ? true : undefined), 10_000, 'the waiter queued');

    worker.child.kill('SIGSTOP');
    try {
      const r = await client.revokeLock(lock, { reason: 'holder paused' });
      expect(r.endedToken).toBe(token);
      expect(r.nextHolderSession).toBe(waiterSession.publicId);
      expect(r.nextToken).toBeGreaterThan(token);
      const next = await waiting;
      expect(next.token).toBe(r.nextToken);
      await next.write([{ put: `${lock}/k`, value: 'new holder' }]);
      await eventually(() => events.find((e) => e.kind === 'REVOKED'), 10_000, 'the REVOKED watch event');
      expect(events.find((e) => e.kind === 'REVOKED')).toMatchObject({ lock, token, reason: 'holder paused' });
      await eventually(() => events.find((e) => e.kind === 'GRANTED' && e.token === r.nextToken), 10_000, 'the handover GRANTED event');
    } finally {
      worker.child.kill('SIGCONT');
    }

    expect((await worker.line('lost')).reason).toBe('REVOKED');
    worker.child.stdin.write('write\n');
    expect((await worker.line('write')).reason).toBe('STALE_TOKEN');
    expect(Buffer.from((await client.get(`${lock}/k`)).value ?? []).toString()).toBe('new holder');

    // The holder's session is still open: once the lock is free it acquires it again, with a higher token.
    const nextHolder = (await client.describe(lock)).token;
    await waiterSession.close();
    worker.child.stdin.write('reacquire\n');
    expect(BigInt((await worker.line('reacquired')).token!)).toBeGreaterThan(nextHolder);
    worker.child.stdin.write('stop\n');
    watch.cancel();

    // Every node logged the revoke as an audit line: who, which grant, why.
    await eventually(() => {
      const audit = readFileSync(path.join(cluster.dir, 'cluster.log'), 'utf8').split('\n').filter((l) => l.includes('"audit":"lock_revoked"') && l.includes(lock));
      return audit.length >= 1 ? audit : undefined;
    }, 10_000, 'an audit line').then((audit) => {
      expect(audit[0]).toContain(`"token":"${token}"`);
      expect(audit[0]).toContain('"reason":"holder paused"');
      expect(audit[0]).toContain('"by":"');
    });
  }, 90_000);

  it('fencelock revoke: a lock nobody holds is refused (exit 2, LOCK_NOT_HELD); `lock NAME -- CMD` whose grant is revoked stops CMD and exits 4', async () => {
    const free = await cli(['revoke', 'revoke/free']);
    expect(free.code).toBe(2);
    expect(free.stderr).toContain('LOCK_NOT_HELD');

    const lock = 'revoke/cmd';
    const { child: holder } = children.cli(cluster.endpoints, ['lock', lock, '--ttl', '3000', '--', process.execPath, '-e', 'setTimeout(() => {}, 60000)']);
    let err = '';
    holder.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const exited = new Promise<number | null>((resolve) => holder.on('exit', (code) => resolve(code)));
    const d = await eventually(async () => {
      const desc = await client.describe(lock);
      return desc.held ? desc : undefined;
    }, 15_000, 'the CLI holding the lock');

    const wrong = await cli(['revoke', lock, '--token', String(d.token + 1n)]);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('WRONG_TOKEN');

    const r = await cli(['--json', 'revoke', lock, '--reason', 'maintenance', '--token', String(d.token)]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ lock, endedToken: d.token.toString(), nextHolderSession: '' });
    const code = await Promise.race([exited, new Promise<'running'>((res) => setTimeout(() => res('running'), 15_000))]);
    expect(code).toBe(4);
    expect(err).toContain('revoked');
  }, 90_000);
});

// `fencelock locks [PREFIX]` (issue 35) as a real process against a real node: the table (LOCK HOLDER TOKEN
// HELD WAITERS CLIENT, the holder's client name and labels last), --json, and --watch, which refreshes every
// second until SIGINT and then exits 0.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { hostname } from 'node:os';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FenceLockClient, type Session } from '../../src/client';
import { eventually, LocalCluster, PROJECT_ROOT } from './harness';

const CLI = path.join(PROJECT_ROOT, 'dist/src/cli/main.js');

let cluster: LocalCluster;
let client: FenceLockClient;
let holder: Session;
let waiter: Session;
const tokens = new Map<string, bigint>();
const children: ChildProcessWithoutNullStreams[] = [];

interface Run {
  child: ChildProcessWithoutNullStreams;
  exited: Promise<number | null>;
  out: () => string;
  err: () => string;
}

function run(args: string[]): Run {
  const child = spawn(process.execPath, [CLI, '--endpoints', cluster.endpoints.join(','), ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, out: () => out, err: () => err };
}

async function finished(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  const r = run(args);
  const code = await r.exited;
  return { code, out: r.out(), err: r.err() };
}

beforeAll(async () => {
  cluster = await LocalCluster.create({ size: 1 });
  cluster.startAll();
  client = new FenceLockClient({ endpoints: cluster.endpoints });
  await eventually(async () => ((await client.statusAll()).some((s) => s.ok && s.status.role === 'leader') ? true : undefined), 15_000, 'a leader');
  holder = await client.openSession({ ttlMs: 30_000, name: 'lister test', labels: { team: 'infra', zone: 'eu 1' } });
  waiter = await client.openSession({ ttlMs: 30_000 });
  for (const name of ['cli/a', 'cli/b']) tokens.set(name, (await holder.acquire(name)).token);
  await holder.acquire('other/x');
  // A waiter on cli/b, queued until the end of the test file (its wait is withdrawn when the session closes).
  void waiter.acquire('cli/b', { waitTimeoutMs: 60_000 }).catch(() => undefined);
  await eventually(async () => ((await client.describe('cli/b')).waiters.length === 1 ? true : undefined), 10_000, 'the waiter queued');
}, 60_000);

afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

afterAll(async () => {
  await waiter?.close().catch(() => undefined);
  await holder?.close().catch(() => undefined);
  await client?.close();
  await cluster?.destroy();
});

describe('client.locks()', () => {
  it('walks every page in name order (page size 1 here), each lock once', async () => {
    const seen: string[] = [];
    for await (const l of client.locks({ prefix: 'cli/', limit: 1 })) seen.push(l.lock);
    expect(seen).toEqual(['cli/a', 'cli/b']);
    const first = await client.listLocks({ prefix: 'cli/', limit: 1 });
    expect([first.locks.map((l) => l.lock), first.more]).toEqual([['cli/a'], true]);
  });
});

describe('fencelock locks', () => {
  it('prints a table of the locks under the prefix: holder handle, token, how long held, waiters', async () => {
    const r = await finished(['locks', 'cli/']);
    expect([r.code, r.err]).toEqual([0, '']);
    const lines = r.out.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^LOCK\s+HOLDER\s+TOKEN\s+HELD\s+WAITERS\s+CLIENT$/);
    expect(lines).toHaveLength(3); // other/x is not under the prefix
    // The client library adds host and pid to the labels a session is opened with.
    const client = `"lister test" host=${hostname()} pid=${process.pid} team=infra zone="eu 1"`;
    expect(lines[1]).toMatch(new RegExp(`^cli/a\\s+${holder.publicId}\\s+${tokens.get('cli/a')}\\s+\\d+(ms|s)\\s+-\\s+${client}$`));
    expect(lines[2]).toMatch(new RegExp(`^cli/b\\s+${holder.publicId}\\s+${tokens.get('cli/b')}\\s+\\d+(ms|s)\\s+${waiter.publicId}\\(\\d+(ms|s)\\)\\s+${client}$`));
  });

  it('prints the same locks as JSON with --json', async () => {
    const r = await finished(['--json', 'locks', 'cli/']);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.out) as { locks: Array<Record<string, unknown>> };
    expect(doc.locks.map((l) => [l.lock, l.held, l.holderSession, l.token, l.waiterCount])).toEqual([
      ['cli/a', true, holder.publicId, String(tokens.get('cli/a')), 0],
      ['cli/b', true, holder.publicId, String(tokens.get('cli/b')), 1],
    ]);
    expect(doc.locks[0]!.holder).toEqual({ handle: holder.publicId, clientName: 'lister test', labels: { host: hostname(), pid: String(process.pid), team: 'infra', zone: 'eu 1' } });
    const [queued] = doc.locks[1]!.waiters as Array<{ session: string; waitingMs: number }>;
    expect(queued?.session).toBe(waiter.publicId);
    expect(queued?.waitingMs).toBeGreaterThan(0);
  });

  it('--watch refreshes every second until SIGINT, then exits 0', async () => {
    const r = run(['--json', 'locks', 'cli/', '--watch']);
    const docs = (): string[] => r.out().split('\n').filter((l) => l !== '');
    await eventually(async () => (docs().length >= 2 ? true : undefined), 15_000, 'two refreshes');
    expect(r.child.exitCode).toBeNull();
    const [first, second] = docs().map((l) => JSON.parse(l) as { locks: Array<{ lock: string; heldForMs: number }> });
    expect(first!.locks.map((l) => l.lock)).toEqual(['cli/a', 'cli/b']);
    expect(second!.locks[0]!.heldForMs).toBeGreaterThan(first!.locks[0]!.heldForMs);
    r.child.kill('SIGINT');
    expect(await r.exited).toBe(0);
    expect(r.err()).toBe('');
  });
});

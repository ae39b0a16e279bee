// `fencelock locks [PREFIX]` (issue 35) as a real process against a real node: the table (LOCK HOLDER TOKEN
// HELD WAITERS CLIENT, the holder's client name and labels last), --json, and --watch, which refreshes every
// second until SIGINT and then exits 0.
import { hostname } from 'node:os';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FenceLockClient, type Session } from '../../src/client';
import { ChildProcesses, type Running } from './childProcesses';
import { clusterWithLeader } from './clusterWithLeader';
import { eventually, LocalCluster } from './harness';


let cluster: LocalCluster;
let client: FenceLockClient;
let holder: Session;
let waiter: Session;
const tokens = new Map<string, bigint>();
const children = new ChildProcesses();

const run = (args: string[]): Running => children.cli(cluster.endpoints, args);

async function finished(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  const r = run(args);
  const code = await r.exited;
  return { code, out: r.out(), err: r.err() };
}

beforeAll(async () => {
  ({ cluster, client } = await clusterWithLeader({ size: 1 }, 15_000));
  holder = await client.openSession({ ttlMs: 30_000, name: 'lister test', labels: { team: 'infra', zone: 'eu 1' } });
  waiter = await client.openSession({ ttlMs: 30_000 });
  for (const name of ['cli/a', 'cli/b']) tokens.set(name, (await holder.acquire(name)).token);
  await holder.acquire('other/x');
  // A waiter on cli/b, queued until the end of the test file (its wait is withdrawn when the session closes).
  void waiter.acquire('cli/b', { waitTimeoutMs: 60_000 }).catch(() => undefined);
  await eventually(async () => ((await client.describe('cli/b')).waiters.length === 1 ? true : undefined), 10_000, 'the waiter queued');
}, 60_000);

afterEach(() => children.killAll());

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

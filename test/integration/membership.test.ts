// Membership changes over real node processes, with a workload running: replace a SIGKILLed node by a new
// one on an empty data folder, grow 3 -> 5 -> 3, remove the leader (with the CLI). The workload checks that
// every lock's tokens strictly increase and that every fenced write under a held lock is accepted.
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FenceLockClient, type Session } from '../../src/client';
import { eventually, LocalCluster, runNode } from './harness';

const CLI = path.join(__dirname, '../../dist/src/cli/main.js');

/** Lock cycles (acquire, fenced write, release) on a few locks, until stopped. */
class Workload {
  readonly tokens = new Map<string, bigint[]>();
  cycles = 0;
  errors = 0;
  readonly errorsBy = new Map<string, number>();
  /** Longest time without a completed cycle: how long a change left the cluster unavailable to it. */
  maxGapMs = 0;
  private stopped = false;
  private readonly done: Promise<void>;

  constructor(private readonly client: FenceLockClient, locks = 3) {
    this.done = this.run(locks);
  }

  private async run(locks: number): Promise<void> {
    let session: Session | undefined;
    let last = Date.now();
    for (let i = 0; !this.stopped; i++) {
      const lock = `mw/${i % locks}`;
      try {
        if (session === undefined || session.isPresumedLost()) session = await this.client.openSession({ ttlMs: 10_000 });
        const held = await session.acquire(lock, { waitTimeoutMs: 5_000 });
        await held.write([{ put: `${lock}/k`, value: String(i) }]);
        await held.release();
        const seen = this.tokens.get(lock) ?? [];
        seen.push(held.token);
        this.tokens.set(lock, seen);
        this.cycles++;
        this.maxGapMs = Math.max(this.maxGapMs, Date.now() - last);
        last = Date.now();
      } catch (err) {
        this.errors++;
        const reason = (err as { reason?: string }).reason ?? (err as { code?: string }).code ?? 'other';
        this.errorsBy.set(reason, (this.errorsBy.get(reason) ?? 0) + 1);
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    await session?.close().catch(() => undefined);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.done;
  }

  /**
   * Every lock's tokens, in grant order, strictly increase; no write under a held lock was refused as a
   * newer holder's (an outage may expire the session, never hand its lock to another meanwhile).
   */
  assertTokensIncrease(): void {
    for (const reason of ['STALE_TOKEN', 'NOT_HOLDER', 'WRONG_LOCK']) expect(this.errorsBy.get(reason) ?? 0, reason).toBe(0);
    for (const [lock, seen] of this.tokens) {
      for (let k = 1; k < seen.length; k++) expect(seen[k]! > seen[k - 1]!, `${lock}: ${seen[k - 1]} then ${seen[k]}`).toBe(true);
    }
  }
}

let cluster: LocalCluster | undefined;
let client: FenceLockClient | undefined;

afterEach(async () => {
  await client?.close();
  await cluster?.destroy();
  client = undefined;
  cluster = undefined;
});

async function startCluster(): Promise<{ cluster: LocalCluster; client: FenceLockClient }> {
  cluster = await LocalCluster.create();
  cluster.startAll();
  client = new FenceLockClient({ endpoints: cluster.endpoints });
  await eventually(async () => ((await client!.members.list()).members.length === 3 ? true : undefined), 20_000, 'a leader');
  return { cluster, client };
}

/** Adds `id` as a learner, starts it with --join, waits until it has caught up; returns how long that took. */
async function addLearner(c: LocalCluster, cl: FenceLockClient, id: string): Promise<number> {
  const node = await c.addNode(id);
  const added = await cl.members.add(id, { client: node.address, peer: node.peerAddress });
  expect(added.members.members.find((m) => m.id === id)).toMatchObject({ learner: true });
  const started = Date.now();
  c.start(id);
  await eventually(async () => {
    const l = await cl.members.list();
    const m = l.members.find((x) => x.id === id);
    return m !== undefined && m.match + 5n >= l.commit ? true : undefined;
  }, 60_000, `${id} to catch up`);
  return Date.now() - started;
}

async function exitCodeOf(c: LocalCluster, id: string): Promise<number | null> {
  const p = c.node(id).process;
  if (!p) throw new Error(`${id} never started`);
  if (p.exitCode === null && p.signalCode === null) await new Promise((r) => p.once('exit', r));
  return p.exitCode;
}

describe('membership changes over real processes', () => {
  it('replaces a SIGKILLed node by a new one on an empty data folder while clients run', async () => {
    const { cluster: c, client: cl } = await startCluster();
    // State to catch up with: 1,000 locks held by one session.
    const holder = await cl.openSession({ ttlMs: 60_000 });
    for (let i = 0; i < 1_000; i += 50) await Promise.all(Array.from({ length: 50 }, (_, k) => holder.acquire(`held/${i + k}`)));
    const work = new Workload(cl);
    await eventually(() => (work.cycles > 5 ? true : undefined), 20_000, 'the workload to run');

    await c.kill('n3');
    const catchUpMs = await addLearner(c, cl, 'n4');
    await cl.members.promote('n4');
    const removed = await cl.members.remove('n3');
    expect(removed.members.members.map((m) => [m.id, m.learner])).toEqual([['n1', false], ['n2', false], ['n4', false]]);
    expect(removed.members.removed).toEqual(['n3']);
    const cyclesBefore = work.cycles;
    await eventually(() => (work.cycles > cyclesBefore + 5 ? true : undefined), 20_000, 'cycles after the change');

    await work.stop();
    work.assertTokensIncrease();

    // n4 is a full voter: with n1 gone too, n2 and n4 are the quorum. (A client knows the nodes it is given,
    // leader hints never add to them: this one knows n4.)
    await c.kill('n1');
    const wide = new FenceLockClient({ endpoints: [c.node('n2').address, c.node('n4').address] });
    const after = new Workload(wide);
    await eventually(() => (after.cycles > 5 ? true : undefined), 30_000, 'cycles on n2 and n4 alone');
    await after.stop();
    after.assertTokensIncrease();
    for (const [lock, seen] of after.tokens) expect(seen[0]! > work.tokens.get(lock)!.at(-1)!).toBe(true);
    const status = await wide.status(c.node('n4').address);
    expect(BigInt(status.applied)).toBeGreaterThan(1_000n);
    const described = await wide.describe('held/999');
    expect(described.held).toBe(true);
    await wide.close();
    console.log(`replace: n4 caught up with 1,000 held locks in ${catchUpMs} ms; workload ${work.cycles} cycles, ${work.errors} errors (${JSON.stringify(Object.fromEntries(work.errorsBy))}), longest gap ${work.maxGapMs} ms`);
  });

  it('grows from 3 to 5 voters and shrinks back to 3; removed nodes stop by themselves', async () => {
    const { cluster: c, client: cl } = await startCluster();
    for (const id of ['n4', 'n5']) {
      await addLearner(c, cl, id);
      await cl.members.promote(id);
    }
    // A client knows the nodes it is given (leader hints never add to them): this one knows all five.
    const wide = new FenceLockClient({ endpoints: c.endpoints });
    const work = new Workload(wide);
    const five = await wide.members.list();
    expect(five.members.filter((m) => !m.learner).map((m) => m.id)).toEqual(['n1', 'n2', 'n3', 'n4', 'n5']);
    // Five voters survive two dead ones.
    await c.kill('n1');
    await c.kill('n2');
    const before = work.cycles;
    await eventually(() => (work.cycles > before + 5 ? true : undefined), 30_000, 'cycles with two of five dead');
    c.start('n1');
    c.start('n2');
    await eventually(async () => {
      const l = await wide.members.list();
      return l.members.every((m) => m.match + 5n >= l.commit) ? true : undefined;
    }, 30_000, 'n1 and n2 back');
    for (const id of ['n4', 'n5']) await wide.members.remove(id);
    expect((await wide.members.list()).members.map((m) => m.id)).toEqual(['n1', 'n2', 'n3']);
    expect(await exitCodeOf(c, 'n4')).toBe(0);
    expect(await exitCodeOf(c, 'n5')).toBe(0);
    const after = work.cycles;
    await eventually(() => (work.cycles > after + 5 ? true : undefined), 20_000, 'cycles on three voters again');
    await work.stop();
    await wide.close();
    work.assertTokensIncrease();
    console.log(`grow/shrink: workload ${work.cycles} cycles, ${work.errors} errors (${JSON.stringify(Object.fromEntries(work.errorsBy))}), longest gap ${work.maxGapMs} ms`);
  });

  it('removes the leader with the CLI: it hands over first, then stops; the rest serve', async () => {
    const { cluster: c, client: cl } = await startCluster();
    const leader = (await cl.status()).leader;
    const work = new Workload(cl);
    await eventually(() => (work.cycles > 3 ? true : undefined), 20_000, 'the workload to run');
    const res = await runNode([CLI, '--endpoints', c.endpoints.join(','), 'member', 'remove', leader]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(new RegExp(`removed ${leader} \\(index \\d+\\)`));
    expect(await exitCodeOf(c, leader)).toBe(0);
    const listing = await runNode([CLI, '--endpoints', c.endpoints.join(','), '--json', 'member', 'list']);
    const l = JSON.parse(listing.stdout) as { members: Array<{ id: string }>; removed: string[] };
    expect(l.members.map((m) => m.id)).toEqual(c.ids.filter((id) => id !== leader));
    expect(l.removed).toEqual([leader]);
    const before = work.cycles;
    await eventually(() => (work.cycles > before + 5 ? true : undefined), 20_000, 'cycles without the old leader');
    await work.stop();
    work.assertTokensIncrease();
    console.log(`remove leader: workload ${work.cycles} cycles, ${work.errors} errors (${JSON.stringify(Object.fromEntries(work.errorsBy))}), longest gap ${work.maxGapMs} ms`);
  });

  it('refuses bad changes with a clear error, and a removed name is never reused', async () => {
    const { cluster: c, client: cl } = await startCluster();
    const cli = (...args: string[]) => runNode([CLI, '--endpoints', c.endpoints.join(','), 'member', ...args]);
    const bad = await cli('add', 'n9', '--peer', '0.0.0.0:1', '--client', '127.0.0.1:2');
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/peer_address: is 0\.0\.0\.0:1, a bind address/);
    const noLearner = await cli('promote', 'n9');
    expect(noLearner.stderr).toMatch(/n9 is not a learner/);
    await c.kill('n3');
    await cl.members.remove('n3');
    const again = await cli('add', 'n3', '--peer', '127.0.0.1:1', '--client', '127.0.0.1:2');
    expect(again.stderr).toMatch(/n3 was removed from this cluster; add the new machine under a new name/);
    expect((await cl.members.list()).members.map((m) => m.id)).toEqual(['n1', 'n2']);
  });
});

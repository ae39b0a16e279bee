// Membership changes over real node processes while recorded clients run: replace a SIGKILLed node by a new
// one on an empty data folder, grow 3 -> 5 -> 3, remove the leader (with the CLI). The clients are the chaos
// runner's (chaosRunner.ts: in-process and worker-process clients doing acquires, fenced writes, reads and
// releases); the steps below take the nemesis's place, and at the end the whole history, with final reads,
// must pass test/checker (linearizable per lock, tokens increasing, no fenced write lost or accepted late).
//
// Leader hints never add endpoints to a client, so a client reaches a member added later only if it knew the
// address before: the new nodes are made (addNode: ports, certificate, join config) before the run starts and
// every client is given every address, as an operator would list the replacement machine's.
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { FenceLockClient } from '../../src/client';
import { checkedChaos, out } from './chaos/checked';
import type { FaultContext } from './chaos/context';
import { longestPause, type ChaosRun } from './chaosRunner';
import { eventually, LocalCluster, runNode } from './harness';

const CLI = path.join(__dirname, '../../dist/src/cli/main.js');

let cluster: LocalCluster | undefined;
let client: FenceLockClient | undefined;

afterEach(async () => {
  await client?.close();
  await cluster?.destroy();
  client = undefined;
  cluster = undefined;
});

/** Three running nodes, and `spares` made for a later add (not started); the client knows them all. */
async function startCluster(spares: string[] = []): Promise<{ cluster: LocalCluster; client: FenceLockClient }> {
  // Stable ports: a node SIGKILLed in a step gets its port back when the run restarts it.
  cluster = await LocalCluster.create({ stablePorts: true });
  cluster.startAll();
  for (const id of spares) await cluster.addNode(id);
  client = new FenceLockClient({ endpoints: cluster.endpoints });
  await eventually(async () => ((await client!.members.list()).members.length === 3 ? true : undefined), 20_000, 'a leader');
  return { cluster, client };
}

/** Adds `id` (made by addNode) as a learner, starts it (it joins), waits until it has caught up; returns the ms. */
async function addLearner(c: LocalCluster, cl: FenceLockClient, id: string): Promise<number> {
  const node = c.node(id);
  const added = await cl.members.add(id, { client: node.address, peer: node.peerAddress });
  expect(added.members.members.find((m) => m.id === id)).toMatchObject({ learner: true });
  const started = Date.now();
  c.start(id);
  await eventually(async () => {
    const l = await cl.members.list();
    const m = l.members.find((x) => x.id === id);
    // match 0 is a learner that has not answered yet (a short log is within 5 of it): the leader refuses to
    // promote it (LEARNER_BEHIND), so wait for its first answer too.
    return m !== undefined && m.match > 0n && m.match + 5n >= l.commit ? true : undefined;
  }, 60_000, `${id} to catch up`);
  return Date.now() - started;
}

/** Adds, catches up and promotes `id`; the run's view then waits for it like for any member. */
async function addVoter(ctx: FaultContext, cl: FenceLockClient, id: string): Promise<number> {
  const ms = await addLearner(ctx.cluster, cl, id);
  await cl.members.promote(id);
  ctx.view.admit(id);
  ctx.note(`${id} joined, caught up in ${ms} ms, promoted`);
  return ms;
}

async function exitCodeOf(c: LocalCluster, id: string): Promise<number | null> {
  const p = c.node(id).process;
  if (!p) throw new Error(`${id} never started`);
  if (p.exitCode === null && p.signalCode === null) await new Promise((r) => p.once('exit', r));
  return p.exitCode;
}

/** Waits until the in-process clients had `n` more operations answered ok (a step must not end on an outage). */
async function served(ctx: FaultContext, what: string, n = 10, timeoutMs = 30_000): Promise<void> {
  const since = ctx.clock();
  const ok = (): number => ctx.recorder.operations().filter((o) => o.outcome === 'ok' && o.ret !== undefined && o.ret > since).length;
  await eventually(() => (ok() >= n ? true : undefined), timeoutMs, `${n} operations served ${what}`);
}

/** Notes a step on the timeline and in the history's fault list (so a failure shows it next to the ops). */
function step(ctx: FaultContext, kind: string, targets: string[], note: string): void {
  ctx.recorder.fault(kind, targets, { note });
  ctx.note(note);
}

/** The run with `steps` in the nemesis's place, checked; prints the figures. */
async function checkedMembershipRun(name: string, seed: number, c: LocalCluster, members: string[], steps: (ctx: FaultContext) => Promise<void>): Promise<ChaosRun> {
  const { run } = await checkedChaos({ nodes: 3, seed, durationMs: 0, cluster: c, members, endpoints: c.endpoints, steps, clients: 4, workers: 1, namespace: name });
  const ops = run.history.ops.filter((o) => !o.process.endsWith('-final'));
  const failed = ops.filter((o) => o.outcome === 'fail').length;
  const unknown = ops.filter((o) => o.outcome === 'unknown').length;
  out(`[membership] ${name}: ${ops.length} ops checked linearizable, ${failed} failed, ${unknown} unknown; longest pause ${longestPause(run.history).ms} ms`);
  expect(ops.filter((o) => o.outcome === 'ok').length, 'operations served').toBeGreaterThan(100);
  return run;
}

describe('membership changes over real processes, the history checked', () => {
  it('replaces a SIGKILLed node by a new one on an empty data folder while clients run', async () => {
    const { cluster: c, client: cl } = await startCluster(['n4']);
    let catchUpMs = 0;
    await checkedMembershipRun('replace', 1201, c, ['n1', 'n2', 'n3'], async (ctx) => {
      // State to catch up with: 1,000 locks held by one session (outside the checked namespace).
      const holder = await cl.openSession({ ttlMs: 60_000 });
      for (let i = 0; i < 1_000; i += 50) await Promise.all(Array.from({ length: 50 }, (_, k) => holder.acquire(`held/${i + k}`)));
      await served(ctx, 'before the kill');
      step(ctx, 'kill', ['n3'], 'replace: SIGKILL n3, add n4 on an empty data folder');
      await c.kill('n3');
      catchUpMs = await addVoter(ctx, cl, 'n4');
      const removed = await cl.members.remove('n3');
      ctx.view.retire('n3');
      expect(removed.members.members.map((m) => [m.id, m.learner])).toEqual([['n1', false], ['n2', false], ['n4', false]]);
      expect(removed.members.removed).toEqual(['n3']);
      await served(ctx, 'after n3 was removed');
      // n4 is a full voter: with n1 down too, n2 and n4 are the quorum (the run restarts n1 at the end).
      step(ctx, 'kill', ['n1'], 'replace: SIGKILL n1, n2 and n4 serve alone');
      await c.kill('n1');
      await served(ctx, 'by n2 and n4 alone');
      // Polled: the client's channel to n4 was made before n4 started, and a call fails fast with the old
      // ECONNREFUSED while that channel is still in its reconnect backoff (up to 1 s).
      const n4 = await eventually(() => cl.status(c.node('n4').address).catch(() => undefined), 10_000, 'n4 answering status');
      expect(BigInt(n4.applied)).toBeGreaterThan(1_000n);
      expect((await cl.describe('held/999')).held).toBe(true);
    });
    out(`[membership] replace: n4 caught up with 1,000 held locks in ${catchUpMs} ms`);
  });

  it('grows from 3 to 5 voters and shrinks back to 3; removed nodes stop by themselves', async () => {
    const { cluster: c, client: cl } = await startCluster(['n4', 'n5']);
    await checkedMembershipRun('grow', 1202, c, ['n1', 'n2', 'n3'], async (ctx) => {
      await served(ctx, 'on three voters');
      step(ctx, 'grow', ['n4', 'n5'], 'grow: add and promote n4, then n5');
      for (const id of ['n4', 'n5']) await addVoter(ctx, cl, id);
      expect((await cl.members.list()).members.filter((m) => !m.learner).map((m) => m.id)).toEqual(['n1', 'n2', 'n3', 'n4', 'n5']);
      // Five voters survive two dead ones.
      step(ctx, 'kill', ['n1', 'n2'], 'grow: SIGKILL n1 and n2 of five');
      await c.kill('n1');
      await c.kill('n2');
      await served(ctx, 'with two of five dead');
      c.start('n1');
      c.start('n2');
      await eventually(async () => {
        const l = await cl.members.list();
        return l.members.every((m) => m.match + 5n >= l.commit) ? true : undefined;
      }, 30_000, 'n1 and n2 back');
      step(ctx, 'shrink', ['n4', 'n5'], 'shrink: remove n4, then n5');
      for (const id of ['n4', 'n5']) {
        await cl.members.remove(id);
        expect(await exitCodeOf(c, id)).toBe(0);
        ctx.view.retire(id);
      }
      expect((await cl.members.list()).members.map((m) => m.id)).toEqual(['n1', 'n2', 'n3']);
      await served(ctx, 'on three voters again');
    });
  });

  it('removes the leader with the CLI: it hands over first, then stops; the rest serve', async () => {
    const { cluster: c, client: cl } = await startCluster();
    await checkedMembershipRun('remove-leader', 1203, c, c.ids, async (ctx) => {
      await served(ctx, 'before the removal');
      const leader = (await cl.status()).leader;
      step(ctx, 'remove', [leader], `remove-leader: fencelock member remove ${leader}`);
      const res = await runNode([CLI, '--endpoints', c.endpoints.join(','), 'member', 'remove', leader]);
      expect(res.code, res.stderr).toBe(0);
      expect(res.stdout).toMatch(new RegExp(`removed ${leader} \\(index \\d+\\)`));
      expect(await exitCodeOf(c, leader)).toBe(0);
      ctx.view.retire(leader);
      const listing = await runNode([CLI, '--endpoints', c.endpoints.join(','), '--json', 'member', 'list']);
      const l = JSON.parse(listing.stdout) as { members: Array<{ id: string }>; removed: string[] };
      expect(l.members.map((m) => m.id)).toEqual(c.ids.filter((id) => id !== leader));
      expect(l.removed).toEqual([leader]);
      await served(ctx, 'without the old leader');
    });
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

describe('a member that missed the changes which added its leader', () => {
  // Found by the whole-node simulator: a voter down while the cluster replaced every other member came back
  // knowing none of the new ones. It refused the new leader's peer stream ("certificate names no other
  // member") and dropped its messages, so it never caught up, and the cluster counted a voter that could
  // never vote again. Now the leader names its address on the stream and the member answers it there.
  it('comes back after n1 and n2 were replaced by n4 and n5, and catches up from a leader it never heard of', async () => {
    const { cluster: c, client: cl } = await startCluster(['n4', 'n5']);
    const t0 = Date.now();
    const progress = (what: string): void => out(`[membership] missed-changes: ${what} at ${Date.now() - t0} ms`);
    await c.kill('n3');
    for (const id of ['n4', 'n5']) {
      await addLearner(c, cl, id);
      await cl.members.promote(id);
      progress(`${id} promoted`);
    }
    for (const id of ['n1', 'n2']) {
      // A leader asked to remove itself hands over first; the client retries at the new leader.
      await eventually(async () => ((await cl.members.remove(id).catch(() => undefined)) ? true : undefined), 30_000, `${id} removed`);
      expect(await exitCodeOf(c, id)).toBe(0);
      progress(`${id} removed and exited`);
    }
    const holder = await cl.openSession({ ttlMs: 60_000 });
    const { token } = await holder.acquire('after-the-replacements');
    const leader = (await cl.status()).leader;
    expect(['n4', 'n5']).toContain(leader);

    progress(`leader ${leader}; restarting n3`);
    c.start('n3');
    const back = await eventually(async () => {
      const st = await cl.status(c.node('n3').address).catch(() => undefined);
      return st !== undefined && st.leader === leader && st.applied >= token ? st : undefined;
    }, 30_000, 'n3 to follow the new leader and apply what it missed');
    progress('n3 follows the new leader');
    expect(back.role).toBe('follower');
    const list = await cl.members.list();
    expect(list.members.map((m) => [m.id, m.learner])).toEqual([['n3', false], ['n4', false], ['n5', false]]);
    expect(list.members.find((m) => m.id === 'n3')!.match).toBeGreaterThanOrEqual(token);
    // n3 counts again: with n5 gone too, n3 and n4 are the quorum.
    const other = leader === 'n4' ? 'n5' : 'n4';
    await c.kill(other);
    await eventually(async () => ((await holder.acquire('with-n3-in-the-quorum').catch(() => undefined)) ? true : undefined), 30_000, 'a grant with n3 in the quorum');
    await holder.close();
  });
});

describe('a member removed while it was away', () => {
  // It never sees the commit of its removal: before, it ran on for ever, campaigning in vain and logging the
  // members' refusals. Now any member it reaches tells it (src/transport/removalNotice.ts) and it stops.

  /** The exit code of `id`, which must exit within `ms`. */
  async function exitWithin(c: LocalCluster, id: string, ms: number): Promise<number | null> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${id} still runs ${ms} ms later: nobody told it that it was removed`)), ms);
    });
    try {
      return await Promise.race([exitCodeOf(c, id), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  function logOf(c: LocalCluster, id: string): string[] {
    return readFileSync(path.join(c.dir, 'cluster.log'), 'utf8').split('\n').filter((l) => l.startsWith(`[${id}] `));
  }

  /** `id` exits 0 within 20 s, its log naming the member that told it; the leader and term did not move. */
  async function expectToldAndStopped(c: LocalCluster, cl: FenceLockClient, id: string, before: { leader: string; term: bigint }): Promise<void> {
    expect(await exitWithin(c, id, 20_000)).toBe(0);
    expect(logOf(c, id).some((l) => /member n\d says this node was removed/.test(l)), `${id}'s log names the member that told it`).toBe(true);
    const after = await cl.status();
    expect(`${after.leader}@${after.term}`, 'the leader and term did not move').toBe(`${before.leader}@${before.term}`);
  }

  /** Removes follower `id` (down or paused) with the other two up; returns the leader and its term after. */
  async function removeAway(c: LocalCluster, cl: FenceLockClient, id: string): Promise<{ leader: string; term: bigint }> {
    await eventually(async () => ((await cl.members.remove(id).catch(() => undefined)) ? true : undefined), 30_000, `${id} removed`);
    const st = await cl.status();
    return { leader: st.leader, term: BigInt(st.term) };
  }

  it('removed while down: restarted later, a member tells it and it stops by itself (exit 0); the leader does not move', async () => {
    const { cluster: c, client: cl } = await startCluster();
    const leader = (await cl.status()).leader;
    const away = ['n1', 'n2', 'n3'].find((id) => id !== leader)!;
    await c.kill(away);
    const before = await removeAway(c, cl, away);
    const t0 = Date.now();
    c.start(away);
    await expectToldAndStopped(c, cl, away, before);
    out(`[membership] removed while down: ${away} restarted, was told and stopped ${Date.now() - t0} ms later`);
  });

  it('removed while paused past the linger window: on resume, its open stream is answered with the notice and it stops', async () => {
    const { cluster: c, client: cl } = await startCluster();
    const leader = (await cl.status()).leader;
    const away = ['n1', 'n2', 'n3'].find((id) => id !== leader)!;
    c.pause(away);
    const before = await removeAway(c, cl, away);
    // The leader stops dialling a removed member ten election timeouts (5 s here) after the change.
    await sleep(6_500);
    const t0 = Date.now();
    c.resume(away);
    await expectToldAndStopped(c, cl, away, before);
    out(`[membership] removed while paused: ${away} resumed, was told and stopped ${Date.now() - t0} ms later`);
  });
});

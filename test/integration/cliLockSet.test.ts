// `fencelock lock A B -- CMD` (issue 33): several locks at once through Lock.AcquireAll, as real CLI processes
// against a real 3-node cluster. Two commands naming [a, b] and [b, a] run CMD in turn, never together, each
// under one token for both locks; a try (--wait 0) on a set with a busy lock takes nothing and names the lock;
// the revoke of one lock of the set stops CMD (exit 4) and frees the other. Also `describe NAME --semaphore`.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FenceLockClient } from '../../src/client';
import { ChildProcesses, type Running } from './childProcesses';
import { clusterWithLeader } from './clusterWithLeader';
import { eventually, type LocalCluster } from './harness';

/**
 * CMD: claims `inside` (exclusive create: it fails if another CMD is inside, and CMD exits 99), writes what it
 * saw of FENCELOCK_* to env-ID, then waits for go-ID (or its parent's death), leaves and exits 0.
 */
const CMD_SCRIPT = `
const fs = require('fs'), p = require('path');
const [dir, id] = process.argv.slice(1);
try { fs.writeFileSync(p.join(dir, 'inside'), id, { flag: 'wx' }); } catch { process.exit(99); }
const e = process.env;
fs.writeFileSync(p.join(dir, 'env-' + id), JSON.stringify({ token: e.FENCELOCK_TOKEN, locks: e.FENCELOCK_LOCKS, lock: e.FENCELOCK_LOCK ?? null, session: e.FENCELOCK_SESSION ?? null }));
const parent = process.ppid;
setInterval(() => {
  try { process.kill(parent, 0); } catch { process.exit(98); }
  if (!fs.existsSync(p.join(dir, 'go-' + id))) return;
  fs.unlinkSync(p.join(dir, 'inside'));
  process.exit(0);
}, 20);
`;

interface SeenEnv {
  token: string;
  locks: string;
  lock: string | null;
  session: string | null;
}

let cluster: LocalCluster;
let client: FenceLockClient;
let dir: string;
const children = new ChildProcesses();

beforeAll(async () => {
  ({ cluster, client } = await clusterWithLeader({}, 90_000));
}, 120_000);

afterEach(() => {
  children.killAll();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

afterAll(async () => {
  await client?.close();
  await cluster?.destroy();
});

function freshDir(): string {
  dir = mkdtempSync(path.join(os.tmpdir(), 'fencelock-lockset-'));
  return dir;
}

/** `fencelock --json lock NAMES... [FLAGS] -- node -e CMD_SCRIPT DIR ID`. */
function lockCmd(names: string[], id: string, flags: string[] = []): Running {
  return children.cli(cluster.endpoints, ['--json', 'lock', ...names, ...flags, '--', process.execPath, '-e', CMD_SCRIPT, dir, id]);
}

function seenEnv(id: string): SeenEnv | undefined {
  const file = path.join(dir, `env-${id}`);
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as SeenEnv) : undefined;
}

async function heldTokens(locks: string[]): Promise<Array<bigint | null>> {
  return Promise.all(locks.map(async (l) => {
    const d = await client.describe(l);
    return d.held ? d.token : null;
  }));
}

describe('fencelock lock A B -- CMD', () => {
  it('runs the CMDs of [a, b] and [b, a] in turn, never together, each under one token for both locks', async () => {
    freshDir();
    const first = lockCmd(['set/a', 'set/b'], '1');
    const env1 = await eventually(() => seenEnv('1'), 20_000, 'the first CMD running');
    expect(env1.locks).toBe('set/a\nset/b');
    expect(env1.lock).toBeNull();
    expect(await heldTokens(['set/a', 'set/b'])).toEqual([BigInt(env1.token), BigInt(env1.token)]);

    const second = lockCmd(['set/b', 'set/a'], '2');
    await eventually(async () => {
      const [a, b] = await Promise.all([client.describe('set/a'), client.describe('set/b')]);
      return a.waiters.length === 1 && b.waiters.length === 1 ? true : undefined;
    }, 20_000, 'the second set queued on both locks');
    expect(seenEnv('2')).toBeUndefined();

    writeFileSync(path.join(dir, 'go-1'), '');
    expect(await first.exited, first.err()).toBe(0);
    expect(JSON.parse(first.out())).toEqual({ locks: ['set/a', 'set/b'], token: env1.token, exitCode: 0 });

    const env2 = await eventually(() => seenEnv('2'), 20_000, 'the second CMD running');
    expect(env2.locks).toBe('set/b\nset/a');
    expect(BigInt(env2.token)).toBeGreaterThan(BigInt(env1.token));
    expect(await heldTokens(['set/a', 'set/b'])).toEqual([BigInt(env2.token), BigInt(env2.token)]);
    writeFileSync(path.join(dir, 'go-2'), '');
    expect(await second.exited, second.err()).toBe(0);
    expect(JSON.parse(second.out())).toEqual({ locks: ['set/b', 'set/a'], token: env2.token, exitCode: 0 });
    expect(await heldTokens(['set/a', 'set/b'])).toEqual([null, null]);
  }, 60_000);

  it('with --wait 0 and one lock of the set held: takes nothing, runs no CMD, fails LOCK_HELD (exit 3) naming the busy lock', async () => {
    freshDir();
    const holder = await client.openSession({ ttlMs: 30_000, name: 'busy-holder' });
    const held = await holder.acquire('try/b');
    const r = lockCmd(['try/a', 'try/b'], '1', ['--wait', '0']);
    expect(await r.exited, r.err()).toBe(3);
    expect(seenEnv('1')).toBeUndefined();
    const { error } = JSON.parse(r.out()) as { error: { code: string; message: string; exitCode: number } };
    expect(error).toMatchObject({ code: 'LOCK_HELD', exitCode: 3 });
    expect(error.message).toContain(`lock "try/b" of the set "try/a", "try/b" is held by session ${holder.publicId} ("busy-holder"`);
    expect(error.message).toContain('CMD was not run');
    expect(await heldTokens(['try/a', 'try/b'])).toEqual([null, held.token]);
    await held.release();
    await holder.close();
  }, 30_000);

  it('stops CMD (exit 4, LOCK_LOST) when one lock of the set is revoked alone, and frees the other', async () => {
    freshDir();
    const r = lockCmd(['lost/a', 'lost/b'], '1', ['--ttl', '3000', '--grace', '500']);
    const env = await eventually(() => seenEnv('1'), 20_000, 'CMD running');
    await client.revokeLock('lost/b', { token: BigInt(env.token), reason: 'test: one lock of a set' });
    expect(await r.exited, r.err()).toBe(4);
    const { error } = JSON.parse(r.out()) as { error: { code: string; message: string } };
    expect(error.code).toBe('LOCK_LOST');
    expect(error.message).toContain('locks "lost/a", "lost/b"');
    expect(error.message).toContain('was revoked');
    expect(error.message).toContain(`lock "lost/b" (token ${env.token}) was revoked by an admin`);
    await eventually(async () => ((await heldTokens(['lost/a', 'lost/b'])).every((t) => t === null) ? true : undefined), 10_000, 'both locks free');
  }, 30_000);

  // Regression (lockSessionNameTooLong): the session was opened as `fencelock lock NAME (pid N)` whole, which
  // the server refuses (INVALID_ARGUMENT, exit 1) over 128 bytes, while a lock name may have 256.
  it('takes locks whose names are longer than a session name may be', async () => {
    freshDir();
    const long = ['long/'.padEnd(250, 'x'), 'long/'.padEnd(250, 'y')];
    const one = children.cli(cluster.endpoints, ['--json', 'lock', long[0]!, '--', 'true']);
    expect(await one.exited, one.out() + one.err()).toBe(0);
    expect(JSON.parse(one.out())).toMatchObject({ lock: long[0], exitCode: 0 });
    const both = children.cli(cluster.endpoints, ['--json', 'lock', ...long, '--', 'true']);
    expect(await both.exited, both.out() + both.err()).toBe(0);
    expect(JSON.parse(both.out())).toMatchObject({ locks: long, exitCode: 0 });
  }, 30_000);
});

describe('fencelock describe NAME --semaphore', () => {
  it('shows permits, holders by slot, waiters and slot tokens; NOT_FOUND (exit 5) for a semaphore nobody uses', async () => {
    const [a, b, c] = await Promise.all(['worker-a', 'worker-b', 'worker-c'].map((name) => client.openSession({ ttlMs: 30_000, name })));
    const pa = await a!.acquirePermit('desc/pool', { permits: 2 });
    const pb = await b!.acquirePermit('desc/pool', { permits: 2 });
    const waiting = c!.acquirePermit('desc/pool', { permits: 2, waitTimeoutMs: 60_000 });
    await eventually(async () => ((await client.describeSemaphore('desc/pool')).waiters.length === 1 ? true : undefined), 10_000, 'the waiter queued');

    const json = children.cli(cluster.endpoints, ['--timeout', '20000', '--json', 'describe', 'desc/pool', '--semaphore']);
    expect(await json.exited, json.out() + json.err()).toBe(0);
    const session = (s: { publicId: string }, name: string): unknown => ({ handle: s.publicId, clientName: name, labels: expect.any(Object) });
    expect(JSON.parse(json.out())).toEqual({
      semaphore: 'desc/pool',
      permits: 2,
      holders: [
        { slot: 0, token: pa.token.toString(), session: a!.publicId, holder: session(a!, 'worker-a'), grantedAtMs: expect.any(Number) },
        { slot: 1, token: pb.token.toString(), session: b!.publicId, holder: session(b!, 'worker-b'), grantedAtMs: expect.any(Number) },
      ],
      waiters: [session(c!, 'worker-c')],
      slotTokens: [
        { slot: 0, token: pa.token.toString() },
        { slot: 1, token: pb.token.toString() },
      ],
    });

    await pa.release();
    const next = await waiting;
    const text = children.cli(cluster.endpoints, ['--timeout', '20000', 'describe', 'desc/pool', '--semaphore']);
    expect(await text.exited, text.out() + text.err()).toBe(0);
    expect(text.out()).toMatch(/^semaphore: +desc\/pool$/m);
    expect(text.out()).toMatch(/^permits: +2 \(2 held, 0 free\)$/m);
    expect(text.out()).toMatch(new RegExp(`^slot 0: +token ${next.token}, session ${c!.publicId} "worker-c"`, 'm'));
    expect(text.out()).toMatch(new RegExp(`^slot 1: +token ${pb.token}, session ${b!.publicId} "worker-b"`, 'm'));
    expect(text.out()).toMatch(/^waiters: +0$/m);
    expect(text.out()).toMatch(new RegExp(`^latest tokens: +slot 0: ${next.token}, slot 1: ${pb.token}$`, 'm'));
    await Promise.all([next.release(), pb.release()]);
    await Promise.all([a!.close(), b!.close(), c!.close()]);

    const missing = children.cli(cluster.endpoints, ['--timeout', '20000', '--json', 'describe', 'desc/pool', '--semaphore']);
    expect(await missing.exited, missing.out()).toBe(5);
    expect(missing.err()).toBe('');
    const { error } = JSON.parse(missing.out()) as { error: { code: string; message: string; exitCode: number } };
    expect(error).toMatchObject({ code: 'NOT_FOUND', exitCode: 5 });
    expect(error.message).toContain('semaphore "desc/pool" not found');
  }, 60_000);
});

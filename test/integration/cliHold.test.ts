// `fencelock lock NAME` without CMD (issue 34): the CLI, as a real process against a real 3-node cluster,
// holds the lock, shows its token and the session's public handle, and lets go on the end of stdin, SIGINT or
// SIGTERM (exit 0), or exits 4 when an admin revokes its session.
import * as os from 'node:os';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FenceLockClient } from '../../src/client';
import { ChildProcesses, exitWithin, type Running } from './childProcesses';
import { clusterWithLeader } from './clusterWithLeader';
import { eventually, LocalCluster } from './harness';

const HELD_LINE = /^lock "([^"]+)" held: token (\d+), session ([0-9a-f]{16}); Ctrl-C or end of input \(Ctrl-D\) releases it$/;

let cluster: LocalCluster;
let client: FenceLockClient;
const children = new ChildProcesses();

/** Starts `fencelock ... lock ARGS` with stdin a pipe that this test holds open. */
const hold = (args: string[]): Running => children.cli(cluster.endpoints, args);

function parseHeld(line: string): { lock: string; token: bigint; session: string } {
  const m = HELD_LINE.exec(line);
  if (!m) throw new Error(`not a held line: ${line}`);
  return { lock: m[1]!, token: BigInt(m[2]!), session: m[3]! };
}

beforeAll(async () => {
  ({ cluster, client } = await clusterWithLeader({}, 15_000));
}, 60_000);

afterEach(() => children.killAll());

afterAll(async () => {
  await client?.close();
  await cluster?.destroy();
});

describe('fencelock lock NAME without a command', () => {
  it('holds the lock, prints its token and the public handle, and releases it when stdin ends (exit 0)', async () => {
    const h = hold(['lock', 'hold/eof', '--ttl', '4000']);
    const held = parseHeld(await h.firstLine);
    expect(held.lock).toBe('hold/eof');
    const d = await client.describe('hold/eof');
    expect(d).toMatchObject({ held: true, token: held.token, holderSession: held.session });
    // Held for longer than the TTL: the session is renewed while the CLI waits.
    await new Promise((r) => setTimeout(r, 5_000));
    expect((await client.describe('hold/eof')).token).toBe(held.token);
    h.child.stdin.end();
    expect(await exitWithin(h, 10_000)).toBe(0);
    expect(h.out()).toContain('lock "hold/eof" released (end of input)');
    expect((await client.describe('hold/eof')).held).toBe(false);
  }, 30_000);

  it('--json prints {"lock","token","session"} once held, and SIGINT releases it (exit 0)', async () => {
    const h = hold(['--json', 'lock', 'hold/int']);
    const doc = JSON.parse(await h.firstLine) as Record<string, unknown>;
    expect(Object.keys(doc)).toEqual(['lock', 'token', 'session']);
    expect(doc.lock).toBe('hold/int');
    expect(doc.token).toMatch(/^\d+$/);
    expect(doc.session).toMatch(/^[0-9a-f]{16}$/);
    expect(await client.describe('hold/int')).toMatchObject({ held: true, token: BigInt(doc.token as string), holderSession: doc.session });
    h.child.kill('SIGINT');
    expect(await exitWithin(h, 10_000)).toBe(0);
    // One JSON document, nothing on stderr.
    expect(h.out()).toBe(`${await h.firstLine}\n`);
    expect(h.err()).toBe('');
    expect((await client.describe('hold/int')).held).toBe(false);
  }, 30_000);

  it('SIGTERM releases it (exit 0)', async () => {
    const h = hold(['lock', 'hold/term']);
    const held = parseHeld(await h.firstLine);
    expect((await client.describe('hold/term')).holderSession).toBe(held.session);
    h.child.kill('SIGTERM');
    expect(await exitWithin(h, 10_000)).toBe(0);
    expect(h.out()).toContain('released (SIGTERM)');
    expect((await client.describe('hold/term')).held).toBe(false);
  }, 30_000);

  it('takes --wait like lock -- CMD: 0 fails at once on a held lock (exit 3), otherwise waits its turn', async () => {
    const session = await client.openSession({ ttlMs: 10_000 });
    const first = await session.acquire('hold/busy');
    const busy = hold(['lock', 'hold/busy', '--wait', '0']);
    expect(await exitWithin(busy, 10_000)).toBe(3);
    // Names the holder: its public handle, client name ('-': none) and labels (host and pid by default).
    expect(busy.err()).toContain(`lock "hold/busy" is held by session ${session.publicId} (- host=${os.hostname()} pid=${process.pid}) (--wait 0)`);
    expect(busy.err()).not.toContain('CMD');

    const waiter = hold(['lock', 'hold/busy', '--wait', '20000']);
    await eventually(async () => ((await client.describe('hold/busy')).waiters.length === 1 ? true : undefined), 10_000, 'the CLI waiting');
    expect(waiter.out()).toBe('');
    await first.release();
    const held = parseHeld(await waiter.firstLine);
    expect(held.token).toBeGreaterThan(first.token);
    expect((await client.describe('hold/busy')).holderSession).toBe(held.session);
    waiter.child.stdin.end();
    expect(await exitWithin(waiter, 10_000)).toBe(0);
    expect((await client.describe('hold/busy')).held).toBe(false);
    await session.close();
  }, 40_000);

  it('exits 4 when an admin revokes its session, in text and in JSON', async () => {
    const text = hold(['lock', 'hold/revoked', '--ttl', '6000']);
    const held = parseHeld(await text.firstLine);
    expect(await client.auth.sessionRevoke(held.session)).toEqual({ released: ['hold/revoked'] });
    expect(await exitWithin(text, 15_000)).toBe(4);
    expect(text.err()).toContain(`fencelock: lock "hold/revoked" (token ${held.token}) was lost: session ${held.session} was ended by an admin`);
    expect(text.out()).not.toContain('released');

    const json = hold(['--json', 'lock', 'hold/revoked-json', '--ttl', '6000']);
    const doc = JSON.parse(await json.firstLine) as { token: string; session: string };
    await client.auth.sessionRevoke(doc.session);
    expect(await exitWithin(json, 15_000)).toBe(4);
    expect(json.err()).toBe('');
    const lines = json.out().trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(JSON.parse(lines[1]!)).toMatchObject({ error: { code: 'LOCK_LOST', exitCode: 4 } });
    expect((JSON.parse(lines[1]!) as { error: { message: string } }).error.message).toContain(`lock "hold/revoked-json" (token ${doc.token}) was lost`);
  }, 40_000);
});

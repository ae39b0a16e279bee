// Session labels over real connections to a real node with auth on (issue 34): hostile labels are refused
// INVALID_ARGUMENT naming the limit, with no session opened; labels are shown beside the holder's public handle
// to callers allowed to describe the lock (Describe, Watch, the admin's Session.List, the CLI), to nobody else,
// and the secret session id never with them.
import * as grpc from '@grpc/grpc-js';
import { EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FenceLockClient } from '../../src/client';
import { runCli } from '../../src/cli/program';
import { eventually, LocalCluster, testCredentials } from '../integration/harness';
import { authedClient, statusOf, type AuthedClient } from './authKit';

type Obj = Record<string, unknown>;

let cluster: LocalCluster;
let address: string;
let admin: AuthedClient;
let alice: AuthedClient;
let rita: AuthedClient;
let aliceToken: string;
let bytesClient: grpc.Client;
let requestId = 0;
const nextRequest = new Map<string, number>();

/** A request header of this client id: its request ids count from 1 (a new client id must start there). */
function header(clientId: string): Obj {
  const n = (nextRequest.get(clientId) ?? 0) + 1;
  nextRequest.set(clientId, n);
  return { clientId, requestId: String(n) };
}

beforeAll(async () => {
  cluster = await LocalCluster.create({ size: 1, authAdmin: 'test' });
  cluster.startAll();
  address = cluster.endpoints[0]!;
  const certsDir = cluster.certsDir!;
  admin = authedClient(address, certsDir, { cert: { certPem: readFileSync(path.join(certsDir, 'client.pem'), 'utf8'), keyPem: readFileSync(path.join(certsDir, 'client-key.pem'), 'utf8') } });
  await eventually(async () => ((await admin.call('Auth', 'WhoAmI', {}).catch(() => ({}))) as Obj).authEnabled === true || undefined, 30_000, 'auth enabled by the leader');
  const change = (method: string, req: Obj): Promise<Obj> => admin.call('Auth', method, { header: header('labels-admin'), ...req });
  await change('RoleAdd', { role: 'app' });
  await change('RoleGrantPermission', { role: 'app', rule: { permission: 'LOCK', prefix: 'app/' } });
  await change('RoleAdd', { role: 'reader' });
  await change('RoleGrantPermission', { role: 'reader', rule: { permission: 'READ', prefix: 'app/' } });
  for (const [user, role] of [['alice', 'app'], ['rita', 'reader']] as const) {
    await change('UserAdd', { user });
    await change('UserGrantRole', { user, role });
  }
  aliceToken = (await change('TokenIssue', { user: 'alice' })).token as string;
  alice = authedClient(address, certsDir, { token: aliceToken });
  rita = authedClient(address, certsDir, { token: (await change('TokenIssue', { user: 'rita' })).token as string });
  bytesClient = new grpc.Client(address, testCredentials());
}, 90_000);

afterAll(async () => {
  for (const c of [admin, alice, rita]) c?.close();
  bytesClient?.close();
  await cluster?.destroy();
});

async function sessionCount(): Promise<number> {
  return ((await admin.call('Session', 'List', { limit: 1000 })).sessions as unknown[]).length;
}

/** The error an Open with these labels ends in (it must be refused). */
async function openRefused(labels: Record<string, string>): Promise<grpc.ServiceError> {
  try {
    await alice.call('Session', 'Open', { header: header(`labels-hostile-${++requestId}`), ttlMs: '30000', labels });
  } catch (err) {
    return err as grpc.ServiceError;
  }
  throw new Error('Session.Open with hostile labels was accepted');
}

// ---- hand-built bytes, for labels that are not UTF-8 ----------------------------------------------------

function varint(n: number): number[] {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n = Math.floor(n / 0x80);
  }
  out.push(n);
  return out;
}
const ld = (id: number, body: Buffer): Buffer => Buffer.concat([Buffer.from([...varint((id << 3) | 2), ...varint(body.length)]), body]);
const uint = (id: number, n: number): Buffer => Buffer.from([...varint(id << 3), ...varint(n)]);

/** OpenSessionRequest with one label entry (map field 4: key 1, value 2) of the given bytes. */
function openWithLabelBytes(key: Buffer, value: Buffer): Buffer {
  const hdr = ld(1, Buffer.concat([ld(1, Buffer.from(`labels-raw-${++requestId}`)), uint(2, 1)]));
  return Buffer.concat([hdr, uint(2, 30_000), ld(4, Buffer.concat([ld(1, key), ld(2, value)]))]);
}

function rawOpen(body: Buffer): Promise<grpc.ServiceError | undefined> {
  const identity = (b: Buffer): Buffer => b;
  return new Promise((resolve) => {
    bytesClient.makeUnaryRequest('/fencelock.v1.Session/Open', identity, identity, body, { deadline: Date.now() + 10_000 }, (err) => resolve(err ?? undefined));
  });
}

describe('hostile labels at Session.Open', () => {
  const many = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v']));
  const cases: Array<[string, Record<string, string>, RegExp]> = [
    ['17 labels', many, /MAX_SESSION_LABELS/],
    ['a 65-byte key', { ['k'.repeat(65)]: 'v' }, /MAX_LABEL_KEY_BYTES/],
    ['an upper-case key', { Host: 'v' }, /a-z 0-9/],
    ['a key with a slash', { 'a/b': 'v' }, /a-z 0-9/],
    ['a 257-byte value', { k: 'v'.repeat(257) }, /MAX_LABEL_VALUE_BYTES/],
    ['a value with an escape sequence', { k: '\u001b[31mred' }, /control characters/],
    ['1025 bytes in all', Object.fromEntries([0, 1, 2, 3, 4].map((i) => [`k${i}`, 'v'.repeat(203)])), /MAX_LABELS_BYTES/],
  ];

  it.each(cases)('%s: INVALID_ARGUMENT naming the limit, no session opened', async (_what, labels, why) => {
    const before = await sessionCount();
    const err = await openRefused(labels);
    expect(err.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(err.details).toMatch(why);
    expect(await sessionCount()).toBe(before);
  });

  it('a key or value that is not UTF-8: INVALID_ARGUMENT naming the field, no session opened', async () => {
    const before = await sessionCount();
    for (const body of [openWithLabelBytes(Buffer.from([0x6b, 0xff]), Buffer.from('v')), openWithLabelBytes(Buffer.from('k'), Buffer.from([0x61, 0xc3]))]) {
      const err = await rawOpen(body);
      expect(err?.code).toBe(grpc.status.INVALID_ARGUMENT);
      expect(err?.details).toMatch(/labels.*not valid UTF-8/);
    }
    expect(await sessionCount()).toBe(before);
  });
});

describe('who sees the labels', () => {
  const LABELS = { host: 'web-7', pid: '4242', team: 'payments' };
  let sessionId = '';

  beforeAll(async () => {
    sessionId = (await alice.call('Session', 'Open', { header: header('labels-alice'), ttlMs: '60000', clientName: 'billing-worker', labels: LABELS })).sessionId as string;
    await alice.call('Session', 'Open', { header: header('labels-alice'), ttlMs: '60000', clientName: 'second' }).then(async (w) => {
      await alice.call('Lock', 'Acquire', { header: header('labels-alice'), lock: 'app/x', sessionId, waitTimeoutMs: '0' });
      // a waiter, so that Describe shows one (its acquire blocks: not awaited)
      alice.call('Lock', 'Acquire', { header: header('labels-alice'), lock: 'app/x', sessionId: w.sessionId, waitTimeoutMs: '30000' }, 35_000).catch(() => undefined);
    });
    await eventually(async () => (((await alice.call('Lock', 'Describe', { lock: 'app/x' })).waiters as unknown[]).length === 1 ? true : undefined), 10_000, 'a waiter');
  }, 30_000);

  it('Describe shows the holder and waiters with name and labels to a caller allowed to describe, never the session id', async () => {
    const d = await alice.call('Lock', 'Describe', { lock: 'app/x' });
    expect(d.holder).toEqual({ handle: d.holderSession, clientName: 'billing-worker', labels: LABELS });
    expect(d.waiterSessions).toEqual([{ handle: (d.waiters as string[])[0], clientName: 'second', labels: {} }]);
    expect(JSON.stringify(d)).not.toContain(sessionId);
  });

  it('a caller without permission to describe the lock sees neither the lock nor the labels', async () => {
    let err: grpc.ServiceError | undefined;
    await rita.call('Lock', 'Describe', { lock: 'app/x' }).catch((e: grpc.ServiceError) => (err = e));
    expect(err?.code).toBe(grpc.status.PERMISSION_DENIED);
    expect(`${err?.details}`).not.toMatch(/payments|web-7|billing-worker/);
    const watch = rita.serverStream('Lock', 'Watch', { lock: 'app/x' });
    const events: Obj[] = [];
    watch.on('data', (e: Obj) => events.push(e));
    const code = await new Promise<number>((resolve) => watch.on('error', (e: grpc.ServiceError) => resolve(e.code)));
    expect(code).toBe(grpc.status.PERMISSION_DENIED);
    expect(events).toEqual([]);
    // Session.List is the admin's only
    expect(await statusOf(rita.call('Session', 'List', {}))).toBe(grpc.status.PERMISSION_DENIED);
    expect(await statusOf(alice.call('Session', 'List', {}))).toBe(grpc.status.PERMISSION_DENIED);
  });

  it('Watch shows the new holder with its labels on GRANTED', async () => {
    const opened = await alice.call('Session', 'Open', { header: header('labels-alice'), ttlMs: '60000', clientName: 'watched', labels: { role: 'canary' } });
    const watch = alice.serverStream('Lock', 'Watch', { lock: 'app/w' });
    const granted = new Promise<Obj>((resolve) => watch.on('data', (e: Obj) => e.kind === 'GRANTED' && resolve(e)));
    watch.on('error', () => undefined);
    await eventually(async () => {
      const r = await alice.call('Lock', 'Acquire', { header: header('labels-alice'), lock: 'app/w', sessionId: opened.sessionId, waitTimeoutMs: '0' });
      return r.acquired === true ? true : undefined;
    }, 5_000, 'app/w granted');
    const e = await granted;
    watch.cancel();
    expect(e.holder).toEqual({ handle: e.sessionId, clientName: 'watched', labels: { role: 'canary' } });
    expect(JSON.stringify(e)).not.toContain(opened.sessionId as string);
  });

  it('Session.List shows the admin every session with its labels', async () => {
    const listed = (await admin.call('Session', 'List', { limit: 1000 })).sessions as Obj[];
    expect(listed.find((s) => s.clientName === 'billing-worker')).toMatchObject({ identity: 'alice', labels: LABELS, locks: ['app/x'] });
    expect(JSON.stringify(listed)).not.toContain(sessionId);
  });

  it('the CLI prints them: describe, session list, and lock --wait 0 naming who holds it', async () => {
    const run = async (args: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ code: number; out: string; err: string }> => {
      let out = '';
      let err = '';
      const code = await runCli(['--endpoints', address, ...args], { stdout: (t) => void (out += t), stderr: (t) => void (err += t), env, signals: new EventEmitter() });
      return { code, out, err };
    };
    const described = await run(['describe', 'app/x']);
    expect(described.out).toMatch(/holder client: +"billing-worker" host=web-7 pid=4242 team=payments\n/);
    expect(described.out).toMatch(/waiter 1: +[0-9a-f]{16} "second"\n/);
    const asJson = JSON.parse((await run(['describe', 'app/x', '--json'])).out) as Obj;
    expect(asJson.holder).toMatchObject({ clientName: 'billing-worker', labels: LABELS });
    const listed = await run(['session', 'list']);
    expect(listed.out).toMatch(/alice {2}"billing-worker" {2}host=web-7 pid=4242 team=payments {2}age/);
    const aliceEnv = { ...process.env, FENCELOCK_AUTH_TOKEN: aliceToken };
    const held = await run(['lock', 'app/x', '--wait', '0', '--', 'true'], aliceEnv);
    expect(held.code).not.toBe(0);
    expect(held.err).toMatch(/is held by session [0-9a-f]{16} \("billing-worker" host=web-7 pid=4242 team=payments\)/);
    const badLabel = await run(['lock', 'app/y', '--label', 'Team=ops', '--wait', '0', '--', 'true'], aliceEnv);
    expect(badLabel.code).not.toBe(0);
    expect(badLabel.err).toMatch(/label key "Team"/);
  });

  it('fencelock lock --label gives the session its labels, with host and pid', async () => {
    const c = new FenceLockClient({ endpoints: [address], token: aliceToken });
    try {
      let out = '';
      const lockRun = runCli(['lock', 'app/z', '--label', 'team=ops', '--label', 'ticket=OPS 12', '--endpoints', address, '--', 'sleep', '3'], {
        stdout: (t) => void (out += t),
        stderr: (t) => void (out += t),
        env: { ...process.env, FENCELOCK_AUTH_TOKEN: aliceToken },
        signals: new EventEmitter(),
      });
      const holder = await eventually(async () => (await c.describe('app/z')).holder ?? undefined, 10_000, 'app/z held by the CLI');
      expect(holder.labels).toMatchObject({ team: 'ops', ticket: 'OPS 12', pid: String(process.pid) });
      expect(holder.labels.host).toBeTruthy();
      expect(await lockRun).toBe(0);
      expect(out).not.toMatch(/error/i);
    } finally {
      await c.close();
    }
  });
});

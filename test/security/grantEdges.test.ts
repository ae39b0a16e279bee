// Hostile callers at the edges issue 34 added, over real TLS connections to a real 3-node cluster with auth
// on: session labels on a Watch whose right is revoked, KeepAliveRequest.held naming other sessions' grants,
// and Lock.Revoke from a non-admin or from an admin demoted after its connection opened.
import * as grpc from '@grpc/grpc-js';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FenceLockClient } from '../../src/client';
import { eventually, LocalCluster } from '../integration/harness';
import { authedClient, statusOf, type AuthedClient } from './authKit';

type Obj = Record<string, unknown>;
type Grant = { lock: string; token: string };
const { PERMISSION_DENIED } = grpc.status;

let cluster: LocalCluster;
let admin: FenceLockClient;
const tokens = new Map<string, string>();
const closers: Array<() => unknown> = [];

const requestIds = new Map<string, number>();
/** The next request header of `clientId`, numbered from 1. */
function header(clientId: string): Obj {
  const n = (requestIds.get(clientId) ?? 0) + 1;
  requestIds.set(clientId, n);
  return { clientId, requestId: String(n) };
}

async function addresses(): Promise<{ leader: string; follower: string }> {
  const st = await admin.status();
  const leader = cluster.nodes.find((n) => n.id === st.leader)!;
  return { leader: leader.address, follower: cluster.nodes.find((n) => n !== leader)!.address };
}

/** A raw client of `user` (by its token) on `address` (default: the leader). */
async function as(user: string, address?: string): Promise<AuthedClient> {
  const c = authedClient(address ?? (await addresses()).leader, cluster.certsDir!, { token: tokens.get(user)! });
  closers.push(() => c.close());
  return c;
}

/** The admin (the harness's client certificate) as a raw client on `address`. */
function rawAdmin(address: string): AuthedClient {
  const dir = cluster.certsDir!;
  const c = authedClient(address, dir, { cert: { certPem: readFileSync(path.join(dir, 'client.pem'), 'utf8'), keyPem: readFileSync(path.join(dir, 'client-key.pem'), 'utf8') } });
  closers.push(() => c.close());
  return c;
}

/** A user with the given roles and a token for it. */
async function user(name: string, roles: string[]): Promise<void> {
  await admin.auth.userAdd(name);
  for (const role of roles) await admin.auth.userGrantRole(name, role);
  tokens.set(name, (await admin.auth.tokenIssue(name)).token);
}

/** A session of `c`, with a client name and labels. */
async function openSession(c: AuthedClient, clientId: string, labels: Record<string, string> = {}, clientName = ''): Promise<string> {
  return (await c.call('Session', 'Open', { header: header(clientId), ttlMs: '60000', clientName, labels })).sessionId as string;
}

async function acquire(c: AuthedClient, clientId: string, sessionId: string, lock: string): Promise<string> {
  const r = await c.call('Lock', 'Acquire', { header: header(clientId), lock, sessionId, waitTimeoutMs: '0' });
  expect(r.acquired).toBe(true);
  return r.token as string;
}

/** A Watch of `lock` whose events are collected, and how it ended (its status code). */
function watch(c: AuthedClient, lock: string): { events: Obj[]; ended: Promise<number>; next: (pred: (e: Obj) => boolean) => Promise<Obj> } {
  const stream = c.serverStream('Lock', 'Watch', { lock });
  const events: Obj[] = [];
  const waiters: Array<() => void> = [];
  stream.on('data', (e: Obj) => {
    events.push(e);
    for (const w of waiters.splice(0)) w();
  });
  const ended = new Promise<number>((resolve) => stream.on('error', (e: grpc.ServiceError) => resolve(e.code)));
  closers.push(() => stream.cancel());
  const next = (pred: (e: Obj) => boolean): Promise<Obj> =>
    new Promise((resolve) => {
      const look = (): void => {
        const found = events.find(pred);
        if (found) resolve(found);
        else waiters.push(look);
      };
      look();
    });
  return { events, ended, next };
}

/** One renewal on a KeepAlive stream, naming `held`: the answer's alive, reason and revoked grants. */
function renew(stream: grpc.ClientDuplexStream<Obj, Obj>, sessionId: string, renewalId: string, held: Grant[]): Promise<{ alive: unknown; reason: unknown; revoked: Grant[] }> {
  return new Promise((resolve, reject) => {
    const onData = (res: Obj): void => {
      if (res.renewalId !== renewalId) return;
      stream.off('data', onData);
      resolve({ alive: res.alive, reason: res.reason, revoked: (res.revoked as Grant[]).map((g) => ({ lock: g.lock, token: String(g.token) })) });
    };
    stream.on('data', onData);
    stream.once('error', reject);
    stream.write({ sessionId, renewalId, held });
  });
}

function keepAliveStream(c: AuthedClient): grpc.ClientDuplexStream<Obj, Obj> {
  const s = c.duplex('Session', 'KeepAlive');
  closers.push(() => s.cancel());
  return s;
}

beforeAll(async () => {
  cluster = await LocalCluster.create({ authAdmin: 'test' });
  cluster.startAll();
  admin = new FenceLockClient({ endpoints: cluster.endpoints, requestTimeoutMs: 3_000, totalTimeoutMs: 20_000 });
  await eventually(async () => ((await admin.auth.whoAmI()).authEnabled ? true : undefined), 30_000, 'auth on');
  await admin.auth.roleAdd('app');
  for (const perm of ['lock', 'write', 'read'] as const) await admin.auth.roleGrantPermission('app', perm, 'app/');
  await admin.auth.roleAdd('watcher');
  await admin.auth.roleGrantPermission('watcher', 'lock', 'app/labels');
  await admin.auth.roleAdd('ops');
  await admin.auth.roleGrantPermission('ops', 'admin', '');
  await user('alice', ['app']);
  await user('bob', ['app']);
  await user('wendy', ['watcher']);
  await user('ada', ['app', 'ops']);
}, 90_000);

afterAll(async () => {
  for (const close of closers.reverse()) {
    try {
      await close();
    } catch {
      // already closed
    }
  }
  await admin?.close();
  await cluster?.destroy();
});

describe('labels on a Watch whose right is revoked', () => {
  it('the Watch (on the leader and on a follower) ends PERMISSION_DENIED at the revoke; grants after it reach it with no labels', async () => {
    const { leader, follower } = await addresses();
    const bob = await as('bob');
    const wendyWatches = [watch(await as('wendy', leader), 'app/labels'), watch(await as('wendy', follower), 'app/labels')];
    // The admin's watch on the follower tells when the follower has applied the grant after the revoke.
    const adminOnFollower = watch(rawAdmin(follower), 'app/labels');

    const before = await openSession(bob, 'bob-labels', { team: 'payments' }, 'bob-worker');
    const token = await acquire(bob, 'bob-labels', before, 'app/labels');
    for (const w of wendyWatches) {
      const granted = await w.next((e) => e.kind === 'GRANTED');
      expect(granted.holder).toMatchObject({ clientName: 'bob-worker', labels: { team: 'payments' } });
    }
    await bob.call('Lock', 'Release', { header: header('bob-labels'), lock: 'app/labels', sessionId: before, token });
    for (const w of wendyWatches) await w.next((e) => e.kind === 'RELEASED');

    const revokedAt = (await admin.auth.userRevokeRole('wendy', 'watcher')).index;
    for (const w of wendyWatches) expect(await w.ended).toBe(PERMISSION_DENIED);

    const after = await openSession(bob, 'bob-labels', { team: 'after-the-revoke' }, 'bob-later');
    await acquire(bob, 'bob-labels', after, 'app/labels');
    const seen = await adminOnFollower.next((e) => e.kind === 'GRANTED' && BigInt(e.index as string) > revokedAt);
    expect(seen.holder).toMatchObject({ labels: { team: 'after-the-revoke' } });
    for (const w of wendyWatches) {
      expect(w.events.map((e) => e.kind)).toEqual(['GRANTED', 'RELEASED']);
      expect(JSON.stringify(w.events)).not.toMatch(/after-the-revoke|bob-later/);
    }
    // A Watch opened now is refused before it sends anything.
    const late = watch(await as('wendy', follower), 'app/labels');
    expect(await late.ended).toBe(PERMISSION_DENIED);
    expect(late.events).toEqual([]);
  });
});

describe("KeepAliveRequest.held naming other sessions' grants", () => {
  it('the answer is the same as for grants that never existed, and nothing changes for their holder', async () => {
    const alice = await as('alice');
    const bob = await as('bob');
    const owner = await openSession(alice, 'alice-held');
    const token = await acquire(alice, 'alice-held', owner, 'app/held');
    const adminWatch = watch(rawAdmin((await addresses()).leader), 'app/held');
    const prober = await openSession(bob, 'bob-held');
    const probe = keepAliveStream(bob);

    // Another session's real grant, the same lock under other tokens, a lock nobody knows, and a lock bob may
    // not even describe: every one is answered alike (not held by bob's session), so none tells bob anything.
    const probes: Grant[][] = [
      [{ lock: 'app/held', token }],
      [{ lock: 'app/held', token: String(BigInt(token) + 1n) }],
      [{ lock: 'app/held', token: String(BigInt(token) - 1n) }],
      [{ lock: 'app/never-granted', token }],
      [{ lock: 'secret/held', token }],
      [
        { lock: 'app/held', token },
        { lock: 'app/never-granted', token },
      ],
    ];
    let renewal = 0;
    for (const held of probes) {
      expect(await renew(probe, prober, String(++renewal), held)).toEqual({ alive: true, reason: '', revoked: held });
    }

    // Nothing changed: alice still holds under her token, learns of no revoke, and her fenced write is accepted.
    const d = await alice.call('Lock', 'Describe', { lock: 'app/held' });
    expect(d).toMatchObject({ held: true, token });
    expect(await renew(keepAliveStream(alice), owner, '1', [{ lock: 'app/held', token }])).toEqual({ alive: true, reason: '', revoked: [] });
    const wrote = await alice.call('KV', 'Write', { header: header('alice-held'), lock: 'app/held', token, sessionId: owner, ops: [{ type: 'PUT', key: 'app/held/k', value: Buffer.from('v') }] });
    expect(BigInt(wrote.index as string)).toBeGreaterThan(BigInt(token));
    // The first event of the lock after the probes is alice's own release: none of them ended her grant.
    await alice.call('Lock', 'Release', { header: header('alice-held'), lock: 'app/held', sessionId: owner, token });
    const first = await adminWatch.next(() => true);
    expect(first).toMatchObject({ kind: 'RELEASED', token, sessionId: d.holderSession });
  });
});

describe('Lock.Revoke from callers who may not', () => {
  it('a non-admin with a Watch and a waiting Acquire open: PERMISSION_DENIED, with or without the token; nothing changes', async () => {
    const alice = await as('alice');
    const bob = await as('bob');
    const holder = await openSession(bob, 'bob-revoke', { team: 'payments' });
    const token = await acquire(bob, 'bob-revoke', holder, 'app/revoke');
    const aliceWatch = watch(alice, 'app/revoke');
    const waiter = await openSession(alice, 'alice-revoke');
    const waiting = alice.call('Lock', 'Acquire', { header: header('alice-revoke'), lock: 'app/revoke', sessionId: waiter, waitTimeoutMs: '30000' }, 40_000);
    await eventually(async () => ((await admin.describe('app/revoke')).waiters.length === 1 ? true : undefined), 10_000, 'alice queued');

    for (const req of [{ lock: 'app/revoke' }, { lock: 'app/revoke', token }, { lock: 'app/revoke', token, reason: 'mine now' }]) {
      const err = await alice.call('Lock', 'Revoke', { header: header('alice-revoke'), ...req }).then(
        () => undefined,
        (e: grpc.ServiceError) => e,
      );
      expect(err?.code).toBe(PERMISSION_DENIED);
      expect(err?.details).not.toMatch(/payments/);
    }

    const d = await admin.describe('app/revoke');
    expect({ held: d.held, token: String(d.token), waiters: d.waiters.length }).toEqual({ held: true, token, waiters: 1 });
    expect(await renew(keepAliveStream(bob), holder, '1', [{ lock: 'app/revoke', token }])).toEqual({ alive: true, reason: '', revoked: [] });
    // bob's release is what hands the lock on: alice's watch sees RELEASED (never REVOKED), then her grant.
    await bob.call('Lock', 'Release', { header: header('bob-revoke'), lock: 'app/revoke', sessionId: holder, token });
    const granted = await waiting;
    expect(granted.acquired).toBe(true);
    await aliceWatch.next((e) => e.kind === 'GRANTED');
    expect(aliceWatch.events.map((e) => [e.kind, e.token])).toEqual([
      ['RELEASED', token],
      ['GRANTED', granted.token],
    ]);
  });

  it('an admin demoted after its connection opened: refused on that connection, nothing changes', async () => {
    const ada = await as('ada');
    const adaWatch = watch(ada, 'app/demoted');
    expect(await statusOf(ada.call('Session', 'List', {}))).toBe(grpc.status.OK); // an admin now, on this connection
    const bob = await as('bob');
    const holder = await openSession(bob, 'bob-demoted');
    const token = await acquire(bob, 'bob-demoted', holder, 'app/demoted');
    await adaWatch.next((e) => e.kind === 'GRANTED');

    await admin.auth.userRevokeRole('ada', 'ops');
    const err = await ada.call('Lock', 'Revoke', { header: header('ada-demoted'), lock: 'app/demoted', token }).then(
      () => undefined,
      (e: grpc.ServiceError) => e,
    );
    expect(err?.code).toBe(PERMISSION_DENIED);
    expect(err?.details).toMatch(/not an admin/);
    const d = await admin.describe('app/demoted');
    expect({ held: d.held, token: String(d.token) }).toEqual({ held: true, token });
    expect(await renew(keepAliveStream(bob), holder, '1', [{ lock: 'app/demoted', token }])).toEqual({ alive: true, reason: '', revoked: [] });
  });

  it('a revoke racing the demotion of its admin: applied before the demotion, or refused with nothing changed', async () => {
    const ada = await as('ada');
    const bob = await as('bob');
    const outcomes: string[] = [];
    for (let round = 0; round < 6; round++) {
      const lock = `app/race-${round}`;
      await admin.auth.userGrantRole('ada', 'ops');
      const holder = await openSession(bob, 'bob-race');
      const token = await acquire(bob, 'bob-race', holder, lock);
      // A waiter, so that an applied revoke's entry index is in its answer (the next holder's token).
      const next = await openSession(bob, 'bob-race');
      const waiting = bob.call('Lock', 'Acquire', { header: header('bob-race'), lock, sessionId: next, waitTimeoutMs: '30000' }, 40_000).catch(() => undefined);
      await eventually(async () => ((await admin.describe(lock)).waiters.length === 1 ? true : undefined), 10_000, 'a waiter');

      expect(await statusOf(ada.call('Session', 'List', {}))).toBe(grpc.status.OK); // an admin again, on this connection
      // Both in flight at once; which is sent first alternates.
      const demote = (): Promise<{ index: bigint }> => admin.auth.userRevokeRole('ada', 'ops');
      const revokeCall = (): Promise<{ ok: Obj } | { err: grpc.ServiceError }> =>
        ada.call('Lock', 'Revoke', { header: header(`ada-race-${round}`), lock, token }).then(
          (r) => ({ ok: r }),
          (e: grpc.ServiceError) => ({ err: e }),
        );
      const [demoted, revoke] = round % 2 === 0 ? await Promise.all([demote(), revokeCall()]) : await Promise.all([revokeCall(), demote()]).then(([r, d]) => [d, r] as const);
      const d = await admin.describe(lock);
      if ('ok' in revoke) {
        outcomes.push('applied');
        expect(BigInt(revoke.ok.nextToken as string)).toBeLessThan(demoted.index);
        expect(String(d.token)).toBe(revoke.ok.nextToken);
      } else {
        // Refused when proposed, or (passed then, applied after the demotion) by the entry's own check.
        outcomes.push(revoke.err.details.startsWith('PERMISSION_DENIED:') ? 'refused at apply' : 'refused');
        expect(revoke.err.code).toBe(PERMISSION_DENIED);
        expect({ held: d.held, token: String(d.token) }).toEqual({ held: true, token });
      }
      await bob.call('Session', 'Close', { header: header('bob-race'), sessionId: holder });
      await bob.call('Session', 'Close', { header: header('bob-race'), sessionId: next });
      await waiting;
    }
    process.stdout.write(`[grant edges] revoke vs demotion: ${outcomes.join(', ')}\n`);
  });
});

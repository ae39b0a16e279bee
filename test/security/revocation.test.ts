// Revocation reaches what is already open (issue 28, items 3 and 4), attacked over real TLS connections to a
// real 3-node cluster: streams opened with a token keep nothing once the token is revoked or the user deleted
// (Pipeline, KeepAlive, Watch end at the apply of the change), a deleted user's locks go to the next waiter
// with a higher token, and an admin ends a session over the CLI, its holder's client learning REVOKED.
import * as grpc from '@grpc/grpc-js';
import * as path from 'node:path';
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FenceLockClient, type FenceLockError } from '../../src/client';
import { eventually, LocalCluster, PROJECT_ROOT, runNode } from '../integration/harness';
import { authedClient, type AuthedClient } from './authKit';

type Obj = Record<string, unknown>;
const CLI = path.join(PROJECT_ROOT, 'dist/src/cli/main.js');
const { OK, UNAUTHENTICATED, PERMISSION_DENIED } = grpc.status;

let cluster: LocalCluster;
let admin: FenceLockClient;
const closers: Array<() => unknown> = [];

async function leaderAddress(): Promise<string> {
  const st = await admin.status();
  return cluster.nodes.find((n) => n.id === st.leader)!.address;
}

/** A user with lock/write/read on app/ and a fresh token for it. */
async function userWithToken(name: string): Promise<{ token: string; tokenId: string }> {
  await admin.auth.userAdd(name);
  await admin.auth.userGrantRole(name, 'app');
  const t = await admin.auth.tokenIssue(name);
  return { token: t.token, tokenId: t.tokenId };
}

async function raw(token: string): Promise<AuthedClient> {
  const c = authedClient(await leaderAddress(), cluster.certsDir!, { token });
  closers.push(() => c.close());
  return c;
}

const requestIds = new Map<string, number>();
/** The next request header of `clientId`, numbered from 1 (an unknown client id's request 2 is REQUEST_TOO_OLD). */
function header(clientId: string): Obj {
  const n = (requestIds.get(clientId) ?? 0) + 1;
  requestIds.set(clientId, n);
  return { clientId, requestId: String(n) };
}

/** How a stream ended: its status code, or 'open' if it had not within `ms`. */
function endOf(stream: grpc.ClientReadableStream<Obj> | grpc.ClientDuplexStream<Obj, Obj>, ms = 5_000): Promise<number | 'open'> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve('open'), ms);
    stream.on('error', (e: grpc.ServiceError) => {
      clearTimeout(timer);
      resolve(e.code);
    });
    stream.on('status', (s: grpc.StatusObject) => {
      clearTimeout(timer);
      resolve(s.code);
    });
  });
}

/** Sends one Pipeline call and waits for its answer (or the stream's end). */
function pipelineCall(stream: grpc.ClientDuplexStream<Obj, Obj>, callId: string, call: Obj): Promise<Obj | 'ended'> {
  return new Promise((resolve) => {
    const onData = (res: Obj): void => {
      if (res.callId !== callId) return;
      stream.off('data', onData);
      resolve(res);
    };
    stream.on('data', onData);
    stream.once('error', () => resolve('ended'));
    stream.write({ callId, ...call });
  });
}

/** One renewal on a KeepAlive stream: its answer, or 'ended'. */
function renew(stream: grpc.ClientDuplexStream<Obj, Obj>, sessionId: string, renewalId: string): Promise<Obj | 'ended'> {
  return new Promise((resolve) => {
    const onData = (res: Obj): void => {
      if (res.renewalId !== renewalId) return;
      stream.off('data', onData);
      resolve(res);
    };
    stream.on('data', onData);
    stream.once('error', () => resolve('ended'));
    stream.write({ sessionId, renewalId });
  });
}

/** A session, a Pipeline stream, a KeepAlive stream and a Watch of `watched`, all opened with `token`. */
async function openEverything(token: string, clientId: string, watched: string) {
  const c = await raw(token);
  const opened = await c.call('Session', 'Open', { header: header(clientId), ttlMs: '60000' });
  const sessionId = opened.sessionId as string;
  const pipeline = c.duplex('Pipeline', 'Calls');
  const keepAlive = c.duplex('Session', 'KeepAlive');
  const watch = c.serverStream('Lock', 'Watch', { lock: watched });
  const watchEvents: Obj[] = [];
  watch.on('data', (e: Obj) => watchEvents.push(e));
  const ends = { pipeline: endOf(pipeline, 20_000), keepAlive: endOf(keepAlive, 20_000), watch: endOf(watch, 20_000) };
  closers.push(() => {
    pipeline.cancel();
    keepAlive.cancel();
    watch.cancel();
  });
  return { c, sessionId, pipeline, keepAlive, watch, watchEvents, ends };
}

/** Resolves with `p`'s outcome, or 'pending' if it has none within `ms` (to tell "ended at once" from "did not"). */
function within<T>(p: Promise<T>, ms: number): Promise<T | 'pending'> {
  return Promise.race([p, new Promise<'pending'>((r) => setTimeout(() => r('pending'), ms))]);
}

beforeAll(async () => {
  cluster = await LocalCluster.create({ authAdmin: 'test' });
  cluster.startAll();
  admin = new FenceLockClient({ endpoints: cluster.endpoints, requestTimeoutMs: 3_000, totalTimeoutMs: 20_000 });
  await eventually(async () => ((await admin.auth.whoAmI()).authEnabled ? true : undefined), 30_000, 'auth on');
  await admin.auth.roleAdd('app');
  for (const perm of ['lock', 'write', 'read'] as const) await admin.auth.roleGrantPermission('app', perm, 'app/');
  // A key to read: the admin writes it under its own lock.
  const s = await admin.openSession({ ttlMs: 30_000 });
  const l = await s.acquire('app/data', { waitTimeoutMs: 0 });
  await l.write([{ put: 'app/secret', value: 'v1' }]);
  await l.release();
  await s.close();
}, 90_000);

afterAll(async () => {
  for (const close of closers) {
    try {
      await close();
    } catch {
      // already closed
    }
  }
  await admin?.close();
  await cluster?.destroy();
});

describe('revocation reaches open streams and sessions', () => {
  it('a revoked token: its open Pipeline, KeepAlive and Watch streams and its blocked Acquire end UNAUTHENTICATED at once; Get returns nothing more', async () => {
    const tom = await userWithToken('tom');
    const o = await openEverything(tom.token, 'tom-1', 'app/data');
    // A call in flight: an Acquire waiting in the queue of a lock the admin holds.
    const holder = await (await admin.openSession({ ttlMs: 30_000 })).acquire('app/held', { waitTimeoutMs: 0 });
    closers.push(() => holder.release());
    const blocked = o.c.call('Lock', 'Acquire', { header: header('tom-1'), lock: 'app/held', sessionId: o.sessionId, waitTimeoutMs: '30000' }, 40_000).then(
      () => OK,
      (e: grpc.ServiceError) => e.code,
    );
    await eventually(async () => ((await admin.describe('app/held')).waiters.length === 1 ? true : undefined), 10_000, 'tom queued');
    const get = { get: { key: 'app/secret' } };
    const before = (await pipelineCall(o.pipeline, '1', get)) as Obj;
    expect(before.code).toBe(OK);
    expect(Buffer.from((before.get as Obj).value as Buffer).toString()).toBe('v1');
    expect(await renew(o.keepAlive, o.sessionId, '1')).toMatchObject({ alive: true });

    await admin.auth.tokenRevoke(tom.tokenId);
    // At the apply of the revoke (the admin's call returns once the leader applied it): every stream ends.
    expect(await within(o.ends.pipeline, 3_000)).toBe(UNAUTHENTICATED);
    expect(await within(o.ends.keepAlive, 3_000)).toBe(UNAUTHENTICATED);
    expect(await within(o.ends.watch, 3_000)).toBe(UNAUTHENTICATED);
    expect(await within(blocked, 3_000)).toBe(UNAUTHENTICATED);
    // Nothing more is read or renewed with it, on the old stream (ended: no answer) or a new one.
    expect(['ended', 'pending']).toContain(await within(pipelineCall(o.pipeline, '2', get), 2_000));
    const fresh = o.c.duplex('Pipeline', 'Calls');
    closers.push(() => fresh.cancel());
    expect(await within(endOf(fresh), 5_000)).toBe(UNAUTHENTICATED);
  });

  it("a role's permission removed: the open Pipeline stream's Get is refused from then on, the Watch of the lock and of the semaphore end PERMISSION_DENIED", async () => {
    await admin.auth.roleAdd('reader-of-data');
    await admin.auth.roleGrantPermission('reader-of-data', 'read', 'app/secret');
    await admin.auth.roleGrantPermission('reader-of-data', 'lock', 'app/data');
    await admin.auth.userAdd('rob');
    await admin.auth.userGrantRole('rob', 'reader-of-data');
    const rob = await admin.auth.tokenIssue('rob');
    const c = await raw(rob.token);
    const pipeline = c.duplex('Pipeline', 'Calls');
    const watch = c.serverStream('Lock', 'Watch', { lock: 'app/data' });
    watch.on('data', () => undefined);
    const watchEnd = endOf(watch, 20_000);
    // A watch of the semaphore of the same name rests on the same right (issue 33): it ends with it.
    const permitWatch = c.serverStream('Lock', 'Watch', { semaphore: 'app/data' });
    permitWatch.on('data', () => undefined);
    const permitWatchEnd = endOf(permitWatch, 20_000);
    closers.push(() => {
      pipeline.cancel();
      watch.cancel();
      permitWatch.cancel();
    });
    const get = { get: { key: 'app/secret' } };
    expect(((await pipelineCall(pipeline, '1', get)) as Obj).code).toBe(OK);
    await admin.auth.roleRevokePermission('reader-of-data', 'read', 'app/secret');
    expect(((await pipelineCall(pipeline, '2', get)) as Obj).code).toBe(PERMISSION_DENIED);
    await admin.auth.roleRevokePermission('reader-of-data', 'lock', 'app/data');
    expect(await within(watchEnd, 3_000)).toBe(PERMISSION_DENIED);
    expect(await within(permitWatchEnd, 3_000)).toBe(PERMISSION_DENIED);
    // The auth tables are what the admin made: rob keeps the (now empty) role and his token.
    const listing = await admin.auth.list();
    expect(listing.roles.find((r) => r.name === 'reader-of-data')?.rules).toEqual([]);
    expect(listing.users.find((u) => u.name === 'rob')?.roles).toEqual(['reader-of-data']);
  });

  it("a deleted user: its streams end UNAUTHENTICATED, its sessions end, its lock goes to the next waiter with a higher token, and its old holder's fenced write is refused", async () => {
    const dan = await userWithToken('dan');
    const wes = await userWithToken('wes');
    const o = await openEverything(dan.token, 'dan-1', 'app/shared');
    const grant = await o.c.call('Lock', 'Acquire', { header: header('dan-1'), lock: 'app/shared', sessionId: o.sessionId, waitTimeoutMs: '0' });
    expect(grant.acquired).toBe(true);
    const write = (value: string): Promise<Obj> =>
      o.c.call('KV', 'Write', { header: header('dan-1'), lock: 'app/shared', token: grant.token, sessionId: o.sessionId, ops: [{ type: 'PUT', key: 'app/shared-key', value: Buffer.from(value) }] });
    await write('dan');
    expect(await renew(o.keepAlive, o.sessionId, '1')).toMatchObject({ alive: true });

    const wesClient = new FenceLockClient({ endpoints: cluster.endpoints, token: wes.token, requestTimeoutMs: 3_000, totalTimeoutMs: 40_000 });
    closers.push(() => wesClient.close());
    const wesSession = await wesClient.openSession({ ttlMs: 30_000 });
    const waiting = wesSession.acquire('app/shared', { waitTimeoutMs: 30_000 });
    await eventually(async () => ((await admin.describe('app/shared')).waiters.length === 1 ? true : undefined), 10_000, 'wes queued');

    await admin.auth.userDelete('dan');
    expect(await within(o.ends.pipeline, 3_000)).toBe(UNAUTHENTICATED);
    expect(await within(o.ends.keepAlive, 3_000)).toBe(UNAUTHENTICATED);
    expect(await within(o.ends.watch, 3_000)).toBe(UNAUTHENTICATED);
    // Dan's session ended in that entry: wes holds the lock, with a higher token.
    const wesLock = await within(waiting, 10_000);
    expect(wesLock).not.toBe('pending');
    const next = wesLock as Awaited<typeof waiting>;
    expect(next.token).toBeGreaterThan(BigInt(grant.token as string));
    expect((await admin.auth.sessionList()).filter((s) => s.identity === 'dan')).toEqual([]);
    // Dan's fenced write under the old grant is refused, and the key keeps dan's value under his token.
    const refused = await write('dan again').then(
      () => 'ok',
      (e: grpc.ServiceError) => e.code,
    );
    expect(refused).toBe(UNAUTHENTICATED);
    const key = await admin.get('app/shared-key');
    expect(Buffer.from(key.value ?? []).toString()).toBe('dan');
    expect(key.token).toBe(BigInt(grant.token as string));
    await next.write([{ put: 'app/shared-key', value: 'wes' }]);
    // The auth tables are exactly what the admin made: no dan, no token of his.
    const listing = await admin.auth.list();
    expect(listing.users.some((u) => u.name === 'dan')).toBe(false);
    expect(listing.tokens.some((t) => t.user === 'dan')).toBe(false);
  });

  it('fencelock session list / session revoke: the holder loses its session with REVOKED (onLost, withLock signal), the waiter gets a higher token, and `lock -- CMD` exits 4', async () => {
    const ria = await userWithToken('ria');
    const riaClient = new FenceLockClient({ endpoints: cluster.endpoints, token: ria.token, requestTimeoutMs: 3_000, totalTimeoutMs: 20_000 });
    closers.push(() => riaClient.close());
    const session = await riaClient.openSession({ ttlMs: 6_000, name: 'ria-app' });
    const lost = new Promise<FenceLockError>((resolve) => session.onLost(resolve));
    const held = await session.acquire('app/cli', { waitTimeoutMs: 0 });
    const waiter = admin.openSession({ ttlMs: 30_000 }).then((s) => s.acquire('app/cli', { waitTimeoutMs: 30_000 }));
    await eventually(async () => ((await admin.describe('app/cli')).waiters.length === 1 ? true : undefined), 10_000, 'admin queued');

    const cli = (args: string[], env: Record<string, string> = {}) => runNode([CLI, ...args, '--endpoints', cluster.endpoints.join(',')], { env, timeoutMs: 30_000 });
    const listed = await cli(['session', 'list', '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    const rows = (JSON.parse(listed.stdout) as { sessions: Array<Record<string, unknown>> }).sessions;
    const row = rows.find((s) => s.handle === session.publicId);
    expect(row).toMatchObject({ identity: 'ria', clientName: 'ria-app', locks: ['app/cli'] });
    expect(listed.stdout).not.toContain(session.id); // never the secret id

    // Nobody but an admin may end another's session, nor list them.
    const riaCli = await cli(['session', 'revoke', session.publicId], { FENCELOCK_AUTH_TOKEN: ria.token });
    expect(riaCli.code).not.toBe(0);
    expect(riaCli.stderr).toContain('not an admin');

    const revoked = await cli(['session', 'revoke', session.publicId, '--json']);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(JSON.parse(revoked.stdout)).toEqual({ handle: session.publicId, released: ['app/cli'] });
    const err = await within(lost, 10_000);
    expect(err).not.toBe('pending');
    expect((err as FenceLockError).reason).toBe('REVOKED');
    const next = await within(waiter, 10_000);
    expect(next).not.toBe('pending');
    expect((next as { token: bigint }).token).toBeGreaterThan(held.token);
    await (next as { release(): Promise<unknown> }).release();

    // withLock: the signal aborts with REVOKED.
    let abortReason: unknown;
    const body = riaClient.withLock(
      'app/with',
      (_token, _lock, signal) =>
        new Promise<void>((resolve) => {
          signal.addEventListener('abort', () => {
            abortReason = signal.reason;
            resolve();
          });
        }),
      { waitTimeoutMs: 0 },
    );
    const inWith = await eventually(async () => (await admin.auth.sessionList()).find((s) => s.locks.includes('app/with')), 10_000, 'the withLock session');
    await admin.auth.sessionRevoke(inWith.handle);
    // withLock then fails to release what is no longer its own: that is its report of the loss.
    expect(await within(body.then(() => 'released', () => 'lost'), 10_000)).toBe('lost');
    expect((abortReason as FenceLockError).reason).toBe('REVOKED');

    // fencelock lock NAME -- CMD: the command is stopped and the CLI exits 4 (lock lost).
    const child = spawn(process.execPath, [CLI, 'lock', 'app/cmd', '--ttl', '6000', '--endpoints', cluster.endpoints.join(','), '--', process.execPath, '-e', 'setTimeout(() => {}, 60000)'], {
      env: { ...process.env, FENCELOCK_AUTH_TOKEN: ria.token },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    closers.push(() => child.kill('SIGKILL'));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const cmdSession = await eventually(async () => (await admin.auth.sessionList()).find((s) => s.locks.includes('app/cmd')), 20_000, 'the CLI holds app/cmd');
    expect(cmdSession.identity).toBe('ria');
    const ended = await cli(['session', 'revoke', cmdSession.handle]);
    expect(ended.code, ended.stderr).toBe(0);
    expect(await within(exited, 15_000)).toBe(4);
  });
});

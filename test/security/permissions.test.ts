// The permission matrix (docs/auth.md): every RPC, called over a real TLS connection to a real node process
// by every kind of caller (nobody, a bad token, a certificate naming a stranger, a user without roles, a
// reader, a lock user by token and by certificate, the admin), must be allowed or refused exactly as the
// rules say, and a refused call must change nothing.
import * as grpc from '@grpc/grpc-js';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withoutIpServerName } from '../../src/client/ipServerName';
import { eventually, LocalCluster } from '../integration/harness';
import { v1 } from '../integration/rawClient';
import { authedClient, certFor, statusOf, type AuthedClient, type Who } from './authKit';

const { OK, UNAUTHENTICATED, PERMISSION_DENIED } = grpc.status;
type Obj = Record<string, unknown>;

let cluster: LocalCluster;
let leader: string;
const clients = new Map<string, AuthedClient>();
const sessions = new Map<string, string>();
const nextRequest = new Map<string, number>();
/** A token of bob's that only the admin's Auth.TokenRevoke case revokes. */
let spareTokenId = '';

/** A request header of `who`'s own client id, request ids from 1. */
function header(who: string): Obj {
  const n = (nextRequest.get(who) ?? 0) + 1;
  nextRequest.set(who, n);
  return { clientId: `matrix-${who}`, requestId: String(n) };
}

function client(who: string): AuthedClient {
  const c = clients.get(who);
  if (!c) throw new Error(`no client ${who}`);
  return c;
}

const admin = (): AuthedClient => client('admin');

async function adminChange(method: string, req: Obj): Promise<Obj> {
  return admin().call('Auth', method, { header: header('admin'), ...req });
}

/** Every caller kind of the matrix, with what it is. */
const CALLERS = ['nobody', 'badToken', 'stranger', 'bob', 'rita', 'alice', 'carol', 'admin'] as const;
type CallerName = (typeof CALLERS)[number];

/** Users (alice by token, carol by certificate) with lock/write/read on app/; rita reads app/; bob has no role. */
async function setUp(): Promise<Record<CallerName, Who>> {
  const certsDir = cluster.certsDir!;
  const adminCert = { certPem: readFileSync(path.join(certsDir, 'client.pem'), 'utf8'), keyPem: readFileSync(path.join(certsDir, 'client-key.pem'), 'utf8') };
  clients.set('admin', authedClient(leader, certsDir, { cert: adminCert }));
  await eventually(async () => ((await admin().call('Auth', 'WhoAmI', {})).authEnabled === true ? true : undefined), 20_000, 'auth enabled by the first leader');
  await adminChange('RoleAdd', { role: 'app' });
  for (const permission of ['LOCK', 'WRITE', 'READ']) await adminChange('RoleGrantPermission', { role: 'app', rule: { permission, prefix: 'app/' } });
  await adminChange('RoleAdd', { role: 'empty' });
  await adminChange('RoleAdd', { role: 'reader' });
  await adminChange('RoleGrantPermission', { role: 'reader', rule: { permission: 'READ', prefix: 'app/' } });
  for (const [user, role] of [['alice', 'app'], ['carol', 'app'], ['rita', 'reader'], ['bob', '']] as const) {
    await adminChange('UserAdd', { user });
    if (role) await adminChange('UserGrantRole', { user, role });
  }
  const token = async (user: string): Promise<string> => (await adminChange('TokenIssue', { user })).token as string;
  spareTokenId = (await adminChange('TokenIssue', { user: 'bob' })).tokenId as string;
  return {
    nobody: {},
    badToken: { token: `flt_${'0'.repeat(16)}_${'A'.repeat(43)}` },
    stranger: { cert: certFor(certsDir, 'mallory') },
    bob: { token: await token('bob') },
    rita: { token: await token('rita') },
    alice: { token: await token('alice') },
    carol: { cert: certFor(certsDir, 'carol') },
    admin: { cert: adminCert },
  };
}

beforeAll(async () => {
  cluster = await LocalCluster.create({ authAdmin: 'test' });
  cluster.startAll();
  leader = await eventually(leaderAddress, 30_000, 'a leader');
  const who = await setUp();
  for (const name of CALLERS) if (name !== 'admin') clients.set(name, authedClient(leader, cluster.certsDir!, who[name]));
  for (const name of ['bob', 'rita', 'alice', 'carol', 'admin'] as const) {
    const opened = await client(name).call('Session', 'Open', { header: header(name), ttlMs: '30000' });
    sessions.set(name, opened.sessionId as string);
  }
}, 90_000);

afterAll(async () => {
  for (const c of clients.values()) c.close();
  await cluster?.destroy();
});

async function leaderAddress(): Promise<string | undefined> {
  for (const n of cluster.nodes) {
    const c = authedClient(n.address, cluster.certsDir!, { cert: { certPem: readFileSync(path.join(cluster.certsDir!, 'client.pem'), 'utf8'), keyPem: readFileSync(path.join(cluster.certsDir!, 'client-key.pem'), 'utf8') } });
    try {
      const st = await c.call('Cluster', 'Status', {}, 2_000);
      if (st.role === 'leader') return n.address;
    } catch {
      // down or not ready
    } finally {
      c.close();
    }
  }
  return undefined;
}

/** The session a caller uses: its own when it has one, else the admin's (which it must not be able to use). */
const sessionOf = (who: CallerName): string => sessions.get(who) ?? sessions.get('admin')!;

const UNAUTH: Record<CallerName, number> = { nobody: UNAUTHENTICATED, badToken: UNAUTHENTICATED, stranger: PERMISSION_DENIED, bob: PERMISSION_DENIED, rita: PERMISSION_DENIED, alice: PERMISSION_DENIED, carol: PERMISSION_DENIED, admin: OK };

/** The expected code per caller: `allowed` get OK, the rest what UNAUTH says. */
function expected(allowed: readonly CallerName[]): Record<CallerName, number> {
  return Object.fromEntries(CALLERS.map((c) => [c, allowed.includes(c) ? OK : UNAUTH[c]])) as Record<CallerName, number>;
}

interface Case {
  name: string;
  call: (who: CallerName) => Promise<unknown>;
  allowed: readonly CallerName[];
}

const lockUsers = ['alice', 'carol', 'admin'] as const;
const readers = ['rita', 'alice', 'carol', 'admin'] as const;
const users = ['bob', 'rita', 'alice', 'carol', 'admin'] as const;

/** A server stream read to its end: resolves at the end, rejects with its error. */
function readToEnd(stream: grpc.ClientReadableStream<Obj>): Promise<void> {
  return new Promise((resolve, reject) => {
    stream.on('data', () => undefined);
    stream.on('end', () => resolve());
    stream.on('error', reject);
  });
}

const CASES: Case[] = [
  { name: 'Session.Open', allowed: users, call: (w) => client(w).call('Session', 'Open', { header: header(w), ttlMs: '30000' }) },
  { name: 'Cluster.Status', allowed: users, call: (w) => client(w).call('Cluster', 'Status', {}) },
  { name: 'Cluster.Snapshot (a backup)', allowed: ['admin'], call: (w) => readToEnd(client(w).serverStream('Cluster', 'Snapshot', {})) },
  { name: 'Lock.Acquire inside the prefix', allowed: lockUsers, call: (w) => client(w).call('Lock', 'Acquire', { header: header(w), lock: `app/${w}`, sessionId: sessionOf(w), waitTimeoutMs: '0' }) },
  { name: 'Lock.Acquire outside the prefix', allowed: ['admin'], call: (w) => client(w).call('Lock', 'Acquire', { header: header(w), lock: `other/${w}`, sessionId: sessionOf(w), waitTimeoutMs: '0' }) },
  { name: 'Lock.Describe inside the prefix', allowed: lockUsers, call: (w) => client(w).call('Lock', 'Describe', { lock: 'app/alice' }) },
  { name: 'Lock.Describe outside the prefix', allowed: ['admin'], call: (w) => client(w).call('Lock', 'Describe', { lock: 'other/x' }) },
  // Semaphores take the `lock` permission on their name, as locks do (docs/auth.md).
  { name: 'Semaphore.Acquire inside the prefix', allowed: lockUsers, call: (w) => client(w).call('Semaphore', 'Acquire', { header: header(w), name: `app/sem-${w}`, sessionId: sessionOf(w), permits: 2, waitTimeoutMs: '0' }) },
  { name: 'Semaphore.Acquire outside the prefix', allowed: ['admin'], call: (w) => client(w).call('Semaphore', 'Acquire', { header: header(w), name: `other/sem-${w}`, sessionId: sessionOf(w), permits: 2, waitTimeoutMs: '0' }) },
  { name: 'Semaphore.Describe inside the prefix', allowed: lockUsers, call: (w) => client(w).call('Semaphore', 'Describe', { name: 'app/sem' }) },
  { name: 'Semaphore.Describe outside the prefix', allowed: ['admin'], call: (w) => client(w).call('Semaphore', 'Describe', { name: 'other/sem' }) },
  // Any user may list locks; each sees only those it may lock (test/wire/lockList.test.ts checks which).
  { name: 'Lock.List', allowed: ['bob', 'rita', 'alice', 'carol', 'admin'], call: (w) => client(w).call('Lock', 'List', { prefix: '' }) },
  { name: 'KV.Get inside the prefix', allowed: readers, call: (w) => client(w).call('KV', 'Get', { key: 'app/k' }) },
  { name: 'KV.Get outside the prefix', allowed: ['admin'], call: (w) => client(w).call('KV', 'Get', { key: 'other/k' }) },
  { name: 'KV.List of the prefix', allowed: readers, call: (w) => client(w).call('KV', 'List', { prefix: 'app/' }) },
  { name: 'KV.List of everything', allowed: ['admin'], call: (w) => client(w).call('KV', 'List', { prefix: '' }) },
  { name: 'KV.Move', allowed: ['admin'], call: (w) => client(w).call('KV', 'Move', { header: header(w), prefix: 'nothing-here/', toLock: 'app/moved' }) },
  { name: 'Auth.List', allowed: ['admin'], call: (w) => client(w).call('Auth', 'List', {}) },
  { name: 'Auth.RoleAdd', allowed: ['admin'], call: (w) => client(w).call('Auth', 'RoleAdd', { header: header(w), role: `made-by-${w}` }) },
  { name: 'Auth.UserAdd', allowed: ['admin'], call: (w) => client(w).call('Auth', 'UserAdd', { header: header(w), user: `made-by-${w}` }) },
  { name: 'Auth.UserGrantRole', allowed: ['admin'], call: (w) => client(w).call('Auth', 'UserGrantRole', { header: header(w), user: 'bob', role: 'empty' }) },
  { name: 'Auth.TokenIssue', allowed: ['admin'], call: (w) => client(w).call('Auth', 'TokenIssue', { header: header(w), user: 'alice' }) },
  { name: 'Auth.RoleGrantPermission', allowed: ['admin'], call: (w) => client(w).call('Auth', 'RoleGrantPermission', { header: header(w), role: 'empty', rule: { permission: 'READ', prefix: 'zzz/' } }) },
  { name: 'Auth.RoleRevokePermission', allowed: ['admin'], call: (w) => client(w).call('Auth', 'RoleRevokePermission', { header: header(w), role: 'empty', rule: { permission: 'READ', prefix: 'zzz/' } }) },
  { name: 'Auth.RoleSetQuota', allowed: ['admin'], call: (w) => client(w).call('Auth', 'RoleSetQuota', { header: header(w), role: 'empty', name: 'sessions', value: '5' }) },
  { name: 'Auth.UserRevokeRole', allowed: ['admin'], call: (w) => client(w).call('Auth', 'UserRevokeRole', { header: header(w), user: 'bob', role: 'empty' }) },
  { name: 'Auth.RoleDelete', allowed: ['admin'], call: (w) => client(w).call('Auth', 'RoleDelete', { header: header(w), role: 'made-by-admin' }) },
  { name: 'Auth.UserDelete', allowed: ['admin'], call: (w) => client(w).call('Auth', 'UserDelete', { header: header(w), user: 'made-by-admin' }) },
  { name: 'Auth.TokenRevoke', allowed: ['admin'], call: (w) => client(w).call('Auth', 'TokenRevoke', { header: header(w), tokenId: spareTokenId }) },
  { name: 'Auth.WhoAmI', allowed: ['nobody', 'stranger', 'bob', 'rita', 'alice', 'carol', 'admin'], call: (w) => client(w).call('Auth', 'WhoAmI', {}) },
];

describe('permission matrix: every RPC x every kind of caller', () => {
  for (const c of CASES) {
    it(c.name, async () => {
      const want = expected(c.allowed);
      const got: Partial<Record<CallerName, number>> = {};
      for (const who of CALLERS) got[who] = await statusOf(c.call(who));
      expect(got).toEqual(want);
    });
  }

  it('the refused changes changed nothing: only the admin made anything', async () => {
    const list = await admin().call('Auth', 'List', {});
    const users = (list.users as Array<{ name: string }>).map((u) => u.name);
    const roles = (list.roles as Array<{ name: string }>).map((r) => r.name);
    for (const who of CALLERS) {
      expect(users, who).not.toContain(`made-by-${who}`); // the admin's was deleted by its UserDelete case
      expect(roles, who).not.toContain(`made-by-${who}`);
    }
    expect((list.tokens as Array<{ id: string }>).map((t) => t.id)).not.toContain(spareTokenId);
    const empty = (list.roles as Array<{ name: string; rules: unknown[]; quotas: Array<{ name: string; value: string }> }>).find((r) => r.name === 'empty');
    expect(empty?.rules).toEqual([]);
    expect(empty?.quotas).toEqual([{ name: 'sessions', value: '5' }]);
  });
});

describe('writes, sessions and streams', () => {
  it('KV.Write: only lock users, only inside their prefix, and a refused write changes nothing', async () => {
    const grant = await client('alice').call('Lock', 'Acquire', { header: header('alice'), lock: 'app/w', sessionId: sessionOf('alice'), waitTimeoutMs: '0' });
    const write = (who: CallerName, key: string): Promise<Obj> =>
      client(who).call('KV', 'Write', { header: header(who), lock: 'app/w', token: grant.token, sessionId: sessionOf('alice'), ops: [{ type: 'PUT', key, value: Buffer.from(who) }] });
    expect(await statusOf(write('alice', 'app/k'))).toBe(OK);
    // alice's own session, outside her prefix: refused before any key changes.
    expect(await statusOf(write('alice', 'other/k'))).toBe(PERMISSION_DENIED);
    // Everyone else presenting alice's session id: refused, even the admin.
    for (const who of ['nobody', 'badToken', 'stranger', 'bob', 'rita', 'carol', 'admin'] as const) {
      expect(await statusOf(write(who, 'app/k')), who).toBe(UNAUTH[who] === OK ? PERMISSION_DENIED : UNAUTH[who]);
    }
    const stored = await admin().call('KV', 'Get', { key: 'app/k' });
    expect(Buffer.from(stored.value as Buffer).toString()).toBe('alice');
    expect((await admin().call('KV', 'Get', { key: 'other/k' })).found).toBe(false);
  });

  it('a session is usable only by the identity that opened it (Release, Close, KeepAlive)', async () => {
    const grant = await client('carol').call('Lock', 'Acquire', { header: header('carol'), lock: 'app/carol-own', sessionId: sessionOf('carol'), waitTimeoutMs: '0' });
    const release = (who: CallerName): Promise<Obj> =>
      client(who).call('Lock', 'Release', { header: header(who), lock: 'app/carol-own', sessionId: sessionOf('carol'), token: grant.token });
    for (const who of ['alice', 'admin'] as const) {
      const err = await release(who).catch((e: grpc.ServiceError) => e);
      expect((err as grpc.ServiceError).code).toBe(PERMISSION_DENIED);
      expect((err as grpc.ServiceError).metadata.get('fencelock-reason')).toEqual(['NOT_SESSION_OWNER']);
    }
    expect(await statusOf(client('alice').call('Session', 'Close', { header: header('alice'), sessionId: sessionOf('carol') }))).toBe(PERMISSION_DENIED);
    const described = await admin().call('Lock', 'Describe', { lock: 'app/carol-own' });
    expect(described.held).toBe(true);
    // A keepalive for carol's session from alice ends the stream; carol's own is answered.
    const stolen = client('alice').duplex('Session', 'KeepAlive');
    const stolenEnd = new Promise<number>((resolve) => stolen.on('error', (e: grpc.ServiceError) => resolve(e.code)));
    stolen.write({ sessionId: sessionOf('carol'), renewalId: '1' });
    expect(await stolenEnd).toBe(PERMISSION_DENIED);
    const own = client('carol').duplex('Session', 'KeepAlive');
    const answer = new Promise<Obj>((resolve) => own.once('data', resolve));
    own.write({ sessionId: sessionOf('carol'), renewalId: '1' });
    expect((await answer).alive).toBe(true);
    own.end();
    expect(await statusOf(release('carol'))).toBe(OK);
  });

  it('Pipeline calls are checked as their unary twins', async () => {
    const call = (who: CallerName, request: Obj): Promise<Obj> =>
      new Promise((resolve, reject) => {
        const stream = client(who).duplex('Pipeline', 'Calls');
        stream.on('data', (res: Obj) => {
          resolve(res);
          stream.end();
        });
        stream.on('error', reject);
        stream.write({ callId: '1', ...request });
      });
    const code = async (who: CallerName, request: Obj): Promise<number> => {
      try {
        return Number((await call(who, request)).code);
      } catch (err) {
        return (err as grpc.ServiceError).code;
      }
    };
    const get = (key: string): Obj => ({ get: { key } });
    const acquire = (who: CallerName, lock: string): Obj => ({ acquire: { header: header(who), lock, sessionId: sessionOf(who), waitTimeoutMs: '0' } });
    for (const who of CALLERS) {
      expect(await code(who, get('app/k')), `${who} get`).toBe(expected(readers)[who]);
      expect(await code(who, acquire(who, `app/pipe-${who}`)), `${who} acquire`).toBe(expected(lockUsers)[who]);
    }
  });

  it('Lock.Watch: refused without the lock permission, and ended when it is revoked', async () => {
    const watchCode = (who: CallerName): Promise<number> =>
      new Promise((resolve) => {
        const stream = client(who).serverStream('Lock', 'Watch', { lock: 'app/watched' });
        stream.on('error', (e: grpc.ServiceError) => resolve(e.code));
        stream.on('data', () => undefined);
        // A watch that is allowed stays open: give it a moment, then call that OK.
        setTimeout(() => {
          stream.cancel();
          resolve(OK);
        }, 1_000);
      });
    for (const who of CALLERS) expect(await watchCode(who), who).toBe(expected(lockUsers)[who]);

    await adminChange('RoleAdd', { role: 'watcher' });
    await adminChange('RoleGrantPermission', { role: 'watcher', rule: { permission: 'LOCK', prefix: 'app/watched' } });
    await adminChange('UserGrantRole', { user: 'bob', role: 'watcher' });
    const stream = client('bob').serverStream('Lock', 'Watch', { lock: 'app/watched' });
    const ended = new Promise<number>((resolve) => stream.on('error', (e: grpc.ServiceError) => resolve(e.code)));
    stream.on('data', () => undefined);
    await new Promise((r) => setTimeout(r, 300));
    await adminChange('UserRevokeRole', { user: 'bob', role: 'watcher' });
    expect(await ended).toBe(PERMISSION_DENIED);
  });

  it('a revoked permission and a revoked token take effect at once', async () => {
    await adminChange('UserAdd', { user: 'dora' });
    await adminChange('UserGrantRole', { user: 'dora', role: 'app' });
    const issued = await adminChange('TokenIssue', { user: 'dora' });
    const dora = authedClient(leader, cluster.certsDir!, { token: issued.token as string });
    try {
      const opened = await dora.call('Session', 'Open', { header: header('dora'), ttlMs: '30000' });
      const grant = await dora.call('Lock', 'Acquire', { header: header('dora'), lock: 'app/dora', sessionId: opened.sessionId, waitTimeoutMs: '0' });
      const write = (): Promise<Obj> => dora.call('KV', 'Write', { header: header('dora'), lock: 'app/dora', token: grant.token, sessionId: opened.sessionId, ops: [{ type: 'PUT', key: 'app/dora', value: Buffer.from('x') }] });
      expect(await statusOf(write())).toBe(OK);
      await adminChange('RoleRevokePermission', { role: 'app', rule: { permission: 'WRITE', prefix: 'app/' } });
      expect(await statusOf(write())).toBe(PERMISSION_DENIED);
      await adminChange('RoleGrantPermission', { role: 'app', rule: { permission: 'WRITE', prefix: 'app/' } });
      expect(await statusOf(write())).toBe(OK);
      await adminChange('TokenRevoke', { tokenId: issued.tokenId });
      expect(await statusOf(write())).toBe(UNAUTHENTICATED);
      // The holder can still let go once the admin revokes its lock permission (a revoke never traps a holder):
      // with a new token and no lock permission, Release is still allowed.
      const again = await adminChange('TokenIssue', { user: 'dora' });
      const dora2 = authedClient(leader, cluster.certsDir!, { token: again.token as string });
      await adminChange('UserRevokeRole', { user: 'dora', role: 'app' });
      expect(await statusOf(dora2.call('Lock', 'Release', { header: header('dora'), lock: 'app/dora', sessionId: opened.sessionId, token: grant.token }))).toBe(OK);
      dora2.close();
    } finally {
      dora.close();
    }
  });

  it('the last admin cannot be removed', async () => {
    const err = await adminChange('UserRevokeRole', { user: 'test', role: 'root' }).catch((e: grpc.ServiceError) => e);
    expect((err as grpc.ServiceError).code).toBe(grpc.status.FAILED_PRECONDITION);
    expect((err as grpc.ServiceError).metadata.get('fencelock-reason')).toEqual(['LAST_ADMIN']);
    const who = await admin().call('Auth', 'WhoAmI', {});
    expect(who.identity).toBe('test');
    expect(who.roles).toEqual(['root']);
  });
});

describe('hostile input to the Auth service, KV.Move and the authorization metadata', () => {
  /** The code and message a call ends with. */
  async function refusal(p: Promise<unknown>): Promise<{ code: number; details: string }> {
    try {
      await p;
      return { code: OK, details: '' };
    } catch (err) {
      return { code: (err as grpc.ServiceError).code, details: (err as grpc.ServiceError).details };
    }
  }

  it('malformed authorization metadata is UNAUTHENTICATED, never echoed, and no caller kind slips through', async () => {
    const secretish = 'flt_0123456789abcdef_' + 'S'.repeat(43);
    const bad = ['', 'Bearer', `Basic ${secretish}`, `Bearer ${secretish}x`, `Bearer flt_XYZ_${'A'.repeat(43)}`, `Bearer ${'A'.repeat(5000)}`, `bearer  ${secretish} extra`];
    for (const value of bad) {
      const md = new grpc.Metadata();
      md.set('authorization', value);
      const r = await refusal(
        new Promise((resolve, reject) => {
          const raw = new v1.Auth!(leader, withoutIpServerName(grpc.credentials.createSsl(readFileSync(path.join(cluster.certsDir!, 'ca.pem')))));
          (raw as unknown as { UserAdd: (...a: unknown[]) => void }).UserAdd({ header: header('hostile'), user: 'mallory' }, md, (err: grpc.ServiceError | null, res: Obj) => {
            raw.close();
            if (err) reject(err);
            else resolve(res);
          });
        }),
      );
      expect(r.code, JSON.stringify(value.slice(0, 40))).toBe(UNAUTHENTICATED);
      expect(r.details).not.toContain('SSSS');
    }
    const users = ((await admin().call('Auth', 'List', {})).users as Array<{ name: string }>).map((u) => u.name);
    expect(users).not.toContain('mallory');
  });

  // Regression: a malformed token id was refused naming `tokenId` (the log entry's field), not the proto's
  // `token_id`; each message now starts with the request's own field name.
  it('bad names, permissions, quotas and token ids are INVALID_ARGUMENT naming the field, and change nothing', async () => {
    const before = await admin().call('Auth', 'List', {});
    const cases: Array<[string, Obj, RegExp]> = [
      ['UserAdd', { user: '' }, /^user: must not be empty/],
      ['UserAdd', { user: 'a b' }, /^user: must be letters, digits/],
      ['UserAdd', { user: 'x'.repeat(300) }, /^user: is 300 bytes/],
      ['RoleAdd', { role: '../etc' }, /^role: must be letters, digits/],
      ['UserGrantRole', { user: 'bob', role: '-x' }, /^role: must be letters, digits/],
      ['RoleGrantPermission', { role: 'empty', rule: { permission: 'PERMISSION_UNSPECIFIED', prefix: 'a/' } }, /^rule\.permission: /],
      ['RoleGrantPermission', { role: 'empty', rule: { permission: 'ADMIN', prefix: 'a/' } }, /^rule\.prefix: must be empty for ADMIN/],
      ['RoleGrantPermission', { role: 'empty', rule: { permission: 'READ', prefix: 'p'.repeat(600) } }, /^rule\.prefix: is 600 bytes/],
      ['RoleSetQuota', { role: 'empty', name: 'bogus', value: '1' }, /^name: must be one of the quotas/],
      ['RoleSetQuota', { role: 'empty', name: 'sessions', value: '9007199254740993' }, /^value: /],
      ['RoleSetQuota', { role: 'empty', name: 'sessions', value: '1000000000001' }, /^value: must be at most 1000000000000/],
      ['TokenRevoke', { tokenId: 'not-hex' }, /^token_id: must be 16 lowercase hex digits/],
      ['TokenRevoke', { tokenId: '0123456789ABCDEF' }, /^token_id: must be 16 lowercase hex digits/],
      ['TokenIssue', { user: '' }, /^user: must not be empty/],
    ];
    for (const [method, req, field] of cases) {
      const r = await refusal(admin().call('Auth', method, { header: header('admin'), ...req }));
      expect(r.code, `${method} ${JSON.stringify(req).slice(0, 60)}: ${r.details}`).toBe(grpc.status.INVALID_ARGUMENT);
      expect(r.details, method).toMatch(field);
    }
    expect(await admin().call('Auth', 'List', {})).toEqual(before);
  });

  it('KV.Move: neither key nor prefix, an empty or oversized lock name, a key not UTF-8-clean: INVALID_ARGUMENT', async () => {
    const cases: Obj[] = [{ toLock: 'app/x' }, { key: 'app/k', toLock: '' }, { key: 'app/k', toLock: 'l'.repeat(300) }, { key: '', toLock: 'app/x' }, { prefix: 'p'.repeat(600), toLock: 'app/x' }];
    for (const req of cases) {
      expect((await refusal(admin().call('KV', 'Move', { header: header('admin'), ...req }))).code, JSON.stringify(req).slice(0, 60)).toBe(grpc.status.INVALID_ARGUMENT);
    }
    const stored = await admin().call('KV', 'Get', { key: 'app/k' });
    expect(stored.lock).toBe('app/w');
  });
});

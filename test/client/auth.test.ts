// Bearer tokens, client.auth and client.move against a tiny in-test server that records metadata and answers
// canned results (test/client/authServer.ts). What the cluster does with them is tested elsewhere, over nodes.
import * as grpc from '@grpc/grpc-js';
import { inspect } from 'node:util';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { authTokenProblem, checkAuthToken, FenceLockClient, FenceLockError, isAuthTokenId, type FenceLockClientOptions, type Logger, type LockEvent } from '../../src/client';
import { AuthServer } from './authServer';
import { testPki } from './testCerts';

const ID = '0123456789abcdef';
const SECRET = 'Zm9vYmFyYmF6cXV4LXNlY3JldC10b2tlbi0yNTYtYml0cw';
const TOKEN = `flt_${ID}_${SECRET}`;

const servers: AuthServer[] = [];
afterAll(() => {
  for (const s of servers) s.stop();
});
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function server(opts: Parameters<typeof AuthServer.start>[0] = {}): Promise<AuthServer> {
  const s = await AuthServer.start(opts);
  servers.push(s);
  return s;
}

function client(opts: Partial<FenceLockClientOptions> & { endpoints: string[] }): FenceLockClient {
  const c = new FenceLockClient({ insecure: true, requestTimeoutMs: 1_000, totalTimeoutMs: 3_000, ...opts });
  cleanups.push(() => c.close());
  return c;
}

async function refusal(p: Promise<unknown>): Promise<FenceLockError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(FenceLockError);
    return err as FenceLockError;
  }
  throw new Error('expected a refusal');
}

/** A logger that keeps every line, at every level, as the JSON a pino logger would write. */
function recordingLogger(): { logger: Logger; text: () => string } {
  const lines: string[] = [];
  const keep = (obj: object, msg?: string): void => {
    lines.push(JSON.stringify(obj, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v instanceof Error ? { message: v.message, stack: v.stack } : v)) + (msg ?? ''));
  };
  return { logger: { debug: keep, info: keep, warn: keep, error: keep }, text: () => lines.join('\n') };
}

describe('bearer token shape', () => {
  it('accepts flt_<16 hex>_<secret> and returns its id', () => {
    expect(authTokenProblem(TOKEN)).toBeUndefined();
    expect(checkAuthToken(TOKEN)).toBe(ID);
    expect(checkAuthToken(`flt_${ID.toUpperCase()}_${'a'.repeat(64)}`)).toBe(ID.toUpperCase());
    expect(checkAuthToken(`flt_${ID}_abc-DEF_ghi.jkl~mno+pqr/stu==`)).toBe(ID);
    expect(isAuthTokenId(ID)).toBe(true);
    expect(isAuthTokenId(TOKEN)).toBe(false);
    expect(isAuthTokenId('0123')).toBe(false);
  });

  it('refuses anything else, saying what is wrong without repeating the token', () => {
    const cases: Array<[unknown, RegExp]> = [
      ['', /is empty/],
      [`${TOKEN}\n`, /whitespace or a line break/],
      [` ${TOKEN}`, /whitespace/],
      [`flt_${ID}_${SECRET.slice(0, 10)} ${SECRET.slice(10)}`, /whitespace/],
      [`Bearer ${TOKEN}`, /starts with "Bearer"/],
      [`fl_${ID}_${SECRET}`, /does not start with flt_/],
      [SECRET, /does not start with flt_/],
      [`flt_${ID.slice(1)}_${SECRET}`, /16 hex digits/],
      [`flt_0123456789abcdeg_${SECRET}`, /16 hex digits/],
      [`flt_${ID}${SECRET}`, /16 hex digits\) and _/],
      [`flt_${ID}_short`, /cut short/],
      [`flt_${ID}_${SECRET}"`, /characters a bearer token cannot carry/],
      [`flt_${ID}_${SECRET}é`, /characters a bearer token cannot carry/],
      [`flt_${ID}_${'a'.repeat(2000)}`, /longer than 1024/],
      [42, /must be a string/],
    ];
    for (const [token, why] of cases) {
      let err: unknown;
      try {
        checkAuthToken(token, 'FENCELOCK_AUTH_TOKEN');
      } catch (e) {
        err = e;
      }
      expect(err, String(token)).toBeInstanceOf(FenceLockError);
      const e = err as FenceLockError;
      expect(e.code).toBe('INVALID_ARGUMENT');
      expect(e.message, String(token)).toMatch(why);
      expect(e.message.startsWith('FENCELOCK_AUTH_TOKEN ')).toBe(true);
      expect(e.message).not.toContain(SECRET.slice(0, 10));
    }
  });

  it('the client refuses a malformed token when built, before any call', () => {
    expect(() => new FenceLockClient({ endpoints: ['127.0.0.1:1'], insecure: true, token: `${TOKEN}\n` })).toThrow(/token contains whitespace or a line break/);
    expect(() => new FenceLockClient({ endpoints: ['127.0.0.1:1'], insecure: true, token: '' })).toThrow(/token is empty/);
  });
});

describe('the token travels on every call', () => {
  it('unary calls and the Pipeline, KeepAlive and Watch streams carry authorization: Bearer <token> over plaintext', async () => {
    const s = await server();
    const { logger, text } = recordingLogger();
    const c = client({ endpoints: [s.address], token: TOKEN, logger });
    expect(c.authTokenId).toBe(ID);
    const events: LockEvent[] = [];
    const w = c.watch('l', (ev) => events.push(ev));
    cleanups.push(() => w.cancel());
    await c.auth.whoAmI(); // unary
    await c.move({ key: 'k' }, 'l'); // unary, mutating
    expect((await c.get('k')).found).toBe(true); // on the Pipeline stream
    const session = await c.openSession({ ttlMs: 3_000 }); // unary; then the KeepAlive stream
    expect((await session.acquire('l')).token).toBe(9n); // Pipeline again
    const until = Date.now() + 3_000;
    while ((s.callsOf('KeepAliveRenewal').length === 0 || events.length === 0) && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
    for (const method of ['WhoAmI', 'Move', 'Pipeline', 'Pipeline.Get', 'Pipeline.Acquire', 'Open', 'KeepAlive', 'KeepAliveRenewal', 'Watch']) {
      const calls = s.callsOf(method);
      expect(calls.length, method).toBeGreaterThan(0);
      for (const call of calls) expect(call.authorization, method).toEqual([`Bearer ${TOKEN}`]);
    }
    expect(events).toHaveLength(1);
    // Nothing the client logged (debug level included) holds the secret; the id may appear.
    expect(text()).toContain(ID);
    expect(text()).not.toContain(SECRET);
    expect(JSON.stringify(session)).not.toContain(SECRET);
    // The client's own fields do not hold it (grpc-js's calls in flight keep their metadata, as they keep
    // the requests with their session ids).
    expect(inspect(c, { depth: 2, showHidden: true })).not.toContain(SECRET);
  });

  it('over TLS alike; a client without a token sends no authorization metadata', async () => {
    const pki = testPki();
    const s = await server({ tls: { cert: pki.node.cert, key: pki.node.key } });
    const withToken = new FenceLockClient({ endpoints: [s.address], tls: { ca: pki.ca.cert }, token: TOKEN });
    cleanups.push(() => withToken.close());
    await withToken.auth.list();
    expect(s.callsOf('List')[0]!.authorization).toEqual([`Bearer ${TOKEN}`]);
    const without = new FenceLockClient({ endpoints: [s.address], tls: { ca: pki.ca.cert } });
    cleanups.push(() => without.close());
    expect(without.authTokenId).toBeUndefined();
    await without.auth.whoAmI();
    expect(s.callsOf('WhoAmI')[0]!.authorization).toEqual([]);
  });

  it('errors carry code, reason and quota from the metadata; the token is in none of them', async () => {
    const s = await server();
    const c = client({ endpoints: [s.address], token: TOKEN, pipeline: false });
    s.fail('UserAdd', { code: grpc.status.UNAUTHENTICATED, details: 'unknown or revoked token 0123456789abcdef' });
    const unauth = await refusal(c.auth.userAdd('bob'));
    expect(unauth).toMatchObject({ code: 'UNAUTHENTICATED', indeterminate: false });
    s.fail('RoleAdd', {
      code: grpc.status.PERMISSION_DENIED,
      details: 'identity "alice" lacks admin on ""',
      metadata: { 'fencelock-reason': 'PERMISSION_DENIED' },
    });
    const denied = await refusal(c.auth.roleAdd('ops'));
    expect(denied).toMatchObject({ code: 'PERMISSION_DENIED', reason: 'PERMISSION_DENIED' });
    expect(denied.message).toContain('add role "ops"');
    s.fail('Move', { code: grpc.status.RESOURCE_EXHAUSTED, details: 'over quota', metadata: { 'fencelock-reason': 'QUOTA_EXCEEDED', 'fencelock-quota': 'keys' } });
    const quota = await refusal(c.move({ prefix: 'a/' }, 'l'));
    expect(quota).toMatchObject({ code: 'RESOURCE_EXHAUSTED', reason: 'QUOTA_EXCEEDED', quota: 'keys' });
    expect(quota.message).toContain('(quota keys)');
    // The same on the Pipeline stream, whose errors come as a metadata map.
    const piped = client({ endpoints: [s.address], token: TOKEN });
    s.fail('Get', { code: grpc.status.RESOURCE_EXHAUSTED, details: 'quota store_bytes exceeded', metadata: { 'fencelock-reason': 'QUOTA_EXCEEDED', 'fencelock-quota': 'store_bytes' } });
    expect(await refusal(piped.get('k'))).toMatchObject({ code: 'RESOURCE_EXHAUSTED', quota: 'store_bytes' });
    for (const e of [unauth, denied, quota]) expect(`${e.message} ${JSON.stringify(e)}`).not.toContain(SECRET);
  });

  it('a Pipeline stream refused for want of an identity fails its calls UNAUTHENTICATED at once, not after retries', async () => {
    const s = await server({ requireToken: TOKEN });
    const without = client({ endpoints: [s.address], totalTimeoutMs: 10_000 });
    const t0 = Date.now();
    const err = await refusal(without.get('k'));
    expect(err).toMatchObject({ code: 'UNAUTHENTICATED', reason: 'UNAUTHENTICATED', indeterminate: false });
    expect(Date.now() - t0).toBeLessThan(2_000);
    expect(s.callsOf('Pipeline')).toHaveLength(1);
    const withToken = client({ endpoints: [s.address], token: TOKEN });
    expect((await withToken.get('k')).found).toBe(true);
    expect(s.callsOf('Pipeline.Get')).toHaveLength(1);
  });
});

describe('client.auth', () => {
  it('sends each change with a request header and the right fields; answers convert to the API types', async () => {
    const s = await server();
    const c = client({ endpoints: [s.address] });
    expect(await c.auth.userAdd('alice')).toEqual({ index: 11n });
    expect(await c.auth.userDelete('bob')).toEqual({ index: 12n });
    expect(await c.auth.userGrantRole('alice', 'ops')).toEqual({ index: 13n });
    expect(await c.auth.userRevokeRole('alice', 'ops')).toEqual({ index: 14n });
    expect(await c.auth.roleAdd('ops')).toEqual({ index: 15n });
    expect(await c.auth.roleDelete('ops')).toEqual({ index: 16n });
    expect(await c.auth.roleGrantPermission('ops', 'write', '')).toEqual({ index: 17n });
    expect(await c.auth.roleRevokePermission('ops', 'lock', 'jobs/')).toEqual({ index: 18n });
    expect(await c.auth.roleSetQuota('ops', 'sessions', 50)).toEqual({ index: 19n });
    await c.auth.roleSetQuota('ops', 'store_bytes', 1n << 40n);
    await c.auth.roleSetQuota('ops', 'keys', undefined);
    expect(await c.auth.tokenIssue('alice')).toEqual({ tokenId: 'fedcba9876543210', token: `flt_fedcba9876543210_${'s'.repeat(43)}` });
    expect(await c.auth.tokenRevoke('fedcba9876543210')).toEqual({ index: 20n });

    const req = (m: string, i = 0): Record<string, unknown> => s.callsOf(m)[i]!.req as Record<string, unknown>;
    expect(req('UserAdd')).toMatchObject({ user: 'alice' });
    expect(req('UserDelete')).toMatchObject({ user: 'bob' });
    expect(req('UserGrantRole')).toMatchObject({ user: 'alice', role: 'ops' });
    expect(req('UserRevokeRole')).toMatchObject({ user: 'alice', role: 'ops' });
    expect(req('RoleAdd')).toMatchObject({ role: 'ops' });
    expect(req('RoleDelete')).toMatchObject({ role: 'ops' });
    expect(req('RoleGrantPermission')).toMatchObject({ role: 'ops', rule: { permission: 'WRITE', prefix: '' } });
    expect(req('RoleRevokePermission')).toMatchObject({ role: 'ops', rule: { permission: 'LOCK', prefix: 'jobs/' } });
    expect(req('RoleSetQuota', 0)).toMatchObject({ role: 'ops', name: 'sessions', value: '50', unset: false });
    expect(req('RoleSetQuota', 1)).toMatchObject({ name: 'store_bytes', value: String(1n << 40n), unset: false });
    expect(req('RoleSetQuota', 2)).toMatchObject({ name: 'keys', value: '0', unset: true });
    expect(req('TokenIssue')).toMatchObject({ user: 'alice' });
    expect(req('TokenRevoke')).toMatchObject({ tokenId: 'fedcba9876543210' });
    // Every change names this client and a fresh, increasing request id.
    const changes = s.calls.filter((x) => !['WhoAmI', 'List'].includes(x.method));
    expect(changes).toHaveLength(13);
    const ids = changes.map((x) => BigInt(x.header!.requestId));
    for (const x of changes) expect(x.header!.clientId).toBe(c.clientId);
    expect(ids).toEqual([...ids].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    expect(new Set(ids).size).toBe(ids.length);

    expect(await c.auth.whoAmI()).toEqual({ identity: 'alice', via: 'token', authEnabled: true, roles: ['ops'], rules: [{ permission: 'lock', prefix: 'jobs/' }] });
    expect(await c.auth.list()).toEqual({
      authEnabled: true,
      users: [
        { name: 'root', roles: ['root'] },
        { name: 'alice', roles: ['ops'] },
      ],
      roles: [
        { name: 'root', rules: [{ permission: 'admin', prefix: '' }], quotas: [] },
        {
          name: 'ops',
          rules: [
            { permission: 'lock', prefix: 'jobs/' },
            { permission: 'write', prefix: '' },
          ],
          quotas: [{ name: 'sessions', value: 50n }],
        },
      ],
      tokens: [{ id: '0123456789abcdef', user: 'alice' }],
    });
    expect(s.callsOf('WhoAmI')[0]!.header).toBeUndefined();
  });

  it('refuses bad arguments before calling', async () => {
    const s = await server();
    const c = client({ endpoints: [s.address] });
    await expect(c.auth.userAdd('')).rejects.toThrow(/user must be a non-empty string/);
    await expect(c.auth.userGrantRole('alice', '')).rejects.toThrow(/role must be a non-empty string/);
    await expect(c.auth.roleGrantPermission('ops', 'delete' as never, '')).rejects.toThrow(/permission must be one of lock, write, read, admin/);
    await expect(c.auth.roleGrantPermission('ops', 'read', undefined as never)).rejects.toThrow(/prefix must be a string/);
    await expect(c.auth.roleSetQuota('ops', 'keys', -1)).rejects.toThrow(/non-negative integer/);
    await expect(c.auth.roleSetQuota('ops', 'keys', 1.5)).rejects.toThrow(/non-negative integer/);
    await expect(c.auth.roleSetQuota('ops', 'keys', 1n << 64n)).rejects.toThrow(/non-negative integer/);
    await expect(c.auth.tokenRevoke(TOKEN)).rejects.toThrow(/16 hex digits/);
    expect(s.calls).toHaveLength(0);
  });

  it('a change is retried with the same request id: after UNAVAILABLE, and to the hinted leader', async () => {
    const leader = await server();
    const follower = await server({ followerOf: () => leader.address });
    const c = client({ endpoints: [follower.address, leader.address], token: TOKEN });
    leader.fail('UserGrantRole', { code: grpc.status.UNAVAILABLE, details: 'no leader yet' });
    expect(await c.auth.userGrantRole('alice', 'ops')).toEqual({ index: 13n });
    const attempts = [...follower.callsOf('UserGrantRole'), ...leader.callsOf('UserGrantRole')];
    // follower (hint) -> leader (UNAVAILABLE, no hint) -> next endpoint, the follower (hint) -> leader.
    expect(attempts.map((a) => (follower.calls.some((x) => x === a) ? 'follower' : 'leader'))).toEqual(['follower', 'follower', 'leader', 'leader']);
    expect(new Set(attempts.map((a) => `${a.header!.clientId}/${a.header!.requestId}`)).size).toBe(1);
    for (const a of attempts) expect(a.authorization).toEqual([`Bearer ${TOKEN}`]);
    // The client now talks to the leader: the next change goes there first, with a new request id.
    await c.auth.tokenRevoke(ID);
    expect(follower.callsOf('TokenRevoke')).toHaveLength(0);
    expect(BigInt(leader.callsOf('TokenRevoke')[0]!.header!.requestId)).toBeGreaterThan(BigInt(attempts[0]!.header!.requestId));
  });
});

describe('client.move', () => {
  it('moves a key or the keys under a prefix (also the empty prefix), with a request header', async () => {
    const s = await server();
    const c = client({ endpoints: [s.address] });
    expect(await c.move({ key: 'cfg/a' }, 'cfg2')).toEqual({ moved: 1, index: 21n });
    expect(await c.move({ prefix: 'cfg/' }, 'cfg2')).toEqual({ moved: 3, index: 21n });
    expect(await c.move({ prefix: '' }, 'all')).toEqual({ moved: 3, index: 21n });
    const [one, under, all] = s.callsOf('Move').map((x) => x.req as Record<string, unknown>);
    expect(one).toMatchObject({ what: 'key', key: 'cfg/a', toLock: 'cfg2' });
    expect(under).toMatchObject({ what: 'prefix', prefix: 'cfg/', toLock: 'cfg2' });
    expect(all).toMatchObject({ what: 'prefix', prefix: '', toLock: 'all' });
    for (const x of s.callsOf('Move')) expect(x.header!.clientId).toBe(c.clientId);
  });

  it('refuses a target that is both, neither or empty, and an empty lock', async () => {
    const s = await server();
    const c = client({ endpoints: [s.address] });
    await expect(c.move({ key: 'a', prefix: 'b' } as never, 'l')).rejects.toThrow(/not both or neither/);
    await expect(c.move({} as never, 'l')).rejects.toThrow(/not both or neither/);
    await expect(c.move({ key: '' }, 'l')).rejects.toThrow(/key must be a non-empty string/);
    await expect(c.move({ key: 'a' }, '')).rejects.toThrow(/lock to move to/);
    expect(s.calls).toHaveLength(0);
  });
});

// The CLI's bearer token (--auth-token, --auth-token-file, FENCELOCK_AUTH_TOKEN), `fencelock auth ...` and
// `fencelock kv move`, against the small recording server of test/client/authServer.ts (and, for `lock -- CMD`,
// the fake cluster). The cluster's own checks are tested over real nodes elsewhere.
import * as grpc from '@grpc/grpc-js';
import { EventEmitter } from 'node:events';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exitCodes';
import { parseToken } from '../../src/cli/parse';
import { runCli } from '../../src/cli/program';
import { resolveAuthToken } from '../../src/cli/security';
import { UsageError } from '../../src/cli/exitCodes';
import { AuthServer, defaultHandlers } from './authServer';
import { startFakeCluster } from './fakeServer';

const ID = '0123456789abcdef';
const SECRET = 'c2VjcmV0LW9mLXRoZS1jbGktdGVzdHMtMjU2LWJpdHMtbG9uZw';
const TOKEN = `flt_${ID}_${SECRET}`;

let srv: AuthServer;
beforeAll(async () => {
  srv = await AuthServer.start();
});
afterAll(() => srv.stop());

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  srv.calls.length = 0;
  srv.handlers = defaultHandlers();
  while (cleanups.length > 0) await cleanups.pop()!();
});

function tmpDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fencelock-authcli-'));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Runs the CLI in-process against the recording server (plaintext), with the token in the environment. */
async function cli(args: string[], env: NodeJS.ProcessEnv = { FENCELOCK_AUTH_TOKEN: TOKEN }): Promise<{ out: string; err: string; code: number }> {
  const r = { out: '', err: '' };
  const code = await runCli(args, {
    stdout: (t) => void (r.out += t),
    stderr: (t) => void (r.err += t),
    env: { FENCELOCK_INSECURE: '1', FENCELOCK_ENDPOINTS: srv.address, ...env },
    signals: new EventEmitter(),
  });
  // Whatever happens, no output repeats the secret (token issue prints the one it issued, not this one).
  expect(r.out + r.err).not.toContain(SECRET);
  return { ...r, code };
}

const req = (method: string, i = 0): Record<string, unknown> => srv.callsOf(method)[i]!.req as Record<string, unknown>;

describe('the bearer token of the CLI', () => {
  it('comes from --auth-token-file, --auth-token or FENCELOCK_AUTH_TOKEN, checked for shape without being repeated', () => {
    const dir = tmpDir();
    const file = path.join(dir, 'alice.token');
    fs.writeFileSync(file, `${TOKEN}\n`, { mode: 0o600 });
    expect(resolveAuthToken({ authTokenFile: file }, { FENCELOCK_AUTH_TOKEN: 'x' })).toBe(TOKEN);
    expect(resolveAuthToken({ authToken: TOKEN }, { FENCELOCK_AUTH_TOKEN: 'x' })).toBe(TOKEN);
    expect(resolveAuthToken({}, { FENCELOCK_AUTH_TOKEN: TOKEN })).toBe(TOKEN);
    expect(resolveAuthToken({}, { FENCELOCK_AUTH_TOKEN: '' })).toBeUndefined();
    expect(resolveAuthToken({}, {})).toBeUndefined();
    // FENCELOCK_TOKEN is the fencing token, never the bearer token.
    expect(resolveAuthToken({}, { FENCELOCK_TOKEN: TOKEN })).toBeUndefined();
    const bad: Array<[Parameters<typeof resolveAuthToken>[0], NodeJS.ProcessEnv, RegExp]> = [
      [{ authToken: TOKEN, authTokenFile: file }, {}, /not both/],
      [{}, { FENCELOCK_AUTH_TOKEN: `${TOKEN}\n` }, /^FENCELOCK_AUTH_TOKEN: the token contains whitespace or a line break/],
      [{ authToken: ` ${TOKEN}` }, {}, /^--auth-token: the token contains whitespace/],
      [{ authToken: `Bearer ${TOKEN}` }, {}, /starts with "Bearer"/],
      [{ authToken: SECRET }, {}, /does not start with flt_/],
      [{ authTokenFile: path.join(dir, 'missing') }, {}, /--auth-token-file: cannot read/],
    ];
    for (const [flags, env, why] of bad) {
      let err: unknown;
      try {
        resolveAuthToken(flags, env);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(UsageError);
      expect((err as Error).message).toMatch(why);
      expect((err as Error).message).not.toContain(SECRET);
    }
    fs.writeFileSync(file, '\n');
    expect(() => resolveAuthToken({ authTokenFile: file }, {})).toThrow(/is empty/);
    fs.writeFileSync(file, `flt_${ID}_${SECRET.slice(0, 20)}\n${SECRET.slice(20)}\n`);
    expect(() => resolveAuthToken({ authTokenFile: file }, {})).toThrow(/--auth-token-file .*: the token contains whitespace or a line break/);
    // A bearer token where the fencing token goes is named as such, and not repeated.
    expect(() => parseToken(TOKEN, 'FENCELOCK_TOKEN')).toThrow(/FENCELOCK_TOKEN: this is a bearer token \(flt_\.\.\.\), not a fencing token; pass it as --auth-token-file/);
  });

  it('is sent with every call of a command; a malformed one fails at once with exit 1', async () => {
    expect(await cli(['auth', 'whoami'])).toMatchObject({ code: 0 });
    expect(await cli(['auth', 'list', '--auth-token', TOKEN], {})).toMatchObject({ code: 0 });
    const file = path.join(tmpDir(), 't');
    fs.writeFileSync(file, TOKEN + '\n');
    expect(await cli(['--auth-token-file', file, 'kv', 'move', 'k', '--to', 'l'], {})).toMatchObject({ code: 0 });
    expect(srv.calls.map((c) => [c.method, c.authorization])).toEqual([
      ['WhoAmI', [`Bearer ${TOKEN}`]],
      ['List', [`Bearer ${TOKEN}`]],
      ['Move', [`Bearer ${TOKEN}`]],
    ]);
    expect(await cli(['auth', 'whoami'], {})).toMatchObject({ code: 0 });
    expect(srv.calls[3]!.authorization).toEqual([]);

    const bad = await cli(['auth', 'whoami'], { FENCELOCK_AUTH_TOKEN: `${TOKEN} ` });
    expect(bad).toMatchObject({ code: EXIT.USAGE, out: '' });
    expect(bad.err).toMatch(/^fencelock: FENCELOCK_AUTH_TOKEN: the token contains whitespace/);
    const badJson = await cli(['--json', 'auth', 'list', '--auth-token', `x${TOKEN}`]);
    expect(JSON.parse(badJson.out).error).toMatchObject({ code: 'USAGE' });
    expect(srv.calls).toHaveLength(4);
  });

  it('is documented in --help, next to the TLS flags, and is not FENCELOCK_TOKEN', async () => {
    const help = await cli(['--help']);
    expect(help.code).toBe(0);
    expect(help.out).toMatch(/--auth-token-file <file>/);
    expect(help.out).toMatch(/--auth-token <token>/);
    expect(help.out).toMatch(/FENCELOCK_AUTH_TOKEN +bearer token/);
    expect(help.out).toMatch(/6 +unauthenticated/);
    expect(help.out).toMatch(/7 +permission denied/);
    expect((await cli(['lock', '--help'])).out).toContain('FENCELOCK_AUTH_TOKEN');
  });

  it('lock -- CMD connects with it and hands it to CMD as FENCELOCK_AUTH_TOKEN', async () => {
    const c = await startFakeCluster(1);
    cleanups.push(c.stop);
    const out = path.join(tmpDir(), 'env.json');
    const file = path.join(tmpDir(), 't');
    fs.writeFileSync(file, TOKEN);
    const script = `require('fs').writeFileSync(${JSON.stringify(out)}, JSON.stringify(process.env))`;
    const r = await cli(['--auth-token-file', file, 'lock', 'job', '--', process.execPath, '-e', script], { FENCELOCK_ENDPOINTS: c.nodes[0]!.address, PATH: process.env.PATH });
    expect(r).toMatchObject({ code: 0, err: '' });
    const env = JSON.parse(fs.readFileSync(out, 'utf8')) as Record<string, string>;
    expect(env.FENCELOCK_AUTH_TOKEN).toBe(TOKEN);
    expect(env.FENCELOCK_TOKEN).toMatch(/^\d+$/);
    for (const m of ['Open', 'Acquire', 'Release', 'Close']) {
      expect(c.state.callsOf(m).length, m).toBeGreaterThan(0);
      for (const call of c.state.callsOf(m)) expect(call.authorization, m).toBe(`Bearer ${TOKEN}`);
    }
  });
});

describe('fencelock auth', () => {
  it('whoami and list, for humans and as JSON', async () => {
    const who = await cli(['auth', 'whoami']);
    expect(who.out).toBe('identity: alice (via token)\nauth:     enabled\nroles:    ops\nrules:    lock "jobs/"\n');
    expect(JSON.parse((await cli(['--json', 'auth', 'whoami'])).out)).toEqual({
      identity: 'alice',
      via: 'token',
      authEnabled: true,
      roles: ['ops'],
      rules: [{ permission: 'lock', prefix: 'jobs/' }],
    });
    srv.handlers.WhoAmI = () => ({ identity: '', via: '', authEnabled: false, roles: [], rules: [] });
    expect((await cli(['auth', 'whoami'], {})).out).toBe('identity: (none)\nauth:     disabled\nroles:    -\nrules:    -\n');

    const list = await cli(['auth', 'list']);
    expect(list.code).toBe(0);
    expect(list.out).toBe(
      [
        'auth: enabled',
        '',
        'USER   ROLES',
        'root   root',
        'alice  ops',
        '',
        'ROLE  RULES                   QUOTAS',
        'root  admin ""                -',
        'ops   lock "jobs/", write ""  sessions=50',
        '',
        'TOKEN             USER',
        '0123456789abcdef  alice',
        '',
      ].join('\n'),
    );
    const json = JSON.parse((await cli(['auth', 'list', '--json'])).out);
    expect(json.roles[1]).toEqual({
      name: 'ops',
      rules: [
        { permission: 'lock', prefix: 'jobs/' },
        { permission: 'write', prefix: '' },
      ],
      quotas: [{ name: 'sessions', value: '50' }],
    });
    expect(json.tokens).toEqual([{ id: ID, user: 'alice' }]);
  });

  it('user and role changes send what they say and print the index', async () => {
    const runs: Array<[string[], string, Record<string, unknown>]> = [
      [['auth', 'user', 'add', 'bob'], 'UserAdd', { user: 'bob' }],
      [['auth', 'user', 'delete', 'bob'], 'UserDelete', { user: 'bob' }],
      [['auth', 'user', 'grant', 'bob', 'ops'], 'UserGrantRole', { user: 'bob', role: 'ops' }],
      [['auth', 'user', 'revoke', 'bob', 'ops'], 'UserRevokeRole', { user: 'bob', role: 'ops' }],
      [['auth', 'role', 'add', 'ops'], 'RoleAdd', { role: 'ops' }],
      [['auth', 'role', 'delete', 'ops'], 'RoleDelete', { role: 'ops' }],
      [['auth', 'role', 'quota', 'ops', 'sessions', '500'], 'RoleSetQuota', { role: 'ops', name: 'sessions', value: '500', unset: false }],
      [['auth', 'role', 'quota', 'ops', 'keys', '--unset'], 'RoleSetQuota', { role: 'ops', name: 'keys', unset: true }],
      [['auth', 'grant', 'ops', 'lock', 'jobs/'], 'RoleGrantPermission', { role: 'ops', rule: { permission: 'LOCK', prefix: 'jobs/' } }],
      [['auth', 'grant', 'ops', 'write', ''], 'RoleGrantPermission', { rule: { permission: 'WRITE', prefix: '' } }],
      [['auth', 'grant', 'ops', 'READ', '--all'], 'RoleGrantPermission', { rule: { permission: 'READ', prefix: '' } }],
      [['auth', 'grant', 'ops', 'admin'], 'RoleGrantPermission', { rule: { permission: 'ADMIN', prefix: '' } }],
      [['auth', 'revoke', 'ops', 'lock', 'jobs/'], 'RoleRevokePermission', { role: 'ops', rule: { permission: 'LOCK', prefix: 'jobs/' } }],
      [['auth', 'revoke', 'ops', 'admin', '--all'], 'RoleRevokePermission', { rule: { permission: 'ADMIN', prefix: '' } }],
      [['auth', 'token', 'revoke', ID], 'TokenRevoke', { tokenId: ID }],
    ];
    for (const [args, method, fields] of runs) {
      srv.calls.length = 0;
      const r = await cli(args);
      expect(r, args.join(' ')).toMatchObject({ code: 0, err: '' });
      expect(r.out).toMatch(/^OK \(index \d+\)\n$/);
      expect(srv.calls.map((c) => c.method)).toEqual([method]);
      expect(req(method)).toMatchObject(fields);
      expect(srv.calls[0]!.header!.requestId).toBe('1');
    }
    expect((await cli(['--json', 'auth', 'role', 'add', 'x'])).out).toBe('{"index":"15"}\n');
  });

  it('refuses unclear arguments with exit 1 before calling', async () => {
    const bad: Array<[string[], RegExp]> = [
      [['auth', 'grant', 'ops', 'lock'], /give PREFIX \(''.*\) or --all/],
      [['auth', 'grant', 'ops', 'lock', 'a/', '--all'], /not both/],
      [['auth', 'grant', 'ops', 'delete', 'a/'], /PERM "delete" is not one of lock, write, read, admin/],
      [['auth', 'revoke', 'ops', 'admin', 'x/'], /admin covers everything and takes no PREFIX/],
      [['auth', 'role', 'quota', 'ops', 'keys'], /give VALUE or --unset/],
      [['auth', 'role', 'quota', 'ops', 'keys', '5', '--unset'], /give VALUE or --unset/],
      [['auth', 'role', 'quota', 'ops', 'keys', '-1'], /unknown option|not a non-negative integer/],
      [['auth', 'role', 'quota', 'ops', 'keys', '1e3'], /not a non-negative integer/],
      [['auth', 'token', 'revoke', TOKEN], /16 hex digits .*not the token/],
      [['auth', 'user', 'add'], /missing required argument 'name'/],
      [['kv', 'move', 'k'], /required option '--to <lock>'/],
      [['kv', 'move', '--to', 'l'], /give KEY or --prefix PREFIX/],
      [['kv', 'move', 'k', '--prefix', 'p', '--to', 'l'], /give KEY or --prefix PREFIX/],
      [['kv', 'move', 'k', '--to', ''], /--to names no lock/],
    ];
    for (const [args, why] of bad) {
      const r = await cli(args);
      expect(r.code, args.join(' ')).toBe(EXIT.USAGE);
      expect(r.err, args.join(' ')).toMatch(why);
    }
    expect(srv.calls).toHaveLength(0);
  });

  it('token issue prints the token alone on stdout and its id on stderr; with --json all three', async () => {
    const issued = `flt_fedcba9876543210_${'s'.repeat(43)}`;
    const r = await cli(['auth', 'token', 'issue', 'alice']);
    expect(r).toMatchObject({ code: 0, out: `${issued}\n` });
    expect(r.err).toMatch(/token fedcba9876543210 for user "alice": shown this once/);
    expect(r.err).not.toContain(issued);
    expect(req('TokenIssue')).toMatchObject({ user: 'alice' });
    const j = await cli(['--json', 'auth', 'token', 'issue', 'alice']);
    expect(j.err).toBe('');
    expect(JSON.parse(j.out)).toEqual({ tokenId: 'fedcba9876543210', user: 'alice', token: issued });
  });

  it('UNAUTHENTICATED exits 6, PERMISSION_DENIED exits 7, RESOURCE_EXHAUSTED exits 8, with reason and quota in JSON', async () => {
    srv.fail('UserAdd', { code: grpc.status.UNAUTHENTICATED, details: 'no identity' });
    const unauth = await cli(['auth', 'user', 'add', 'bob'], {});
    expect(unauth.code).toBe(EXIT.UNAUTHENTICATED);
    expect(unauth.err).toMatch(/UNAUTHENTICATED/);
    srv.fail('RoleAdd', { code: grpc.status.PERMISSION_DENIED, details: 'identity "alice" lacks admin', metadata: { 'fencelock-reason': 'PERMISSION_DENIED' } });
    const denied = await cli(['--json', 'auth', 'role', 'add', 'x']);
    expect(denied.code).toBe(EXIT.PERMISSION_DENIED);
    expect(JSON.parse(denied.out).error).toMatchObject({ code: 'PERMISSION_DENIED', reason: 'PERMISSION_DENIED', quota: null });
    srv.fail('Move', { code: grpc.status.RESOURCE_EXHAUSTED, details: 'over quota', metadata: { 'fencelock-reason': 'QUOTA_EXCEEDED', 'fencelock-quota': 'keys' } });
    const quota = await cli(['--json', 'kv', 'move', '--prefix', 'a/', '--to', 'l']);
    expect(quota.code).toBe(EXIT.LIMIT);
    expect(JSON.parse(quota.out).error).toMatchObject({ code: 'RESOURCE_EXHAUSTED', reason: 'QUOTA_EXCEEDED', quota: 'keys' });
    // A node that refuses the Pipeline stream itself: kv get says UNAUTHENTICATED (exit 6) at once.
    const strict = await AuthServer.start({ requireToken: TOKEN });
    cleanups.push(() => strict.stop());
    const refused = await cli(['kv', 'get', 'k'], { FENCELOCK_ENDPOINTS: strict.address });
    expect(refused.code).toBe(EXIT.UNAUTHENTICATED);
    expect(refused.err).toContain('UNAUTHENTICATED');
    expect(await cli(['kv', 'get', 'k', '--value'], { FENCELOCK_ENDPOINTS: strict.address, FENCELOCK_AUTH_TOKEN: TOKEN })).toMatchObject({ code: 0, out: 'v\n' });
  });
});

describe('fencelock kv move', () => {
  it('moves a key or a prefix (also the empty one) and says how many keys moved', async () => {
    expect(await cli(['kv', 'move', 'cfg/a', '--to', 'cfg2'])).toMatchObject({ code: 0, out: 'moved 1 key to lock "cfg2" (index 21)\n' });
    expect(await cli(['kv', 'move', '--prefix', 'cfg/', '--to', 'cfg2'])).toMatchObject({ code: 0, out: 'moved 3 keys to lock "cfg2" (index 21)\n' });
    expect(JSON.parse((await cli(['--json', 'kv', 'move', '--prefix', '', '--to', 'all'])).out)).toEqual({ moved: 3, index: '21' });
    expect(srv.callsOf('Move').map((c) => c.req)).toMatchObject([
      { what: 'key', key: 'cfg/a', toLock: 'cfg2' },
      { what: 'prefix', prefix: 'cfg/', toLock: 'cfg2' },
      { what: 'prefix', prefix: '', toLock: 'all' },
    ]);
    const help = await cli(['kv', 'move', '--help']);
    expect(help.out).toContain('fencelock kv move --prefix cfg/ --to cfg2');
  });
});

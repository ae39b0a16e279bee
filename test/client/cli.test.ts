import { EventEmitter } from 'node:events';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FenceLockClient, FenceLockError, type Session } from '../../src/client';
import { EXIT, UsageError, exitCodeFor } from '../../src/cli/exitCodes';
import { runCli } from '../../src/cli/program';
import { DEFAULT_ENDPOINTS, parseEndpoints, parseToken, resolveEndpoints, resolveFencing, resolveSession } from '../../src/cli/parse';
import { resolveClientSecurity } from '../../src/cli/security';
import { withoutGrpcNoise } from '../../src/cli/unreachable';
import { deadAddress, FakeState, startFakeCluster, type FakeTls } from './fakeServer';
import { testPki, writePem } from './testCerts';

// `certs init` calls generateDevCerts (src/certs, the server side's); here only what the CLI passes it matters.
const generated = vi.hoisted(() => [] as Array<{ dir: string; opts: unknown }>);
vi.mock('../../src/certs/generate', () => ({
  generateDevCerts: async (dir: string, opts: unknown): Promise<void> => {
    generated.push({ dir, opts });
  },
}));

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

interface Captured {
  out: string;
  err: string;
  signals: EventEmitter;
}

/** Runs the CLI in-process. The fake cluster speaks plaintext, so FENCELOCK_INSECURE=1 unless env says otherwise. */
async function cli(args: string[], env: NodeJS.ProcessEnv = {}, signals = new EventEmitter()): Promise<Captured & { code: number }> {
  const cap: Captured = { out: '', err: '', signals };
  const code = await runCli(args, {
    stdout: (t) => void (cap.out += t),
    stderr: (t) => void (cap.err += t),
    env: { FENCELOCK_INSECURE: '1', ...env },
    signals,
  });
  return { ...cap, code };
}

async function fake(n = 1, state = new FakeState()): ReturnType<typeof startFakeCluster> {
  const c = await startFakeCluster(n, state);
  cleanups.push(c.stop);
  return c;
}

/** A one-node fake cluster and a session of a client connected to it. */
async function fakeSession(): Promise<{ ep: string; s: Session }> {
  const { nodes } = await fake(1);
  const ep = nodes[0]!.address;
  const c = new FenceLockClient({ endpoints: [ep], insecure: true });
  cleanups.push(() => c.close());
  return { ep, s: await c.openSession() };
}

function tmpDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fencelock-cli-'));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

describe('CLI parsing (no server)', () => {
  it('parses tokens strictly as decimal uint64', () => {
    expect(parseToken('1')).toBe(1n);
    expect(parseToken('4294967296')).toBe(4294967296n);
    expect(parseToken('18446744073709551615')).toBe(18446744073709551615n);
    for (const bad of ['', '0', '-1', '+1', '01', '1.0', '1e3', '0x10', ' 1', '1 ', '18446744073709551616', 'abc', '１']) {
      expect(() => parseToken(bad), bad).toThrow(UsageError);
    }
    expect(() => parseToken('12x', 'FENCELOCK_TOKEN')).toThrow(/FENCELOCK_TOKEN: "12x" is not a fencing token/);
  });

  it('parses endpoints and picks flag, then env, then the local cluster', () => {
    expect(parseEndpoints('a:1, b:2,a:1')).toEqual(['a:1', 'b:2']);
    expect(parseEndpoints('[::1]:7001')).toEqual(['[::1]:7001']);
    expect(() => parseEndpoints('a')).toThrow(/host:port/);
    expect(() => parseEndpoints('a:70000')).toThrow(/port/);
    expect(() => parseEndpoints(' , ')).toThrow(/no endpoint/);
    expect(resolveEndpoints('x:1', { FENCELOCK_ENDPOINTS: 'y:2' })).toEqual(['x:1']);
    expect(resolveEndpoints(undefined, { FENCELOCK_ENDPOINTS: 'y:2' })).toEqual(['y:2']);
    expect(resolveEndpoints(undefined, {})).toEqual(DEFAULT_ENDPOINTS);
  });

  it('takes the fencing triple from flags, else from the FENCELOCK_* environment', () => {
    const env = { FENCELOCK_LOCK: 'L', FENCELOCK_TOKEN: '42', FENCELOCK_SESSION: 'S' };
    expect(resolveFencing({}, env)).toEqual({ lock: 'L', token: 42n, sessionId: 'S' });
    expect(resolveFencing({ token: '43', lock: 'M' }, env)).toEqual({ lock: 'M', token: 43n, sessionId: 'S' });
    expect(() => resolveFencing({}, {})).toThrow(/--lock .*--token .*--session/);
    expect(() => resolveFencing({}, { ...env, FENCELOCK_TOKEN: '-3' })).toThrow(/FENCELOCK_TOKEN/);
  });

  it('takes the session id from --session, --session-file or FENCELOCK_SESSION (env and file keep it out of ps)', () => {
    const dir = tmpDir();
    const file = path.join(dir, 'session');
    fs.writeFileSync(file, '  abc123\n', { mode: 0o600 });
    expect(resolveSession({ sessionFile: file }, { FENCELOCK_SESSION: 'fromenv' })).toBe('abc123');
    expect(resolveSession({}, { FENCELOCK_SESSION: 'fromenv' })).toBe('fromenv');
    expect(resolveSession({ session: 'argv' }, { FENCELOCK_SESSION: 'fromenv' })).toBe('argv');
    expect(resolveSession({}, {})).toBeUndefined();
    expect(() => resolveSession({ session: 'a', sessionFile: file }, {})).toThrow(/not both/);
    expect(() => resolveSession({ sessionFile: path.join(dir, 'missing') }, {})).toThrow(/--session-file: cannot read/);
    fs.writeFileSync(file, '\n');
    expect(() => resolveSession({ sessionFile: file }, {})).toThrow(/is empty/);
    fs.writeFileSync(file, 'S2');
    expect(resolveFencing({ lock: 'L', token: '5', sessionFile: file }, {})).toEqual({ lock: 'L', token: 5n, sessionId: 'S2' });
  });

  it('resolves --cacert/--cert/--key/--insecure, then FENCELOCK_CACERT/CERT/KEY/INSECURE, then ./data/certs, then the system roots', () => {
    const pki = testPki();
    const dir = tmpDir();
    writePem(dir, { 'ca.pem': pki.ca.cert, 'c.pem': pki.client.cert, 'k.pem': pki.client.key });
    const abs = (f: string): string => path.join(dir, f);
    // Relative paths are taken from the directory the CLI runs in.
    const flags = resolveClientSecurity({ cacert: 'ca.pem', cert: 'c.pem', key: 'k.pem' }, { FENCELOCK_INSECURE: '1' }, dir);
    expect(flags).toMatchObject({ source: 'options', tls: { ca: abs('ca.pem'), cert: abs('c.pem'), key: abs('k.pem') } });
    expect(flags.insecure).toBeUndefined();
    // What a `lock -- CMD` child gets: the same files, by absolute path, and no FENCELOCK_INSECURE.
    expect(flags.childEnv).toEqual({ FENCELOCK_INSECURE: '', FENCELOCK_CACERT: abs('ca.pem'), FENCELOCK_CERT: abs('c.pem'), FENCELOCK_KEY: abs('k.pem') });
    const empty = tmpDir();
    expect(resolveClientSecurity({ insecure: true }, { FENCELOCK_CACERT: 'x' }, empty)).toMatchObject({ insecure: true, source: 'insecure-option' });
    expect(resolveClientSecurity({ insecure: true }, {}, empty).childEnv).toMatchObject({ FENCELOCK_INSECURE: '1', FENCELOCK_CACERT: '' });
    expect(resolveClientSecurity({}, { FENCELOCK_CACERT: abs('ca.pem') }, empty)).toMatchObject({ source: 'env', tls: { ca: abs('ca.pem') } });
    expect(resolveClientSecurity({}, { FENCELOCK_INSECURE: '1' }, empty)).toMatchObject({ source: 'insecure-env', insecure: true });
    expect(resolveClientSecurity({}, {}, empty)).toMatchObject({ source: 'system-roots', tls: {} });
    fs.mkdirSync(path.join(empty, 'data', 'certs'), { recursive: true });
    writePem(path.join(empty, 'data', 'certs'), { 'ca.pem': pki.ca.cert });
    expect(resolveClientSecurity({}, {}, empty)).toMatchObject({ source: 'local-cluster', tls: { ca: path.join(empty, 'data', 'certs', 'ca.pem') } });
    expect(() => resolveClientSecurity({ insecure: true, cacert: 'ca.pem' }, {}, dir)).toThrow(UsageError);
    expect(() => resolveClientSecurity({ cert: 'c.pem' }, {}, dir)).toThrow(/--cert and --key go together/);
    expect(() => resolveClientSecurity({}, { FENCELOCK_INSECURE: 'maybe' }, dir)).toThrow(UsageError);
    expect(() => resolveClientSecurity({}, { FENCELOCK_CACERT: abs('k.pem') }, dir)).toThrow(/FENCELOCK_CACERT: no PEM certificate/);
  });

  it('certs init passes nodes, client and hosts to generateDevCerts and checks them', async () => {
    generated.length = 0;
    const dir = path.join(tmpDir(), 'certs');
    const r = await cli(['certs', 'init', dir, '--nodes', 'a, b,c', '--client', 'ops', '--host', 'db1.example', '--host', '10.0.0.7']);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(generated).toEqual([{ dir, opts: { nodes: ['a', 'b', 'c'], client: 'ops', hosts: ['db1.example', '10.0.0.7'] } }]);
    expect(r.out).toContain('a-key.pem');
    expect(r.out).toContain('client-key.pem');
    const defaults = await cli(['--json', 'certs', 'init', dir]);
    expect(defaults.code).toBe(0);
    expect(generated[1]).toEqual({ dir, opts: { nodes: ['n1', 'n2', 'n3'], client: undefined, hosts: undefined } });
    expect(JSON.parse(defaults.out).files).toContain('n3.pem');
    for (const bad of [['--nodes', ' , '], ['--nodes', 'a/b'], ['--client', '../x'], ['--host', 'a b']]) {
      const b = await cli(['certs', 'init', dir, ...bad]);
      expect(b.code, bad.join(' ')).toBe(1);
    }
    expect((await cli(['certs', 'init'])).code).toBe(1);
    expect(generated).toHaveLength(2);
  });

  it('maps errors to the documented exit codes', () => {
    expect(EXIT).toEqual({ OK: 0, USAGE: 1, FENCED: 2, UNAVAILABLE: 3, LOCK_LOST: 4, NOT_FOUND: 5, UNAUTHENTICATED: 6, PERMISSION_DENIED: 7, LIMIT: 8, CHECK_FAILED: 9, BEHIND: 10 });
    expect(exitCodeFor(new UsageError('x'))).toBe(1);
    expect(exitCodeFor(new FenceLockError('FAILED_PRECONDITION', 'x', { reason: 'STALE_TOKEN' }))).toBe(2);
    expect(exitCodeFor(new FenceLockError('UNAVAILABLE', 'x'))).toBe(3);
    expect(exitCodeFor(new FenceLockError('DEADLINE_EXCEEDED', 'x'))).toBe(3);
    expect(exitCodeFor(new FenceLockError('NOT_FOUND', 'x'))).toBe(5);
    expect(exitCodeFor(new FenceLockError('UNAUTHENTICATED', 'x'))).toBe(6);
    expect(exitCodeFor(new FenceLockError('PERMISSION_DENIED', 'x', { reason: 'NOT_SESSION_OWNER' }))).toBe(7);
    expect(exitCodeFor(new FenceLockError('RESOURCE_EXHAUSTED', 'x', { reason: 'QUOTA_EXCEEDED', quota: 'sessions' }))).toBe(8);
    expect(exitCodeFor(new FenceLockError('INVALID_ARGUMENT', 'x'))).toBe(1);
    expect(exitCodeFor(new Error('x'))).toBe(1);
  });

  it('documents exit codes in --help and rejects bad usage with code 1', async () => {
    const help = await cli(['--help']);
    expect(help.code).toBe(0);
    expect(help.out).toContain('Exit codes:');
    expect(help.out).toMatch(/4 +lock lost while CMD ran/);
    expect(help.out).toMatch(/9 +check-resource: a fencing rule did not hold/);
    expect((await cli([])).code).toBe(1);
    expect((await cli(['frobnicate'])).code).toBe(1);
    const badTtl = await cli(['lock', '--ttl', 'soon', 'x', '--', 'true']);
    expect(badTtl.code).toBe(1);
    expect(badTtl.err).toContain('--ttl');
    const noToken = await cli(['kv', 'put', 'k', 'v']);
    expect(noToken.code).toBe(1);
    expect(noToken.err).toContain('FENCELOCK_TOKEN');
    const badToken = await cli(['kv', 'put', 'k', 'v', '--lock', 'l', '--session', 's', '--token', '007']);
    expect(badToken.code).toBe(1);
    expect(badToken.err).toMatch(/--token: "007" is not a fencing token/);
    expect((await cli(['lock'])).err).toContain("missing required argument 'name'");
    expect((await cli(['serve'])).code).toBe(1);
    const badEnv = await cli(['kv', 'get', 'k'], { FENCELOCK_ENDPOINTS: 'nope' });
    expect(badEnv.code).toBe(1);
    expect(badEnv.err).toContain('FENCELOCK_ENDPOINTS');
  });
});

describe('CLI against a fake cluster', () => {
  it('kv put/get/list/delete with fencing from the environment; stale token exits 2; missing key exits 5', async () => {
    const { nodes } = await fake(1, new FakeState(1n << 33n));
    const ep = nodes[0]!.address;
    const c = new FenceLockClient({ endpoints: [ep], insecure: true });
    cleanups.push(() => c.close());
    const s = await c.openSession();
    const lock = await s.acquire('cfg');
    const env = { FENCELOCK_ENDPOINTS: ep, FENCELOCK_LOCK: 'cfg', FENCELOCK_TOKEN: lock.token.toString(), FENCELOCK_SESSION: s.id };

    const put = await cli(['kv', 'put', 'cfg/a', 'alpha'], env);
    expect(put.err).toBe('');
    expect(put.code).toBe(0);
    expect(put.out).toMatch(/^OK \(index \d+\)\n$/);
    expect((await cli(['--json', 'kv', 'put', 'cfg/b', 'beta'], env)).out).toMatch(/^\{"index":"\d+"\}\n$/);

    const get = await cli(['kv', 'get', 'cfg/a'], env);
    expect(get).toMatchObject({ code: 0, out: `key:       cfg/a\nlock:      cfg\nwatermark: ${lock.token}\nvalue:     alpha\n` });
    expect(await cli(['kv', 'get', 'cfg/a', '--value'], env)).toMatchObject({ code: 0, out: 'alpha\n' });
    const getJson = JSON.parse((await cli(['kv', 'get', 'cfg/a', '--json', '--stale'], env)).out);
    expect(getJson).toEqual({
      key: 'cfg/a',
      found: true,
      deleted: false,
      value: 'alpha',
      valueBase64: Buffer.from('alpha').toString('base64'),
      token: lock.token.toString(),
      lock: 'cfg',
    });

    const list = await cli(['kv', 'list', 'cfg/', '--limit', '1'], env);
    expect(list.code).toBe(0);
    expect(list.out).toContain('cfg/a');
    expect(list.out).toContain('more keys follow');
    expect(JSON.parse((await cli(['--json', 'kv', 'list'], env)).out).items).toHaveLength(2);

    const missing = await cli(['kv', 'get', 'cfg/zzz'], env);
    expect(missing).toMatchObject({ code: EXIT.NOT_FOUND, out: '', err: 'fencelock: key "cfg/zzz" not found\n' });
    // --json: a missing key is an error object like any failure, with the exit code it exits with.
    const missingJson = await cli(['--json', 'kv', 'get', 'cfg/zzz'], env);
    expect(missingJson.code).toBe(EXIT.NOT_FOUND);
    expect(JSON.parse(missingJson.out)).toEqual({
      error: { code: 'NOT_FOUND', reason: null, watermark: null, key: 'cfg/zzz', keyLock: null, quota: null, message: 'key "cfg/zzz" not found', exitCode: EXIT.NOT_FOUND },
    });

    await lock.release();
    const s2 = await c.openSession();
    await s2.acquire('cfg');
    const stale = await cli(['kv', 'delete', 'cfg/a', 'cfg/b'], env);
    expect(stale.code).toBe(EXIT.FENCED);
    expect(stale.err).toContain('FAILED_PRECONDITION');
    const staleJson = await cli(['--json', 'kv', 'put', 'cfg/a', 'x'], env);
    expect(staleJson.code).toBe(EXIT.FENCED);
    expect(JSON.parse(staleJson.out).error).toMatchObject({ code: 'FAILED_PRECONDITION', reason: 'STALE_TOKEN' });
  });

  it('kv get of a deleted key says so with its lock and watermark (exit 5); kv list --all shows deleted keys, marked', async () => {
    const { ep, s } = await fakeSession();
    const lock = await s.acquire('orders');
    const t = lock.token.toString();
    const env = { FENCELOCK_ENDPOINTS: ep, FENCELOCK_LOCK: 'orders', FENCELOCK_TOKEN: t, FENCELOCK_SESSION: s.id };
    await lock.write([{ put: 'orders/1', value: 'one' }, { put: 'orders/2', value: 'two' }]);
    expect((await cli(['kv', 'delete', 'orders/1'], env)).code).toBe(EXIT.OK);

    const gone = await cli(['kv', 'get', 'orders/1'], env);
    expect(gone).toMatchObject({ code: EXIT.NOT_FOUND, out: '', err: `fencelock: key "orders/1" was deleted; it still belongs to lock "orders" (watermark ${t})\n` });
    const goneJson = await cli(['--json', 'kv', 'get', 'orders/1'], env);
    expect(goneJson.code).toBe(EXIT.NOT_FOUND);
    expect(JSON.parse(goneJson.out)).toEqual({
      error: {
        code: 'NOT_FOUND',
        reason: null,
        watermark: t,
        key: 'orders/1',
        keyLock: 'orders',
        quota: null,
        message: `key "orders/1" was deleted; it still belongs to lock "orders" (watermark ${t})`,
        exitCode: EXIT.NOT_FOUND,
      },
    });

    expect((await cli(['kv', 'list', 'orders/'], env)).out).toBe(`KEY       LOCK    WATERMARK  VALUE\norders/2  orders  ${t.padEnd(9)}  two\n`);
    const all = await cli(['kv', 'list', 'orders/', '--all'], env);
    expect(all.out).toBe(
      `KEY       LOCK    WATERMARK  DELETED  VALUE\n` + `orders/1  orders  ${t.padEnd(9)}  yes\n` + `orders/2  orders  ${t.padEnd(9)}  no       two\n`,
    );
    expect(JSON.parse((await cli(['--json', 'kv', 'list', 'orders/', '--all'], env)).out)).toEqual({
      items: [
        { key: 'orders/1', deleted: true, token: t, lock: 'orders' },
        { key: 'orders/2', deleted: false, value: 'two', valueBase64: Buffer.from('two').toString('base64'), token: t, lock: 'orders' },
      ],
      more: false,
    });
  });

  it('a write to a key of another lock exits 2 naming the lock that owns it, in text and in JSON', async () => {
    const { ep, s } = await fakeSession();
    await (await s.acquire('orders')).write([{ put: 'shared', value: 'o' }]);
    const billing = await s.acquire('billing');
    const env = { FENCELOCK_ENDPOINTS: ep, FENCELOCK_LOCK: 'billing', FENCELOCK_TOKEN: billing.token.toString(), FENCELOCK_SESSION: s.id };
    const text = await cli(['kv', 'put', 'shared', 'b'], env);
    expect(text.code).toBe(EXIT.FENCED);
    expect(text.err).toContain('belongs to lock "orders"');
    const json = await cli(['--json', 'kv', 'put', 'shared', 'b'], env);
    expect(JSON.parse(json.out).error).toMatchObject({ code: 'FAILED_PRECONDITION', reason: 'WRONG_LOCK', key: 'shared', keyLock: 'orders' });
  });

  it('kv put takes the session id from --session-file; the id appears in no output', async () => {
    const { state, nodes } = await fake(1);
    const ep = nodes[0]!.address;
    const c = new FenceLockClient({ endpoints: [ep], insecure: true });
    cleanups.push(() => c.close());
    const s = await c.openSession();
    const lock = await s.acquire('sf');
    const file = path.join(tmpDir(), 'session');
    fs.writeFileSync(file, `${s.id}\n`, { mode: 0o600 });
    const r = await cli(['kv', 'put', 'sf/a', 'x', '--lock', 'sf', '--token', lock.token.toString(), '--session-file', file, '--endpoints', ep]);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(state.callsOf('Write').map((x) => (x.req as { sessionId: string }).sessionId)).toEqual([s.id]);
    // A refused write names neither the session nor its id.
    await lock.release();
    const refused = await cli(['kv', 'put', 'sf/a', 'y'], { FENCELOCK_ENDPOINTS: ep, FENCELOCK_LOCK: 'sf', FENCELOCK_TOKEN: lock.token.toString(), FENCELOCK_SESSION: s.id });
    expect(refused.code).toBe(2);
    expect(refused.out + refused.err).not.toContain(s.id);
  });

  it('talks TLS with --cacert/--cert/--key or FENCELOCK_CACERT/CERT/KEY, and refuses plaintext or a wrong CA', async () => {
    const pki = testPki();
    const tls: FakeTls = { cert: pki.node.cert, key: pki.node.key, ca: pki.ca.cert, requireClientCert: true };
    const c = await startFakeCluster(1, new FakeState(), { tls });
    cleanups.push(c.stop);
    const ep = c.nodes[0]!.address;
    const dir = tmpDir();
    const f = writePem(dir, { 'ca.pem': pki.ca.cert, 'client.pem': pki.client.cert, 'client-key.pem': pki.client.key, 'other-ca.pem': pki.otherCa.cert });
    const tlsEnv = { FENCELOCK_INSECURE: undefined, FENCELOCK_ENDPOINTS: ep };

    const byFlags = await cli(['--cacert', f['ca.pem']!, '--cert', f['client.pem']!, '--key', f['client-key.pem']!, '--json', 'status'], tlsEnv);
    expect(byFlags.code).toBe(0);
    expect(JSON.parse(byFlags.out)[0]).toMatchObject({ ok: true, id: 'n1' });
    expect(c.state.callsOf('Status')[0]!.peerSan).toContain('urn:fencelock:client:tester');

    const byEnv = await cli(['kv', 'get', 'nothing'], { ...tlsEnv, FENCELOCK_CACERT: f['ca.pem'], FENCELOCK_CERT: f['client.pem'], FENCELOCK_KEY: f['client-key.pem'] });
    expect(byEnv.code).toBe(5); // answered: not found

    // status makes one attempt per node: quick refusals (the library tests cover the retrying calls).
    const calls = c.state.calls.length;
    const plain = await cli(['--insecure', 'status'], tlsEnv);
    expect(plain.code).toBe(3);
    const wrongCa = await cli(['--cacert', f['other-ca.pem']!, '--cert', f['client.pem']!, '--key', f['client-key.pem']!, 'status'], tlsEnv);
    expect(wrongCa.code).toBe(3);
    expect(c.state.calls.length).toBe(calls);

    const halfPair = await cli(['--cert', f['client.pem']!, 'status'], tlsEnv);
    expect(halfPair.code).toBe(1);
    expect(halfPair.err).toContain('--cert and --key');
    const badFile = await cli(['--cacert', path.join(dir, 'nope.pem'), 'status'], tlsEnv);
    expect(badFile.code).toBe(1);
    expect(badFile.err).toMatch(/--cacert: cannot read/);
  });

  it('status shows every node and marks unreachable ones; exits 3 when none answers', async () => {
    const { nodes } = await fake(2);
    const dead = await deadAddress();
    const r = await cli(['status', '--endpoints', `${nodes[0]!.address},${nodes[1]!.address},${dead}`]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/ID\s+ADDRESS\s+ROLE\s+TERM\s+LEADER\s+COMMIT\s+APPLIED\s+LAG\s+SESSIONS\s+LOCKS\s+WAITERS/);
    expect(r.out).toMatch(/n1\s+127\.0\.0\.1:\d+\s+leader/);
    expect(r.out).toMatch(/n2\s+127\.0\.0\.1:\d+\s+follower/);
    expect(r.out).toContain(`${dead}  unreachable`);
    const j = JSON.parse((await cli(['--json', 'status', '--endpoints', `${nodes[0]!.address},${dead}`])).out);
    expect(j).toHaveLength(2);
    expect(j[1]).toMatchObject({ endpoint: dead, ok: false, error: { code: 'UNAVAILABLE' } });
    expect((await cli(['status', '--endpoints', dead])).code).toBe(EXIT.UNAVAILABLE);
  });

  it('describe prints holder and token', async () => {
    const { nodes } = await fake();
    const ep = nodes[0]!.address;
    const c = new FenceLockClient({ endpoints: [ep], insecure: true });
    cleanups.push(() => c.close());
    const s = await c.openSession();
    const l = await s.acquire('d');
    const r = await cli(['describe', 'd', '--endpoints', ep]);
    expect(r.code).toBe(0);
    expect(r.out).toContain(`holder:       ${s.publicId}`);
    expect(r.out).toContain(`token:        ${l.token}`);
    expect(JSON.parse((await cli(['describe', 'd', '--json', '--endpoints', ep])).out)).toMatchObject({ held: true, token: l.token.toString() });
  });

  it('lock -- CMD runs CMD with the FENCELOCK_* environment, exits with its code, and releases', async () => {
    const { state, nodes } = await fake(1, new FakeState(5_000_000_000n));
    const ep = nodes[0]!.address;
    const out = path.join(tmpDir(), 'env.json');
    const script = `require('fs').writeFileSync(${JSON.stringify(out)}, JSON.stringify(process.env)); process.exit(7)`;
    const r = await cli(['lock', 'job', '--ttl', '3000', '--', process.execPath, '-e', script], { FENCELOCK_ENDPOINTS: ep, PATH: process.env.PATH });
    expect(r.err).toBe('');
    expect(r.code).toBe(7);
    const env = JSON.parse(fs.readFileSync(out, 'utf8')) as Record<string, string>;
    expect(env.FENCELOCK_LOCK).toBe('job');
    expect(env.FENCELOCK_TOKEN).toMatch(/^\d+$/);
    expect(BigInt(env.FENCELOCK_TOKEN!)).toBeGreaterThan(1n << 32n);
    expect(env.FENCELOCK_SESSION).toMatch(/^[0-9a-f]{32}$/);
    expect(env.FENCELOCK_ENDPOINTS).toBe(ep);
    expect(env.FENCELOCK_INSECURE).toBe('1');
    expect(env.FENCELOCK_CACERT).toBeUndefined();
    expect(state.locks.get('job')!.holder).toBeUndefined();
    expect(state.callsOf('Release')).toHaveLength(1);
    expect(state.callsOf('Close')).toHaveLength(1);
  });

  it('lock -- CMD stops CMD and exits 4 when the lock is presumed lost', async () => {
    const { nodes } = await fake();
    const ep = nodes[0]!.address;
    nodes[0]!.keepAliveMode = 'silent';
    const started = Date.now();
    const r = await cli(['lock', 'slow', '--ttl', '1500', '--grace', '300', '--', process.execPath, '-e', 'setTimeout(() => {}, 20000)'], { FENCELOCK_ENDPOINTS: ep });
    expect(r.code).toBe(EXIT.LOCK_LOST);
    expect(r.err).toContain('presumed lost');
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('lock --json reports a lost lock once, at the end, as a LOCK_LOST error on stdout', async () => {
    const { nodes } = await fake();
    nodes[0]!.keepAliveMode = 'silent';
    const r = await cli(['--json', 'lock', 'slow-json', '--ttl', '1500', '--grace', '300', '--', process.execPath, '-e', 'setTimeout(() => {}, 20000)'], { FENCELOCK_ENDPOINTS: nodes[0]!.address });
    expect(r.code).toBe(EXIT.LOCK_LOST);
    expect(r.err).toBe('');
    const { error } = JSON.parse(r.out) as { error: { code: string; message: string; exitCode: number } };
    expect(error).toMatchObject({ code: 'LOCK_LOST', exitCode: EXIT.LOCK_LOST });
    expect(error.message).toMatch(/^lock "slow-json" \(token \d+\) is presumed lost \(no renewal acknowledged in time\); the command was stopped$/);
  });

  it('lock -- CMD escalates to SIGKILL when CMD ignores SIGTERM', async () => {
    const { nodes } = await fake();
    nodes[0]!.keepAliveMode = 'silent';
    const script = "process.on('SIGTERM', () => {}); setTimeout(() => {}, 20000)";
    const started = Date.now();
    const r = await cli(['lock', 'stubborn', '--ttl', '1500', '--grace', '200', '--', process.execPath, '-e', script], { FENCELOCK_ENDPOINTS: nodes[0]!.address });
    expect(r.code).toBe(EXIT.LOCK_LOST);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('lock forwards SIGTERM to CMD and exits 128+15; --wait 0 on a held lock exits 3; a missing CMD exits 127', async () => {
    const { state, nodes } = await fake();
    const ep = nodes[0]!.address;
    const signals = new EventEmitter();
    const p = cli(['lock', 'sig', '--', process.execPath, '-e', 'setTimeout(() => {}, 20000)'], { FENCELOCK_ENDPOINTS: ep }, signals);
    // Wait until CMD runs (the lock is held), then deliver SIGTERM to fencelock.
    for (let i = 0; i < 200 && !(state.locks.get('sig')?.holder && signals.listenerCount('SIGTERM') > 0); i++) await new Promise((r) => setTimeout(r, 10));
    const c = new FenceLockClient({ endpoints: [ep], insecure: true });
    cleanups.push(() => c.close());
    const other = await c.openSession();
    await other.acquire('held-elsewhere');
    const busy = await cli(['lock', 'held-elsewhere', '--wait', '0', '--', process.execPath, '-e', ''], { FENCELOCK_ENDPOINTS: ep });
    expect(busy.code).toBe(EXIT.UNAVAILABLE);
    expect(busy.err).toContain('held by another session');
    signals.emit('SIGTERM', 'SIGTERM');
    const r = await p;
    expect(r.code).toBe(128 + 15);
    expect(state.locks.get('sig')!.holder).toBeUndefined();
    const missing = await cli(['lock', 'm', '--', '/nonexistent/fencelock-test-cmd'], { FENCELOCK_ENDPOINTS: ep });
    expect(missing.code).toBe(127);
    expect(state.locks.get('m')!.holder).toBeUndefined();
  });

  it('lock NAME without CMD holds until SIGINT (exit 0, released), and exits 4 when the lock is presumed lost', async () => {
    const { state, nodes } = await fake();
    const ep = nodes[0]!.address;
    const signals = new EventEmitter();
    let out = '';
    const p = runCli(['lock', 'hold', '--endpoints', ep], { stdout: (t) => void (out += t), stderr: (t) => void (out += t), env: { FENCELOCK_INSECURE: '1' }, signals });
    // Once the held line is out (a SIGINT before it gives up the wait instead).
    for (let i = 0; i < 200 && out === ''; i++) await new Promise((r) => setTimeout(r, 10));
    signals.emit('SIGINT', 'SIGINT');
    expect(await p).toBe(0);
    expect(out).toMatch(/^lock "hold" held: token \d+, session [0-9a-f]{16}; Ctrl-C or end of input \(Ctrl-D\) releases it\nlock "hold" released \(SIGINT\)\n$/);
    expect(state.locks.get('hold')!.holder).toBeUndefined();
    expect(state.callsOf('Release')).toHaveLength(1);

    nodes[0]!.keepAliveMode = 'silent';
    const started = Date.now();
    const lost = await cli(['--json', 'lock', 'hold-lost', '--ttl', '1500', '--endpoints', ep]);
    expect(lost.code).toBe(EXIT.LOCK_LOST);
    expect(lost.err).toBe('');
    const [heldLine, errorLine, ...rest] = lost.out.trim().split('\n');
    expect(rest).toEqual([]);
    expect(JSON.parse(heldLine!)).toMatchObject({ lock: 'hold-lost', session: expect.stringMatching(/^[0-9a-f]{16}$/) });
    expect(JSON.parse(errorLine!)).toMatchObject({ error: { code: 'LOCK_LOST', exitCode: EXIT.LOCK_LOST, message: expect.stringContaining('is presumed lost') } });
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('lock gives up a timed-out wait with exit 3', async () => {
    const { nodes } = await fake();
    const ep = nodes[0]!.address;
    const c = new FenceLockClient({ endpoints: [ep], insecure: true });
    cleanups.push(() => c.close());
    await (await c.openSession()).acquire('busy');
    const r = await cli(['lock', 'busy', '--wait', '200', '--', process.execPath, '-e', ''], { FENCELOCK_ENDPOINTS: ep });
    expect(r.code).toBe(EXIT.UNAVAILABLE);
    expect(r.err).toContain('DEADLINE_EXCEEDED');
  });

  it('watch prints events until SIGINT', async () => {
    const { nodes } = await fake();
    const ep = nodes[0]!.address;
    const signals = new EventEmitter();
    const p = cli(['watch', 'wl', '--endpoints', ep, '--json'], {}, signals);
    const c = new FenceLockClient({ endpoints: [ep], insecure: true });
    cleanups.push(() => c.close());
    await new Promise((r) => setTimeout(r, 150));
    const holder = await c.openSession();
    const l = await holder.acquire('wl');
    const described = JSON.parse((await cli(['describe', 'wl', '--endpoints', ep, '--json'])).out) as Record<string, unknown>;
    await l.release();
    await new Promise((r) => setTimeout(r, 150));
    signals.emit('SIGINT', 'SIGINT');
    const r = await p;
    expect(r.code).toBe(0);
    const lines = r.out.trim().split('\n').map((x) => JSON.parse(x) as { kind: string; token: string; session: string });
    expect(lines.map((x) => x.kind)).toEqual(['GRANTED', 'RELEASED']);
    expect(lines[0]!.token).toBe(l.token.toString());
    // watch and describe name the session the same way: `session`, its public handle.
    expect(lines[0]!.session).toBe(holder.publicId);
    expect(described).toMatchObject({ lock: 'wl', held: true, session: holder.publicId, token: l.token.toString() });
    expect(described).not.toHaveProperty('holderSession');
  });

  it("a warning quoting a call's error keeps the cause and drops grpc-js's dangling \"Resolution note: \"", () => {
    const raw =
      'close session: gave up after 5 attempt(s) in 2000 ms; last error: close session (via 127.0.0.1:7003): UNAVAILABLE: ' +
      'No connection established. Last error: Error: connect ECONNREFUSED 127.0.0.1:7003 (2026-12-06T18:00:00.123Z). Resolution note: ';
    const warning = `fencelock: warning: closing the session failed (${withoutGrpcNoise(raw)}); it expires after 4000 ms`;
    expect(warning).toBe(
      'fencelock: warning: closing the session failed (close session: gave up after 5 attempt(s) in 2000 ms; last error: close session (via 127.0.0.1:7003): UNAVAILABLE: connect ECONNREFUSED 127.0.0.1:7003); it expires after 4000 ms',
    );
    expect(withoutGrpcNoise('write under lock "a": FAILED_PRECONDITION: STALE_TOKEN')).toBe('write under lock "a": FAILED_PRECONDITION: STALE_TOKEN');
  });
});

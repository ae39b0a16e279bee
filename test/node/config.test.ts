import { describe, expect, it } from 'vitest';
import { ConfigError, deriveClusterId, KNOWN_FIELDS, validateConfig } from '../../src/node/config';
import { isLoopback } from '../../src/node/memberAddress';
import { editDistance, nearestName } from '../../src/node/nearestName';

const MEMBERS = {
  n1: { client: '127.0.0.1:7001', peer: '127.0.0.1:7101' },
  n2: { client: '127.0.0.1:7002', peer: '127.0.0.1:7102' },
  n3: { client: '127.0.0.1:7003', peer: '127.0.0.1:7103' },
};
const TLS = { ca: 'ca.pem', cert: 'n1.pem', key: 'n1-key.pem' };
const base = { id: 'n1', listen: '127.0.0.1:7001', peerListen: '127.0.0.1:7101', members: MEMBERS, tls: TLS, dataDir: 'data/n1', auth: { enabled: false } };

function refusal(raw: object): string {
  try {
    validateConfig(raw, 'node.json');
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('config was accepted');
}

describe('node config', () => {
  it('fills defaults: TLS on, client certificates optional, a cluster id derived from the members', () => {
    const cfg = validateConfig(base);
    expect(cfg.insecure).toBe(false);
    expect(cfg.clientCertAuth).toBe(false);
    expect(cfg.clusterId).toBe(deriveClusterId(MEMBERS));
    expect(cfg.clusterId).toMatch(/^[0-9a-f]{16}$/);
  });

  it('derives different cluster ids for clusters with other peer addresses', () => {
    const other = { ...MEMBERS, n3: { client: '127.0.0.1:7003', peer: '127.0.0.1:7203' } };
    expect(deriveClusterId(other)).not.toBe(deriveClusterId(MEMBERS));
  });

  it('refuses a config without TLS files unless insecure is explicit', () => {
    const { tls: _tls, ...noTls } = base;
    expect(refusal(noTls)).toMatch(/"tls" is required.*certs init.*insecure/);
    expect(validateConfig({ ...noTls, insecure: true }).insecure).toBe(true);
  });

  it('refuses plaintext on an address that is not loopback', () => {
    const { tls: _tls, ...noTls } = base;
    expect(refusal({ ...noTls, insecure: true, listen: '0.0.0.0:7001' })).toMatch(/"listen" is not a loopback address/);
    expect(refusal({ ...noTls, insecure: true, peerListen: '10.0.0.5:7101' })).toMatch(/"peerListen" is not a loopback address/);
    expect(isLoopback('127.0.0.2:1')).toBe(true);
    expect(isLoopback('[::1]:1')).toBe(true);
    expect(isLoopback('localhost:1')).toBe(true);
    expect(isLoopback('127.0.0.1.example.com:1')).toBe(false);
  });

  it('takes an optional metricsLockLabelDepth from 0 to 8', () => {
    expect(validateConfig(base).metricsLockLabelDepth).toBeUndefined();
    expect(validateConfig({ ...base, metricsLockLabelDepth: 2 }).metricsLockLabelDepth).toBe(2);
    for (const bad of [-1, 9, 1.5, '1']) expect(refusal({ ...base, metricsLockLabelDepth: bad })).toMatch(/field "metricsLockLabelDepth" must be an integer from 0 to 8/);
  });

  it('tracing: off by default; an OTLP/HTTP endpoint, a service name and a sample ratio from 0 to 1, nothing else', () => {
    expect(validateConfig(base).tracing).toBeUndefined();
    const tracing = { otlpEndpoint: 'http://127.0.0.1:4318', serviceName: 'locks-eu', sampleRatio: 0.25 };
    expect(validateConfig({ ...base, tracing }).tracing).toEqual(tracing);
    expect(validateConfig({ ...base, tracing: { otlpEndpoint: 'https://tempo.example:4318' } }).tracing?.sampleRatio).toBeUndefined();
    for (const bad of ['127.0.0.1:4318', 'grpc://c:4317', '', 4318]) expect(refusal({ ...base, tracing: { otlpEndpoint: bad } })).toMatch(/field "tracing.otlpEndpoint" must be an http:\/\/ or https:\/\//);
    expect(refusal({ ...base, tracing: {} })).toMatch(/field "tracing.otlpEndpoint"/);
    for (const bad of [-0.1, 1.5, '1', Number.NaN]) expect(refusal({ ...base, tracing: { otlpEndpoint: 'http://c:4318', sampleRatio: bad } })).toMatch(/field "tracing.sampleRatio" must be a number from 0 to 1/);
    expect(refusal({ ...base, tracing: { otlpEndpoint: 'http://c:4318', serviceName: '' } })).toMatch(/field "tracing.serviceName"/);
    expect(refusal({ ...base, tracing: { otlpEndpoint: 'http://c:4318', endpoint: 'x' } })).toMatch(/field "tracing.endpoint"/);
    expect(refusal({ ...base, tracing: true })).toMatch(/field "tracing" must be/);
  });

  it('takes an optional metricsListen apart from both gRPC listeners', () => {
    expect(validateConfig(base).metricsListen).toBeUndefined();
    expect(validateConfig({ ...base, metricsListen: '0.0.0.0:9464' }).metricsListen).toBe('0.0.0.0:9464');
    expect(refusal({ ...base, metricsListen: 9464 })).toMatch(/field "metricsListen" must be host:port/);
    expect(refusal({ ...base, metricsListen: 'http://127.0.0.1:9464/metrics' })).toMatch(/field "metricsListen" must be host:port/);
    expect(refusal({ ...base, metricsListen: '127.0.0.1:7001' })).toMatch(/field "metricsListen" must not use the port of listen/);
    expect(refusal({ ...base, metricsListen: '0.0.0.0:7101' })).toMatch(/field "metricsListen" must not use the port of peerListen/);
  });

  it('takes an optional httpListen on a port of its own, plaintext only on loopback', () => {
    expect(validateConfig(base).httpListen).toBeUndefined();
    expect(validateConfig({ ...base, httpListen: '0.0.0.0:7201' }).httpListen).toBe('0.0.0.0:7201');
    expect(refusal({ ...base, httpListen: 7201 })).toMatch(/field "httpListen" must be host:port/);
    expect(refusal({ ...base, httpListen: '127.0.0.1:7001' })).toMatch(/field "httpListen" must not use the port of listen/);
    expect(refusal({ ...base, metricsListen: '127.0.0.1:9464', httpListen: '127.0.0.1:9464' })).toMatch(/field "httpListen" must not use the port of metricsListen/);
    const { tls: _tls, ...plain } = base;
    expect(validateConfig({ ...plain, insecure: true, httpListen: '127.0.0.1:7201' }).httpListen).toBe('127.0.0.1:7201');
    expect(refusal({ ...plain, insecure: true, httpListen: '0.0.0.0:7201' })).toMatch(/field "httpListen" is not a loopback address/);
  });

  it('refuses one listener for both clients and peers', () => {
    expect(refusal({ ...base, peerListen: base.listen })).toMatch(/"peerListen" must differ from listen/);
  });

  it('refuses members given as one address (the old shape) and unknown member fields', () => {
    expect(refusal({ ...base, members: { ...MEMBERS, n2: '127.0.0.1:7002' } })).toMatch(/members\.n2/);
    expect(refusal({ ...base, members: { ...MEMBERS, n2: { ...MEMBERS.n2, raft: 'x:1' } } })).toMatch(/members\.n2\.raft" is not a known field/);
  });

  it('auth: on needs an admin with a valid user name; unknown or malformed fields are refused', () => {
    expect(validateConfig(base).auth).toEqual({ enabled: false });
    expect(validateConfig({ ...base, auth: { enabled: true, admin: 'alice' } }).auth).toEqual({ enabled: true, admin: 'alice' });
    expect(refusal({ ...base, auth: { enabled: true } })).toMatch(/field "auth.admin" is required with "enabled": true/);
    expect(refusal({ ...base, auth: { admin: 'alice' } })).toMatch(/field "auth.enabled" must be true or false/);
    expect(refusal({ ...base, auth: {} })).toMatch(/field "auth.enabled" must be true or false/);
    expect(refusal({ ...base, auth: { enabled: 'yes', admin: 'alice' } })).toMatch(/field "auth.enabled" must be true or false/);
    for (const admin of ['', 'a b', '-dash', 'x'.repeat(129), 'ünicode', 'a\nb', 7]) {
      expect(refusal({ ...base, auth: { enabled: true, admin } }), String(admin)).toMatch(/field "auth.admin" must be a user name/);
    }
    expect(refusal({ ...base, auth: { enabled: true, admin: 'alice', admins: ['bob'] } })).toMatch(/field "auth.admins" is not a known field/);
    expect(refusal({ ...base, auth: true })).toMatch(/field "auth" must be/);
    expect(refusal({ ...base, auth: null })).toMatch(/field "auth" must be/);
  });

  it('auth: a config without the auth section is refused on loopback and off it, naming both choices', () => {
    const { auth: _auth, ...noAuth } = base;
    const { tls: _tls, ...plain } = noAuth;
    const loopback = ['127.0.0.1:7001', 'localhost:7001', '[::1]:7001'];
    const elsewhere = ['0.0.0.0:7001', '[::]:7001', '10.0.0.1:7001', 'fl1.example.net:7001'];
    const cases = [...[...loopback, ...elsewhere].map((listen) => ({ ...noAuth, listen })), ...loopback.map((listen) => ({ ...plain, insecure: true, listen }))];
    for (const raw of cases) {
      expect(refusal(raw), raw.listen).toBe(
        'node.json: field "auth" is required: "auth": { "enabled": true, "admin": NAME } to turn auth on (NAME: the user named in the admin\'s client certificate; docs/auth.md "Bootstrap"), or "auth": { "enabled": false } to serve without auth on purpose (for development)',
      );
      expect(validateConfig({ ...raw, auth: { enabled: false } }).auth, raw.listen).toEqual({ enabled: false });
      expect(validateConfig({ ...raw, auth: { enabled: true, admin: 'ops' } }).auth, raw.listen).toEqual({ enabled: true, admin: 'ops' });
    }
  });

  it('refuses misspelt fields instead of ignoring them', () => {
    expect(refusal({ ...base, electonTicks: 10 })).toMatch(/field "electonTicks" is not a known field/);
    expect(refusal({ ...base, loglevel: 'debug' })).toMatch(/field "loglevel" is not a known field/);
    expect(refusal({ ...base, tls: { ...TLS, cafile: 'x' } })).toMatch(/"tls\.cafile" is not a known field/);
    expect(refusal({ ...base, logLevel: 'verbose' })).toMatch(/"logLevel" must be one of/);
  });

  it('refuses a "join" that is not a boolean (a string "false" would otherwise mean true)', () => {
    for (const join of ['false', 'true', 1, 0, null, {}]) expect(refusal({ ...base, join })).toMatch(/field "join" must be true or false/);
    expect(validateConfig({ ...base, join: true }).join).toBe(true);
  });

  it('refuses member ids and addresses a MemberAdd would refuse: one rule for both', () => {
    expect(refusal({ ...base, members: { ...MEMBERS, 'n/9': { client: '127.0.0.1:1', peer: '127.0.0.1:2' } } })).toMatch(/"members\.n\/9" node ids are 1-32 letters/);
    expect(refusal({ ...base, members: { ...MEMBERS, n9: { client: `${'a'.repeat(300)}:1`, peer: '127.0.0.1:2' } } })).toMatch(/"members\.n9\.client" must be host:port \(at most 255 characters\)/);
    expect(refusal({ ...base, members: { ...MEMBERS, n9: { client: '127.0.0.1:1', peer: '127.0.0.1:70000' } } })).toMatch(/"members\.n9\.peer" has port 70000/);
  });

  it('names the nearest valid key of a misspelt one, at the top level and nested', () => {
    expect(refusal({ ...base, electonTicks: 10 })).toMatch(/field "electonTicks" is not a known field; did you mean "electionTicks"\?$/);
    expect(refusal({ ...base, loglevel: 'debug' })).toMatch(/field "loglevel" is not a known field; did you mean "logLevel"\?$/);
    expect(refusal({ ...base, minSessionTTLMs: 5_000 })).toMatch(/field "minSessionTTLMs" is not a known field; did you mean "minSessionTtlMs"\?$/);
    expect(refusal({ ...base, peerlisten: '127.0.0.1:1' })).toMatch(/did you mean "peerListen"\?$/);
    expect(refusal({ ...base, members: { ...MEMBERS, n2: { ...MEMBERS.n2, clinet: 'x:1' } } })).toMatch(/field "members\.n2\.clinet" is not a known field; did you mean "members\.n2\.client"\?$/);
    expect(refusal({ ...base, tls: { ...TLS, cery: 'x' } })).toMatch(/field "tls\.cery" is not a known field; did you mean "tls\.cert"\?$/);
    expect(refusal({ ...base, auth: { enabled: false, enable: true } })).toMatch(/field "auth\.enable" is not a known field; did you mean "auth\.enabled"\?$/);
  });

  it('lists the valid keys when none is near the unknown one', () => {
    const message = refusal({ ...base, replicationFactor: 3 });
    expect(message).toMatch(/field "replicationFactor" is not a known field \(known: /);
    for (const k of KNOWN_FIELDS) expect(message).toContain(k);
    expect(refusal({ ...base, tls: { ...TLS, cafile: 'x' } })).toMatch(/"tls\.cafile" is not a known field \(known: ca, cert, key\)/);
  });

  it('nearestName: case first, then edits, within a third of the word', () => {
    const names = [...KNOWN_FIELDS];
    expect(nearestName('electonTicks', names)).toBe('electionTicks');
    expect(nearestName('ELECTIONTICKS', names)).toBe('electionTicks');
    expect(nearestName('maxSessionTTLMs', names)).toBe('maxSessionTtlMs');
    expect(nearestName('heartbeatTick', names)).toBe('heartbeatTicks');
    expect(nearestName('tsl', names)).toBe('tls');
    expect(nearestName('snapshots', names)).toBeUndefined();
    expect(nearestName('x', [])).toBeUndefined();
    // Of two candidates equally near once case is folded, the one with the same case wins.
    expect(nearestName('abc', ['ABD', 'abd'])).toBe('abd');
    expect(editDistance('electonTicks', 'electionTicks')).toBe(1);
    expect(editDistance('tsl', 'tls')).toBe(1);
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(editDistance('', 'abc')).toBe(3);
  });

  it('binds every interface but refuses a member address others cannot reach', () => {
    const bindAll = validateConfig({ ...base, listen: '0.0.0.0:7001', peerListen: '[::]:7101', auth: { enabled: false } });
    expect(bindAll.listen).toBe('0.0.0.0:7001');
    expect(bindAll.members.n1!.client).toBe('127.0.0.1:7001');
    const at = (n1: object): object => ({ ...base, members: { ...MEMBERS, n1 } });
    expect(refusal(at({ client: '0.0.0.0:7001', peer: '127.0.0.1:7101' }))).toMatch(/field "members\.n1\.client" is 0\.0\.0\.0:7001, a bind address: others cannot reach it/);
    expect(refusal(at({ client: '127.0.0.1:7001', peer: '[::]:7101' }))).toMatch(/field "members\.n1\.peer" is \[::\]:7101, a bind address/);
    expect(refusal(at({ client: '[0:0:0:0:0:0:0:0]:7001', peer: '127.0.0.1:7101' }))).toMatch(/"members\.n1\.client" is .*a bind address/);
    expect(refusal({ ...base, members: { ...MEMBERS, n3: { client: '127.0.0.1:7003', peer: '0.0.0.0:7103' } } })).toMatch(/"members\.n3\.peer" is 0\.0\.0\.0:7103, a bind address/);
    expect(refusal(at({ client: 'fl1.example.net:0', peer: '127.0.0.1:7101' }))).toMatch(/"members\.n1\.client" has port 0; a port is 1-65535/);
    expect(refusal(at({ client: 'fl1.example.net:70000', peer: '127.0.0.1:7101' }))).toMatch(/has port 70000/);
    expect(refusal({ ...base, peerAddresses: { n2: '0.0.0.0:9000' } })).toMatch(/"peerAddresses\.n2" is 0\.0\.0\.0:9000, a bind address/);
    // A host name, an IPv6 address and an IP that merely starts with 0 are reachable.
    expect(validateConfig(at({ client: 'fl1.example.net:7001', peer: '[fd00::1]:7101' })).members.n1!.peer).toBe('[fd00::1]:7101');
    expect(validateConfig(at({ client: '10.0.0.1:7001', peer: '0.1.2.3:7101' })).members.n1!.client).toBe('10.0.0.1:7001');
  });

  it('refuses insecure together with TLS files or required client certificates', () => {
    expect(refusal({ ...base, insecure: true })).toMatch(/"tls" must not be set together with "insecure"/);
    const { tls: _tls, ...noTls } = base;
    expect(refusal({ ...noTls, insecure: true, clientCertAuth: true })).toMatch(/"clientCertAuth" needs TLS/);
  });
});

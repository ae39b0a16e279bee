// No anonymous window (docs/auth.md "Bootstrap"), attacked over real TLS connections to real node processes.
// A cluster starts without auth; callers without a certificate, and with certificates naming a stranger or
// the future admin, try every right an anonymous caller had before `enable`: a role with admin, a user
// holding it, a token for it, a token for the future admin, the future admin's 32 roles (which blocked
// enable for good), quotas, deletes and revokes. Each is refused FAILED_PRECONDITION (AUTH_OFF) with a
// message that says how to turn auth on, and no entry is proposed. Then the operator turns auth on in every
// node's config and restarts: the tables hold exactly root and the configured admin, then exactly what the
// admin alone made, and every stranger is refused.
import * as grpc from '@grpc/grpc-js';
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, LocalCluster } from '../integration/harness';
import { authedClient, certFor, type AuthedClient, type Who } from './authKit';

type Obj = Record<string, unknown>;

/** The harness's client certificate names `test`: the admin the operator configures. */
const ADMIN = 'test';

let cluster: LocalCluster;
const open: AuthedClient[] = [];
let request = 0;

function clientOn(address: string, who: Who): AuthedClient {
  const c = authedClient(address, cluster.certsDir!, who);
  open.push(c);
  return c;
}

const adminCert = (): Who => ({
  cert: { certPem: readFileSync(path.join(cluster.certsDir!, 'client.pem'), 'utf8'), keyPem: readFileSync(path.join(cluster.certsDir!, 'client-key.pem'), 'utf8') },
});

async function leaderAddress(): Promise<string> {
  return eventually(
    async () => {
      for (const n of cluster.nodes) {
        const c = clientOn(n.address, adminCert());
        const s = await c.call('Cluster', 'Status', {}).catch(() => undefined);
        c.close();
        if (s?.role === 'LEADER' || s?.role === 'leader') return n.address;
      }
      return undefined;
    },
    30_000,
    'a leader',
  );
}

/** Each change its own client id, from request 1 (a client id without records starts there). */
const change = (c: AuthedClient, method: string, req: Obj): Promise<Obj> => c.call('Auth', method, { header: { clientId: `window-${++request}`, requestId: '1' }, ...req });

/** Every auth change an anonymous caller could make before enable, in an order that would have worked. */
function attacks(): Array<[string, Obj]> {
  const out: Array<[string, Obj]> = [
    ['RoleAdd', { role: 'evil' }],
    ['RoleGrantPermission', { role: 'evil', rule: { permission: 'ADMIN', prefix: '' } }],
    ['RoleSetQuota', { role: 'evil', name: 'sessions', value: '1000000' }],
    ['UserAdd', { user: 'mallory' }],
    ['UserGrantRole', { user: 'mallory', role: 'evil' }],
    ['TokenIssue', { user: 'mallory' }],
    ['UserAdd', { user: ADMIN }],
    ['TokenIssue', { user: ADMIN }],
    ['UserGrantRole', { user: ADMIN, role: 'evil' }],
    ['RoleAdd', { role: 'root' }],
    ['RoleRevokePermission', { role: 'root', rule: { permission: 'READ', prefix: '' } }],
  ];
  for (let i = 0; i < 32; i++) out.push(['RoleAdd', { role: `r${i}` }], ['UserGrantRole', { user: ADMIN, role: `r${i}` }]);
  out.push(['UserRevokeRole', { user: ADMIN, role: 'r0' }], ['RoleDelete', { role: 'r1' }], ['UserDelete', { user: 'mallory' }], ['TokenRevoke', { tokenId: '0123456789abcdef' }]);
  return out;
}

beforeAll(async () => {
  cluster = await LocalCluster.create({ size: 3 });
  cluster.startAll();
}, 60_000);

afterAll(async () => {
  for (const c of open) c.close();
  await cluster?.destroy();
});

describe('the window before auth is turned on', () => {
  it('a node started without auth says so loudly in its log', async () => {
    await leaderAddress();
    const log = await eventually(() => {
      const text = readFileSync(path.join(cluster.dir, 'cluster.log'), 'utf8');
      return cluster.nodes.every((n) => text.includes(`[${n.id}]`) && new RegExp(`\\[${n.id}\\].*AUTH IS OFF`).test(text)) ? text : undefined;
    }, 10_000, 'the warning of every node');
    expect(log).toMatch(/AUTH IS OFF: any caller that reaches the client listener may take, release and write any lock and key/);
  }, 40_000);

  it('refuses every auth change from every kind of caller with AUTH_OFF, and proposes nothing', async () => {
    const leader = await leaderAddress();
    const callers: Array<[string, Who]> = [
      ['no certificate', {}],
      ['a stranger', { cert: certFor(cluster.certsDir!, 'mallory') }],
      ['the future admin', adminCert()],
    ];
    const commitOf = async (): Promise<string> => String((await clientOn(leader, adminCert()).call('Cluster', 'MemberList', {})).commit);
    const before = await commitOf();
    for (const [what, who] of callers) {
      const c = clientOn(leader, who);
      for (const [method, req] of attacks()) {
        const err = await change(c, method, req).then(
          () => undefined,
          (e: grpc.ServiceError) => e,
        );
        expect(err, `${what}: ${method} ${JSON.stringify(req)} was accepted`).toBeDefined();
        expect(err!.code, `${what}: ${method}: ${err!.details}`).toBe(grpc.status.FAILED_PRECONDITION);
        expect(err!.metadata.get('fencelock-reason')).toEqual(['AUTH_OFF']);
        expect(err!.details).toMatch(/^AUTH_OFF: auth is off: users, roles and tokens can be made only once auth is on; set "auth": \{ "enabled": true, "admin": NAME \} in every node's config/);
      }
    }
    const list = await clientOn(leader, {}).call('Auth', 'List', {});
    expect(list).toMatchObject({ authEnabled: false, users: [], roles: [], tokens: [] });
    // Leader duties (lease checkpoints) may add entries of their own; none is an auth change, so compare the
    // tables rather than the commit index alone, and check that the index did not jump by the attacks.
    expect(Number(await commitOf()) - Number(before)).toBeLessThan(attacks().length);
  }, 120_000);

  it('once the operator turns auth on, the tables hold only root and the configured admin, then only what the admin made', async () => {
    for (const n of cluster.nodes) {
      const config = JSON.parse(readFileSync(n.configFile, 'utf8')) as Obj;
      writeFileSync(n.configFile, JSON.stringify({ ...config, auth: { enabled: true, admin: ADMIN } }, null, 2));
      await cluster.stop(n.id);
    }
    cluster.startAll();
    const leader = await leaderAddress();
    const admin = clientOn(leader, adminCert());
    await eventually(async () => ((await admin.call('Auth', 'WhoAmI', {}).catch((): Obj => ({}))).authEnabled === true ? true : undefined), 30_000, 'auth on');
    const root = { name: 'root', rules: ['LOCK', 'WRITE', 'READ', 'ADMIN'].map((permission) => ({ permission, prefix: '' })), quotas: [] };
    expect(await admin.call('Auth', 'List', {})).toEqual({ authEnabled: true, users: [{ name: ADMIN, roles: ['root'] }], roles: [root], tokens: [] });

    // Every anonymous attack again, now as strangers: nothing lands.
    for (const who of [{}, { cert: certFor(cluster.certsDir!, 'mallory') }] as Who[]) {
      const c = clientOn(leader, who);
      for (const [method, req] of attacks().slice(0, 9)) {
        const code = await change(c, method, req).then(
          () => grpc.status.OK,
          (e: grpc.ServiceError) => e.code,
        );
        expect([grpc.status.UNAUTHENTICATED, grpc.status.PERMISSION_DENIED], `${method} as ${who.cert ? 'a stranger' : 'nobody'}`).toContain(code);
      }
    }
    // The admin makes a role and a user; the tables are exactly that.
    await change(admin, 'RoleAdd', { role: 'app' });
    await change(admin, 'RoleGrantPermission', { role: 'app', rule: { permission: 'LOCK', prefix: 'app/' } });
    await change(admin, 'UserAdd', { user: 'alice' });
    await change(admin, 'UserGrantRole', { user: 'alice', role: 'app' });
    const issued = await change(admin, 'TokenIssue', { user: 'alice' });
    expect(await admin.call('Auth', 'List', {})).toEqual({
      authEnabled: true,
      users: [
        { name: 'alice', roles: ['app'] },
        { name: ADMIN, roles: ['root'] },
      ],
      roles: [{ name: 'app', rules: [{ permission: 'LOCK', prefix: 'app/' }], quotas: [] }, root],
      tokens: [{ id: issued.tokenId, user: 'alice' }],
    });
  }, 180_000);
});

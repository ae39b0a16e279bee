// Cluster and Auth over the wire (Status, Member*, Snapshot; WhoAmI, List, the user, role, rule, quota and
// token changes) with generated edge values against a real 3-node TLS cluster with auth on: every node's
// answers within what lock.proto and the docs state, every bad value refused naming its field, never a
// server fault, and a follower pointing at the leader.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withoutIpServerName } from '../../src/client/ipServerName';
import { freePorts } from '../integration/harness';
import {
  ADMIN, asDecoded, checkShape, expectAlive, expectOk, expectRefused, generator, header, intValid, MAX_SAFE, printSeedOnFailure, sendable,
  startCluster, textValid, WireClient, wireInt, wireText, type Gen, type Obj, type WireCluster,
} from './wireKit';

printSeedOnFailure();

let w: WireCluster;
let followers: WireClient[];
beforeAll(async () => {
  w = await startCluster(3);
  followers = w.clients.filter((c) => c !== w.leader);
});
afterAll(async () => {
  await w?.stop();
});

const leaderAddress = (): string => w.leader.address;

/** UNAVAILABLE with the leader's client address in `fencelock-leader`. */
function expectRedirect(out: Awaited<ReturnType<WireClient['unary']>>, what: string): void {
  expectRefused(out, what, [grpc.status.UNAVAILABLE]);
  if (!out.ok) expect(out.metadata.get('fencelock-leader')[0], `${what}: the leader hint`).toBe(leaderAddress());
}

describe('Cluster.Status', () => {
  it('answers on every node: one leader, one term, indexes in order, peers within the log', async () => {
    const statuses = await Promise.all(w.clients.map(async (c) => ({ c, res: expectOk(await c.unary('Cluster', 'Status', {}), c.address, 'Cluster', 'Status') })));
    const leaders = statuses.filter((s) => s.res.role === 'leader');
    expect(leaders.map((s) => s.c.address)).toEqual([leaderAddress()]);
    const leaderId = leaders[0]!.res.id as string;
    for (const { c, res } of statuses) {
      expect(res.address, 'its own address').toBe(c.address);
      expect(w.cluster.ids).toContain(res.id);
      expect(['leader', 'follower']).toContain(res.role);
      wireInt('term', res.term, { min: 1, max: MAX_SAFE });
      const last = wireInt('last_index', res.lastIndex, { min: 1, max: MAX_SAFE });
      const commit = wireInt('commit', res.commit, { min: 0, max: last });
      const applied = wireInt('applied', res.applied, { min: 0, max: commit });
      wireInt('snapshot_index', res.snapshotIndex, { min: 0, max: applied });
      for (const peer of res.peers as Obj[]) {
        expect(w.cluster.ids).toContain(peer.id);
        const match = wireInt('match', peer.match, { min: 0, max: Number(leaders[0]!.res.lastIndex) + 1_000 });
        // The leader sends a peer the entries from next on: always past what the peer holds.
        if (res.role === 'leader') wireInt('next', peer.next, { min: match + 1, max: last + 1 });
      }
      // Followers learn the leader from its messages; a new follower may not know it yet, but never names another.
      if (res.leader !== '') {
        expect(res.leader).toBe(leaderId);
        expect(res.leaderAddress).toBe(leaderAddress());
      }
    }
    expect((leaders[0]!.res.peers as Obj[]).map((p) => p.id).sort()).toEqual(w.cluster.ids.filter((id) => id !== leaderId).sort());
  });
});

const NODE_ID = /^[A-Za-z0-9_-]{1,32}$/;

/** docs/operations.md: host:port, at most 255 characters, a port 1-65535, not a bind address. */
function addressValid(a: string): boolean {
  const m = /^([A-Za-z0-9.\-_[\]:]+):(\d{1,5})$/.exec(a);
  if (!m || a.length > 255) return false;
  const host = m[1]!.replace(/^\[|\]$/g, '');
  const port = Number(m[2]);
  return host !== '0.0.0.0' && !/^[0:]+$/.test(host) && port >= 1 && port <= 65_535;
}

function checkMembers(res: Obj, what: string): void {
  checkShape('fencelock.v1.MemberListResponse', res, what);
  expect(res.clusterId.length, `${what}: cluster_id`).toBeGreaterThan(0);
  const commit = wireInt(`${what}: commit`, res.commit, { min: 1, max: MAX_SAFE });
  for (const m of res.members as Obj[]) {
    expect(m.id).toMatch(NODE_ID);
    expect(addressValid(m.clientAddress) && addressValid(m.peerAddress), `${what}: ${m.id}'s addresses`).toBe(true);
    wireInt(`${what}: ${m.id} match`, m.match, { min: 0, max: commit + 1_000 });
  }
}

describe('Cluster.Member*', () => {
  it('lists the members on the leader and points a follower at it', async () => {
    const res = expectOk(await w.leader.unary('Cluster', 'MemberList', {}), 'member list', 'Cluster', 'MemberList');
    checkMembers(res, 'member list');
    expect((res.members as Obj[]).map((m) => m.id).sort()).toEqual([...w.cluster.ids].sort());
    for (const f of followers) expectRedirect(await f.unary('Cluster', 'MemberList', {}), `member list on ${f.address}`);
  });

  it('add, promote and remove take ids of 1..32 [A-Za-z0-9_-] and host:port addresses, refusing the rest naming the field', async () => {
    const gen = generator('members');
    const ports = await freePorts(64);
    const addr = (): string => `127.0.0.1:${ports.pop()!}`;
    const ids = [...gen.textEdges({ minBytes: 1, maxBytes: 32 }, [...'abcXYZ019_-']), ...gen.textEdges({ minBytes: 1, maxBytes: 32 })];
    let added = 0;
    for (const id of ids) {
      const valid = NODE_ID.test(id) && !w.cluster.ids.includes(id);
      if (valid && added >= 2) continue; // each add is a log entry and a peer the leader dials: two are enough
      const req = { id, clientAddress: addr(), peerAddress: addr() };
      const what = `member id ${JSON.stringify(id)}`;
      const out = await w.leader.unary('Cluster', 'MemberAdd', req);
      if (!valid) {
        expectRefused(out, what, [grpc.status.INVALID_ARGUMENT], 'id');
        continue;
      }
      added++;
      const res = expectOk(out, what, 'Cluster', 'MemberAdd');
      wireInt(`${what}: index`, res.index, { min: 1, max: MAX_SAFE });
      checkMembers(res.members, what);
      expect((res.members.members as Obj[]).find((m) => m.id === id), what).toMatchObject({ learner: true, clientAddress: req.clientAddress, peerAddress: req.peerAddress });
      // Again with the same addresses: already made, index 0.
      expect(expectOk(await w.leader.unary('Cluster', 'MemberAdd', req), `${what} again`, 'Cluster', 'MemberAdd').index).toBe('0');
      const removed = expectOk(await w.leader.unary('Cluster', 'MemberRemove', { id }), `remove ${what}`, 'Cluster', 'MemberRemove');
      wireInt(`remove ${what}: index`, removed.index, { min: Number(res.index) + 1, max: MAX_SAFE });
      expect(removed.members.removed).toContain(id);
      expect(expectOk(await w.leader.unary('Cluster', 'MemberRemove', { id }), `remove ${what} again`, 'Cluster', 'MemberRemove').index).toBe('0');
      expectRefused(await w.leader.unary('Cluster', 'MemberAdd', { id, clientAddress: addr(), peerAddress: addr() }), `${what} reused after removal`, [grpc.status.FAILED_PRECONDITION]);
    }
    expect(added, 'two valid ids were added').toBe(2);
    // Promoting a voter is a change already made. (A learner that never started is refused LEARNER_BEHIND:
    // test/integration/memberRefusals.test.ts.)
    for (const id of w.cluster.ids) expect(expectOk(await w.leader.unary('Cluster', 'MemberPromote', { id }), `promote voter ${id}`, 'Cluster', 'MemberPromote').index).toBe('0');
    for (const id of ids.filter((i) => !NODE_ID.test(i))) {
      expectRefused(await w.leader.unary('Cluster', 'MemberPromote', { id }), `promote ${JSON.stringify(id)}`, [grpc.status.INVALID_ARGUMENT], 'id');
      expectRefused(await w.leader.unary('Cluster', 'MemberRemove', { id }), `remove ${JSON.stringify(id)}`, [grpc.status.INVALID_ARGUMENT], 'id');
    }
    const hosts = [...'abz09.-', '[', ']', ':'];
    const addresses = [
      '', '127.0.0.1', '127.0.0.1:', '127.0.0.1:0', '127.0.0.1:65536', '127.0.0.1:123456', '0.0.0.0:7000', '[::]:7000', 'ü:7000', '127.0.0.1:7000\ud800',
      `${gen.textOfBytes(249, hosts)}:60000`, `${gen.textOfBytes(250, hosts)}:60000`, `${gen.textOfBytes(gen.int(1, 240), hosts)}:${gen.int(-1, 70_000)}`,
    ];
    for (const [field, a] of addresses.flatMap((x) => [['client_address', x], ['peer_address', x]] as const)) {
      if (addressValid(a)) continue; // a valid address of nobody would be added as a learner
      const req = { id: gen.name('addr').slice(0, 32).replace(/[^A-Za-z0-9_-]/g, '_'), clientAddress: field === 'client_address' ? a : addr(), peerAddress: field === 'peer_address' ? a : addr() };
      expectRefused(await w.leader.unary('Cluster', 'MemberAdd', req), `${field} ${JSON.stringify(a.slice(0, 30))} (${a.length} chars)`, [grpc.status.INVALID_ARGUMENT], field);
    }
    const same = addr();
    expectRefused(await w.leader.unary('Cluster', 'MemberAdd', { id: 'same-twice', clientAddress: same, peerAddress: same }), 'one address for both', [grpc.status.INVALID_ARGUMENT], 'peer_address');
    await expectAlive(w);
  });
});

describe('Cluster.Snapshot', () => {
  it('streams a header (index, term, size, SHA-256, voters) and then exactly size bytes that hash to it', async () => {
    const chunks: Obj[] = [];
    const stream = w.leader.serverStream('Cluster', 'Snapshot', {}, 30_000);
    await new Promise<void>((resolve, reject) => {
      stream.on('data', (c: Obj) => chunks.push(c));
      stream.on('end', resolve);
      stream.on('error', reject);
    });
    chunks.forEach((c, i) => checkShape('fencelock.v1.SnapshotChunk', c, `chunk ${i}`));
    const [first, ...rest] = chunks;
    expect(first!.header, 'the first message carries the header').not.toBeNull();
    expect(first!.data.length, 'and no data').toBe(0);
    const status = expectOk(await w.leader.unary('Cluster', 'Status', {}), 'status', 'Cluster', 'Status');
    wireInt('index', first!.header.index, { min: 1, max: Number(status.applied) });
    wireInt('term', first!.header.term, { min: 1, max: Number(status.term) });
    const data = Buffer.concat(rest.map((c) => c.data as Buffer));
    for (const c of rest) expect(c.header, 'only the first message has a header').toBeNull();
    expect(first!.header.size, 'size is the bytes that follow').toBe(String(data.length));
    expect(first!.header.sha256.equals(createHash('sha256').update(data).digest()), 'sha256 of those bytes').toBe(true);
    expect([...first!.header.voters].sort()).toEqual([...w.cluster.ids].sort());
    for (const f of followers) {
      const err = await new Promise<grpc.ServiceError>((resolve) => f.serverStream('Cluster', 'Snapshot', {}).on('error', resolve).on('data', () => undefined));
      expectRedirect({ ok: false, code: err.code, details: err.details, metadata: err.metadata }, `snapshot on ${f.address}`);
    }
  });
});

/** docs/auth.md "Identities": 1..128 letters, digits, '.', '_', '@', '-', starting with a letter or digit. */
const USER_NAME = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$/;
const NAME_CHARS = [...'aZ09._@-'];

async function change(gen: Gen, method: string, req: Obj): Promise<Awaited<ReturnType<WireClient['unary']>>> {
  return w.leader.unary('Auth', method, { header: header(gen), ...req });
}

function checkIndex(out: Awaited<ReturnType<WireClient['unary']>>, what: string, method: string): number {
  return wireInt(`${what}: index`, expectOk(out, what, 'Auth', method).index, { min: 1, max: MAX_SAFE });
}

describe('Auth', () => {
  it('WhoAmI names the admin by its certificate, on every node', async () => {
    for (const c of w.clients) {
      const res = expectOk(await c.unary('Auth', 'WhoAmI', {}), c.address, 'Auth', 'WhoAmI');
      expect(res).toMatchObject({ identity: ADMIN, via: 'certificate', authEnabled: true });
      expect(res.rules, 'the admin may administer').toContainEqual({ permission: 'ADMIN', prefix: '' });
    }
  });

  it('user and role names: 1..128 of the name characters, refused otherwise naming user or role', async () => {
    const gen = generator('auth names');
    const names = [...gen.textEdges({ minBytes: 1, maxBytes: 128 }, NAME_CHARS), ...gen.textEdges({ minBytes: 1, maxBytes: 128 }), '-lead', '.lead', 'a b'];
    let index = 0;
    for (const [method, field] of [['UserAdd', 'user'], ['RoleAdd', 'role']] as const) {
      for (const name of new Set(names)) {
        const what = `${method} ${JSON.stringify(name.slice(0, 20))} (${Buffer.byteLength(name)} bytes)`;
        const out = await change(gen, method, { [field]: name });
        if (!USER_NAME.test(name) || !textValid(name, { minBytes: 1, maxBytes: 128 })) {
          expectRefused(out, what, [grpc.status.INVALID_ARGUMENT], field);
          continue;
        }
        index = Math.max(index + 1, checkIndex(out, what, method));
        expectRefused(await change(gen, method, { [field]: name }), `${what} again`, [grpc.status.ALREADY_EXISTS], name);
      }
    }
    const list = expectOk(await w.leader.unary('Auth', 'List', {}), 'list', 'Auth', 'List');
    expect(list.authEnabled).toBe(true);
    for (const name of names.filter((n) => USER_NAME.test(n))) {
      expect((list.users as Obj[]).map((u) => u.name)).toContain(name);
      expect((list.roles as Obj[]).map((r) => r.name)).toContain(name);
    }
    expectRefused(await change(gen, 'UserDelete', { user: gen.name('nobody') }), 'delete an unknown user', [grpc.status.NOT_FOUND]);
    await expectAlive(w);
  });

  it('rules: a known permission, a prefix of 0..512 bytes (empty for ADMIN); quotas: known names, values up to 10^12', async () => {
    const gen = generator('auth rules');
    const role = gen.name('role');
    checkIndex(await change(gen, 'RoleAdd', { role }), 'role', 'RoleAdd');
    const prefixes = gen.textEdges({ minBytes: 0, maxBytes: 512 });
    for (const permission of ['LOCK', 'WRITE', 'READ', 'ADMIN', 'PERMISSION_UNSPECIFIED']) {
      for (const prefix of prefixes) {
        const what = `${permission} on a prefix of ${Buffer.byteLength(prefix)} bytes`;
        const out = await change(gen, 'RoleGrantPermission', { role, rule: { permission, prefix } });
        // Text that is not UTF-8 on the wire is refused as the request is decoded, before any field is judged.
        if (!wireText(prefix).wellFormed) expectRefused(out, what, [grpc.status.INVALID_ARGUMENT], 'prefix');
        else if (permission === 'PERMISSION_UNSPECIFIED') expectRefused(out, what, [grpc.status.INVALID_ARGUMENT], 'permission');
        else if (!textValid(prefix, { minBytes: 0, maxBytes: 512 })) expectRefused(out, what, [grpc.status.INVALID_ARGUMENT], 'prefix');
        else if (permission === 'ADMIN' && prefix !== '') expectRefused(out, what, [grpc.status.INVALID_ARGUMENT], 'prefix');
        else checkIndex(out, what, 'RoleGrantPermission');
      }
    }
    const listed = (expectOk(await w.leader.unary('Auth', 'List', {}), 'list', 'Auth', 'List').roles as Obj[]).find((r) => r.name === role)!;
    expect(listed.rules.length, 'every valid rule is listed once').toBe(3 * prefixes.filter((p) => textValid(p, { minBytes: 0, maxBytes: 512 })).length + 1);
    const MAX_QUOTA = 1_000_000_000_000;
    for (const value of gen.intEdges({ min: 0, max: MAX_QUOTA })) {
      const req = { header: header(gen), role, name: 'sessions', value };
      if (!sendable('Auth', 'RoleSetQuota', req)) continue;
      const decoded = asDecoded('Auth', 'RoleSetQuota', req).value as string;
      const what = `quota value ${JSON.stringify(value)} (on the wire ${decoded})`;
      const out = await w.leader.unary('Auth', 'RoleSetQuota', req);
      if (!intValid(decoded, { min: 0, max: MAX_QUOTA })) {
        expectRefused(out, what, [grpc.status.INVALID_ARGUMENT], 'value');
        continue;
      }
      checkIndex(out, what, 'RoleSetQuota');
      const quotas = (expectOk(await w.leader.unary('Auth', 'List', {}), 'list', 'Auth', 'List').roles as Obj[]).find((r) => r.name === role)!.quotas;
      expect(quotas, what).toEqual([{ name: 'sessions', value: decoded }]);
    }
    for (const name of gen.textEdges({ minBytes: 1, maxBytes: 32 }, [...'sessionlockw_'])) {
      if (['sessions', 'locks', 'waiters', 'keys'].includes(name)) continue;
      expectRefused(await change(gen, 'RoleSetQuota', { role, name, value: '1' }), `quota ${JSON.stringify(name)}`, [grpc.status.INVALID_ARGUMENT], 'name');
    }
    checkIndex(await change(gen, 'RoleSetQuota', { role, name: 'sessions', unset: true }), 'unset', 'RoleSetQuota');
    await expectAlive(w);
  });

  it('tokens: issued for a user, answering WhoAmI via token; revoked by a 16-hex id, refused otherwise naming token_id', async () => {
    const gen = generator('auth tokens');
    const user = gen.name('tokened');
    checkIndex(await change(gen, 'UserAdd', { user }), 'user', 'UserAdd');
    const [adminRole] = expectOk(await w.leader.unary('Auth', 'WhoAmI', {}), 'whoami', 'Auth', 'WhoAmI').roles as string[];
    checkIndex(await change(gen, 'UserGrantRole', { user, role: adminRole }), 'grant', 'UserGrantRole');
    const issued = expectOk(await change(gen, 'TokenIssue', { user }), 'issue', 'Auth', 'TokenIssue');
    expect(issued.tokenId).toMatch(/^[0-9a-f]{16}$/);
    expect(issued.token).toMatch(new RegExp(`^flt_${issued.tokenId}_[A-Za-z0-9_-]{43}$`));
    const ca = readFileSync(path.join(w.cluster.certsDir!, 'ca.pem'));
    const byToken = new WireClient(w.leader.address, withoutIpServerName(grpc.credentials.createSsl(ca)), issued.token);
    try {
      expect(expectOk(await byToken.unary('Auth', 'WhoAmI', {}), 'whoami by token', 'Auth', 'WhoAmI')).toMatchObject({ identity: user, via: 'token', authEnabled: true, roles: [adminRole] });
      const tokens = expectOk(await w.leader.unary('Auth', 'List', {}), 'list', 'Auth', 'List').tokens as Obj[];
      expect(tokens).toContainEqual({ id: issued.tokenId, user });
      for (const tokenId of [...gen.textEdges({ minBytes: 16, maxBytes: 16 }, [...'0123456789abcdef']), 'F'.repeat(16)]) {
        if (tokenId === issued.tokenId) continue;
        const out = await change(gen, 'TokenRevoke', { tokenId });
        if (/^[0-9a-f]{16}$/.test(tokenId)) expectRefused(out, `revoke unknown ${tokenId}`, [grpc.status.NOT_FOUND]);
        else expectRefused(out, `revoke ${JSON.stringify(tokenId)}`, [grpc.status.INVALID_ARGUMENT], 'token_id');
      }
      checkIndex(await change(gen, 'TokenRevoke', { tokenId: issued.tokenId }), 'revoke', 'TokenRevoke');
      expectRefused(await byToken.unary('Auth', 'WhoAmI', {}), 'a revoked token', [grpc.status.UNAUTHENTICATED]);
    } finally {
      byToken.close();
    }
    for (const bad of ['', 'flt_', `flt_${'0'.repeat(16)}_${'a'.repeat(43)}`, `flt_${'g'.repeat(16)}_${'a'.repeat(43)}`, 'x'.repeat(4096)]) {
      const c = new WireClient(w.leader.address, withoutIpServerName(grpc.credentials.createSsl(ca)), bad);
      try {
        const out = await c.unary('Auth', 'WhoAmI', {});
        if (bad === '') expectNoUnauthorizedFault(out);
        else expectRefused(out, `bearer ${JSON.stringify(bad)}`, [grpc.status.UNAUTHENTICATED]);
      } finally {
        c.close();
      }
    }
    await expectAlive(w);
  });
});

/** "Bearer " with nothing after it: refused, or (grpc-js trims the value) taken as no token; never a fault. */
function expectNoUnauthorizedFault(out: Awaited<ReturnType<WireClient['unary']>>): void {
  if (!out.ok) expect([grpc.status.UNAUTHENTICATED]).toContain(out.code);
}

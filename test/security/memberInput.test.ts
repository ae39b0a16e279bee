// Hostile membership requests over a real TLS connection to the leader of real node processes: ids and
// addresses that are oversized, malformed, bind-all or on a port that cannot exist. Each is refused with
// INVALID_ARGUMENT naming the field, and nothing changes: no entry is proposed (the commit index stays), and
// the member list is the same as before. A node certificate is never overwritten by `certs node`.
import * as grpc from '@grpc/grpc-js';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FenceLockClient } from '../../src/client';
import { eventually, LocalCluster, runNode } from '../integration/harness';
import { membershipNow, rawClient, type RawNodeClient } from '../integration/rawClient';

const CLI = path.resolve(__dirname, '../../dist/src/cli/main.js');

let cluster: LocalCluster;
let client: FenceLockClient;
let leader: RawNodeClient;

beforeAll(async () => {
  cluster = await LocalCluster.create({ size: 3 });
  cluster.startAll();
  client = new FenceLockClient({ endpoints: cluster.endpoints, requestTimeoutMs: 2_000, totalTimeoutMs: 15_000 });
  const leaderAddress = await eventually(async () => (await client.statusAll()).find((s) => s.ok && s.status.role === 'leader')?.endpoint, 20_000, 'a leader');
  leader = rawClient(leaderAddress);
  // A change is refused until the leader has committed an entry of its own term: wait for that first.
  await eventually(async () => (await leader.call('Cluster', 'MemberList', {})).commit !== '0' || undefined, 10_000, 'a commit');
}, 60_000);

afterAll(async () => {
  leader?.close();
  await client?.close();
  await cluster?.destroy();
});

const padded = (n: number): string => 'n'.repeat(n);
const GOOD = { id: 'n9', clientAddress: '127.0.0.1:1', peerAddress: '127.0.0.1:2' };

const HOSTILE_ADDS: Array<{ what: string; req: Record<string, string>; field: RegExp }> = [
  { what: 'an empty id', req: { ...GOOD, id: '' }, field: /^id: must not be empty/ },
  { what: 'an id of 33 characters', req: { ...GOOD, id: padded(33) }, field: /^id: is 33 bytes; the limit is 32/ },
  { what: 'an id of 1 MiB', req: { ...GOOD, id: padded(1 << 20) }, field: /^id: is 1048576 bytes; the limit is 32/ },
  { what: 'an id with a slash', req: { ...GOOD, id: 'n/../n1' }, field: /^id: node ids are 1-32 letters, digits, - or _/ },
  { what: 'an id with a space', req: { ...GOOD, id: 'n 9' }, field: /^id: node ids are/ },
  { what: 'an id in another script', req: { ...GOOD, id: 'узел' }, field: /^id: node ids are/ },
  { what: 'an address without a port', req: { ...GOOD, peerAddress: '127.0.0.1' }, field: /^peer_address: must be host:port/ },
  { what: 'an address of 300 characters', req: { ...GOOD, clientAddress: `${'a'.repeat(294)}:12345` }, field: /^client_address: is 300 bytes; the limit is 255/ },
  { what: 'an address with a path', req: { ...GOOD, peerAddress: 'evil.example/x:443' }, field: /^peer_address: must be host:port/ },
  { what: 'a bind-all peer address', req: { ...GOOD, peerAddress: '0.0.0.0:7000' }, field: /^peer_address: is 0\.0\.0\.0:7000, a bind address/ },
  { what: 'a bind-all IPv6 client address', req: { ...GOOD, clientAddress: '[::]:7000' }, field: /^client_address: is \[::\]:7000, a bind address/ },
  { what: 'a port above 65535', req: { ...GOOD, peerAddress: '127.0.0.1:99999' }, field: /^peer_address: has port 99999; a port is 1-65535/ },
  { what: 'port 0', req: { ...GOOD, clientAddress: '127.0.0.1:0' }, field: /^client_address: has port 0/ },
];

describe('hostile membership requests over a real connection', () => {
  for (const { what, req, field } of HOSTILE_ADDS) {
    it(`MemberAdd with ${what}: INVALID_ARGUMENT naming the field, nothing proposed`, async () => {
      const before = await membershipNow(leader);
      const err = (await leader.call('Cluster', 'MemberAdd', req).then(
        () => undefined,
        (e: grpc.ServiceError) => e,
      ))!;
      expect(err, 'the request was accepted').toBeDefined();
      expect(err.code).toBe(grpc.status.INVALID_ARGUMENT);
      expect(err.details).toMatch(field);
      expect(await membershipNow(leader)).toEqual(before);
    });
  }

  for (const method of ['MemberPromote', 'MemberRemove']) {
    it(`${method} with an oversized or malformed id: INVALID_ARGUMENT, nothing proposed`, async () => {
      const before = await membershipNow(leader);
      for (const id of [padded(4096), 'n1;n2', '']) {
        const err = await leader.call('Cluster', method, { id }).then(
          () => undefined,
          (e: grpc.ServiceError) => e,
        );
        expect(err?.code, `${method} ${id.slice(0, 10)} was accepted`).toBe(grpc.status.INVALID_ARGUMENT);
        expect(err?.details).toMatch(/^id: /);
      }
      expect(await membershipNow(leader)).toEqual(before);
    });
  }
});

describe('member add of an address a member uses', () => {
  /** The refusal of adding `req`, with nothing proposed. */
  async function refusedAdd(req: Record<string, string>): Promise<grpc.ServiceError> {
    const before = await membershipNow(leader);
    const err = (await leader.call('Cluster', 'MemberAdd', req).then(
      () => undefined,
      (e: grpc.ServiceError) => e,
    ))!;
    expect(err, `${JSON.stringify(req)} was accepted`).toBeDefined();
    expect(err.code, err.details).toBe(grpc.status.FAILED_PRECONDITION);
    expect(err.metadata.get('fencelock-reason')).toEqual(['MEMBERSHIP_REFUSED']);
    expect(await membershipNow(leader)).toEqual(before);
    return err;
  }

  it("refuses another voter's peer and client addresses, naming it", async () => {
    const n2 = cluster.node('n2');
    const err = await refusedAdd({ id: 'n9', clientAddress: n2.address, peerAddress: n2.peerAddress });
    expect(err.details).toBe(`peer_address: ${n2.peerAddress} is the peer address of member n2; a new member needs addresses of its own (remove n2 first if it moved)`);
  });

  it("refuses another voter's peer address alone (a client address of its own)", async () => {
    const n3 = cluster.node('n3');
    const err = await refusedAdd({ id: 'n9', clientAddress: '127.0.0.1:1', peerAddress: n3.peerAddress });
    expect(err.details).toMatch(new RegExp(`^peer_address: ${n3.peerAddress.replace(/\./g, '\\.')} is the peer address of member n3;`));
  });

  it("refuses another voter's client address alone, and its client address given as a peer address", async () => {
    const n1 = cluster.node('n1');
    expect((await refusedAdd({ id: 'n9', clientAddress: n1.address, peerAddress: '127.0.0.1:2' })).details).toMatch(/^client_address: .* is the client address of member n1;/);
    expect((await refusedAdd({ id: 'n9', clientAddress: '127.0.0.1:1', peerAddress: n1.address })).details).toMatch(/^peer_address: .* is the client address of member n1;/);
  });

  it("refuses a learner's addresses too, naming the learner; the learner's own re-add still answers as done", async () => {
    const learner = { id: 'n8', clientAddress: '127.0.0.1:3', peerAddress: '127.0.0.1:4' };
    await eventually(async () => leader.call('Cluster', 'MemberAdd', learner).catch(() => undefined), 15_000, 'learner n8 added');
    try {
      const err = await refusedAdd({ id: 'n9', clientAddress: '127.0.0.1:5', peerAddress: '127.0.0.1:4' });
      expect(err.details).toBe('peer_address: 127.0.0.1:4 is the peer address of member n8 (a learner); a new member needs addresses of its own (remove n8 first if it moved)');
      expect((await leader.call('Cluster', 'MemberAdd', learner)).index).toBe('0');
    } finally {
      await eventually(async () => leader.call('Cluster', 'MemberRemove', { id: 'n8' }).catch(() => undefined), 15_000, 'learner n8 removed');
    }
  });

  it('refuses a new member whose client and peer addresses are one', async () => {
    const before = await membershipNow(leader);
    const err = await leader.call('Cluster', 'MemberAdd', { id: 'n9', clientAddress: '127.0.0.1:6', peerAddress: '127.0.0.1:6' }).then(
      () => undefined,
      (e: grpc.ServiceError) => e,
    );
    expect(err?.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(err?.details).toMatch(/^peer_address: is the client address too/);
    expect(await membershipNow(leader)).toEqual(before);
  });
});

describe('fencelock certs node', () => {
  it('refuses to overwrite the certificate of a node that has one, and leaves its files as they were', async () => {
    const dir = cluster.certsDir!;
    const before = readFileSync(path.join(dir, 'n1.pem'), 'utf8');
    const keyBefore = readFileSync(path.join(dir, 'n1-key.pem'), 'utf8');
    const res = await runNode([CLI, 'certs', 'node', 'n1', dir]);
    expect(res.code).not.toBe(0);
    expect(res.stderr).toMatch(/n1\.pem exists already: a node's certificate is never replaced by accident/);
    expect(readFileSync(path.join(dir, 'n1.pem'), 'utf8')).toBe(before);
    expect(readFileSync(path.join(dir, 'n1-key.pem'), 'utf8')).toBe(keyBefore);
  });
});

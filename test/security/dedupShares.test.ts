// Retry records no tenant can evict (issue 28, item 5), attacked as the issue did over real TLS connections to
// a real 3-node cluster: tenant 1, within its default quotas (1,000 client ids, 1,000 results each), fills the
// whole table (DEDUP_MAX_RESULTS: every record but the others' few is its own); then one request of tenant 2,
// who holds no record; then tenant 3 retries its first request, an OpenSession. Before, tenant 2's request
// evicted tenant 3's record and the retry opened a second session; now each identity keeps its records in its
// own share. Every request here is raw (no library), so that the records in the table are counted exactly.
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FenceLockClient } from '../../src/client';
import { publicSessionId } from '../../src/client/publicId';
import { DEDUP_MAX_RESULTS, DEDUP_MAX_RESULTS_PER_CLIENT, DEDUP_MAX_RESULTS_PER_IDENTITY, DEFAULT_QUOTAS } from '../../src/state/limits';
import { eventually, LocalCluster } from '../integration/harness';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { authedClient, type AuthedClient, type Who } from './authKit';

type Obj = Record<string, unknown>;

let cluster: LocalCluster;
let admin: FenceLockClient;
const tokens = new Map<string, string>();
/** Records the admin's raw calls left in the table (one per request: no ackedBelow). */
let adminRecords = 0;

/** An admin mutation over a raw connection to the leader; the same request again after UNAVAILABLE. */
async function adminCall(method: string, req: Obj): Promise<Obj> {
  const certsDir = cluster.certsDir!;
  const who: Who = { cert: { certPem: readFileSync(path.join(certsDir, 'client.pem'), 'utf8'), keyPem: readFileSync(path.join(certsDir, 'client-key.pem'), 'utf8') } };
  const header = { clientId: 'admin-raw', requestId: String(++adminRecords) };
  for (let attempt = 0; ; attempt++) {
    const c = authedClient(await leaderAddress(), certsDir, who);
    try {
      return await c.call('Auth', method, { header, ...req });
    } catch (err) {
      if ((err as grpc.ServiceError).code !== grpc.status.UNAVAILABLE || attempt > 10) throw err;
      await new Promise((r) => setTimeout(r, 500));
    } finally {
      c.close();
    }
  }
}

beforeAll(async () => {
  // A longer election timeout: the flood loads a 2-core machine, and an election would cut it short.
  cluster = await LocalCluster.create({ authAdmin: 'test', electionTicks: 20 });
  cluster.startAll();
  admin = new FenceLockClient({ endpoints: cluster.endpoints, requestTimeoutMs: 5_000, totalTimeoutMs: 30_000 });
  await eventually(async () => ((await admin.auth.whoAmI()).authEnabled ? true : undefined), 30_000, 'auth on');
  // Users with no role: opening a session and releasing (refused: unknown session) need none.
  for (const name of ['mal', 'trent', 'carol']) {
    await adminCall('UserAdd', { user: name });
    tokens.set(name, (await adminCall('TokenIssue', { user: name })).token as string);
  }
}, 90_000);

afterAll(async () => {
  await admin?.close();
  await cluster?.destroy();
});

async function leaderAddress(): Promise<string> {
  const st = await admin.status();
  return cluster.nodes.find((n) => n.id === st.leader)!.address;
}

/**
 * `clients` client ids of tenant 1, each sending Release requests 1..perClient (refused and recorded: the
 * session is unknown), on Pipeline streams to the leader with up to `window` calls in flight. A call the
 * cluster did not take (UNAVAILABLE: a leader change under this load) is sent again, with the same ids, to
 * the leader of the moment. Returns how many were applied (answered with the stored refusal).
 */
async function flood(clients: number, perClient: number, total: number, window = 1_000): Promise<number> {
  let todo: number[] = Array.from({ length: Math.min(total, clients * perClient) }, (_, i) => i);
  let recorded = 0;
  const other = new Map<string, number>();
  for (let round = 0; todo.length > 0 && round < 20; round++) {
    const c = authedClient(await leaderAddress(), cluster.certsDir!, { token: tokens.get('mal')! });
    const again: number[] = [];
    const stream = c.duplex('Pipeline', 'Calls');
    let next = 0;
    let answered = 0;
    const inFlight = new Map<string, number>();
    try {
      await new Promise<void>((resolve) => {
        const send = (): void => {
          while (next < todo.length && inFlight.size < window) {
            const i = todo[next++]!;
            const callId = String(i + 1);
            inFlight.set(callId, i);
            const release = { header: { clientId: `mal-${Math.floor(i / perClient)}`, requestId: String((i % perClient) + 1) }, lock: 'mal/none', sessionId: 'f'.repeat(32), token: '1' };
            stream.write({ callId, release });
          }
        };
        stream.on('data', (res: Obj) => {
          const i = inFlight.get(String(res.callId));
          inFlight.delete(String(res.callId));
          answered++;
          if (Number(res.code) === grpc.status.NOT_FOUND) recorded++;
          else if (Number(res.code) === grpc.status.UNAVAILABLE && i !== undefined) again.push(i);
          else {
            const what = `${String(res.code)} ${String(res.message).slice(0, 60)}`;
            other.set(what, (other.get(what) ?? 0) + 1);
          }
          if (answered === todo.length) resolve();
          else send();
        });
        stream.on('error', () => {
          // The stream broke (a leader change): what it had in flight or unsent goes again.
          again.push(...inFlight.values(), ...todo.slice(next));
          resolve();
        });
        send();
      });
    } finally {
      stream.end();
      c.close();
    }
    todo = again.sort((a, b) => a - b);
    if (todo.length > 0) await new Promise((r) => setTimeout(r, 500));
  }
  if (other.size > 0) console.log('dedup flood: other answers', Object.fromEntries(other));
  return recorded;
}

describe('retry records in per-identity shares', () => {
  it("tenant 1 floods past the table's bound within its quotas, tenant 2 sends one request: tenant 3's retried OpenSession returns the SAME session", async () => {
    const certsDir = cluster.certsDir!;
    const onLeader = async (name: string): Promise<AuthedClient> => authedClient(await leaderAddress(), certsDir, { token: tokens.get(name)! });
    const carol = await onLeader('carol');
    const opened: AuthedClient[] = [carol];
    try {
      // The longest TTL the cluster takes: nothing renews this session while the flood runs.
      const open = { header: { clientId: 'carol-1', requestId: '1' }, ttlMs: '300000', clientName: 'carol' };
      const first = await carol.call('Session', 'Open', open);
      // The admin's client id is used after tenant 3's: tenant 3's record is the least recently used.
      await adminCall('UserAdd', { user: 'late' });

      // Tenant 1 fills the table to its bound exactly, within its quotas: 200 client ids of up to 1,000 results.
      const others = adminRecords + 1;
      const perClient = DEDUP_MAX_RESULTS_PER_CLIENT;
      const requests = DEDUP_MAX_RESULTS - others;
      const clients = Math.ceil(requests / perClient);
      expect(clients).toBeLessThanOrEqual(DEFAULT_QUOTAS.dedup_clients);
      const started = Date.now();
      const recorded = await flood(clients, perClient, requests);
      console.log(`dedup flood: ${recorded} requests of one identity applied in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      expect(recorded).toBe(requests);

      // Tenant 2's first request: before, the global bound made it evict tenant 3's record.
      const [trent, mal, carolNow] = [await onLeader('trent'), await onLeader('mal'), await onLeader('carol')];
      opened.push(trent, mal, carolNow);
      const other = await trent.call('Session', 'Open', { header: { clientId: 'trent-1', requestId: '1' }, ttlMs: '120000' });
      expect(other.sessionId).toMatch(/^[0-9a-f]{32}$/);

      // Tenant 3's retry of its very first request: the stored answer, not a second session.
      const retry = await carolNow.call('Session', 'Open', open);
      expect(retry.sessionId).toBe(first.sessionId);
      // And no other session of tenant 3's exists (a second OpenSession would have made one).
      const carols = (await admin.auth.sessionList()).filter((s) => s.identity === 'carol');
      expect(carols.filter((s) => s.handle !== publicSessionId(first.sessionId as string))).toEqual([]);

      // Tenant 1's latest records survive too: its own share keeps its most recent client ids (a retry of its
      // last request is answered from the record), while its oldest were forgotten by its own traffic.
      const last = { header: { clientId: `mal-${Math.floor((requests - 1) / perClient)}`, requestId: String(((requests - 1) % perClient) + 1) }, lock: 'mal/none', sessionId: 'f'.repeat(32), token: '1' };
      const lastRetry = await mal.call('Lock', 'Release', last).then(() => 0, (e: grpc.ServiceError) => e.code);
      expect(lastRetry).toBe(grpc.status.NOT_FOUND); // the stored UNKNOWN_SESSION, not REQUEST_TOO_OLD
      const oldest = { ...last, header: { clientId: 'mal-0', requestId: '2' } };
      const oldestRetry = await mal.call('Lock', 'Release', oldest).then(() => '', (e: grpc.ServiceError) => String(e.metadata.get('fencelock-reason')[0]));
      expect(oldestRetry).toBe('REQUEST_TOO_OLD');
      expect(DEDUP_MAX_RESULTS_PER_IDENTITY).toBeLessThan(DEDUP_MAX_RESULTS);

      // The auth tables are what the admin made.
      const listing = await admin.auth.list();
      expect(listing.users.map((u) => u.name).sort()).toEqual(['carol', 'late', 'mal', 'test', 'trent']);
      expect(listing.users.filter((u) => u.name !== 'test').every((u) => u.roles.length === 0)).toBe(true);
    } finally {
      for (const c of opened) c.close();
    }
  }, 600_000);
});

// The etcd side of the side-by-side benchmark: a local 3-member etcd cluster (fsync on, etcd's defaults)
// driven through etcd's own gRPC API (v3lockpb.Lock for locks, KV Txn for fenced writes), with a hand-written
// proto subset in ./etcd so no etcd client library is needed. With TLS (the default, like fencelock's), the
// members serve https client URLs and talk mutual TLS to each other, with certificates from src/certs/generate.ts.
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { accessSync, closeSync, constants, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { generateDevCerts } from '../../src/certs/generate';
import { exited, freePort, logTail, ServerGuard, sleep, terminate } from './processes';
import type { BenchTarget, BenchWorker } from './target';

const MEMBERS = 3;
const READY_TIMEOUT_MS = 20_000;
const LEASE_TTL_S = 10;
const KEEPALIVE_EVERY_MS = 3_000;
// A Lock call waits in etcd while another worker holds the lock (hot-lock workload), so it gets a long deadline.
const LOCK_DEADLINE_MS = 30_000;
const CALL_DEADLINE_MS = 10_000;

// The lock service keeps its ownership keys under `<name>/` and treats the oldest key under that prefix as the
// owner, so data keys must never fall under a lock's prefix: locks and data live in disjoint namespaces.
const LOCK_NS = 'lock/';
const DATA_NS = 'data/';

// No client-side keepalive pings: etcd's server rejects pings more often than every 5 s (and any ping on a
// connection without a stream), which grpc-js reports on stderr; local connections need no liveness probe.
const CHANNEL_OPTIONS: grpc.ChannelOptions = {
  'grpc.initial_reconnect_backoff_ms': 100,
  'grpc.max_reconnect_backoff_ms': 1_000,
};

/** Path of the etcd binary, or undefined when etcd is not installed. */
export function etcdAvailable(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, 'etcd');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this PATH entry
    }
  }
  return undefined;
}

// ---- wire shapes, as proto-loader presents them with LOADER_OPTIONS (64-bit integers as decimal strings) ----

interface Header {
  clusterId: string;
  memberId: string;
  revision: string;
  raftTerm: string;
}
interface KeyValue {
  key: Buffer;
  createRevision: string;
  modRevision: string;
  version: string;
  value: Buffer;
  lease: string;
}
interface RangeRequest {
  key: Buffer;
  serializable?: boolean;
}
interface RangeResponse {
  header: Header;
  kvs: KeyValue[];
  count: string;
}
interface PutRequest {
  key: Buffer;
  value: Buffer;
  lease?: string;
}
interface PutResponse {
  header: Header;
}
type CompareTarget = 'VERSION' | 'CREATE' | 'MOD' | 'VALUE' | 'LEASE';
type CompareResult = 'EQUAL' | 'GREATER' | 'LESS' | 'NOT_EQUAL';
interface Compare {
  key: Buffer;
  target: CompareTarget;
  result: CompareResult;
  createRevision?: string;
}
interface RequestOp {
  requestPut?: PutRequest;
  requestRange?: RangeRequest;
}
interface TxnRequest {
  compare: Compare[];
  success: RequestOp[];
  failure: RequestOp[];
}
interface TxnResponse {
  header: Header;
  succeeded: boolean;
}
interface LeaseGrantRequest {
  TTL: string;
  ID: string;
}
interface LeaseGrantResponse {
  header: Header;
  ID: string;
  TTL: string;
  error: string;
}
interface LeaseIdMessage {
  ID: string;
}
interface LeaseKeepAliveResponse {
  header: Header;
  ID: string;
  TTL: string;
}
interface StatusResponse {
  header: Header;
  version: string;
  leader: string;
  raftTerm: string;
}
interface LockRequest {
  name: Buffer;
  lease: string;
}
interface LockResponse {
  header: Header;
  key: Buffer;
}
interface UnlockRequest {
  key: Buffer;
}

// ---- proto loading ----

const LOADER_OPTIONS: protoLoader.Options = { keepCase: false, longs: String, enums: String, defaults: true, oneofs: true };

/** The folder holding the .proto subset: next to this file in the source tree, or in the source tree seen from dist/. */
function protoDir(): string {
  const candidates = [path.join(__dirname, 'etcd'), path.resolve(__dirname, '../../../scripts/bench/etcd')];
  const found = candidates.find((d) => existsSync(path.join(d, 'rpc.proto')));
  if (!found) throw new Error(`cannot find the etcd proto subset (rpc.proto) in ${candidates.join(' or ')}`);
  return found;
}

interface Method<Req, Res> {
  path: string;
  serialize: (req: Req) => Buffer;
  deserialize: (buf: Buffer) => Res;
}

interface Methods {
  range: Method<RangeRequest, RangeResponse>;
  put: Method<PutRequest, PutResponse>;
  txn: Method<TxnRequest, TxnResponse>;
  leaseGrant: Method<LeaseGrantRequest, LeaseGrantResponse>;
  leaseRevoke: Method<LeaseIdMessage, unknown>;
  leaseKeepAlive: Method<LeaseIdMessage, LeaseKeepAliveResponse>;
  status: Method<Record<string, never>, StatusResponse>;
  lock: Method<LockRequest, LockResponse>;
  unlock: Method<UnlockRequest, unknown>;
}

let methodsCache: Methods | undefined;

function methods(): Methods {
  if (methodsCache) return methodsCache;
  const def = protoLoader.loadSync(['rpc.proto', 'v3lock.proto'], { ...LOADER_OPTIONS, includeDirs: [protoDir()] });
  const m = <Req, Res>(service: string, name: string): Method<Req, Res> => {
    const svc = def[service];
    if (!svc || 'format' in svc) throw new Error(`service ${service} is missing from the etcd proto subset`);
    const md = (svc as unknown as grpc.ServiceDefinition)[name];
    if (!md) throw new Error(`method ${service}/${name} is missing from the etcd proto subset`);
    return {
      path: md.path,
      serialize: md.requestSerialize as (req: Req) => Buffer,
      deserialize: md.responseDeserialize as (buf: Buffer) => Res,
    };
  };
  methodsCache = {
    range: m('etcdserverpb.KV', 'Range'),
    put: m('etcdserverpb.KV', 'Put'),
    txn: m('etcdserverpb.KV', 'Txn'),
    leaseGrant: m('etcdserverpb.Lease', 'LeaseGrant'),
    leaseRevoke: m('etcdserverpb.Lease', 'LeaseRevoke'),
    leaseKeepAlive: m('etcdserverpb.Lease', 'LeaseKeepAlive'),
    status: m('etcdserverpb.Maintenance', 'Status'),
    lock: m('v3lockpb.Lock', 'Lock'),
    unlock: m('v3lockpb.Lock', 'Unlock'),
  };
  return methodsCache;
}

function unary<Req, Res>(client: grpc.Client, m: Method<Req, Res>, req: Req, deadlineMs = CALL_DEADLINE_MS): Promise<Res> {
  return new Promise<Res>((resolve, reject) => {
    client.makeUnaryRequest(m.path, m.serialize, m.deserialize, req, { deadline: Date.now() + deadlineMs }, (err, res) => {
      if (err) reject(err);
      else resolve(res as Res);
    });
  });
}

/** How a client reaches the members: plaintext, or TLS verifying the members against the bench CA. */
type Credentials = () => grpc.ChannelCredentials;

const PLAINTEXT: Credentials = () => grpc.credentials.createInsecure();

function newClient(address: string, credentials: Credentials): grpc.Client {
  return new grpc.Client(address, credentials(), CHANNEL_OPTIONS);
}

// ---- cluster processes ----

interface Member {
  name: string;
  clientAddress: string;
  logFile: string;
  child: ChildProcess;
  spawnError?: Error;
}

/** The client address of the member that every reachable member names as leader, or undefined. */
async function findLeader(members: Member[], probes: Map<string, grpc.Client>): Promise<string | undefined> {
  const statuses = await Promise.all(
    members.map((m) => unary(probes.get(m.clientAddress)!, methods().status, {}, 1_000).catch(() => undefined)),
  );
  const leaderIds = new Set(statuses.filter((s) => s !== undefined && s.leader !== '0').map((s) => s!.leader));
  if (leaderIds.size !== 1) return undefined;
  const [leaderId] = leaderIds;
  const i = statuses.findIndex((s) => s?.header.memberId === leaderId);
  return i >= 0 ? members[i].clientAddress : undefined;
}

/**
 * TLS like fencelock's default: clients verify the members' certificates and present none; members
 * authenticate each other with certificates from the same CA (mutual TLS on the peer URLs).
 * No --trusted-ca-file: etcd 3.4 then requires a client certificate on the client URLs as well, which
 * fencelock's client listener does not by default (clientCertAuth) and the bench's fencelock clients do not send.
 */
async function tlsSetup(dir: string, names: string[]): Promise<{ args: (name: string) => string[]; credentials: Credentials }> {
  const certs = path.join(dir, 'certs');
  await generateDevCerts(certs, { nodes: names, client: 'bench' });
  const ca = path.join(certs, 'ca.pem');
  const caPem = readFileSync(ca);
  return {
    args: (name) => {
      const cert = path.join(certs, `${name}.pem`);
      const key = path.join(certs, `${name}-key.pem`);
      return [
        `--cert-file=${cert}`,
        `--key-file=${key}`,
        `--peer-cert-file=${cert}`,
        `--peer-key-file=${key}`,
        `--peer-trusted-ca-file=${ca}`,
        '--peer-client-cert-auth',
      ];
    },
    credentials: () => grpc.credentials.createSsl(caPem),
  };
}

/** Starts a fresh local 3-member etcd cluster and waits until it has a leader that accepts a Put. */
export async function startEtcdCluster(opts: { dataRoot?: string; tls?: boolean } = {}): Promise<BenchTarget> {
  const bin = etcdAvailable();
  if (!bin) throw new Error('etcd is not installed (apt-get install -y etcd-server etcd-client)');
  const tls = opts.tls ?? true;
  const dir = mkdtempSync(path.join(opts.dataRoot ?? os.tmpdir(), 'fencelock-bench-etcd-'));
  const names = Array.from({ length: MEMBERS }, (_, i) => `e${i + 1}`);
  const security = tls ? await tlsSetup(dir, names) : { args: (): string[] => [], credentials: PLAINTEXT };
  const scheme = tls ? 'https' : 'http';
  const clientPorts: number[] = [];
  const peerPorts: number[] = [];
  for (const _ of names) {
    clientPorts.push(await freePort());
    peerPorts.push(await freePort());
  }
  const peerUrl = (i: number): string => `${scheme}://127.0.0.1:${peerPorts[i]}`;
  const initialCluster = names.map((n, i) => `${n}=${peerUrl(i)}`).join(',');
  const token = `fencelock-bench-${randomBytes(6).toString('hex')}`;
  // ETCD_* variables from the caller's environment would override the flags below.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ETCD_')));

  const guard = new ServerGuard(dir);
  const members: Member[] = names.map((name, i) => {
    const clientUrl = `${scheme}://127.0.0.1:${clientPorts[i]}`;
    const logFile = path.join(dir, `${name}.log`);
    const fd = openSync(logFile, 'a');
    const args = [
      `--name=${name}`,
      `--data-dir=${path.join(dir, name)}`,
      `--listen-client-urls=${clientUrl}`,
      `--advertise-client-urls=${clientUrl}`,
      `--listen-peer-urls=${peerUrl(i)}`,
      `--initial-advertise-peer-urls=${peerUrl(i)}`,
      `--initial-cluster=${initialCluster}`,
      '--initial-cluster-state=new',
      `--initial-cluster-token=${token}`,
      '--logger=zap',
      '--log-outputs=stderr',
      ...security.args(name),
    ];
    const child = spawn(bin, args, { stdio: ['ignore', fd, fd], env });
    guard.watch(child);
    closeSync(fd); // the child holds its own copy of the descriptor
    const member: Member = { name, clientAddress: `127.0.0.1:${clientPorts[i]}`, logFile, child };
    child.on('error', (err) => (member.spawnError = err)); // reported by waitReady instead of crashing the process
    return member;
  });

  const probes = new Map(members.map((m) => [m.clientAddress, newClient(m.clientAddress, security.credentials)]));
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    // A leader that is told to stop first hands leadership to a connected follower, and waits ~7 s for it when
    // the followers are stopping too; with no follower left it exits at once. So: followers first, then the leader.
    const leader = await findLeader(members, probes).catch(() => undefined);
    for (const c of probes.values()) c.close();
    await terminate(members.filter((m) => m.clientAddress !== leader).map((m) => m.child));
    await terminate(members.map((m) => m.child));
    rmSync(dir, { recursive: true, force: true });
    await guard.release();
  };

  try {
    await waitReady(members, probes);
  } catch (e) {
    const tails = members.map((m) => `--- ${m.name} (${m.logFile}) ---\n${logTail(m.logFile)}`).join('\n');
    await stop();
    throw new Error(`etcd cluster did not become ready: ${(e as Error).message}\n${tails}`);
  }

  return {
    name: tls ? 'etcd' : 'etcd-plain',
    pids: members.map((m) => m.child.pid!),
    // Measuring etcd's mutex in their place would compare a different thing under the same row name.
    lacks: {
      semaphore: 'etcd has no semaphore (v3lock is a mutex; a semaphore would be a client-side recipe on leases and txns, not etcd)',
      readWriteLock: 'etcd has no shared lock mode (v3lock is a mutex)',
    },
    newWorker: async (_index: number): Promise<BenchWorker> => {
      const leader = await findLeader(members, probes);
      if (!leader) throw new Error('etcd cluster has no leader');
      return EtcdWorker.open(leader, security.credentials);
    },
    stop,
  };
}

async function waitReady(members: Member[], probes: Map<string, grpc.Client>): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let last = 'no leader yet';
  while (Date.now() < deadline) {
    const failed = members.find((m) => m.spawnError);
    if (failed) throw new Error(`cannot start member ${failed.name}: ${failed.spawnError!.message}`);
    const dead = members.find((m) => exited(m.child));
    if (dead) throw new Error(`member ${dead.name} exited (code ${dead.child.exitCode}, signal ${dead.child.signalCode})`);
    const leader = await findLeader(members, probes);
    if (leader) {
      try {
        await unary(probes.get(leader)!, methods().put, { key: Buffer.from('bench/ready'), value: Buffer.from('1') }, 2_000);
        return;
      } catch (e) {
        last = `Put on the leader ${leader} failed: ${(e as Error).message}`;
      }
    }
    await sleep(100);
  }
  throw new Error(`timed out after ${READY_TIMEOUT_MS / 1000} s (${last})`);
}

// ---- workers ----

/** The lock key etcd granted and the fencing token that goes with it. */
interface Held {
  key: Buffer;
  /** header.revision of the Lock answer: the lock key's create revision when the lock was free, later otherwise. */
  revision: string;
}

/**
 * One benchmark client: one channel to the leader (a follower would forward every proposal, an extra hop that
 * fencelock's client, which follows leader hints, does not pay) and one lease kept alive over a LeaseKeepAlive
 * stream.
 */
class EtcdWorker implements BenchWorker {
  private held: Held | undefined;
  private failure: Error | undefined;
  private closed = false;
  private readonly timer: NodeJS.Timeout;

  private constructor(
    private readonly client: grpc.Client,
    private readonly lease: string,
    private readonly keepAlive: grpc.ClientDuplexStream<LeaseIdMessage, LeaseKeepAliveResponse>,
  ) {
    keepAlive.on('data', (res: LeaseKeepAliveResponse) => {
      // TTL <= 0: etcd no longer knows the lease; every later Lock would fail with a less clear error.
      if (Number(res.TTL) <= 0) this.failure ??= new Error(`etcd lease ${lease} expired`);
    });
    keepAlive.on('error', (err: Error) => {
      if (!this.closed) this.failure ??= new Error(`etcd lease keep-alive stream failed: ${err.message}`);
    });
    this.timer = setInterval(() => keepAlive.write({ ID: lease }), KEEPALIVE_EVERY_MS);
    this.timer.unref();
  }

  static async open(address: string, credentials: Credentials): Promise<EtcdWorker> {
    const client = newClient(address, credentials);
    try {
      const granted = await unary(client, methods().leaseGrant, { TTL: String(LEASE_TTL_S), ID: '0' });
      if (granted.error) throw new Error(`LeaseGrant: ${granted.error}`);
      const m = methods().leaseKeepAlive;
      const stream = client.makeBidiStreamRequest(m.path, m.serialize, m.deserialize);
      return new EtcdWorker(client, granted.ID, stream);
    } catch (e) {
      client.close();
      throw e;
    }
  }

  private check(): void {
    if (this.failure) throw this.failure;
  }

  private async lock(lock: string): Promise<Held> {
    const res = await unary(this.client, methods().lock, { name: Buffer.from(LOCK_NS + lock), lease: this.lease }, LOCK_DEADLINE_MS);
    return { key: res.key, revision: res.header.revision };
  }

  /**
   * Fenced write: applies `puts` only while our lock key still exists as the incarnation Lock granted.
   * Lock's header.revision equals the key's create revision only on the uncontended path; after waiting,
   * etcd answers with the header of a later read. Any incarnation of the key that existed when Lock answered
   * was created at or before that revision, and a re-created key (after an Unlock or a lease expiry) gets a
   * later one, so 0 < create_revision <= R identifies our incarnation without an extra round trip.
   */
  private async fenced(held: Held, puts: { key: string; value: string }[]): Promise<void> {
    const res = await unary(this.client, methods().txn, {
      compare: [
        { key: held.key, target: 'CREATE', result: 'GREATER', createRevision: '0' },
        { key: held.key, target: 'CREATE', result: 'LESS', createRevision: String(BigInt(held.revision) + 1n) },
      ],
      success: puts.map((p) => ({ requestPut: { key: Buffer.from(DATA_NS + p.key), value: Buffer.from(p.value) } })),
      failure: [],
    });
    if (!res.succeeded) throw new Error(`fenced write rejected: lock key ${held.key.toString()} (revision ${held.revision}) is no longer held`);
  }

  async lockCycle(lock: string): Promise<void> {
    this.check();
    const held = await this.lock(lock);
    await this.fenced(held, [
      { key: `${lock}/value`, value: `lease ${this.lease} rev ${held.revision}` },
      { key: `${lock}/fence`, value: held.revision },
    ]);
    await unary(this.client, methods().unlock, { key: held.key });
  }

  async holdLock(lock: string): Promise<void> {
    this.check();
    this.held = await this.lock(lock);
  }

  async fencedWrite(key: string, value: string): Promise<void> {
    this.check();
    if (!this.held) throw new Error('fencedWrite before holdLock');
    await this.fenced(this.held, [{ key, value }]);
  }

  async linearizableRead(key: string): Promise<void> {
    this.check();
    await unary(this.client, methods().range, { key: Buffer.from(DATA_NS + key), serializable: false });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    this.keepAlive.end();
    try {
      // Revoking deletes the lock keys attached to the lease, so a held lock is released too.
      await unary(this.client, methods().leaseRevoke, { ID: this.lease });
    } finally {
      this.keepAlive.cancel();
      this.client.close();
    }
  }
}


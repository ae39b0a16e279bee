/**
 * A scripted, in-process stand-in for a fencelock cluster, speaking lock.proto over real gRPC on 127.0.0.1.
 *
 * FakeState is the "replicated state machine" shared by every FakeNode of one fake cluster: sessions, locks with
 * FIFO waiters, the fenced KV, the request-dedup table, and a log index that every mutating request consumes
 * (so tokens are log indices, like the real thing). A FakeNode is one server: a leader serves, a follower answers
 * UNAVAILABLE with the leader hint. Like the real server, other clients see sessions by their public handle
 * (publicSessionId), never by id. Faults are scripted per node: fail a method before or after applying it,
 * stop answering keepalives, and so on. Every call is recorded in `state.calls` for assertions.
 */
import * as grpc from '@grpc/grpc-js';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { serviceDefinition, SERVICE_NAMES } from '../../src/client/proto';
import { publicSessionId } from '../../src/client/publicId';
import type { AcquireRequest__Output } from '../../src/protocol/generated/fencelock/v1/AcquireRequest';
import type { AcquireResponse } from '../../src/protocol/generated/fencelock/v1/AcquireResponse';
import type { CloseSessionRequest__Output } from '../../src/protocol/generated/fencelock/v1/CloseSessionRequest';
import type { DescribeRequest__Output } from '../../src/protocol/generated/fencelock/v1/DescribeRequest';
import type { DescribeResponse } from '../../src/protocol/generated/fencelock/v1/DescribeResponse';
import type { GetRequest__Output } from '../../src/protocol/generated/fencelock/v1/GetRequest';
import type { GetResponse } from '../../src/protocol/generated/fencelock/v1/GetResponse';
import type { KeepAliveRequest__Output } from '../../src/protocol/generated/fencelock/v1/KeepAliveRequest';
import type { KeepAliveResponse } from '../../src/protocol/generated/fencelock/v1/KeepAliveResponse';
import type { ListRequest__Output } from '../../src/protocol/generated/fencelock/v1/ListRequest';
import type { ListResponse } from '../../src/protocol/generated/fencelock/v1/ListResponse';
import type { LockEvent } from '../../src/protocol/generated/fencelock/v1/LockEvent';
import type { OpenSessionRequest__Output } from '../../src/protocol/generated/fencelock/v1/OpenSessionRequest';
import type { OpenSessionResponse } from '../../src/protocol/generated/fencelock/v1/OpenSessionResponse';
import type { ReleaseRequest__Output } from '../../src/protocol/generated/fencelock/v1/ReleaseRequest';
import type { ReleaseResponse } from '../../src/protocol/generated/fencelock/v1/ReleaseResponse';
import type { RequestHeader__Output } from '../../src/protocol/generated/fencelock/v1/RequestHeader';
import type { StatusResponse } from '../../src/protocol/generated/fencelock/v1/StatusResponse';
import type { WatchRequest__Output } from '../../src/protocol/generated/fencelock/v1/WatchRequest';
import type { WriteRequest__Output } from '../../src/protocol/generated/fencelock/v1/WriteRequest';
import type { WriteResponse } from '../../src/protocol/generated/fencelock/v1/WriteResponse';
import type { SemaphoreAcquireRequest__Output } from '../../src/protocol/generated/fencelock/v1/SemaphoreAcquireRequest';
import type { SemaphoreAcquireResponse } from '../../src/protocol/generated/fencelock/v1/SemaphoreAcquireResponse';
import type { SemaphoreDescribeRequest__Output } from '../../src/protocol/generated/fencelock/v1/SemaphoreDescribeRequest';
import type { SemaphoreDescribeResponse } from '../../src/protocol/generated/fencelock/v1/SemaphoreDescribeResponse';
import type { SemaphoreReleaseRequest__Output } from '../../src/protocol/generated/fencelock/v1/SemaphoreReleaseRequest';
import type { SemaphoreReleaseResponse } from '../../src/protocol/generated/fencelock/v1/SemaphoreReleaseResponse';

export interface GrpcFailure {
  code: grpc.status;
  details: string;
  metadata?: Record<string, string>;
}

type Outcome<T> = { ok: true; res: T } | { ok: false; err: GrpcFailure };

export function failure(code: grpc.status, details: string, metadata?: Record<string, string>): GrpcFailure {
  return { code, details, metadata };
}

function toServiceError(f: GrpcFailure): Partial<grpc.StatusObject> {
  const md = new grpc.Metadata();
  for (const [k, v] of Object.entries(f.metadata ?? {})) md.set(k, v);
  return { code: f.code, details: f.details, metadata: md };
}

interface Waiter {
  sessionId: string;
  resolve: (o: Outcome<AcquireResponse>) => void;
  timer: NodeJS.Timeout;
}

interface LockState {
  holder: string | undefined;
  token: bigint;
  latest: bigint;
  grantedAtMs: number;
  waiters: Waiter[];
  /** Shared grants by session (try only: a shared Acquire of a held or awaited lock answers acquired false). */
  sharers: Map<string, bigint>;
}

export interface RecordedCall {
  node: string;
  method: string;
  header?: RequestHeader__Output;
  req: unknown;
  /** subjectaltname of the client certificate the call came with (TLS with a client certificate only). */
  peerSan?: string;
  /** The `authorization` metadata the call came with (a bearer token), when it had one. */
  authorization?: string;
}

export class FakeState {
  nextIndex: bigint;
  readonly sessions = new Map<string, { ttlMs: number; clientName: string }>();
  readonly locks = new Map<string, LockState>();
  /** Keys as the real store keeps them: bound to the lock of their first write; value null once deleted. */
  readonly kv = new Map<string, { value: Buffer | null; token: bigint; lock: string }>();
  readonly dedup = new Map<string, Promise<Outcome<unknown>>>();
  readonly calls: RecordedCall[] = [];
  private readonly watchers = new Set<{ lock: string; send: (ev: LockEvent) => void }>();

  constructor(firstIndex = 1n) {
    this.nextIndex = firstIndex;
  }

  private index(): bigint {
    return this.nextIndex++;
  }

  callsOf(method: string): RecordedCall[] {
    return this.calls.filter((c) => c.method === method);
  }

  lock(name: string): LockState {
    let l = this.locks.get(name);
    if (!l) {
      l = { holder: undefined, token: 0n, latest: 0n, grantedAtMs: 0, waiters: [], sharers: new Map() };
      this.locks.set(name, l);
    }
    return l;
  }

  watch(lock: string, send: (ev: LockEvent) => void): () => void {
    const w = { lock, send };
    this.watchers.add(w);
    return () => this.watchers.delete(w);
  }

  private emit(kind: LockEvent['kind'], lock: string, sessionId: string, token: bigint, index: bigint): void {
    for (const w of this.watchers) if (w.lock === lock) w.send({ kind, lock, sessionId: publicSessionId(sessionId), token: token.toString(), index: index.toString() });
  }

  /** Runs a mutating request once per (client_id, request_id); a retry gets the original outcome. */
  dedupe<T>(header: RequestHeader__Output | null, apply: () => Promise<Outcome<T>>): Promise<Outcome<T>> {
    if (!header) return Promise.resolve({ ok: false, err: failure(grpc.status.INVALID_ARGUMENT, 'a mutating request needs a header') });
    const key = `${header.clientId}/${header.requestId}`;
    let p = this.dedup.get(key) as Promise<Outcome<T>> | undefined;
    if (!p) {
      p = apply();
      this.dedup.set(key, p as Promise<Outcome<unknown>>);
    }
    return p;
  }

  open(req: OpenSessionRequest__Output): Outcome<OpenSessionResponse> {
    this.index();
    const id = randomBytes(16).toString('hex');
    this.sessions.set(id, { ttlMs: Number(req.ttlMs), clientName: req.clientName });
    return { ok: true, res: { sessionId: id, ttlMs: req.ttlMs } };
  }

  closeSession(req: CloseSessionRequest__Output): Outcome<Record<string, never>> {
    if (!this.sessions.has(req.sessionId)) return { ok: false, err: failure(grpc.status.NOT_FOUND, 'unknown session', { 'fencelock-reason': 'UNKNOWN_SESSION' }) };
    this.endSession(req.sessionId, 'RELEASED');
    return { ok: true, res: {} };
  }

  /** Ends a session as the leader would on expiry: its locks go to the next waiters. */
  endSession(sessionId: string, kind: 'RELEASED' | 'EXPIRED' = 'EXPIRED'): void {
    const index = this.index();
    this.sessions.delete(sessionId);
    for (const [name, l] of this.locks) {
      l.waiters = l.waiters.filter((w) => {
        if (w.sessionId !== sessionId) return true;
        clearTimeout(w.timer);
        w.resolve({ ok: false, err: failure(grpc.status.NOT_FOUND, 'session ended while waiting', { 'fencelock-reason': 'UNKNOWN_SESSION' }) });
        return false;
      });
      if (l.holder === sessionId) {
        this.emit(kind, name, sessionId, l.token, index);
        this.handOver(name, l, index);
      }
    }
  }

  private grant(name: string, l: LockState, sessionId: string, index: bigint): void {
    l.holder = sessionId;
    l.token = index;
    l.latest = index;
    l.grantedAtMs = Date.now();
    this.emit('GRANTED', name, sessionId, index, index);
  }

  private handOver(name: string, l: LockState, index: bigint): void {
    l.holder = undefined;
    const next = l.waiters.shift();
    if (next) {
      clearTimeout(next.timer);
      this.grant(name, l, next.sessionId, index);
      next.resolve({ ok: true, res: { acquired: true, token: index.toString(), holderSession: '' } });
    }
  }

  acquire(req: AcquireRequest__Output): Promise<Outcome<AcquireResponse>> {
    if (!this.sessions.has(req.sessionId)) {
      return Promise.resolve({ ok: false, err: failure(grpc.status.NOT_FOUND, `unknown session ${req.sessionId}`, { 'fencelock-reason': 'UNKNOWN_SESSION' }) });
    }
    const l = this.lock(req.lock);
    if (req.mode === 'LOCK_MODE_SHARED') return Promise.resolve({ ok: true, res: this.acquireShared(req.sessionId, l) });
    const index = this.index();
    if (l.holder === undefined && l.sharers.size === 0) {
      this.grant(req.lock, l, req.sessionId, index);
      return Promise.resolve({ ok: true, res: { acquired: true, token: index.toString(), holderSession: '' } });
    }
    if (l.holder === req.sessionId) return Promise.resolve({ ok: true, res: { acquired: true, token: l.token.toString(), holderSession: '' } });
    const wait = Number(req.waitTimeoutMs);
    if (wait <= 0) return Promise.resolve({ ok: true, res: { acquired: false, token: '0', holderSession: publicSessionId(l.holder ?? '') } });
    return new Promise((resolve) => {
      const waiter: Waiter = {
        sessionId: req.sessionId,
        resolve,
        timer: setTimeout(() => {
          l.waiters = l.waiters.filter((w) => w !== waiter);
          this.index();
          resolve({ ok: false, err: failure(grpc.status.DEADLINE_EXCEEDED, `wait for lock ${req.lock} timed out`) });
        }, wait),
      };
      l.waiters.push(waiter);
    });
  }

  private acquireShared(sessionId: string, l: LockState): AcquireResponse {
    const own = l.sharers.get(sessionId);
    if (own !== undefined) return { acquired: true, token: own.toString(), holderSession: '' };
    if (l.holder !== undefined || l.waiters.length > 0) return { acquired: false, token: '0', holderSession: publicSessionId(l.holder ?? '') };
    const index = this.index();
    l.sharers.set(sessionId, index);
    l.latest = index;
    return { acquired: true, token: index.toString(), holderSession: '' };
  }

  release(req: ReleaseRequest__Output): Outcome<ReleaseResponse> {
    if (!this.sessions.has(req.sessionId)) return { ok: false, err: failure(grpc.status.NOT_FOUND, 'unknown session', { 'fencelock-reason': 'UNKNOWN_SESSION' }) };
    const l = this.lock(req.lock);
    if (l.sharers.get(req.sessionId)?.toString() === req.token) {
      l.sharers.delete(req.sessionId);
      this.index();
      return { ok: true, res: { nextHolderSession: '', nextToken: '0' } };
    }
    if (l.holder !== req.sessionId || l.token.toString() !== req.token) {
      return { ok: false, err: failure(grpc.status.FAILED_PRECONDITION, 'lock not held by this session under this token', { 'fencelock-reason': 'LOCK_NOT_HELD' }) };
    }
    const index = this.index();
    this.emit('RELEASED', req.lock, req.sessionId, l.token, index);
    this.handOver(req.lock, l, index);
    return { ok: true, res: { nextHolderSession: publicSessionId(l.holder ?? ''), nextToken: l.holder ? l.token.toString() : '0' } };
  }

  write(req: WriteRequest__Output): Outcome<WriteResponse> {
    if (!this.sessions.has(req.sessionId)) return { ok: false, err: failure(grpc.status.NOT_FOUND, 'unknown session', { 'fencelock-reason': 'UNKNOWN_SESSION' }) };
    const token = BigInt(req.token);
    const l = this.lock(req.lock);
    const refuse = (reason: string, watermark: bigint, why: string, more: Record<string, string> = {}): Outcome<WriteResponse> => ({
      ok: false,
      err: failure(grpc.status.FAILED_PRECONDITION, why, { 'fencelock-reason': reason, 'fencelock-watermark': watermark.toString(), ...more }),
    });
    for (const op of req.ops) {
      const k = this.kv.get(op.key);
      if (k !== undefined && k.lock !== req.lock) {
        const meta = { 'fencelock-key': encodeURIComponent(op.key), 'fencelock-key-lock': encodeURIComponent(k.lock) };
        return refuse('WRONG_LOCK', k.token, `key ${JSON.stringify(op.key)} belongs to lock ${JSON.stringify(k.lock)}`, meta);
      }
      if (k !== undefined && k.token > token) return refuse('STALE_TOKEN', k.token, `key ${op.key} has watermark ${k.token} above token ${token}`);
    }
    if (token < l.latest) return refuse('STALE_TOKEN', l.latest, `token ${token} is older than the latest grant ${l.latest}`);
    if (l.holder !== req.sessionId || l.token !== token) return refuse('LOCK_NOT_HELD', l.latest, 'lock not held');
    const index = this.index();
    for (const op of req.ops) this.kv.set(op.key, { value: op.type === 'PUT' ? Buffer.from(op.value) : null, token, lock: req.lock });
    return { ok: true, res: { index: index.toString() } };
  }

  get(req: GetRequest__Output): GetResponse {
    const e = this.kv.get(req.key);
    if (e === undefined) return { found: false, value: Buffer.alloc(0), token: '0', lock: '', deleted: false };
    return { found: e.value !== null, ...this.wireEntry(req.key) };
  }

  list(req: ListRequest__Output): ListResponse {
    const limit = req.limit || 100;
    const listed = (k: string): boolean => req.includeDeleted || this.kv.get(k)!.value !== null;
    const keys = [...this.kv.keys()].filter((k) => k.startsWith(req.prefix) && (!req.startAfter || k > req.startAfter) && listed(k)).sort();
    return { items: keys.slice(0, limit).map((k) => ({ key: k, ...this.wireEntry(k) })), more: keys.length > limit };
  }

  private wireEntry(key: string): { value: Buffer; token: string; lock: string; deleted: boolean } {
    const e = this.kv.get(key)!;
    return { value: e.value ?? Buffer.alloc(0), token: e.token.toString(), lock: e.lock, deleted: e.value === null };
  }

  /** Semaphores, try only (a full one answers acquired false, whatever the wait): a permit per session, lowest free slot. */
  readonly semaphores = new Map<string, { permits: number; slots: Array<{ sessionId: string; token: bigint } | undefined> }>();

  semaphoreAcquire(req: SemaphoreAcquireRequest__Output): Outcome<SemaphoreAcquireResponse> {
    if (!this.sessions.has(req.sessionId)) return { ok: false, err: failure(grpc.status.NOT_FOUND, 'unknown session', { 'fencelock-reason': 'UNKNOWN_SESSION' }) };
    const sem = this.semaphores.get(req.name) ?? { permits: req.permits, slots: [] };
    this.semaphores.set(req.name, sem);
    const own = sem.slots.findIndex((x) => x?.sessionId === req.sessionId);
    if (own >= 0) return { ok: true, res: { acquired: true, token: sem.slots[own]!.token.toString(), slot: own, permits: sem.permits } };
    let free = 0;
    while (free < sem.permits && sem.slots[free] !== undefined) free++;
    if (free === sem.permits) return { ok: true, res: { acquired: false, token: '0', slot: 0, permits: sem.permits } };
    const token = this.index();
    sem.slots[free] = { sessionId: req.sessionId, token };
    return { ok: true, res: { acquired: true, token: token.toString(), slot: free, permits: sem.permits } };
  }

  semaphoreRelease(req: SemaphoreReleaseRequest__Output): Outcome<SemaphoreReleaseResponse> {
    const sem = this.semaphores.get(req.name);
    const slot = sem?.slots.findIndex((x) => x?.sessionId === req.sessionId && x.token.toString() === req.token) ?? -1;
    if (sem === undefined || slot < 0) return { ok: false, err: failure(grpc.status.FAILED_PRECONDITION, 'no such permit', { 'fencelock-reason': 'NOT_HOLDER' }) };
    sem.slots[slot] = undefined;
    return { ok: true, res: { slot, nextHolderSession: '', nextToken: '0' } };
  }

  semaphoreDescribe(req: SemaphoreDescribeRequest__Output): SemaphoreDescribeResponse {
    const sem = this.semaphores.get(req.name);
    if (sem === undefined) return { permits: 0, holders: [], waiters: [], slotTokens: [] };
    const holders = sem.slots.flatMap((x, slot) => (x === undefined ? [] : [{ slot, token: x.token.toString(), session: { handle: publicSessionId(x.sessionId), clientName: '', labels: {} }, grantedAtMs: '0' }]));
    return { permits: sem.permits, holders, waiters: [], slotTokens: [] };
  }

  describe(req: DescribeRequest__Output): DescribeResponse {
    const l = this.lock(req.lock);
    return {
      held: l.holder !== undefined,
      holderSession: publicSessionId(l.holder ?? ''),
      token: l.holder ? l.token.toString() : '0',
      grantedAtMs: String(l.holder ? l.grantedAtMs : 0),
      waiters: l.waiters.map((w) => publicSessionId(w.sessionId)),
      latestToken: l.latest.toString(),
      sharedHolders: [...l.sharers].map(([sessionId, token]) => ({ session: { handle: publicSessionId(sessionId), clientName: '', labels: {} }, token: token.toString(), grantedAtMs: '0' })),
    };
  }

  /** Stops every pending waiter's timer (test teardown). */
  dispose(): void {
    for (const l of this.locks.values()) for (const w of l.waiters) clearTimeout(w.timer);
  }
}

/** A scripted failure of one method on one node. `after: true` applies the request first (a lost reply). */
export interface Fault {
  method: string;
  after?: boolean;
  times: number;
  failure: GrpcFailure;
}

/** 'hold': renewals are kept in `heldRenewals` and answered only when the test says so, in any order. */
export type KeepAliveMode = 'answer' | 'silent' | 'dead' | 'hold';

/** A renewal received in 'hold' mode and not answered by itself. */
export interface HeldRenewal {
  sessionId: string;
  renewalId: string;
  /** performance.now() when the server received it: the server's lease extension starts no earlier. */
  receivedAt: number;
  /** Writes the acknowledgement now (again, if called again), echoing `renewalId` instead when given. */
  answer(renewalId?: string): void;
}

export interface FakeNodeOptions {
  id: string;
  role?: 'leader' | 'follower';
  /** For followers: the leader address to hint (undefined: no hint). */
  leaderHint?: () => string | undefined;
  /** Serve TLS with this certificate instead of plaintext; `ca` checks client certificates. */
  tls?: FakeTls;
}

export interface FakeTls {
  cert: string | Buffer;
  key: string | Buffer;
  /** CA of client certificates (needed with requireClientCert). */
  ca?: string | Buffer;
  /** Refuse clients that present no certificate from `ca`. */
  requireClientCert?: boolean;
}

type AnyServerCall = { getAuthContext?: () => { sslPeerCertificate?: { subjectaltname?: string } } | null; metadata?: grpc.Metadata };

export class FakeNode {
  readonly id: string;
  role: 'leader' | 'follower';
  leaderHint: () => string | undefined;
  keepAliveMode: KeepAliveMode = 'answer';
  /** false: acknowledgements carry renewal_id 0, like a server older than the field. */
  echoRenewalId = true;
  readonly heldRenewals: HeldRenewal[] = [];
  /** Set: every new KeepAlive stream is refused with this, as a real node refuses a revoked token on every call. */
  keepAliveRefusal: GrpcFailure | undefined;
  /** KeepAlive streams open now, and the most ever open at once. */
  openKeepAlives = 0;
  maxOpenKeepAlives = 0;
  readonly faults: Fault[] = [];
  address = '';
  private server: grpc.Server | undefined;
  private readonly tls: FakeTls | undefined;
  private readonly streams = new Set<grpc.ServerDuplexStream<KeepAliveRequest__Output, KeepAliveResponse> | grpc.ServerWritableStream<WatchRequest__Output, LockEvent>>();
  private readonly unwatch = new Set<() => void>();

  private constructor(
    readonly state: FakeState,
    opts: FakeNodeOptions,
  ) {
    this.id = opts.id;
    this.role = opts.role ?? 'leader';
    this.leaderHint = opts.leaderHint ?? (() => undefined);
    this.tls = opts.tls;
  }

  static async start(state: FakeState, opts: FakeNodeOptions, port = 0): Promise<FakeNode> {
    const node = new FakeNode(state, opts);
    await node.listen(port);
    return node;
  }

  /** Adds a scripted fault. */
  fail(method: string, failure: GrpcFailure, opts: { after?: boolean; times?: number } = {}): void {
    this.faults.push({ method, failure, after: opts.after ?? false, times: opts.times ?? 1 });
  }

  private takeFault(method: string, after: boolean): GrpcFailure | undefined {
    const f = this.faults.find((x) => x.method === method && (x.after ?? false) === after && x.times > 0);
    if (!f) return undefined;
    f.times--;
    return f.failure;
  }

  private notLeader(): GrpcFailure | undefined {
    if (this.role === 'leader') return undefined;
    const hint = this.leaderHint();
    return failure(grpc.status.UNAVAILABLE, `node ${this.id} is not the leader`, hint ? { 'fencelock-leader': hint } : undefined);
  }

  private record(method: string, req: unknown, call?: AnyServerCall): void {
    const header = (req as { header?: RequestHeader__Output }).header;
    const peerSan = call?.getAuthContext?.()?.sslPeerCertificate?.subjectaltname;
    const [authorization] = call?.metadata?.get('authorization') ?? [];
    this.state.calls.push({ node: this.id, method, header, req, ...(peerSan ? { peerSan } : {}), ...(authorization !== undefined ? { authorization: String(authorization) } : {}) });
  }

  /** Wraps a unary handler: records, checks leadership, applies faults before/after. */
  private unary<Req, Res>(method: string, apply: (req: Req) => Promise<Outcome<Res>>): grpc.handleUnaryCall<Req, Res> {
    return (call, cb) => {
      const req = call.request;
      this.record(method, req, call);
      const pre = this.notLeader() ?? this.takeFault(method, false);
      if (pre) {
        cb(toServiceError(pre) as grpc.ServiceError);
        return;
      }
      apply(req).then(
        (outcome) => {
          const post = this.takeFault(method, true);
          if (post) cb(toServiceError(post) as grpc.ServiceError);
          else if (outcome.ok) cb(null, outcome.res);
          else cb(toServiceError(outcome.err) as grpc.ServiceError);
        },
        (err: Error) => cb({ code: grpc.status.INTERNAL, details: err.message } as grpc.ServiceError),
      );
    };
  }

  private async listen(port: number): Promise<void> {
    const s = this.state;
    const server = new grpc.Server();
    server.addService(serviceDefinition(SERVICE_NAMES.session), {
      Open: this.unary<OpenSessionRequest__Output, OpenSessionResponse>('Open', (req) => s.dedupe(req.header, async () => s.open(req))),
      Close: this.unary<CloseSessionRequest__Output, Record<string, never>>('Close', (req) => s.dedupe(req.header, async () => s.closeSession(req))),
      KeepAlive: (stream: grpc.ServerDuplexStream<KeepAliveRequest__Output, KeepAliveResponse>) => this.keepAlive(stream),
    });
    server.addService(serviceDefinition(SERVICE_NAMES.lock), {
      Acquire: this.unary<AcquireRequest__Output, AcquireResponse>('Acquire', (req) => s.dedupe(req.header, () => s.acquire(req))),
      Release: this.unary<ReleaseRequest__Output, ReleaseResponse>('Release', (req) => s.dedupe(req.header, async () => s.release(req))),
      Describe: this.unary<DescribeRequest__Output, DescribeResponse>('Describe', async (req) => ({ ok: true, res: s.describe(req) })),
      Watch: (call: grpc.ServerWritableStream<WatchRequest__Output, LockEvent>) => this.watch(call),
    });
    server.addService(serviceDefinition(SERVICE_NAMES.semaphore), {
      Acquire: this.unary<SemaphoreAcquireRequest__Output, SemaphoreAcquireResponse>('SemaphoreAcquire', (req) => s.dedupe(req.header, async () => s.semaphoreAcquire(req))),
      Release: this.unary<SemaphoreReleaseRequest__Output, SemaphoreReleaseResponse>('SemaphoreRelease', (req) => s.dedupe(req.header, async () => s.semaphoreRelease(req))),
      Describe: this.unary<SemaphoreDescribeRequest__Output, SemaphoreDescribeResponse>('SemaphoreDescribe', async (req) => ({ ok: true, res: s.semaphoreDescribe(req) })),
    });
    server.addService(serviceDefinition(SERVICE_NAMES.kv), {
      Write: this.unary<WriteRequest__Output, WriteResponse>('Write', (req) => s.dedupe(req.header, async () => s.write(req))),
      Get: this.unary<GetRequest__Output, GetResponse>('Get', async (req) => ({ ok: true, res: s.get(req) })),
      List: this.unary<ListRequest__Output, ListResponse>('List', async (req) => ({ ok: true, res: s.list(req) })),
    });
    server.addService(serviceDefinition(SERVICE_NAMES.cluster), {
      Status: (call: grpc.ServerUnaryCall<unknown, StatusResponse>, cb: grpc.sendUnaryData<StatusResponse>) => {
        this.record('Status', call.request, call);
        const hint = this.role === 'leader' ? this.address : (this.leaderHint() ?? '');
        cb(null, {
          id: this.id,
          role: this.role,
          term: '3',
          leader: this.role === 'leader' ? this.id : '',
          leaderAddress: hint,
          commit: (s.nextIndex - 1n).toString(),
          applied: (s.nextIndex - 1n).toString(),
          snapshotIndex: '0',
          lastIndex: (s.nextIndex - 1n).toString(),
          peers: [],
          address: this.address,
          sessions: String(s.sessions.size),
          locksHeld: String([...s.locks.values()].filter((l) => l.holder !== undefined).length),
          waiters: String([...s.locks.values()].reduce((n, l) => n + l.waiters.length, 0)),
        });
      },
    });
    const bound = await new Promise<number>((resolve, reject) =>
      server.bindAsync(`127.0.0.1:${port}`, this.serverCredentials(), (err, p) => (err ? reject(err) : resolve(p))),
    );
    this.server = server;
    this.address = `127.0.0.1:${bound}`;
  }

  private serverCredentials(): grpc.ServerCredentials {
    const t = this.tls;
    if (!t) return grpc.ServerCredentials.createInsecure();
    const buf = (x: string | Buffer): Buffer => (typeof x === 'string' ? Buffer.from(x) : x);
    return grpc.ServerCredentials.createSsl(t.ca ? buf(t.ca) : null, [{ cert_chain: buf(t.cert), private_key: buf(t.key) }], t.requireClientCert ?? false);
  }

  private keepAlive(stream: grpc.ServerDuplexStream<KeepAliveRequest__Output, KeepAliveResponse>): void {
    this.record('KeepAlive', {}, stream);
    const nl = this.notLeader() ?? this.keepAliveRefusal;
    if (nl) {
      stream.emit('error', toServiceError(nl));
      return;
    }
    this.streams.add(stream);
    this.openKeepAlives++;
    this.maxOpenKeepAlives = Math.max(this.maxOpenKeepAlives, this.openKeepAlives);
    stream.on('data', (req: KeepAliveRequest__Output) => {
      const receivedAt = performance.now();
      this.record('KeepAliveRenewal', req, stream);
      if (this.keepAliveMode === 'silent') return;
      if (this.keepAliveMode === 'dead') {
        stream.emit('error', toServiceError(failure(grpc.status.UNAVAILABLE, 'keepalive refused')));
        return;
      }
      const answer = (echo = req.renewalId): void => {
        const session = this.state.sessions.get(req.sessionId);
        const renewalId = this.echoRenewalId ? echo : '0';
        stream.write({ sessionId: req.sessionId, alive: session !== undefined, remainingMs: String(session?.ttlMs ?? 0), renewalId });
      };
      if (this.keepAliveMode === 'hold') this.heldRenewals.push({ sessionId: req.sessionId, renewalId: req.renewalId, receivedAt, answer });
      else answer();
    });
    let open = true;
    const done = (): void => {
      this.streams.delete(stream);
      if (open) this.openKeepAlives--;
      open = false;
    };
    stream.on('end', () => {
      done();
      stream.end();
    });
    stream.on('error', done);
    stream.on('cancelled', done);
  }

  private watch(call: grpc.ServerWritableStream<WatchRequest__Output, LockEvent>): void {
    this.record('Watch', call.request, call);
    const nl = this.notLeader();
    if (nl) {
      call.emit('error', toServiceError(nl));
      return;
    }
    this.streams.add(call);
    const stop = this.state.watch(call.request.lock, (ev) => call.write(ev));
    this.unwatch.add(stop);
    call.on('cancelled', () => {
      stop();
      this.unwatch.delete(stop);
      this.streams.delete(call);
    });
  }

  /** Ends every open stream with an error (a leader change, say). */
  breakStreams(f: GrpcFailure = failure(grpc.status.UNAVAILABLE, 'stream broken')): void {
    for (const s of [...this.streams]) s.emit('error', toServiceError(f));
    this.streams.clear();
  }

  /** Stops the server at once (like a crash). */
  stop(): void {
    for (const stop of this.unwatch) stop();
    this.unwatch.clear();
    this.streams.clear();
    this.server?.forceShutdown();
    this.server = undefined;
  }
}

/** A fake cluster: node 0 is the leader, the rest are followers hinting it. */
export async function startFakeCluster(
  n: number,
  state = new FakeState(),
  opts: { tls?: FakeTls } = {},
): Promise<{ state: FakeState; nodes: FakeNode[]; stop: () => void }> {
  const nodes: FakeNode[] = [];
  for (let i = 0; i < n; i++) {
    nodes.push(
      await FakeNode.start(state, { id: `n${i + 1}`, role: i === 0 ? 'leader' : 'follower', leaderHint: () => nodes.find((x) => x.role === 'leader')?.address, tls: opts.tls }),
    );
  }
  return {
    state,
    nodes,
    stop: () => {
      for (const node of nodes) node.stop();
      state.dispose();
    },
  };
}

/** An address where nothing listens: bind a port, then close it. */
export async function deadAddress(): Promise<string> {
  const net = await import('node:net');
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(`127.0.0.1:${port}`));
    });
  });
}

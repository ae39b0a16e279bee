/**
 * A tiny gRPC server on 127.0.0.1 for the client's auth tests: the Auth service, KV.Move and KV.Get, Session.Open
 * and KeepAlive, Lock.Watch and the Pipeline stream, speaking lock.proto. It records every call with the
 * `authorization` metadata it came with and answers from canned handlers (the tests replace them); scripted
 * failures come first. Not a cluster: nothing is checked, nothing is stored.
 */
import * as grpc from '@grpc/grpc-js';
import type { CallResponse } from '../../src/protocol/generated/fencelock/v1/CallResponse';
import type { RequestHeader__Output } from '../../src/protocol/generated/fencelock/v1/RequestHeader';
import { serviceDefinition, SERVICE_NAMES } from '../../src/client/proto';

export interface AuthCall {
  method: string;
  req: unknown;
  header?: RequestHeader__Output;
  /** The `authorization` metadata values the call carried (streams: once, when opened). */
  authorization: string[];
}

export interface Failure {
  code: grpc.status;
  details: string;
  metadata?: Record<string, string>;
}

type Handler = (req: unknown) => unknown;

const change = (index: number) => (): unknown => ({ index: String(index) });

/** Canned answers, by method name as in lock.proto; a handler may throw a Failure. */
export function defaultHandlers(): Record<string, Handler> {
  return {
    WhoAmI: () => ({ identity: 'alice', via: 'token', authEnabled: true, roles: ['ops'], rules: [{ permission: 'LOCK', prefix: 'jobs/' }] }),
    List: () => ({
      authEnabled: true,
      users: [
        { name: 'root', roles: ['root'] },
        { name: 'alice', roles: ['ops'] },
      ],
      roles: [
        { name: 'root', rules: [{ permission: 'ADMIN', prefix: '' }], quotas: [] },
        {
          name: 'ops',
          rules: [
            { permission: 'LOCK', prefix: 'jobs/' },
            { permission: 'WRITE', prefix: '' },
          ],
          quotas: [{ name: 'sessions', value: '50' }],
        },
      ],
      tokens: [{ id: '0123456789abcdef', user: 'alice' }],
    }),
    UserAdd: change(11),
    UserDelete: change(12),
    UserGrantRole: change(13),
    UserRevokeRole: change(14),
    RoleAdd: change(15),
    RoleDelete: change(16),
    RoleGrantPermission: change(17),
    RoleRevokePermission: change(18),
    RoleSetQuota: change(19),
    TokenIssue: () => ({ tokenId: 'fedcba9876543210', token: `flt_fedcba9876543210_${'s'.repeat(43)}` }),
    TokenRevoke: change(20),
    Move: (req) => ({ moved: (req as { what?: string }).what === 'key' ? '1' : '3', index: '21' }),
    Get: () => ({ found: true, value: Buffer.from('v'), token: '7', lock: 'l', deleted: false }),
    Open: () => ({ sessionId: 'ab'.repeat(16), ttlMs: '3000', electionTimeoutMs: '1000' }),
    Acquire: () => ({ acquired: true, token: '9', holderSession: '' }),
  };
}

export interface AuthServerOptions {
  /** Serve TLS with this certificate. */
  tls?: { cert: string; key: string };
  /** Answer every unary call UNAVAILABLE with this leader hint (a follower). */
  followerOf?: () => string;
  /** Refuse every call and stream without `authorization: Bearer <this>`, UNAUTHENTICATED, as a node with auth on. */
  requireToken?: string;
}

export class AuthServer {
  readonly calls: AuthCall[] = [];
  handlers: Record<string, Handler> = defaultHandlers();
  private readonly failures: Array<{ method: string; failure: Failure }> = [];
  address = '';

  private constructor(
    private readonly server: grpc.Server,
    private readonly opts: AuthServerOptions,
  ) {}

  static async start(opts: AuthServerOptions = {}): Promise<AuthServer> {
    const s = new AuthServer(new grpc.Server(), opts);
    await s.listen();
    return s;
  }

  /** The next call of `method` fails so (once per call of this). */
  fail(method: string, failure: Failure): void {
    this.failures.push({ method, failure });
  }

  callsOf(method: string): AuthCall[] {
    return this.calls.filter((c) => c.method === method);
  }

  stop(): void {
    this.server.forceShutdown();
  }

  private record(method: string, req: unknown, metadata: grpc.Metadata): void {
    const header = (req as { header?: RequestHeader__Output } | undefined)?.header;
    this.calls.push({ method, req, header, authorization: metadata.get('authorization').map(String) });
  }

  /** The refusal of a call without the required token, if one is required. */
  private unauthenticated(metadata: grpc.Metadata): Failure | undefined {
    const want = this.opts.requireToken;
    if (want === undefined || metadata.get('authorization').map(String).includes(`Bearer ${want}`)) return undefined;
    return { code: grpc.status.UNAUTHENTICATED, details: 'this call carries no identity', metadata: { 'fencelock-reason': 'UNAUTHENTICATED' } };
  }

  private answer(method: string, req: unknown): { ok: true; res: unknown } | { ok: false; failure: Failure } {
    const i = this.failures.findIndex((f) => f.method === method);
    if (i >= 0) return { ok: false, failure: this.failures.splice(i, 1)[0]!.failure };
    if (this.opts.followerOf) return { ok: false, failure: { code: grpc.status.UNAVAILABLE, details: 'not the leader', metadata: { 'fencelock-leader': this.opts.followerOf() } } };
    const h = this.handlers[method];
    if (!h) return { ok: false, failure: { code: grpc.status.UNIMPLEMENTED, details: `${method} not scripted` } };
    try {
      return { ok: true, res: h(req) };
    } catch (f) {
      return { ok: false, failure: f as Failure };
    }
  }

  private unary(method: string): grpc.handleUnaryCall<unknown, unknown> {
    return (call, cb) => {
      this.record(method, call.request, call.metadata);
      const refused = this.unauthenticated(call.metadata);
      if (refused) {
        cb(toStatus(refused) as grpc.ServiceError);
        return;
      }
      const a = this.answer(method, call.request);
      if (a.ok) cb(null, a.res);
      else cb(toStatus(a.failure) as grpc.ServiceError);
    };
  }

  private async listen(): Promise<void> {
    const unaries = (names: string[]): grpc.UntypedServiceImplementation => Object.fromEntries(names.map((n) => [n, this.unary(n)]));
    this.server.addService(
      serviceDefinition(SERVICE_NAMES.auth),
      unaries(['WhoAmI', 'List', 'UserAdd', 'UserDelete', 'UserGrantRole', 'UserRevokeRole', 'RoleAdd', 'RoleDelete', 'RoleGrantPermission', 'RoleRevokePermission', 'RoleSetQuota', 'TokenIssue', 'TokenRevoke']),
    );
    this.server.addService(serviceDefinition(SERVICE_NAMES.kv), unaries(['Move', 'Get']));
    this.server.addService(serviceDefinition(SERVICE_NAMES.session), {
      ...unaries(['Open']),
      KeepAlive: (stream: grpc.ServerDuplexStream<{ sessionId: string; renewalId: string }, unknown>) => {
        this.record('KeepAlive', {}, stream.metadata);
        stream.on('data', (req: { sessionId: string; renewalId: string }) => {
          this.record('KeepAliveRenewal', req, stream.metadata);
          stream.write({ sessionId: req.sessionId, alive: true, remainingMs: '3000', renewalId: req.renewalId });
        });
        stream.on('end', () => stream.end());
        stream.on('error', () => undefined);
      },
    });
    this.server.addService(serviceDefinition(SERVICE_NAMES.lock), {
      ...unaries(['Acquire']),
      Watch: (call: grpc.ServerWritableStream<{ lock: string }, unknown>) => {
        this.record('Watch', call.request, call.metadata);
        call.write({ kind: 'GRANTED', lock: call.request.lock, sessionId: 'abcd', token: '9', index: '9' });
      },
    });
    this.server.addService(serviceDefinition(SERVICE_NAMES.pipeline), {
      Calls: (stream: grpc.ServerDuplexStream<Record<string, unknown> & { callId: string }, CallResponse>) => {
        this.record('Pipeline', {}, stream.metadata);
        const refused = this.unauthenticated(stream.metadata);
        if (refused) {
          stream.on('error', () => undefined);
          stream.emit('error', toStatus(refused));
          return;
        }
        stream.on('data', (req: Record<string, unknown> & { callId: string; call?: string }) => {
          const kind = req.call ?? '';
          const method = kind.charAt(0).toUpperCase() + kind.slice(1);
          this.record(`Pipeline.${method}`, req[kind], stream.metadata);
          const a = this.answer(method, req[kind]);
          if (a.ok) stream.write({ callId: req.callId, code: 0, message: '', metadata: {}, [kind]: a.res });
          else stream.write({ callId: req.callId, code: a.failure.code, message: a.failure.details, metadata: a.failure.metadata ?? {} });
        });
        stream.on('end', () => stream.end());
        stream.on('error', () => undefined);
      },
    });
    const creds = this.opts.tls
      ? grpc.ServerCredentials.createSsl(null, [{ cert_chain: Buffer.from(this.opts.tls.cert), private_key: Buffer.from(this.opts.tls.key) }], false)
      : grpc.ServerCredentials.createInsecure();
    const port = await new Promise<number>((resolve, reject) => this.server.bindAsync('127.0.0.1:0', creds, (err, p) => (err ? reject(err) : resolve(p))));
    this.address = `127.0.0.1:${port}`;
  }
}

function toStatus(f: Failure): Partial<grpc.StatusObject> {
  const md = new grpc.Metadata();
  for (const [k, v] of Object.entries(f.metadata ?? {})) md.set(k, v);
  return { code: f.code, details: f.details, metadata: md };
}

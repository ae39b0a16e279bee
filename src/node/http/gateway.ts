// The JSON gateway (docs/http.md): an HTTP request is routed to a served method (servedMethods.ts) and called
// in process with a GatewayCall carrying the caller's credentials, so auth, permissions, quotas, dedup and
// refusals are the gRPC API's own. Answers are JSON; Lock.Watch is a stream of server-sent events.
import type * as http from 'node:http';
import type { TLSSocket } from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import type { ServedMethod } from '../api/servedMethods';
import { ApiError } from '../api/errors';
import type { Logger } from '../logger';
import type { Timers } from '../runtime/ports';
import { GatewayCall, type CallOrigin } from './gatewayCall';
import { HTTP_RENEWAL_WAIT_MS, MAX_HTTP_BODY_BYTES } from './httpLimits';
import { errorBody, httpStatusOf } from './httpStatus';
import { encodeRequest, fromJson, fromQuery, messageTypes, toJson } from './jsonCodec';
import { routeOf, type Route } from './routes';
import { serveEvents } from './eventStream';

export interface GatewayDeps {
  methods: Map<string, ServedMethod>;
  logger: Logger;
  /** The id of the node this one knows to lead, for NOT_LEADER answers (its HTTP address is not known here). */
  leaderId: () => string | undefined;
  timers: Timers;
}

type Answer = { ok: true; res: unknown } | { ok: false; err: Partial<grpc.ServiceError> };

export class Gateway {
  constructor(private readonly deps: GatewayDeps) {}

  /** Serves one request; never throws (a failure is answered as INTERNAL and logged). */
  handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    this.dispatch(req, res).catch((err: unknown) => {
      this.deps.logger.error({ err }, 'http gateway: request failed');
      if (!res.headersSent) this.sendError(res, { code: grpc.status.INTERNAL, details: 'internal error' });
      else res.destroy();
    });
  }

  private async dispatch(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://gateway');
    const { route, allowed } = routeOf(req.method ?? '', url.pathname);
    if (!route) {
      if (allowed.length > 0) res.setHeader('Allow', allowed.join(', '));
      const code = allowed.length > 0 ? grpc.status.UNIMPLEMENTED : grpc.status.NOT_FOUND;
      const status = allowed.length > 0 ? 405 : 404;
      this.sendJson(res, status, errorBody({ code, details: allowed.length > 0 ? `${url.pathname} takes ${allowed.join(', ')}` : `no route ${url.pathname} (docs/http.md lists the routes)` }));
      return;
    }
    const method = this.deps.methods.get(route.rpc);
    if (!method) throw new Error(`route ${route.path}: ${route.rpc} is not served`);
    const request = await this.requestOf(req, route, method, url);
    if (request instanceof ApiError || typeof request === 'number') {
      if (typeof request === 'number') this.sendJson(res, request, errorBody(bodyRefusal(request)));
      else this.sendError(res, request.toServiceError());
      return;
    }
    const origin = originOf(req);
    if (route.kind === 'events') {
      serveEvents({ method, request, origin, req, res, timers: this.deps.timers, onRefused: (err) => this.sendError(res, err) });
      return;
    }
    const answer = route.kind === 'renewal' ? await renew(method, request, origin, this.deps.timers) : await callUnary(method, request, origin, req);
    if (answer.ok) this.sendJson(res, 200, toJson(messageTypes(route.rpc).response, method.definition.responseSerialize(answer.res)));
    else this.sendError(res, answer.err);
  }

  /** The request decoded as the method's deserializer decodes it, or why not: an ApiError, or an HTTP status (413, 415). */
  private async requestOf(req: http.IncomingMessage, route: Route, method: ServedMethod, url: URL): Promise<unknown> {
    const type = messageTypes(route.rpc).request;
    let plain: Record<string, unknown>;
    try {
      if (route.verb === 'GET') {
        plain = fromQuery(type, url.searchParams);
      } else {
        if (!isJson(req.headers['content-type'])) return 415;
        const body = await readBody(req);
        if (typeof body === 'number') return body;
        plain = fromJson(type, parseJson(body));
      }
    } catch (err) {
      if (err instanceof ApiError) return err;
      throw err;
    }
    return method.definition.requestDeserialize(encodeRequest(type, plain));
  }

  private sendError(res: http.ServerResponse, err: Partial<grpc.ServiceError>): void {
    const body = errorBody(err);
    const leader = body.reason === 'NOT_LEADER' ? this.deps.leaderId() : undefined;
    this.sendJson(res, httpStatusOf(body.code), leader === undefined ? body : { ...body, leaderId: leader });
  }

  private sendJson(res: http.ServerResponse, status: number, body: object): void {
    if (res.headersSent || res.destroyed) return;
    const text = JSON.stringify(body);
    res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text), 'Cache-Control': 'no-store' });
    res.end(text);
  }
}

function bodyRefusal(status: number): Partial<grpc.ServiceError> {
  if (status === 415) return { code: grpc.status.INVALID_ARGUMENT, details: 'send the request as JSON: Content-Type: application/json' };
  return { code: grpc.status.RESOURCE_EXHAUSTED, details: `the request body is larger than ${MAX_HTTP_BODY_BYTES} bytes, more than the largest request the API accepts` };
}

/** application/json, with no parameter but charset=utf-8. */
function isJson(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const [type, ...params] = contentType.split(';').map((s) => s.trim().toLowerCase());
  return type === 'application/json' && params.every((p) => p === 'charset=utf-8' || p === '');
}

function parseJson(body: Buffer): unknown {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    throw new ApiError(grpc.status.INVALID_ARGUMENT, 'request: the body is not UTF-8');
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new ApiError(grpc.status.INVALID_ARGUMENT, `request: the body is not JSON (${(err as Error).message})`);
  }
}

/** The body, or 413 as soon as it is known to be over MAX_HTTP_BODY_BYTES (nothing more is buffered). */
function readBody(req: http.IncomingMessage): Promise<Buffer | 413> {
  const declared = Number(req.headers['content-length'] ?? '0');
  if (declared > MAX_HTTP_BODY_BYTES) return Promise.resolve(413);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_HTTP_BODY_BYTES) {
        req.removeAllListeners('data');
        req.pause();
        resolve(413);
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** The caller's credentials as a gRPC call would carry them; a certificate only from a verified chain (as grpc-js). */
function originOf(req: http.IncomingMessage): CallOrigin {
  const socket = req.socket as Partial<TLSSocket>;
  const certificate = socket.authorized === true && typeof socket.getPeerCertificate === 'function' ? socket.getPeerCertificate() : undefined;
  const address = req.socket.remoteAddress ?? '';
  const host = address.includes(':') ? `[${address}]` : address;
  return {
    authorization: req.headersDistinct.authorization ?? [],
    certificate: certificate && certificate.raw ? certificate : undefined,
    peer: `${host}:${req.socket.remotePort ?? 0}`,
  };
}

/** One unary call; the client going away cancels it (a blocked Acquire leaves the queue). */
function callUnary(method: ServedMethod, request: unknown, origin: CallOrigin, req: http.IncomingMessage): Promise<Answer> {
  return new Promise((resolve) => {
    const call = new GatewayCall(origin, request);
    const onGone = (): void => call.cancel();
    req.socket.once('close', onGone);
    (method.handler as grpc.handleUnaryCall<unknown, unknown>)(call as never, (err, res) => {
      req.socket.off('close', onGone);
      resolve(err ? { ok: false, err } : { ok: true, res });
    });
  });
}

/** One renewal on a KeepAlive stream of its own: the stream's first answer, or 504 if none comes. */
function renew(method: ServedMethod, request: unknown, origin: CallOrigin, timers: Timers): Promise<Answer> {
  return new Promise((resolve) => {
    let done = false;
    const finish = (answer: Answer): void => {
      if (done) return;
      done = true;
      timers.clearTimeout(timer);
      resolve(answer);
    };
    const call = new GatewayCall(origin, undefined, {
      data: (res) => {
        finish({ ok: true, res });
        call.emit('end');
      },
      status: (err) => finish(err ? { ok: false, err } : { ok: false, err: { code: grpc.status.UNAVAILABLE, details: 'the renewal was not answered' } }),
      unsent: () => 0,
    });
    const timer = timers.setTimeout(() => {
      finish({ ok: false, err: { code: grpc.status.DEADLINE_EXCEEDED, details: 'no answer to the renewal: this node could not confirm it leads; retry (at the leader)' } });
      call.cancel();
    }, HTTP_RENEWAL_WAIT_MS);
    (method.handler as grpc.handleBidiStreamingCall<unknown, unknown>)(call as never);
    if (!call.destroyed) call.emit('data', request);
  });
}

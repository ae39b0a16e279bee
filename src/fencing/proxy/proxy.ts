// A fencing reverse proxy for an HTTP service that cannot check tokens itself. Per resource, writes are
// serialized; each claim is judged against the watermark the proxy keeps on disk, the new watermark is
// fsynced, and only then is the request forwarded. A stale request never reaches the service. See
// docs/fencing-downstream.md for what this can and cannot promise.
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { claimFromHeaders, refusalAnswer } from '../http/claim';
import { answerTooLarge, BodyTooLarge, readBody, sendJson } from '../http/send';
import { advanced, judge } from '../watermark';
import { WatermarkLog } from './watermarkLog';

/** Which resource a request writes: the first `segments` segments of its path, or the value of a header. */
export type ResourceRule = { segments: number } | { header: string };

export interface FencingProxyOptions {
  /** The service, e.g. http://127.0.0.1:9000. */
  target: string;
  /** The proxy's watermark log (created when missing). */
  stateFile: string;
  /** Default { segments: 1 }: /accounts/7/deposit writes /accounts. */
  resource?: ResourceRule;
  /** Forwarded without a check or a turn: methods that change nothing. Default GET, HEAD, OPTIONS. */
  passMethods?: string[];
  maxBodyBytes?: number;
  /** How long a forwarded request may take; default 30 s (then 504, and the next request gets its turn). */
  upstreamTimeoutMs?: number;
}

// Hop-by-hop headers (RFC 9110 7.6.1) stay with each connection.
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'proxy-authorization', 'proxy-authenticate']);

function endToEnd(h: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  return Object.fromEntries(Object.entries(h).filter(([k]) => !HOP_BY_HOP.has(k)));
}

export function resourceOf(req: http.IncomingMessage, rule: ResourceRule): string | undefined {
  if ('header' in rule) {
    const v = req.headers[rule.header.toLowerCase()];
    return typeof v === 'string' && v !== '' ? v : undefined;
  }
  const segs = new URL(req.url ?? '/', 'http://x').pathname.split('/').filter((s) => s !== '');
  return `/${segs.slice(0, rule.segments).join('/')}`;
}

export class FencingProxy {
  private readonly turns = new Map<string, Promise<void>>();
  private readonly target: URL;
  private readonly rule: ResourceRule;
  private readonly pass: Set<string>;

  private constructor(
    private readonly server: http.Server,
    readonly log: WatermarkLog,
    private readonly opts: FencingProxyOptions,
  ) {
    this.target = new URL(opts.target);
    if (this.target.protocol !== 'http:') throw new RangeError(`target must be an http:// URL, got ${opts.target}`);
    this.rule = opts.resource ?? { segments: 1 };
    if ('segments' in this.rule && (!Number.isInteger(this.rule.segments) || this.rule.segments < 0)) throw new RangeError('resource segments must be a non-negative integer');
    this.pass = new Set((opts.passMethods ?? ['GET', 'HEAD', 'OPTIONS']).map((m) => m.toUpperCase()));
    server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
      void this.handle(req, res).catch(() => sendJson(res, 500, { error: 'INTERNAL', message: 'the proxy failed on this request' }));
    });
  }

  /** Opens the watermark log and listens. */
  static async start(opts: FencingProxyOptions, host: string, port: number): Promise<FencingProxy> {
    const log = await WatermarkLog.open(opts.stateFile);
    const server = http.createServer();
    const proxy = new FencingProxy(server, log, opts);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
    return proxy;
  }

  address(): AddressInfo {
    return this.server.address() as AddressInfo;
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
    await this.log.close();
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    if (this.pass.has((req.method ?? '').toUpperCase())) return this.forward(req, res, undefined);
    const parsed = claimFromHeaders(req.headers);
    if (!parsed.ok) {
      req.resume();
      return sendJson(res, parsed.status, { error: parsed.status === 400 ? 'MALFORMED_CLAIM' : 'CLAIM_REQUIRED', message: parsed.message });
    }
    const resource = resourceOf(req, this.rule);
    if (resource === undefined) {
      req.resume();
      return sendJson(res, 400, { error: 'NO_RESOURCE', message: `the request names no resource (header ${'header' in this.rule ? this.rule.header : ''})` });
    }
    let body: Buffer;
    try {
      body = await readBody(req, this.opts.maxBodyBytes ?? 1 << 20);
    } catch (err) {
      if (err instanceof BodyTooLarge) return answerTooLarge(req, res, err.message);
      throw err;
    }
    const claim = parsed.claim;
    await this.inTurn(resource, async () => {
      const refusal = judge(this.log.get(resource), claim);
      if (refusal) {
        const a = refusalAnswer(refusal, resource);
        return sendJson(res, 409, a.body, a.headers);
      }
      // Durable before the service sees it: after a crash the proxy never lets an older claim in.
      await this.log.record(resource, advanced(claim));
      await this.forward(req, res, body);
    });
  }

  /** Runs fn when every earlier request for the resource has finished (its answer fully relayed). */
  private async inTurn(resource: string, fn: () => Promise<void>): Promise<void> {
    const before = this.turns.get(resource) ?? Promise.resolve();
    const mine = before.then(fn);
    const settled = mine.catch(() => undefined);
    this.turns.set(resource, settled);
    try {
      await mine;
    } finally {
      if (this.turns.get(resource) === settled) this.turns.delete(resource);
    }
  }

  /** Sends the request to the service and relays the answer; resolves when the answer is relayed or failed. */
  private forward(req: http.IncomingMessage, res: http.ServerResponse, body: Buffer | undefined): Promise<void> {
    return new Promise<void>((resolve) => {
      const headers = endToEnd(req.headers);
      if (body !== undefined) headers['content-length'] = String(body.length);
      const up = http.request(
        { host: this.target.hostname, port: this.target.port, method: req.method, path: req.url, headers, timeout: this.opts.upstreamTimeoutMs ?? 30_000 },
        (upRes) => {
          res.writeHead(upRes.statusCode ?? 502, endToEnd(upRes.headers));
          upRes.pipe(res);
          upRes.once('end', () => resolve());
          upRes.once('error', () => {
            res.destroy();
            resolve();
          });
        },
      );
      up.once('timeout', () => up.destroy(new Error('upstream timeout')));
      up.once('error', (err) => {
        const timeout = err.message === 'upstream timeout';
        // The service may or may not have applied it: say so, the caller must not assume either.
        sendJson(res, timeout ? 504 : 502, { error: timeout ? 'UPSTREAM_TIMEOUT' : 'UPSTREAM_FAILED', message: `${err.message}; the service may or may not have applied the request` });
        resolve();
      });
      if (body !== undefined) up.end(body);
      else req.pipe(up);
    });
  }
}

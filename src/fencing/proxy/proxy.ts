// A fencing reverse proxy for an HTTP service that cannot check tokens itself. Per resource, writes are
// serialized; each claim is first checked with the cluster (its lock issued that token), then judged against
// the watermark the proxy keeps on disk, the new watermark is fsynced, and only then is the request forwarded.
// A stale request never reaches the service, nor does a request target in any but the canonical spelling.
// See docs/fencing-downstream.md for what this can and cannot promise.
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { claimFromHeaders, refusalAnswer } from '../http/claim';
import { sendJson } from '../http/send';
import type { CheckedClaim } from '../token';
import { advanced, judge } from '../watermark';
import { discardRest, readBodyWithin } from './body';
import { ClusterClaimCheck, type LockDescriber } from './claimCheck';
import { DEFAULT_MAX_BODY_BYTES } from './options';
import { canonicalTarget } from './target';
import { StateFull, WatermarkLog } from './watermarkLog';

/**
 * Which resource a request writes: the first `segments` segments of its path (`caseInsensitive`: compared
 * without regard to case, for a service that routes so), or the value of a header.
 */
export type ResourceRule = { segments: number; caseInsensitive?: boolean } | { header: string };

export interface FencingProxyOptions {
  /** The service, e.g. http://127.0.0.1:9000. */
  target: string;
  /** The proxy's watermark log (created when missing). */
  stateFile: string;
  /**
   * Who says which tokens a lock has issued: the cluster (a FenceLockClient), or 'unchecked' to believe every
   * claim, which lets anyone who reaches the proxy block a resource with a made-up lock (docs).
   */
  claims: LockDescriber | 'unchecked';
  /** How many resources the watermark log keeps at most (default DEFAULT_MAX_RESOURCES); beyond: 507. */
  maxResources?: number;
  /** Default { segments: 1 }: /accounts/7/deposit writes /accounts. */
  resource?: ResourceRule;
  /** Forwarded without a check or a turn: methods that change nothing. Default GET, HEAD, OPTIONS. */
  passMethods?: string[];
  maxBodyBytes?: number;
  /** How long a forwarded request may take; default 30 s (then 504, and the next request gets its turn). */
  upstreamTimeoutMs?: number;
}

/** Answers a request that is not forwarded; the rest of its body is dropped (bounded) so the answer reaches the client. */
function refuse(req: http.IncomingMessage, res: http.ServerResponse, status: number, error: string, message: string): void {
  sendJson(res, status, { error, message });
  discardRest(req);
}

// Hop-by-hop headers (RFC 9110 7.6.1) stay with each connection.
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'proxy-authorization', 'proxy-authenticate']);

function endToEnd(h: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  return Object.fromEntries(Object.entries(h).filter(([k]) => !HOP_BY_HOP.has(k)));
}

/**
 * The resource a request writes, from the segments of its canonical path (see target.ts) or a header; a
 * message when it has none, or none the proxy can key for sure.
 */
export function resourceOf(segments: string[], headers: http.IncomingHttpHeaders, rule: ResourceRule): { resource: string } | { problem: string } {
  if ('header' in rule) {
    const v = headers[rule.header.toLowerCase()];
    return typeof v === 'string' && v !== '' ? { resource: v } : { problem: `the request names no resource (header ${rule.header})` };
  }
  const path = `/${segments.slice(0, rule.segments).join('/')}`;
  if (rule.caseInsensitive !== true) return { resource: path };
  // Folding the case of a non-ASCII letter the way the service does is more than the proxy can know.
  if (/%[89A-F]/.test(path)) return { problem: `the resource ${path} has non-ASCII characters, which a proxy with case-insensitive paths refuses` };
  // Percent-encoding is upper case in a canonical target, so lower-casing maps every spelling to one key.
  return { resource: path.toLowerCase() };
}

export class FencingProxy {
  private readonly turns = new Map<string, Promise<void>>();
  private readonly target: URL;
  private readonly rule: ResourceRule;
  private readonly pass: Set<string>;
  private readonly checker: ClusterClaimCheck | undefined;

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
    this.checker = opts.claims === 'unchecked' ? undefined : new ClusterClaimCheck(opts.claims);
    server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
      void this.handle(req, res).catch(() => sendJson(res, 500, { error: 'INTERNAL', message: 'the proxy failed on this request' }));
    });
  }

  /** Opens the watermark log and listens. */
  static async start(opts: FencingProxyOptions, host: string, port: number): Promise<FencingProxy> {
    const log = await WatermarkLog.open(opts.stateFile, opts.maxResources);
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
    // Reads too: the service must never act on a spelling the proxy did not judge, whatever the method.
    const target = canonicalTarget(req.url ?? '');
    if (!target.ok) return refuse(req, res, 400, 'NON_CANONICAL_TARGET', target.message);
    if (this.pass.has((req.method ?? '').toUpperCase())) return this.forward(req, res, undefined);
    const parsed = claimFromHeaders(req.headers);
    if (!parsed.ok) return refuse(req, res, parsed.status, parsed.status === 400 ? 'MALFORMED_CLAIM' : 'CLAIM_REQUIRED', parsed.message);
    const named = resourceOf(target.segments, req.headers, this.rule);
    if ('problem' in named) return refuse(req, res, 400, 'NO_RESOURCE', named.problem);
    const resource = named.resource;
    const claim = parsed.claim;
    // Before anything is recorded: a claim the cluster did not issue must not bind a resource.
    const verdict = this.checker ? await this.checker.check(claim) : { ok: true as const };
    if (!verdict.ok) return refuse(req, res, verdict.status, verdict.error, verdict.message);
    const body = await readBodyWithin(req, res, this.opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES);
    if (body === undefined) return;
    await this.inTurn(resource, () => this.judgeAndForward(req, res, resource, claim, body));
  }

  private async judgeAndForward(req: http.IncomingMessage, res: http.ServerResponse, resource: string, claim: CheckedClaim, body: Buffer): Promise<void> {
    const refusal = judge(this.log.get(resource), claim);
    if (refusal) {
      const a = refusalAnswer(refusal, resource);
      return sendJson(res, 409, a.body, a.headers);
    }
    try {
      // Durable before the service sees it: after a crash the proxy never lets an older claim in.
      await this.log.record(resource, advanced(claim));
    } catch (err) {
      if (err instanceof StateFull) return sendJson(res, 507, { error: 'STATE_FULL', message: err.message });
      throw err;
    }
    await this.forward(req, res, body);
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

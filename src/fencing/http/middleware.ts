// A fenced HTTP handler for Node's http server: the claim in the request headers is checked against the
// resource's watermark in the service's own PostgreSQL, in the same transaction as the handler's change.
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { context, propagation, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import { ATTR, contextFromHeaders, TRACER_NAME, tracingActive } from '../../protocol/traceContext';
import { canonicalTarget } from '../proxy/target';
import type { SqlDatabase, SqlSession } from '../sql/db';
import { withFenceIn } from '../sql/fenced';
import type { CheckedClaim } from '../token';
import { claimFromHeaders, refusalAnswer } from './claim';
import { FENCING_REPLAYED_HEADER } from './headers';
import { answerTooLarge, BodyTooLarge, readBody, sendJson } from './send';

/** What the handler answers; stored with the operation, so a retry gets the same answer. */
export interface FencedResponse {
  status: number;
  headers?: Record<string, string>;
  /** Sent as JSON. */
  body?: unknown;
}

export interface FencedRequest {
  req: IncomingMessage;
  body: Buffer;
  /** The transaction the watermark is checked and recorded in: make the change through it. */
  tx: SqlSession;
  resource: string;
  claim: CheckedClaim;
}

export interface FencedHttpOptions {
  db: SqlDatabase;
  /**
   * The resource a request writes, whose watermark it is checked against; default the path of a canonical
   * request target. Undefined refuses the request (400 NON_CANONICAL_TARGET).
   */
  resource?: (req: IncomingMessage) => string | undefined;
  /** Default 1 MiB. */
  maxBodyBytes?: number;
  /** Called with an unexpected error (answered 500). */
  onError?: (err: unknown) => void;
}

/** A handler's answer of 4xx/5xx: its transaction is rolled back, and the watermark stays. */
class HandlerRefused extends Error {
  constructor(readonly response: FencedResponse) {
    super(`handler answered ${response.status}`);
  }
}

/**
 * The default resource: the request's path, only when its target is canonical (../proxy/target.ts): a service
 * that reads `//a/x`, `/%61/x` or `/x/../a` as `/a` must not see a second watermark for `/a` under that spelling
 * (a URL parser takes `//a/x` for host `a`, path `/x`). Undefined: refuse the request.
 */
function canonicalPathOf(req: IncomingMessage): string | undefined {
  const target = canonicalTarget(req.url ?? '');
  return target.ok ? `/${target.segments.join('/')}` : undefined;
}

/**
 * Wraps a handler of fenced writes. The request needs Fencing-Token and Fencing-Lock (428 without, 400 when
 * malformed); optional Fencing-Step and Idempotency-Key. A stale claim gets 409 with the watermark and never
 * reaches the handler. A 2xx/3xx answer commits the change, the new watermark and the stored answer together;
 * 4xx/5xx rolls all of it back. Route only writes here: reads need no token.
 */
export function fencedHttpHandler(opts: FencedHttpOptions, handle: (r: FencedRequest) => Promise<FencedResponse>): RequestListener {
  const resourceOf = opts.resource ?? canonicalPathOf;
  const maxBody = opts.maxBodyBytes ?? 1 << 20;
  return (req: IncomingMessage, res: ServerResponse): void => {
    const span = tracingActive() ? claimSpan(req) : undefined;
    const served = span === undefined ? serve(req, res) : context.with(trace.setSpan(context.active(), span), () => serve(req, res, span));
    void served.catch((err: unknown) => {
      span?.setAttribute(ATTR.result, 'INTERNAL'); // the 500 below ends the span
      opts.onError?.(err);
      sendJson(res, 500, { error: 'INTERNAL', message: 'the change failed and was rolled back' });
    });
  };

  async function serve(req: IncomingMessage, res: ServerResponse, span?: Span): Promise<void> {
    const parsed = claimFromHeaders(req.headers);
    if (span !== undefined) {
      if (parsed.ok) span.setAttributes({ [ATTR.lock]: parsed.claim.lock, [ATTR.token]: parsed.claim.token.toString() });
      // A request refused before the check (no claim, a body too large) keeps its HTTP status as its result.
      res.once('finish', () => {
        if (res.statusCode >= 400) span.setStatus({ code: SpanStatusCode.ERROR, message: `HTTP ${res.statusCode}` });
        span.setAttribute('http.response.status_code', res.statusCode);
        span.end();
      });
    }
    if (!parsed.ok) {
      req.resume();
      sendJson(res, parsed.status, { error: parsed.status === 400 ? 'MALFORMED_CLAIM' : 'CLAIM_REQUIRED', message: parsed.message });
      return;
    }
    let body: Buffer;
    try {
      body = await readBody(req, maxBody);
    } catch (err) {
      if (err instanceof BodyTooLarge) return answerTooLarge(req, res, err.message);
      throw err;
    }
    const resource = resourceOf(req);
    if (resource === undefined) {
      sendJson(res, 400, { error: 'NON_CANONICAL_TARGET', message: `request target ${JSON.stringify(req.url)} is not canonical (an empty or dot segment, or needless percent-encoding): send the path as the service names the resource (docs/fencing-downstream.md)` });
      return;
    }
    const claim = parsed.claim;
    let outcome;
    try {
      outcome = await opts.db.transaction((tx) =>
        withFenceIn(tx, resource, claim, async () => {
          const answer = await handle({ req, body, tx, resource, claim });
          if (answer.status >= 400) throw new HandlerRefused(answer);
          return answer;
        }),
      );
    } catch (err) {
      if (!(err instanceof HandlerRefused)) throw err;
      return sendJson(res, err.response.status, err.response.body, err.response.headers);
    }
    switch (outcome.status) {
      case 'APPLIED':
        span?.setAttribute(ATTR.result, 'APPLIED');
        return sendJson(res, outcome.result.status, outcome.result.body, outcome.result.headers);
      case 'REPLAYED':
        span?.setAttribute(ATTR.result, 'REPLAYED');
        return sendJson(res, outcome.result.status, outcome.result.body, { ...outcome.result.headers, [FENCING_REPLAYED_HEADER]: 'true' });
      case 'NOT_FOUND':
        throw new Error('fencing: a resource watermark is never NOT_FOUND');
      default: {
        span?.setAttribute(ATTR.result, outcome.status);
        const a = refusalAnswer(outcome, resource);
        return sendJson(res, 409, a.body, a.headers);
      }
    }
  }
}

/**
 * The claim's check as a span, joined to the writer's trace by the traceparent and baggage it sent with the
 * Fencing-Token (docs/tracing.md): a stale writer's refusal shows in the same trace as its lost grant.
 */
function claimSpan(req: IncomingMessage): Span {
  const parent = contextFromHeaders(req.headers);
  const bag = propagation.getBaggage(parent);
  const attributes: Record<string, string> = { 'http.request.method': req.method ?? '', [ATTR.result]: 'REFUSED_BEFORE_CHECK' };
  for (const key of [ATTR.lock, ATTR.token]) {
    const v = bag?.getEntry(key)?.value;
    if (v !== undefined) attributes[`${key}.baggage`] = v;
  }
  return trace.getTracer(TRACER_NAME).startSpan('fencelock.fenced_http', { kind: SpanKind.SERVER, attributes }, parent);
}

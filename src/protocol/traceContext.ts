// What client, server and the downstream kit share of tracing (docs/tracing.md): the span and attribute
// names, and the W3C trace context and baggage carried in gRPC metadata and HTTP headers. Only
// @opentelemetry/api, which is a no-op until an SDK is registered (src/tracing/start.ts, or the app's own).
import { context, propagation, trace, type Attributes, type Context, type Span, type TextMapGetter, type TextMapSetter } from '@opentelemetry/api';

export const TRACER_NAME = 'fencelock';

/** Attribute (and baggage) keys. The token is a decimal string: a uint64 does not fit an attribute's number. */
export const ATTR = {
  lock: 'fencelock.lock',
  token: 'fencelock.token',
  term: 'fencelock.term',
  index: 'fencelock.index',
  result: 'fencelock.result',
  keys: 'fencelock.keys',
  session: 'fencelock.session',
  waitMs: 'fencelock.wait_ms',
} as const;

/**
 * Whether an SDK is registered. The API hands out a proxy provider whose delegate is a no-op until then;
 * callers test this first, so that a node or client without tracing allocates no span, context or carrier.
 */
export function tracingActive(): boolean {
  const provider = trace.getTracerProvider() as { getDelegate?: () => unknown };
  const delegate = provider.getDelegate?.() ?? provider;
  return delegate !== noopDelegate();
}

let noop: unknown;
function noopDelegate(): unknown {
  // The proxy's delegate before any registration: read once from a fresh proxy.
  if (noop === undefined) noop = new (trace.getTracerProvider().constructor as new () => { getDelegate(): unknown })().getDelegate();
  return noop;
}

export function startSpan(name: string, attributes: Attributes, parent: Context = context.active()): Span {
  return trace.getTracer(TRACER_NAME).startSpan(name, { attributes }, parent);
}

/** The context with `span` active and the grant in baggage, so that whatever is sent under it names the lock. */
export function withGrant(parent: Context, span: Span | undefined, lock: string, token: bigint | string): Context {
  const base = span === undefined ? parent : trace.setSpan(parent, span);
  const bag = (propagation.getBaggage(base) ?? propagation.createBaggage()).setEntry(ATTR.lock, { value: lock }).setEntry(ATTR.token, { value: String(token) });
  return propagation.setBaggage(base, bag);
}

const recordSetter: TextMapSetter<Record<string, string>> = { set: (carrier, key, value) => (carrier[key] = value) };

/** traceparent (and baggage) for an outgoing HTTP request or gRPC call, from `ctx`; {} when nothing to carry. */
export function traceHeaders(ctx: Context = context.active()): Record<string, string> {
  const out: Record<string, string> = {};
  propagation.inject(ctx, out, recordSetter);
  return out;
}

/** Header-like carriers: node's IncomingHttpHeaders (lower-case keys), or gRPC metadata as a getter. */
const headerGetter: TextMapGetter<Record<string, string | string[] | undefined>> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => carrier[key.toLowerCase()] ?? carrier[key],
};

/** The context an incoming request carries (traceparent, baggage), on top of the root context. */
export function contextFromHeaders(headers: Record<string, string | string[] | undefined>): Context {
  return propagation.extract(context.active(), headers, headerGetter);
}

/** Ends a span with a result attribute; a refusal or failure also sets the span's status to error. */
export function endWith(span: Span, result: string, failed: boolean, extra?: Attributes): void {
  span.setAttribute(ATTR.result, result);
  if (extra !== undefined) span.setAttributes(extra);
  if (failed) span.setStatus({ code: 2, message: result }); // SpanStatusCode.ERROR
  span.end();
}

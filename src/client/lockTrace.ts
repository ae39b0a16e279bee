// A lock's life as the client sees it, as OpenTelemetry spans (docs/tracing.md): `fencelock.acquire` (queued
// until granted, with the token), then `fencelock.hold` for the grant's lifetime (events renewed, released,
// lost) with a `fencelock.write` child per fenced write. Made only while tracing is on (tracingActive()):
// without an SDK the client allocates nothing for them.
import { context, trace, type Context, type Span } from '@opentelemetry/api';
import { ATTR, endWith, startSpan, tracingActive, withGrant } from '../protocol/traceContext';
import { FenceLockError } from './errors';

/** Why a call failed, as a span's result: the server's reason, else the status code. */
function resultOf(err: unknown): string {
  return err instanceof FenceLockError ? (err.reason ?? err.code) : 'ERROR';
}

/**
 * Runs an acquire under its span; `granted` names the token on it. Resolves with the context the grant's
 * hold span starts in (undefined while tracing is off).
 */
export async function tracedAcquire<R extends { acquired: boolean; token: bigint }>(
  lock: string,
  sessionHandle: string,
  waitMs: number,
  attempt: () => Promise<R>,
): Promise<{ res: R; acquireContext?: Context }> {
  if (!tracingActive()) return { res: await attempt() };
  const span = startSpan('fencelock.acquire', { [ATTR.lock]: lock, [ATTR.session]: sessionHandle, [ATTR.waitMs]: waitMs });
  const acquireContext = trace.setSpan(context.active(), span);
  let res: R;
  try {
    res = await context.with(acquireContext, attempt);
  } catch (err) {
    endWith(span, resultOf(err), true);
    throw err;
  }
  if (res.acquired) endWith(span, 'granted', false, { [ATTR.token]: res.token.toString() });
  else endWith(span, 'LOCK_HELD', true);
  return { res, acquireContext };
}

/** The hold span of one grant, and the context its calls (writes, release, downstream requests) run in. */
export class HoldTrace {
  private ended = false;

  private constructor(
    private readonly span: Span,
    private readonly ctx: Context,
    private readonly lock: string,
    private readonly token: bigint,
  ) {}

  static begin(acquireContext: Context, lock: string, token: bigint, sessionHandle: string): HoldTrace {
    const span = startSpan('fencelock.hold', { [ATTR.lock]: lock, [ATTR.token]: token.toString(), [ATTR.session]: sessionHandle }, acquireContext);
    return new HoldTrace(span, withGrant(acquireContext, span, lock, token), lock, token);
  }

  renewed(): void {
    if (!this.ended) this.span.addEvent('renewed');
  }

  released(): void {
    this.end('released', false);
  }

  /** Revoked, fenced out (a write refused STALE_TOKEN / LOCK_NOT_HELD), expired or the session lost. */
  lost(err: FenceLockError): void {
    if (!this.ended) this.span.addEvent('lost', { [ATTR.result]: resultOf(err) });
    this.end(resultOf(err), true);
  }

  /** Runs a call of this grant (the release) with its trace context in the call's metadata. */
  run<T>(fn: () => Promise<T>): Promise<T> {
    return context.with(this.ctx, fn);
  }

  /** A fenced write as a child span: keys count and result (written, or the refusal's reason). */
  async write<T>(keys: number, fn: () => Promise<T>): Promise<T> {
    const span = startSpan('fencelock.write', { [ATTR.lock]: this.lock, [ATTR.token]: this.token.toString(), [ATTR.keys]: keys }, this.downstream());
    try {
      const res = await context.with(trace.setSpan(this.downstream(), span), fn);
      endWith(span, 'written', false);
      return res;
    } catch (err) {
      endWith(span, resultOf(err), true);
      throw err;
    }
  }

  /** The context a downstream request continues: the caller's active span if any, else the hold span; the grant in baggage. */
  downstream(): Context {
    const active = context.active();
    return trace.getSpan(active) === undefined ? this.ctx : withGrant(active, undefined, this.lock, this.token);
  }

  private end(result: string, failed: boolean): void {
    if (this.ended) return;
    this.ended = true;
    endWith(this.span, result, failed);
  }
}

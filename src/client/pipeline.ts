import * as grpc from '@grpc/grpc-js';
import type { CallRequest } from '../protocol/generated/fencelock/v1/CallRequest';
import type { CallResponse__Output } from '../protocol/generated/fencelock/v1/CallResponse';
import { PIPELINE_BATCH_HEADER } from '../protocol/limits';
import { traceHeaders, tracingActive } from '../protocol/traceContext';
import { uintToWire } from '../protocol/wireInt';
import { CallCoalescer } from './callCoalescer';
import type { ClientPorts, ClientTimer } from './ports';
import type { MethodDesc, PipelineRoute } from './proto';
import type { BidiStreamCall } from './transport';

type CallStream = BidiStreamCall<CallRequest, CallResponse__Output>;

interface Pending {
  /** Resolves the caller's promise with the result the response carries. */
  resolve: (res: CallResponse__Output) => void;
  reject: (err: grpc.ServiceError) => void;
  timer: ClientTimer;
}

/** How long the router makes unary calls to a node that refused the Pipeline stream over a cap or quota. */
const STREAM_REFUSED_BACKOFF_MS = 10_000;

/** The longest timer Node keeps (2^31 - 1 ms, about 24.8 days); it also fits timeout_ms (uint32). */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/**
 * Statuses that end a stream because of who the caller is, not because of the connection: with auth on, a
 * stream without an identity (UNAUTHENTICATED) or one its identity may not use (PERMISSION_DENIED). The calls
 * in flight fail with that status, as a unary call would: retrying with the same identity cannot succeed.
 */
const CALLER_REFUSED = new Set<number>([grpc.status.UNAUTHENTICATED, grpc.status.PERMISSION_DENIED]);

/** The error a unary call would have given, so retries and error mapping treat both paths alike. */
export function pipelineError(code: grpc.status, details: string, metadata: Record<string, string> = {}): grpc.ServiceError {
  const md = new grpc.Metadata();
  for (const [k, v] of Object.entries(metadata)) md.set(k, v);
  return Object.assign(new Error(`${code} ${grpc.status[code]}: ${details}`), { code, details, metadata: md });
}

/**
 * One Pipeline.Calls stream to one node, opened on first use and again after it breaks. A call is one
 * message each way instead of an HTTP/2 stream of its own. When the stream breaks, every call in flight
 * fails UNAVAILABLE: the router retries it with the same request id, so none applies twice.
 */
/**
 * How long the stream stays open with no call in flight. An open gRPC call keeps the process alive, so an idle
 * stream is ended (and opened again by the next call): a process that forgets close() exits this long after
 * its last call. Shorter than any gap between calls under load, so a busy stream is never reopened.
 */
export const PIPELINE_IDLE_MS = 1_000;

export class PipelineLink {
  private stream: CallStream | undefined;
  private idleTimer: ClientTimer | undefined;
  private readonly pending = new Map<string, Pending>();
  private nextCallId = 1;
  /** False once the node answered UNIMPLEMENTED (an older server): the router then uses unary calls. */
  private implemented = true;
  /** Until then (monotonic ms), unary calls: the node refused the stream for a cap or a quota on streams. */
  private refusedUntil = 0;
  /** The calls of this turn, while the open stream's node takes batches (its response header said so). */
  private coalescer: CallCoalescer | undefined;

  /** Whether calls go on this stream now (else the router makes unary calls). */
  get supported(): boolean {
    return this.implemented && this.ports.clock.monotonicMs() >= this.refusedUntil;
  }

  constructor(
    private readonly address: string,
    private readonly method: MethodDesc<CallRequest, CallResponse__Output>,
    private readonly ports: ClientPorts,
  ) {}

  call<Req, Res>(route: PipelineRoute<Req, Res>, req: Req, timeoutMs: number): Promise<Res> {
    this.stopIdleTimer();
    const stream = this.stream ?? this.open();
    const callId = uintToWire('call_id', this.nextCallId++);
    // Within what a timer can wait (a longer one fires at once) and what timeout_ms (uint32) can carry.
    const timeout = Math.min(MAX_TIMEOUT_MS, Math.max(1, Math.floor(timeoutMs)));
    return new Promise<Res>((resolve, reject) => {
      // The server gets the same deadline and gives up on its side; this timer covers a silent server.
      const timer = this.ports.timers.setTimeout(() => {
        if (!this.pending.delete(callId)) return;
        reject(pipelineError(grpc.status.DEADLINE_EXCEEDED, `deadline of ${timeout} ms exceeded`));
      }, timeout);
      this.pending.set(callId, { resolve: (res) => resolve(route.result(res)), reject, timer });
      const request = route.request(callId, timeout, req);
      if (tracingActive()) withTraceContext(request);
      if (this.coalescer) this.coalescer.add(this.method.serialize(request));
      else stream.write(request);
    });
  }

  close(): void {
    this.stopIdleTimer();
    const stream = this.stream;
    this.stream = undefined;
    this.coalescer?.drop();
    this.coalescer = undefined;
    this.failAll(pipelineError(grpc.status.CANCELLED, 'the fencelock client is closed'));
    stream?.cancel();
  }

  private open(): CallStream {
    const stream = this.ports.transport.bidiStream(this.address, this.method);
    this.stream = stream;
    this.coalescer = undefined; // until this stream's node says it takes batches
    stream.on('metadata', (headers) => {
      const maxCalls = Number(headers.get(PIPELINE_BATCH_HEADER)[0]);
      if (this.stream !== stream || !Number.isSafeInteger(maxCalls) || maxCalls < 2) return;
      const defer = this.ports.timers.defer?.bind(this.ports.timers) ?? ((fn: () => void) => this.ports.timers.setTimeout(fn, 0));
      this.coalescer = new CallCoalescer((calls) => this.stream === stream && stream.write({ calls }), defer, maxCalls);
    });
    stream.on('data', (res: CallResponse__Output) => {
      if (res.answers.length === 0) this.answer(res);
      else for (const one of res.answers) this.answer(one);
    });
    const broken = (why: string, as?: grpc.ServiceError): void => {
      if (this.stream !== stream) return;
      this.stream = undefined;
      this.coalescer?.drop();
      this.coalescer = undefined;
      this.failAll(as ?? pipelineError(grpc.status.UNAVAILABLE, `pipeline stream ${why}`));
    };
    stream.on('error', (err: Error) => {
      const e = err as Partial<grpc.ServiceError>;
      if (e.code === grpc.status.UNIMPLEMENTED) this.implemented = false;
      // Over a stream cap or quota (TOO_MANY_STREAMS, QUOTA_EXCEEDED): unary calls for a while, which count
      // against neither; the calls in flight fail UNAVAILABLE below and are retried that way.
      if (e.code === grpc.status.RESOURCE_EXHAUSTED) this.refusedUntil = this.ports.clock.monotonicMs() + STREAM_REFUSED_BACKOFF_MS;
      if (e.code !== undefined && CALLER_REFUSED.has(e.code)) {
        broken('refused', Object.assign(new Error(err.message), { code: e.code, details: e.details ?? err.message, metadata: e.metadata ?? new grpc.Metadata() }));
        return;
      }
      broken(`failed: ${e.details ?? err.message}`);
    });
    stream.on('end', () => broken('ended by the server'));
    return stream;
  }

  private answer(res: CallResponse__Output): void {
    const p = this.pending.get(res.callId);
    if (!p) return; // timed out here already
    this.pending.delete(res.callId);
    this.ports.timers.clearTimeout(p.timer);
    if (res.code === grpc.status.OK) p.resolve(res);
    else p.reject(pipelineError(res.code, res.message, res.metadata));
    if (this.pending.size === 0) this.armIdleTimer();
  }

  private armIdleTimer(): void {
    this.stopIdleTimer();
    // Unref'd, and harmless so: while it runs, the open stream itself keeps the process alive.
    this.idleTimer = this.ports.timers.setTimeout(() => {
      this.idleTimer = undefined;
      const stream = this.stream;
      if (!stream || this.pending.size > 0) return;
      this.stream = undefined; // its end is not a break: nothing is in flight on it
      this.coalescer = undefined; // holds nothing: every call it held is answered
      stream.end();
    }, PIPELINE_IDLE_MS).unref();
  }

  private stopIdleTimer(): void {
    this.ports.timers.clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
  }

  private failAll(err: grpc.ServiceError): void {
    const calls = [...this.pending.values()];
    this.pending.clear();
    for (const p of calls) {
      this.ports.timers.clearTimeout(p.timer);
      p.reject(err);
    }
  }
}

/** The caller's trace context on this one call (the stream's metadata is shared by every call on it). */
function withTraceContext(request: CallRequest): void {
  const { traceparent, tracestate } = traceHeaders();
  if (traceparent !== undefined) request.traceparent = traceparent;
  if (tracestate !== undefined) request.tracestate = tracestate;
}

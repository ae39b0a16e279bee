import * as grpc from '@grpc/grpc-js';
import type { Caller, IdentifiableCall } from '../auth/caller';
import type { Logger } from '../logger';
import type { ApiMetrics, CallDone } from '../metrics/apiMetrics';
import type { TimerHandle, Timers } from '../runtime/ports';
import { realPorts } from '../runtime/realPorts';
import { writeOrPause } from './backpressure';
import { CallCancellation } from './callCancellation';
import type { ConnectionLimits } from './connectionLimits';
import { ApiError, reasonMetadata } from './errors';
import type { CallRequest__Output as CallRequest } from '../../protocol/generated/fencelock/v1/CallRequest';
import type { CallResponse } from '../../protocol/generated/fencelock/v1/CallResponse';
import { MAX_CALLS_PER_BATCH, PIPELINE_BATCH_HEADER } from '../../protocol/limits';
import { toServiceError, underServerSpan, type CallScope } from './context';
import { contextFromHeaders, tracingActive } from '../../protocol/traceContext';
import type { PipelineCall, PipelineCalls } from './rpc';
import { AnswerOutbox } from './pipelineOutbox';
import { answerPipelineCall, UndecodableRequest } from './strictService';
import { MAX_CALLS_IN_FLIGHT_PER_STREAM } from './streamLimits';

export type { PipelineCall, PipelineCalls } from './rpc';

/** A call waiting for its answer: its cancellation scope, its deadline timer, its per-connection count. */
interface InFlightCall {
  scope: CallCancellation;
  timer?: TimerHandle;
  release?: () => void;
  /** Ends the call's measure. */
  done?: CallDone;
}

export interface PipelineOptions {
  /** Calls in flight or answered but unsent on one stream (MAX_CALLS_IN_FLIGHT_PER_STREAM). */
  maxInFlight?: number;
  /** Counts calls per connection too, when given (the node's listener does). */
  limits?: ConnectionLimits;
  /** Who the stream's caller is (once per stream; throws to refuse the stream). None: no identity. */
  identify?: (call: IdentifiableCall) => Caller;
  /** Counts and times each call, as its unary twin is (via "pipeline"). */
  metrics?: ApiMetrics;
  /**
   * Calls `onLost` when the stream's caller loses its identity (token revoked, user deleted); returns the
   * function that stops watching (src/node/auth/revocation.ts). None: nothing is watched.
   */
  watchRights?: (caller: Caller | undefined, onLost: (err: ApiError) => void) => () => void;
  /** The runtime's timers, which time each call's deadline. None: real ones (realPorts). */
  timers?: Pick<Timers, 'setTimeout' | 'clearTimeout' | 'defer'>;
  /**
   * Decodes one call of a batch (CallRequest.calls) as the stream's own messages are decoded (strictly;
   * an UndecodableRequest when refused). None: the node takes no batches and does not advertise them.
   */
  decodeCall?: (bytes: Buffer) => unknown;
}

/**
 * Pipeline.Calls: each CallRequest runs the declaration of its unary twin and answers with one CallResponse.
 * A call's scope says 'cancelled' when its deadline passes or the stream goes away, as a unary call would.
 */
export function pipelineService(
  logger: Logger,
  calls: PipelineCalls,
  opts: PipelineOptions = {},
): grpc.UntypedServiceImplementation {
  const maxInFlight = opts.maxInFlight ?? MAX_CALLS_IN_FLIGHT_PER_STREAM;
  const timers = opts.timers ?? realPorts().timers;
  return {
    Calls: (stream: grpc.ServerDuplexStream<CallRequest, CallResponse>) => {
      let caller: Caller | undefined;
      try {
        caller = opts.identify?.(stream);
      } catch (err) {
        stream.emit('error', toServiceError(logger, 'Pipeline.Calls', err));
        return;
      }
      // Sent at once, before any answer: a client coalesces its calls only after it has seen this.
      if (opts.decodeCall) stream.sendMetadata(batchHeader());
      new PipelineStream(stream, logger, calls, maxInFlight, opts.limits, caller, opts.metrics, timers, opts.decodeCall).serve(opts.watchRights);
    },
  };
}

/** One Pipeline.Calls stream: its calls in flight, answered in completion order. */
class PipelineStream {
  private readonly inFlight = new Map<string, InFlightCall>();
  private readonly connection: string;
  private open = true;
  private clientDone = false;
  private stopWatching: () => void = () => undefined;
  private readonly outbox: AnswerOutbox;
  /** Counts this stream's calls in flight for its connection and identity (the node's listener gives limits). */
  private readonly callCounter: { take(): () => void } | undefined;

  constructor(
    private readonly stream: grpc.ServerDuplexStream<CallRequest, CallResponse>,
    private readonly logger: Logger,
    private readonly calls: PipelineCalls,
    private readonly maxInFlight: number,
    limits: ConnectionLimits | undefined,
    private readonly caller: Caller | undefined,
    private readonly metrics: ApiMetrics | undefined,
    private readonly timers: Pick<Timers, 'setTimeout' | 'clearTimeout' | 'defer'>,
    private readonly decodeCall: PipelineOptions['decodeCall'],
  ) {
    this.connection = stream.getPeer();
    this.callCounter = limits?.counter(this.connection, 'Pipeline calls in flight', caller?.identity);
    this.outbox = new AnswerOutbox((message) => this.send(message), (fn) => timers.defer(fn), MAX_CALLS_PER_BATCH);
  }

  serve(watchRights: PipelineOptions['watchRights']): void {
    // A revoke ends the stream at its apply: the calls in flight end with it, unanswered but for the status.
    if (watchRights) this.stopWatching = watchRights(this.caller, (err) => this.endWith(err));
    const goneAway = (): void => this.goneAway();
    this.stream.on('data', (req: CallRequest) => (req.calls.length > 0 ? this.onBatch(req) : this.onRequest(req)));
    this.stream.on('end', () => {
      this.clientDone = true;
      this.endIfDone();
    });
    this.stream.on('cancelled', goneAway);
    this.stream.on('error', goneAway);
    this.stream.on('close', goneAway);
  }

  /**
   * The calls of a batch, each decoded, checked and started as if it had come alone, all in this turn: their
   * proposals join one Raft append (the Ready loop takes what a turn proposed as one batch, raftDriver.ts).
   */
  private onBatch(batch: CallRequest): void {
    this.outbox.coalescing = true;
    if (!this.decodeCall || batch.call !== undefined || batch.callId !== '0') {
      const why = !this.decodeCall ? 'this node takes no batches (calls); send one call per message' : 'a batch (calls) sets no call_id nor call of its own';
      this.answer({ callId: batch.callId, code: grpc.status.INVALID_ARGUMENT, message: why, metadata: {} });
      return;
    }
    for (const [i, bytes] of batch.calls.entries()) {
      const req = this.decodeCall(bytes);
      if (req instanceof UndecodableRequest) this.onUndecodable(req, i);
      else if ((req as CallRequest).calls.length > 0) this.answer(batchRefusal((req as CallRequest).callId, 'calls: a call of a batch is not a batch'));
      else if (i >= MAX_CALLS_PER_BATCH) this.answer(batchRefusal((req as CallRequest).callId, `calls: more than ${MAX_CALLS_PER_BATCH} calls in one message`));
      else this.onRequest(req as CallRequest);
      if (!this.open) return;
    }
  }

  /** As a message that cannot be decoded: answered for its call_id, or the stream ends when it has none. */
  private onUndecodable(bad: UndecodableRequest, index: number): void {
    const answer = answerPipelineCall(bad);
    if (answer) this.answer(answer);
    else this.endWith(new ApiError(grpc.status.INVALID_ARGUMENT, `calls[${index}]: ${bad.error.message}`));
  }

  private onRequest(req: CallRequest): void {
    const callId = req.callId;
    const kind = req.call;
    if (this.inFlight.has(callId)) {
      // Answering would be ambiguous: the client could not tell which of the two the answer is for.
      this.answer({ callId, code: grpc.status.INVALID_ARGUMENT, message: `call_id ${callId} is already in flight on this stream`, metadata: {} });
      return;
    }
    if (!kind || !(kind in this.calls)) {
      this.refuse(callId, new ApiError(grpc.status.INVALID_ARGUMENT, `call: set one of ${Object.keys(this.calls).join(', ')}`), 'Pipeline.Calls');
      return;
    }
    const rpc = this.calls[kind].name;
    let release: (() => void) | undefined;
    try {
      this.admit();
      release = this.callCounter?.take();
    } catch (err) {
      this.refuse(callId, err, rpc);
      return;
    }
    this.start(callId, kind, req, release);
  }

  /**
   * Refuses a call while the stream holds maxInFlight calls in flight or answered but not yet sent: a
   * client that does not read its answers is not given more of them to hold.
   */
  private admit(): void {
    const held = this.inFlight.size + this.outbox.size + this.stream.writableLength;
    if (held < this.maxInFlight) return;
    throw new ApiError(
      grpc.status.RESOURCE_EXHAUSTED,
      `more than ${this.maxInFlight} calls in flight on one stream (${this.inFlight.size} waiting for their outcome, ${this.stream.writableLength} answered but not yet read by the client); read the answers and wait for some before sending more`,
      reasonMetadata('TOO_MANY_CALLS'),
    );
  }

  private start(callId: string, kind: PipelineCall, req: CallRequest, release: (() => void) | undefined): void {
    const rpc = this.calls[kind].name;
    const scope = new CallCancellation(this.caller);
    const entry: InFlightCall = { scope, release, done: this.metrics?.begin(rpc, 'pipeline') };
    this.inFlight.set(callId, entry);
    // A timer beyond 2^31 - 1 ms would fire at once: such a deadline is as good as none.
    const timeoutMs = Math.min(req.timeoutMs ?? 0, 2 ** 31 - 1);
    if (timeoutMs > 0) {
      entry.timer = this.timers.setTimeout(() => {
        scope.cancel();
        this.fail(callId, new ApiError(grpc.status.DEADLINE_EXCEEDED, `${rpc}: deadline of ${timeoutMs} ms exceeded`), rpc);
      }, timeoutMs);
    }
    // Called synchronously, so calls that arrive in order are proposed in order.
    let pending: Promise<CallResponse[PipelineCall]>;
    try {
      pending = tracingActive() ? runTraced(this.calls, kind, req, scope) : run(this.calls, kind, req, scope);
    } catch (err) {
      this.fail(callId, err, rpc);
      return;
    }
    pending.then(
      (result) => this.finish(callId, answerOf(callId, kind, result)),
      (err: unknown) => this.fail(callId, err, rpc),
    );
  }

  /** `failure`: the error the call is answered with (none: it succeeded). */
  private finish(callId: string, response: CallResponse, failure?: { err: unknown }): void {
    const entry = this.inFlight.get(callId);
    if (!entry) return; // already answered (deadline) or the stream is gone
    this.inFlight.delete(callId);
    entry.done?.(failure ? failure.err : undefined);
    this.timers.clearTimeout(entry.timer);
    entry.release?.();
    this.answer(response);
    this.endIfDone();
  }

  /** Ends the stream once the client sent its last call and every call is answered. */
  private endIfDone(): void {
    if (!this.clientDone || this.inFlight.size > 0 || !this.open) return;
    this.outbox.flush();
    this.stream.end();
  }

  private fail(callId: string, err: unknown, rpc: string): void {
    this.finish(callId, this.errorResponse(callId, err, rpc), { err });
  }

  /** Answers a call that never started. */
  private refuse(callId: string, err: unknown, rpc: string): void {
    this.metrics?.answered(rpc, 'pipeline', err);
    this.answer(this.errorResponse(callId, err, rpc));
  }

  private errorResponse(callId: string, err: unknown, rpc: string): CallResponse {
    const se = toServiceError(this.logger, rpc, err);
    return { callId, code: se.code ?? grpc.status.UNKNOWN, message: se.details ?? '', metadata: metadataRecord(se.metadata) };
  }

  private answer(response: CallResponse): void {
    if (this.open) this.outbox.push(response);
  }

  private send(message: CallResponse): void {
    if (this.open) writeOrPause(this.stream, message);
  }

  private endWith(err: ApiError): void {
    if (!this.open) return;
    this.goneAway();
    this.stream.emit('error', toServiceError(this.logger, 'Pipeline.Calls', err));
  }

  private goneAway(): void {
    this.stopWatching();
    this.open = false;
    this.outbox.drop();
    for (const { scope, timer, release } of this.inFlight.values()) {
      this.timers.clearTimeout(timer);
      release?.();
      scope.cancel();
    }
    this.inFlight.clear();
  }
}

/** Runs the call of kind `kind` on its part of the request; resolves to its result (the response's part for it). */
function run<K extends PipelineCall>(calls: PipelineCalls, kind: K, req: CallRequest, scope: CallScope): Promise<CallResponse[K]> {
  const call = calls[kind] as unknown as PipelineCalls[PipelineCall] & { handle(r: CallRequest[K], s: CallScope): Promise<CallResponse[K]> };
  const request = req[kind];
  // The oneof names the field it set: a message that says `kind` carries its request.
  if (request === undefined || request === null) throw new ApiError(grpc.status.INVALID_ARGUMENT, `${kind}: is required`);
  return call.handle(request, scope);
}

/**
 * The answer to a call that succeeded, its result under its kind. Built as one object: a part with a computed
 * key spread into the answer cost an object and a copy on every call.
 */
function answerOf<K extends PipelineCall>(callId: string, kind: K, result: CallResponse[K]): CallResponse {
  const answer: CallResponse = { callId, code: grpc.status.OK, message: '', metadata: {} };
  answer[kind] = result;
  return answer;
}

/** As run(), under the call's server span: the child of the call's own trace context (CallRequest.traceparent). */
function runTraced<K extends PipelineCall>(calls: PipelineCalls, kind: K, req: CallRequest, scope: CallScope): Promise<CallResponse[K]> {
  const parent = contextFromHeaders({ traceparent: req.traceparent, tracestate: req.tracestate });
  return underServerSpan(calls[kind].name, parent, scope, (spanned) => run(calls, kind, req, spanned));
}

function metadataRecord(md: grpc.Metadata | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!md) return out;
  for (const [k, v] of Object.entries(md.getMap())) out[k] = typeof v === 'string' ? v : v.toString();
  return out;
}

function batchHeader(): grpc.Metadata {
  const md = new grpc.Metadata();
  md.set(PIPELINE_BATCH_HEADER, String(MAX_CALLS_PER_BATCH));
  return md;
}

function batchRefusal(callId: string, message: string): CallResponse {
  return { callId, code: grpc.status.INVALID_ARGUMENT, message, metadata: {} };
}

import type * as grpc from '@grpc/grpc-js';
import { createSleeper, type Sleeper } from './clock';
import { FenceLockError, toFenceLockError } from './errors';
import type { Logger } from './logger';
import { PipelineLink } from './pipeline';
import type { ClientPorts } from './ports';
import type { RequestHeader } from '../protocol/generated/fencelock/v1/RequestHeader';
import { bigIntToWire } from '../protocol/wireInt';
import { methods, type MethodDesc } from './proto';
import type { BidiStreamCall, ServerStreamCall, UnaryCall } from './transport';
import { certificateProblem, untrustedCertificateError } from './untrusted';

/**
 * Channel options: notice a dead peer within ~3 s even when idle, and reconnect quickly after a restart. Each
 * client has connections of its own (grpc-js would otherwise share one connection between every client of
 * the process with the same endpoint and credentials): nodes limit streams per connection (src/node/api/
 * streamLimits.ts), and one client's streams then never count against another's.
 */
export const CHANNEL_OPTIONS: grpc.ChannelOptions = {
  'grpc.use_local_subchannel_pool': 1,
  'grpc.keepalive_time_ms': 2_000,
  'grpc.keepalive_timeout_ms': 1_000,
  'grpc.keepalive_permit_without_calls': 1,
  'grpc.initial_reconnect_backoff_ms': 100,
  'grpc.max_reconnect_backoff_ms': 1_000,
};

/** Backoff between attempts that got no leader hint: 20 ms doubling up to 500 ms. */
export const RETRY_BACKOFF_INITIAL_MS = 20;
export const RETRY_BACKOFF_MAX_MS = 500;

export function nextBackoff(ms: number): number {
  return Math.min(RETRY_BACKOFF_MAX_MS, Math.max(RETRY_BACKOFF_INITIAL_MS, ms * 2));
}

const HOST_PORT = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):(\d{1,5})$/;

/** Checks a `host:port` endpoint (IPv6 in brackets); returns an error message or undefined. */
export function endpointProblem(endpoint: string): string | undefined {
  const m = HOST_PORT.exec(endpoint);
  if (!m) return `endpoint ${JSON.stringify(endpoint)} is not host:port`;
  const port = Number(m[2]);
  if (port < 1 || port > 65535) return `endpoint ${JSON.stringify(endpoint)} has a port outside 1..65535`;
  return undefined;
}

export interface CallOptions {
  /** What the call does, for error messages ("acquire lock \"a\""). */
  what: string;
  /** Deadline of one attempt; defaults to the router's requestTimeoutMs. */
  attemptTimeoutMs?: number;
  /** Budget of the whole operation, retries included; defaults to the router's totalTimeoutMs. */
  totalTimeoutMs?: number;
  /**
   * When true, a DEADLINE_EXCEEDED that the server itself sent before this attempt's own deadline is final
   * (a blocking acquire whose wait timed out). Otherwise every DEADLINE_EXCEEDED is retried.
   */
  serverDeadlineIsFinal?: boolean;
}

/**
 * Errors that ended a call whose earlier attempts (if any) were all refused by nodes that do not lead, so
 * nothing of the call can have been applied before (see neverProposed).
 */
const unproposedRefusals = new WeakSet<FenceLockError>();

/**
 * An attempt whose request never left this process: grpc-js found no connection (refused, unresolved,
 * unreachable) and failed the call without sending it, or its deadline passed while grpc-js was still
 * "Waiting for LB pick" (no connection to put the call on).
 */
function neverSent(err: FenceLockError): boolean {
  const details = err.details ?? '';
  if (err.code === 'DEADLINE_EXCEEDED') return /Waiting for LB pick/.test(details);
  return err.code === 'UNAVAILABLE' && /No connection established|ECONNREFUSED|ENOTFOUND|EHOSTUNREACH|ENETUNREACH|DNS resolution failed/.test(details);
}

/** True when `err` ended a call whose request had never reached a leader before. */
export function neverProposed(err: unknown): boolean {
  return err instanceof FenceLockError && unproposedRefusals.has(err);
}

/**
 * Issues increasing request ids and tracks which are still in flight, so every mutating request can say
 * which results the server may forget (acked_below = lowest id still in flight).
 */
export class RequestIds {
  private next = 1n;
  private readonly inFlight = new Set<bigint>();

  constructor(readonly clientId: string) {}

  /** A header for a new request; call `done()` once the operation (with all its retries) has finished. */
  begin(): { header: RequestHeader; id: bigint; done: () => void } {
    const id = this.next++;
    this.inFlight.add(id);
    let lowest = id;
    for (const other of this.inFlight) if (other < lowest) lowest = other;
    const header = { clientId: this.clientId, requestId: bigIntToWire(id), ackedBelow: bigIntToWire(lowest) };
    return { header, id, done: () => void this.inFlight.delete(id) };
  }

  /** The lowest id still in flight, or the next id when none is. */
  ackedBelow(): bigint {
    let lowest = this.next;
    for (const other of this.inFlight) if (other < lowest) lowest = other;
    return lowest;
  }
}

/**
 * Knows the endpoints, follows leader hints and rotates past dead nodes; calls go through the transport port
 * (one gRPC channel per endpoint by default). Every unary call of the library goes through `call`, which retries the SAME request (same request
 * header) until it succeeds, fails with a non-retryable status, or runs out of time.
 */
export class Router {
  private readonly endpoints: string[];
  private readonly pipelines = new Map<string, PipelineLink>();
  private readonly active = new Set<UnaryCall<unknown>>();
  private readonly sleeper: Sleeper;
  private readonly ignoredHints = new Set<string>();
  private currentIndex = 0;
  private closed = false;

  constructor(
    endpoints: string[],
    readonly requestTimeoutMs: number,
    readonly totalTimeoutMs: number,
    private readonly logger: Logger,
    private readonly pipelining: boolean,
    /** The clock, timers and transport (unary calls, pipeline, keepalive, watch) every call goes through. */
    readonly ports: ClientPorts,
    /** Which CAs the credentials trust, in words, for the error of a certificate that fails verification. */
    private readonly trust: string = 'the configured CA',
  ) {
    this.sleeper = createSleeper(ports.timers);
    if (endpoints.length === 0) throw new FenceLockError('INVALID_ARGUMENT', 'at least one endpoint is required');
    for (const e of endpoints) {
      const problem = endpointProblem(e);
      if (problem) throw new FenceLockError('INVALID_ARGUMENT', problem);
    }
    this.endpoints = [...new Set(endpoints)];
  }

  /** The configured endpoints (hints never add to them). */
  knownEndpoints(): string[] {
    return [...this.endpoints];
  }

  /** The endpoint calls go to now (the leader, when known). */
  current(): string {
    const endpoint = this.endpoints[this.currentIndex];
    if (endpoint === undefined) throw new Error(`fencelock: endpoint index ${this.currentIndex} out of range (${this.endpoints.length} endpoints)`);
    return endpoint;
  }

  isClosed(): boolean {
    return this.closed;
  }

  /**
   * Follows a `fencelock-leader` hint: makes `address` the current endpoint when it is one of the configured
   * endpoints, and returns whether it did. A hint to any other address is ignored (warned about once per
   * address): a hint is only a server's say-so, and following it anywhere would let a forged or stale answer
   * send our calls, session ids included, to a server we were never told to trust.
   */
  noteLeader(address: string): boolean {
    const i = this.endpoints.indexOf(address);
    if (i < 0) {
      this.ignoredHint(address);
      return false;
    }
    if (i !== this.currentIndex) this.logger.debug({ leader: address }, 'fencelock: following leader hint');
    this.currentIndex = i;
    return true;
  }

  private ignoredHint(address: string): void {
    const shown = address.length > 300 ? `${address.slice(0, 300)}...` : address;
    if (this.ignoredHints.has(address) || this.ignoredHints.size >= 64) {
      this.logger.debug({ hint: shown }, 'fencelock: ignoring leader hint to an address that is not a configured endpoint');
      return;
    }
    this.ignoredHints.add(address);
    this.logger.warn(
      { hint: shown, endpoints: [...this.endpoints] },
      'fencelock: ignoring leader hint to an address that is not a configured endpoint (list every node in endpoints, spelt as the cluster names them)',
    );
  }

  /** Moves on to the next endpoint, unless someone else already moved away from `failed`. */
  rotateFrom(failed: string): void {
    if (this.current() !== failed) return;
    this.currentIndex = (this.currentIndex + 1) % this.endpoints.length;
  }

  /** Opens a server-streaming call to an endpoint. */
  serverStream<Req, Res>(address: string, m: MethodDesc<Req, Res>, req: Req): ServerStreamCall<Res> {
    this.assertOpen();
    return this.ports.transport.serverStream(address, m, req);
  }

  /** Opens a bidirectional stream to an endpoint. */
  bidiStream<Req, Res>(address: string, m: MethodDesc<Req, Res>): BidiStreamCall<Req, Res> {
    this.assertOpen();
    return this.ports.transport.bidiStream(address, m);
  }

  private assertOpen(): void {
    if (this.closed) throw new FenceLockError('CANCELLED', 'the fencelock client is closed');
  }

  sleep(ms: number): Promise<void> {
    return this.sleeper.sleep(ms);
  }

  /** The Pipeline stream to an endpoint, created on first use; undefined when the node lacks it. */
  private pipelineFor(address: string): PipelineLink | undefined {
    let link = this.pipelines.get(address);
    if (!link) {
      this.assertOpen();
      link = new PipelineLink(address, methods().Pipeline.Calls, this.ports);
      this.pipelines.set(address, link);
    }
    return link.supported ? link : undefined;
  }

  /** One attempt against one endpoint, with a deadline. Rejects with the raw gRPC error (or its twin from the pipeline). */
  once<Req, Res>(address: string, m: MethodDesc<Req, Res>, req: Req, timeoutMs: number): Promise<Res> {
    // A call on the Pipeline stream carries its own trace context (CallRequest.traceparent, pipeline.ts).
    const route = this.pipelining ? m.pipeline : undefined;
    const link = route ? this.pipelineFor(address) : undefined;
    if (route && link) return link.call(route, req, timeoutMs);
    this.assertOpen();
    const call = this.ports.transport.unary(address, m, req, timeoutMs);
    this.active.add(call);
    const forget = (): void => void this.active.delete(call);
    call.response.then(forget, forget);
    return call.response;
  }

  /**
   * Calls a method with leader discovery and retries. The request object is sent unchanged on every attempt,
   * so a mutating request keeps its request id: the server returns the original result of a retried request.
   */
  async call<Req, Res>(m: MethodDesc<Req, Res>, req: Req, opts: CallOptions): Promise<Res> {
    const attemptTimeoutMs = opts.attemptTimeoutMs ?? this.requestTimeoutMs;
    const totalTimeoutMs = opts.totalTimeoutMs ?? this.totalTimeoutMs;
    const clock = this.ports.clock;
    const start = clock.monotonicMs();
    const deadline = start + totalTimeoutMs;
    let backoff = 0;
    let hintsInARow = 0;
    let attempts = 0;
    // Whether an attempt may have reached a leader: all but a node's NOT_LEADER refusal may have.
    let maybeProposed = false;
    let last: FenceLockError | undefined;
    const byEndpoint = new Map<string, FenceLockError>();
    for (;;) {
      if (this.closed) throw new FenceLockError('CANCELLED', `${opts.what}: the fencelock client is closed`);
      const remaining = deadline - clock.monotonicMs();
      if (remaining <= 0) {
        const final = this.gaveUp(opts.what, attempts, totalTimeoutMs, last, byEndpoint, maybeProposed);
        if (!maybeProposed) unproposedRefusals.add(final);
        throw final;
      }
      const address = this.current();
      const timeout = Math.min(attemptTimeoutMs, remaining);
      const attemptStart = clock.monotonicMs();
      attempts++;
      try {
        return await this.once(address, m, req, timeout);
      } catch (raw) {
        if (this.closed) throw new FenceLockError('CANCELLED', `${opts.what}: the fencelock client is closed`);
        const err = toFenceLockError(raw, `${opts.what} (via ${address})`);
        const problem = certificateProblem(err);
        if (problem !== undefined) {
          const final = untrustedCertificateError(`${opts.what}`, address, err, problem, this.trust, maybeProposed);
          if (!maybeProposed) unproposedRefusals.add(final);
          throw final;
        }
        const ownDeadlinePassed = clock.monotonicMs() - attemptStart >= timeout - 2;
        const retryable =
          err.code === 'UNAVAILABLE' ||
          (err.code === 'DEADLINE_EXCEEDED' && (ownDeadlinePassed || !opts.serverDeadlineIsFinal));
        if (!retryable) {
          if (!maybeProposed) unproposedRefusals.add(err);
          throw err;
        }
        if (err.reason !== 'NOT_LEADER' && !neverSent(err)) maybeProposed = true;
        // An attempt cut short by the total budget (not by its own timeout) says nothing about the cluster:
        // the error given up with stays the last one a node or connection actually gave.
        const cutByBudget = err.code === 'DEADLINE_EXCEEDED' && timeout < attemptTimeoutMs && last !== undefined;
        if (!cutByBudget) last = err;
        if (!cutByBudget || !byEndpoint.has(address)) byEndpoint.set(address, err);
        // Follow a leader hint at once, but not forever: hints that go round in circles get the backoff.
        if (err.code === 'UNAVAILABLE' && err.leader && err.leader !== address && hintsInARow <= this.endpoints.length && this.noteLeader(err.leader)) {
          hintsInARow++;
          continue;
        }
        hintsInARow = 0;
        this.logger.debug({ endpoint: address, code: err.code, what: opts.what }, 'fencelock: attempt failed, rotating');
        this.rotateFrom(address);
        backoff = nextBackoff(backoff);
        await this.sleep(Math.min(backoff, deadline - clock.monotonicMs()));
      }
    }
  }

  /**
   * The error of a call that ran out of time, with the last error of each endpoint tried. Indeterminate unless
   * no attempt can have reached a leader (every one refused as NOT_LEADER or never sent): then it did not apply.
   */
  gaveUp(what: string, attempts: number, totalMs: number, last: FenceLockError | undefined, byEndpoint: Map<string, FenceLockError>, maybeProposed = true): FenceLockError {
    const code = last?.code ?? 'DEADLINE_EXCEEDED';
    const lastWords = last ? `; last error: ${last.message}` : '';
    return new FenceLockError(code, `${what}: gave up after ${attempts} attempt(s) in ${totalMs} ms${lastWords}`, {
      reason: last?.reason,
      leader: last?.leader,
      details: last?.details,
      indeterminate: maybeProposed,
      endpointErrors: this.endpoints.flatMap((endpoint) => {
        const error = byEndpoint.get(endpoint);
        return error === undefined ? [] : [{ endpoint, error }];
      }),
      cause: last,
    });
  }

  /** Cancels calls in flight, wakes sleeping retries and closes every channel. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.sleeper.wakeAll();
    for (const call of [...this.active]) call.cancel();
    this.active.clear();
    for (const link of this.pipelines.values()) link.close();
    this.pipelines.clear();
    this.ports.transport.close();
  }
}

import * as grpc from '@grpc/grpc-js';
import { encodeCommand } from '../../codec/commandCodec';
import type { Command, CommandResult, RequestCommand, Result, ResultOf } from '../../state';
import type { NodeConfig } from '../config';
import type { LockApp } from '../lockApp';
import type { Logger } from '../logger';
import type { MemberDirectory } from '../members';
import { NodeStoppedError, NotLeaderError, OutcomeUnknownError, type Applied, type RaftDriver } from '../raftDriver';
import type { LeaderDuties } from '../runtime/leaderDuties';
import type { NodePorts } from '../runtime/ports';
import { Access } from '../auth/access';
import type { Caller } from '../auth/caller';
import { RightsWatch } from '../auth/revocation';
import type { NodeMetrics } from '../metrics/nodeMetrics';
import type { ProposalFailure } from '../metrics/raftMetrics';
import { context, SpanKind, trace, type Context, type Span } from '@opentelemetry/api';
import { ATTR, contextFromHeaders, endWith, TRACER_NAME, tracingActive } from '../../protocol/traceContext';
import { ApiError, notLeader, reasonMetadata } from './errors';
import { META_REASON } from '../../protocol/metadata';

/** What every API handler needs: the driver, the state, the leader's duties, time and randomness. */
export class NodeContext {
  /** Who calls, and what they may do. */
  readonly access: Access;
  /** The streams and calls in flight that end when their caller's token or user goes. */
  readonly rights: RightsWatch;

  constructor(
    readonly config: NodeConfig,
    readonly driver: RaftDriver<CommandResult>,
    readonly app: LockApp,
    readonly duties: LeaderDuties,
    readonly ports: NodePorts,
    readonly logger: Logger,
    readonly members: MemberDirectory,
    /** Absent: nothing is measured (a context built by a test). */
    readonly metrics?: NodeMetrics,
  ) {
    this.access = new Access(
      config,
      () => app.machine,
      () => this.notServingTokensYet(),
    );
    this.rights = new RightsWatch(app, this.access);
  }

  /**
   * Why this node cannot judge a token it does not know (undefined: it can): a follower may not have applied
   * the token's issue yet, nor a leader that has not applied an entry of its own term.
   */
  private notServingTokensYet(): ApiError | undefined {
    if (!this.driver.isLeader()) return notLeader(this.leaderAddress());
    if (this.driver.hasAppliedOwnTerm()) return undefined;
    return new ApiError(grpc.status.UNAVAILABLE, 'this leader was just elected and is catching up; retry shortly', reasonMetadata('NOT_LEADER'));
  }

  get machine(): LockApp['machine'] {
    return this.app.machine;
  }

  leaderAddress(): string | undefined {
    const leader = this.driver.leaderId();
    return leader ? this.members.clientAddressOf(leader) : undefined;
  }

  /** Mutations and linearizable reads are served by the leader; others answer with where it is. */
  requireLeader(): void {
    if (!this.driver.isLeader()) throw notLeader(this.leaderAddress());
  }

  /** Proposes a command and waits until it is applied here; its result is one its registry entry may yield. */
  async propose<C extends Command>(command: C): Promise<{ index: number; outcome: CommandResult; result: ResultOf<C['type']> }> {
    this.requireLeader();
    this.metrics?.raft.proposed();
    try {
      const applied: Applied<CommandResult> = await this.driver.propose(encodeCommand(command));
      return { index: applied.index, outcome: applied.result, result: applied.result.result as ResultOf<C['type']> };
    } catch (err) {
      this.metrics?.raft.proposalFailed(proposalFailure(err));
      if (err instanceof NotLeaderError) throw notLeader(this.leaderAddress());
      if (err instanceof NodeStoppedError) {
        throw new ApiError(grpc.status.UNAVAILABLE, `${err.message}; retry at another node with the same request id to learn the outcome`);
      }
      if (err instanceof OutcomeUnknownError) {
        throw new ApiError(grpc.status.UNAVAILABLE, `${err.message}; retry with the same request id to learn the outcome`);
      }
      throw err;
    }
  }

  /**
   * The stored answer to a retry, given by the leader without a new log entry, when that is safe: this
   * node leads and has applied an entry of its term (so its dedup table holds every result committed
   * before), and the table holds the result of this very request (same client id, request id and command
   * type, decided as the state machine decides a duplicate). Otherwise proposes, as for a new request (the
   * state machine's dedup then answers with the stored result, or refuses a reused request id). `usable`
   * may turn a stored result down (then it proposes). `index`: the new entry's, when one was proposed.
   */
  async proposeOrRecall(
    command: RequestCommand,
    usable: (stored: Result) => boolean = () => true,
  ): Promise<{ index?: number; result: Result }> {
    this.requireLeader();
    const stored = this.machine.storedResult(command);
    if (stored !== undefined && usable(stored) && this.driver.hasAppliedOwnTerm()) return { result: stored };
    const { index, result } = await this.propose(command);
    return { index, result };
  }

  /** ReadIndex: returns once this node's state includes every write committed before the call. */
  async linearizableRead(): Promise<void> {
    this.requireLeader();
    try {
      await this.driver.linearizableRead();
    } catch (err) {
      if (err instanceof NotLeaderError) throw notLeader(this.leaderAddress());
      if (err instanceof NodeStoppedError) throw new ApiError(grpc.status.UNAVAILABLE, `${err.message}; retry at another node`);
      throw err;
    }
  }

  /** Wall-clock time, to stamp records (a grant's time) only: no deadline is computed from it. */
  now(): number {
    return this.ports.clock.wallMs();
  }

  private readonly stopHooks: Array<() => void> = [];

  /** Registers cleanup (timers) to run when the node stops. */
  onStop(fn: () => void): void {
    this.stopHooks.push(fn);
  }

  runStopHooks(): void {
    for (const fn of this.stopHooks.splice(0)) fn();
  }
}

function proposalFailure(err: unknown): ProposalFailure {
  if (err instanceof NotLeaderError) return 'not_leader';
  if (err instanceof NodeStoppedError) return 'stopped';
  if (err instanceof OutcomeUnknownError) return 'outcome_unknown';
  return 'error';
}

/**
 * What a handler sees of its call: 'cancelled' once the caller went away or the call's deadline passed,
 * and who the caller is (undefined: a call from inside the node or the simulator, with no identity).
 */
export interface CallScope {
  on(event: 'cancelled', listener: () => void): unknown;
  off(event: 'cancelled', listener: () => void): unknown;
  readonly caller?: Caller;
  /** The call's server span while tracing is on (docs/tracing.md): handlers add the grant's attributes. */
  readonly span?: Span;
}

/** A call's logic, apart from how it arrived (its own unary call, or a message on the Pipeline stream). */
export type Handler<Req, Res> = (req: Req, call: CallScope) => Promise<Res>;

/**
 * Wraps a unary handler: the caller is identified first (UNAUTHENTICATED without an identity when auth is
 * required, unless `optionalIdentity`); ApiErrors become their status; anything else is INTERNAL and
 * logged, never a crash.
 */
export function unary<Req, Res>(
  ctx: Pick<NodeContext, 'logger' | 'access' | 'metrics'> & { rights?: RightsWatch },
  name: string,
  fn: Handler<Req, Res>,
  optionalIdentity = false,
): grpc.handleUnaryCall<Req, Res> {
  return (call, callback) => {
    const done = ctx.metrics?.api.begin(name, 'unary');
    let answered = false;
    let stopWatching = (): unknown => undefined;
    const fail = (err: unknown): void => {
      if (answered) return;
      answered = true;
      stopWatching();
      done?.(err);
      callback(toServiceError(ctx.logger, name, err));
    };
    let scope: CallScope;
    try {
      scope = callScope(call, ctx.access.callerOf(call, optionalIdentity));
    } catch (err) {
      fail(err);
      return;
    }
    // A call in flight (a blocked Acquire, a read waiting for its barrier) ends at the apply of the revoke of
    // its caller's token or user: the handler is told as if the caller went away, and the caller is told why.
    stopWatching =
      ctx.rights?.watch(scope.caller, (err) => {
        call.emit('cancelled');
        fail(err);
      }) ?? stopWatching;
    let answer: Promise<Res>;
    try {
      answer = tracingActive() ? traced(name, call, scope, fn) : fn(call.request, scope);
    } catch (err) {
      // A handler that throws before its first await (validation in a plain function): the same answer.
      fail(err);
      return;
    }
    answer.then((res) => {
      if (answered) return;
      answered = true;
      stopWatching();
      done?.();
      callback(null, res);
    }, fail);
  };
}

/**
 * Runs the handler under a server span whose parent is the caller's trace context (gRPC metadata traceparent
 * and baggage), so that the client's acquire or write span is the parent of what the node did for it.
 */
function traced<Req, Res>(name: string, call: grpc.ServerUnaryCall<Req, Res>, scope: CallScope, fn: Handler<Req, Res>): Promise<Res> {
  return underServerSpan(name, contextFromHeaders(call.metadata.getMap() as Record<string, string>), scope, (s) => fn(call.request, s));
}

/**
 * Runs a call (unary, or one call of the Pipeline stream) under its server span, the child of `parent`, the
 * caller's trace context. The span ends with the call: with its result, or its refusal's reason as an error.
 */
export function underServerSpan<Res>(name: string, parent: Context, scope: CallScope, run: (scope: CallScope) => Promise<Res>): Promise<Res> {
  const span = trace.getTracer(TRACER_NAME).startSpan(`fencelock.server ${name}`, { kind: SpanKind.SERVER }, parent);
  span.setAttribute(ATTR.result, 'OK'); // a handler names a finer result (granted, waiting, written)
  const spanned: CallScope = { on: (e, l) => scope.on(e, l), off: (e, l) => scope.off(e, l), caller: scope.caller, span };
  let answer: Promise<Res>;
  try {
    answer = context.with(trace.setSpan(parent, span), () => run(spanned));
  } catch (err) {
    answer = Promise.reject(err);
  }
  answer.then(
    () => span.end(),
    (err: unknown) => endWith(span, err instanceof ApiError ? (err.metadata[META_REASON] ?? grpc.status[err.code] ?? 'ERROR') : 'INTERNAL', true),
  );
  return answer;
}

/** A call's scope: its cancellation, and its caller. */
export function callScope(call: grpc.ServerUnaryCall<unknown, unknown>, caller: Caller): CallScope {
  return {
    on: (event, listener) => call.on(event, listener),
    off: (event, listener) => call.off(event, listener),
    caller,
  };
}

export function toServiceError(logger: Logger, name: string, err: unknown): Partial<grpc.ServiceError> {
  if (err instanceof ApiError) return err.toServiceError();
  logger.error({ err, rpc: name }, 'internal error in handler');
  return { code: grpc.status.INTERNAL, details: `internal error: ${(err as Error)?.message ?? String(err)}` };
}

import * as grpc from '@grpc/grpc-js';
import { encodeCommand } from '../../codec/commandCodec';
import type { Command, CommandResult, RequestCommand, Result } from '../../state';
import { isResourceExhausted, Reason } from '../../state';
import type { NodeConfig } from '../config';
import type { LockApp } from '../lockApp';
import type { Logger } from '../logger';
import { NodeStoppedError, NotLeaderError, OutcomeUnknownError, type Applied, type RaftDriver } from '../raftDriver';
import type { LeaderDuties } from '../runtime/leaderDuties';
import type { NodePorts } from '../runtime/ports';
import { ApiError, KEY_LOCK_METADATA_KEY, KEY_METADATA_KEY, metadataText, notLeader, REASON_METADATA_KEY, WATERMARK_METADATA_KEY } from './errors';

/** What every API handler needs: the driver, the state, the leader's duties, time and randomness. */
export class NodeContext {
  constructor(
    readonly config: NodeConfig,
    readonly driver: RaftDriver<CommandResult>,
    readonly app: LockApp,
    readonly duties: LeaderDuties,
    readonly ports: NodePorts,
    readonly logger: Logger,
  ) {}

  get machine(): LockApp['machine'] {
    return this.app.machine;
  }

  leaderAddress(): string | undefined {
    const leader = this.driver.leaderId();
    return leader ? this.config.members[leader]?.client : undefined;
  }

  /** Mutations and linearizable reads are served by the leader; others answer with where it is. */
  requireLeader(): void {
    if (!this.driver.isLeader()) throw notLeader(this.leaderAddress());
  }

  /** Proposes a command and waits until it is applied here. */
  async propose(command: Command): Promise<{ index: number; outcome: CommandResult; result: Result }> {
    this.requireLeader();
    try {
      const applied: Applied<CommandResult> = await this.driver.propose(encodeCommand(command));
      return { index: applied.index, outcome: applied.result, result: applied.result.result };
    } catch (err) {
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

/** Turns a refusal or an invalid command into the API's status codes; returns the result otherwise. */
export function expectOk<R extends Result>(result: Result): Exclude<R, { status: 'refused' | 'invalid' }> | Result {
  if (result.status === 'invalid') throw new ApiError(grpc.status.INVALID_ARGUMENT, result.message);
  if (result.status === 'refused') throw refusalError(result.reason, result.watermark, result.key, result.owner);
  return result;
}

const REFUSAL_TEXT: Record<string, string> = {
  [Reason.STALE_TOKEN]: 'stale token: a newer grant of this lock exists (the token is below its latest), or a key was written under a newer token',
  [Reason.LOCK_NOT_HELD]: 'lock not held: the grant under this token has ended (released, closed or expired) and no newer grant exists yet',
  [Reason.WRONG_LOCK]: 'wrong lock: a key belongs to another lock, or the token is above this lock\'s latest and cannot have been issued for it',
  [Reason.UNKNOWN_SESSION]: 'unknown session: it was never opened, or it was closed or expired',
  [Reason.NOT_HOLDER]: 'not the holder: this session does not hold the lock (for a write: the token is another session\'s grant)',
  [Reason.WRONG_TOKEN]: 'this session holds the lock under another token',
  [Reason.TOO_MANY_SESSIONS]: 'too many open sessions',
  [Reason.TOO_MANY_WAITERS]: 'too many waiters on this lock',
  [Reason.TOO_MANY_LOCKS]: 'too many locks',
  [Reason.STORE_FULL]: 'the fenced store is full',
  [Reason.REQUEST_TOO_OLD]: 'request id below what this client acknowledged; use a new request id',
  [Reason.REQUEST_ID_REUSED]: 'this request id was used before for another kind of request',
  [Reason.SESSION_EXISTS]: 'session id collision; retry',
};

/** `key`: the key the refusal is about; `owner`: the lock that key belongs to (WRONG_LOCK for a key). */
export function refusalError(reason: Reason, watermark: number, key?: string, owner?: string): ApiError {
  const metadata: Record<string, string> = { [REASON_METADATA_KEY]: reason, [WATERMARK_METADATA_KEY]: String(watermark) };
  if (key !== undefined) metadata[KEY_METADATA_KEY] = metadataText(key);
  if (owner !== undefined) metadata[KEY_LOCK_METADATA_KEY] = metadataText(owner);
  const text = `${reason}: ${refusalText(reason, key, owner)}; current watermark ${watermark}`;
  if (reason === Reason.UNKNOWN_SESSION) return new ApiError(grpc.status.NOT_FOUND, text, metadata);
  if (isResourceExhausted(reason)) return new ApiError(grpc.status.RESOURCE_EXHAUSTED, text, metadata);
  if (reason === Reason.REQUEST_ID_REUSED) return new ApiError(grpc.status.INVALID_ARGUMENT, text, metadata);
  if (reason === Reason.SESSION_EXISTS) return new ApiError(grpc.status.ABORTED, text, metadata);
  return new ApiError(grpc.status.FAILED_PRECONDITION, text, metadata);
}

function refusalText(reason: Reason, key: string | undefined, owner: string | undefined): string {
  const q = JSON.stringify;
  if (key !== undefined && owner !== undefined) {
    return `wrong lock: key ${q(key)} belongs to lock ${q(owner)} (for good: bound by its first write, also once deleted); write it under lock ${q(owner)} or use another key`;
  }
  return `${REFUSAL_TEXT[reason] ?? 'refused'}${key === undefined ? '' : ` (key ${q(key)})`}`;
}

/** What a handler sees of its call: 'cancelled' once the caller went away or the call's deadline passed. */
export interface CallScope {
  on(event: 'cancelled', listener: () => void): unknown;
  off(event: 'cancelled', listener: () => void): unknown;
}

/** A call's logic, apart from how it arrived (its own unary call, or a message on the Pipeline stream). */
export type Handler<Req, Res> = (req: Req, call: CallScope) => Promise<Res>;

/** Wraps a unary handler: ApiErrors become their status; anything else is INTERNAL and logged, never a crash. */
export function unary<Req, Res>(
  logger: Logger,
  name: string,
  fn: Handler<Req, Res>,
): grpc.handleUnaryCall<Req, Res> {
  return (call, callback) => {
    fn(call.request, call).then(
      (res) => callback(null, res),
      (err: unknown) => callback(toServiceError(logger, name, err)),
    );
  };
}

export function toServiceError(logger: Logger, name: string, err: unknown): Partial<grpc.ServiceError> {
  if (err instanceof ApiError) return err.toServiceError();
  logger.error({ err, rpc: name }, 'internal error in handler');
  return { code: grpc.status.INTERNAL, details: `internal error: ${(err as Error)?.message ?? String(err)}` };
}

// Records every client operation of a chaos run as an Operation of test/checker/history.ts: wraps the calls
// of the fencelock client, stamps call and return times on one monotonic clock (performance.now()), and
// classifies each error as a definite refusal ('fail': the operation did NOT take effect) or an unknown
// outcome ('unknown': it MAY have taken effect, at any time after the call).
//
// An operation is appended when it is called, with outcome 'unknown', and completed when it returns: a run
// that is stopped with calls in flight leaves them unknown, which is what they are.
import { performance } from 'node:perf_hooks';
import { FenceLockError, type FenceLockClient, type LockHandle, type Session } from '../../src/client';
import {
  historyToJSON,
  type FaultEvent,
  type History,
  type KeyWrite,
  type OpArgs,
  type OpError,
  type Operation,
  type OpKind,
  type OpResult,
  type Outcome,
} from '../checker/history';

/**
 * Whether an error means "did not take effect" ('fail') or "may have" ('unknown'). When in doubt: unknown
 * (the checker stays sound; a wrong 'fail' would make it report bugs that are not there).
 *
 * - indeterminate (the client gave up after retries), UNAVAILABLE, CANCELLED, ABORTED, INTERNAL, UNKNOWN,
 *   any non-FenceLockError: unknown.
 * - NOT_FOUND of an acquire: unknown (the grant may have happened before the session ended).
 * - FAILED_PRECONDITION, NOT_FOUND, RESOURCE_EXHAUSTED, INVALID_ARGUMENT: fail (the server refused, or the
 *   client refused before sending) — except REQUEST_TOO_OLD (a retry below the client's acknowledged floor:
 *   the first attempt may have been applied, its result forgotten) and REQUEST_ID_REUSED: unknown.
 * - DEADLINE_EXCEEDED, not indeterminate, of an acquire: the server ended the wait without a grant ("not
 *   granted within ... the wait was withdrawn", or the client's LOCK_HELD after acquired=false): fail with
 *   reason LOCK_HELD. A client-side loss of the session (KEEPALIVE_TIMEOUT: the request was never sent):
 *   fail. Any other DEADLINE_EXCEEDED: unknown.
 */
export function classifyError(op: OpKind, err: unknown): { outcome: Exclude<Outcome, 'ok'>; error: OpError } {
  if (!(err instanceof FenceLockError)) {
    return { outcome: 'unknown', error: { code: 'UNKNOWN', message: err instanceof Error ? err.message : String(err) } };
  }
  const error: OpError = { code: err.code, message: err.message };
  if (err.reason !== undefined) error.reason = err.reason;
  if (err.watermark !== undefined) error.watermark = err.watermark;
  if (err.indeterminate) return { outcome: 'unknown', error };
  switch (err.code) {
    case 'FAILED_PRECONDITION':
      return { outcome: err.reason === 'REQUEST_TOO_OLD' ? 'unknown' : 'fail', error };
    case 'INVALID_ARGUMENT':
      return { outcome: err.reason === 'REQUEST_ID_REUSED' ? 'unknown' : 'fail', error };
    case 'NOT_FOUND':
      // A blocked (or retried) acquire whose session ended may have been granted before it ended: the server
      // answers with the session's present state (regression: process chaos seed 11).
      return { outcome: op === 'acquire' ? 'unknown' : 'fail', error };
    case 'RESOURCE_EXHAUSTED':
      return { outcome: 'fail', error };
    case 'DEADLINE_EXCEEDED': {
      if (op === 'acquire' && (err.reason === 'LOCK_HELD' || (err.reason === undefined && /not granted within/.test(err.message)))) {
        return { outcome: 'fail', error: { ...error, reason: 'LOCK_HELD' } };
      }
      if (err.reason === 'KEEPALIVE_TIMEOUT') return { outcome: 'fail', error };
      return { outcome: 'unknown', error };
    }
    default:
      return { outcome: 'unknown', error };
  }
}

export interface RecorderOptions {
  /** The clock of calls and returns; default performance.now (one clock for the whole run). */
  now?: () => number;
}

/** An operation's record and, when it succeeded, what the client returned. */
export interface Recorded<T> {
  op: Operation;
  value?: T;
}

export class Recorder {
  private readonly ops: Operation[] = [];
  private readonly faults: FaultEvent[] = [];
  private readonly now: () => number;
  readonly meta: Record<string, unknown> = {};

  constructor(opts: RecorderOptions = {}) {
    this.now = opts.now ?? (() => performance.now());
  }

  /** The clock the recorder stamps with (for fault timelines and minority windows). */
  time(): number {
    return this.now();
  }

  // ---- low level -------------------------------------------------------------------------------------

  /** Appends an operation as called now (outcome unknown until completed). */
  begin(process: string, op: OpKind, args: OpArgs): Operation {
    const o: Operation = { id: this.ops.length, process, op, args, call: this.now(), outcome: 'unknown' };
    this.ops.push(o);
    return o;
  }

  ok(o: Operation, result: OpResult = {}, endpoint?: string): void {
    o.ret = this.now();
    o.outcome = 'ok';
    o.result = result;
    if (endpoint !== undefined) o.endpoint = endpoint;
  }

  failed(o: Operation, err: unknown, endpoint?: string): void {
    o.ret = this.now();
    const c = classifyError(o.op, err);
    o.outcome = c.outcome;
    o.error = c.error;
    if (endpoint !== undefined) o.endpoint = endpoint;
  }

  /** Notes a fault (or its end, with `end`) on the recorder's clock; returns the event to close later. */
  fault(kind: string, targets: string[], extra: Partial<Pick<FaultEvent, 'minority' | 'note' | 'end'>> = {}): FaultEvent {
    const f: FaultEvent = { at: this.now(), kind, targets, ...extra };
    this.faults.push(f);
    return f;
  }

  /** Marks a fault window as ended now. */
  endFault(f: FaultEvent): void {
    f.end = this.now();
  }

  // ---- wrapped client calls ------------------------------------------------------------------------------

  async open(process: string, client: FenceLockClient, ttlMs: number): Promise<Recorded<Session>> {
    const o = this.begin(process, 'open', { ttlMs });
    try {
      const session = await client.openSession({ ttlMs, name: process });
      this.ok(o, { session: session.id }, client.currentEndpoint());
      // A session lost on the client side is noted as a failed keepalive (for the record; not checked).
      session.onLost((err) => {
        const k = this.begin(process, 'keepalive', { session: session.id });
        k.ret = k.call;
        k.outcome = 'fail';
        k.error = { code: err.code, reason: err.reason ?? '', message: err.message };
      });
      return { op: o, value: session };
    } catch (err) {
      this.failed(o, err, endpointOf(client));
      return { op: o };
    }
  }

  /** Blocking acquire (waitMs > 0) or try-lock (waitMs = 0; "held" is recorded as fail LOCK_HELD). */
  async acquire(process: string, client: FenceLockClient, session: Session, lock: string, waitMs: number): Promise<Recorded<LockHandle>> {
    const o = this.begin(process, 'acquire', { lock, session: session.id, waitMs });
    try {
      const handle = waitMs === 0 ? await session.tryAcquire(lock) : await session.acquire(lock, { waitTimeoutMs: waitMs });
      if (handle === null) {
        o.ret = this.now();
        o.outcome = 'fail';
        o.error = { code: 'NOT_ACQUIRED', reason: 'LOCK_HELD' };
        o.endpoint = client.currentEndpoint();
        return { op: o };
      }
      this.ok(o, { token: handle.token }, client.currentEndpoint());
      return { op: o, value: handle };
    } catch (err) {
      this.failed(o, err, endpointOf(client));
      return { op: o };
    }
  }

  /** A fenced write through client.write (not LockHandle.write, which refuses locally after a release). */
  async write(process: string, client: FenceLockClient, session: Session, lock: string, token: bigint, writes: KeyWrite[]): Promise<Recorded<bigint>> {
    const o = this.begin(process, 'write', { lock, session: session.id, token, writes });
    try {
      const ops = writes.map((w) => (w.value === null ? { delete: w.key } : { put: w.key, value: w.value }));
      const res = await client.write({ lock, token, sessionId: session.id, ops });
      this.ok(o, { token, index: res.index }, client.currentEndpoint());
      return { op: o, value: res.index };
    } catch (err) {
      this.failed(o, err, endpointOf(client));
      return { op: o };
    }
  }

  /** A linearizable get; `lock` (the key's lock, when known) routes it to its partition. */
  async get(process: string, client: FenceLockClient, key: string, lock?: string): Promise<Recorded<OpResult>> {
    const o = this.begin(process, 'get', lock === undefined ? { key } : { key, lock });
    try {
      const r = await client.get(key);
      const result: OpResult = { found: r.found, value: r.found ? Buffer.from(r.value).toString('utf8') : null, token: r.token, lock: r.lock };
      this.ok(o, result, client.currentEndpoint());
      return { op: o, value: result };
    } catch (err) {
      this.failed(o, err, endpointOf(client));
      return { op: o };
    }
  }

  /** Releases through the handle (a handle already released locally would not call the server: not recorded). */
  async release(process: string, client: FenceLockClient, handle: LockHandle): Promise<Recorded<void>> {
    // A released handle resolves without sending anything: that is not an operation, and a fake 'ok' would lie.
    if (handle.isReleased()) throw new Error(`recorder: handle of ${handle.name} (token ${handle.token}) is already released`);
    const o = this.begin(process, 'release', { lock: handle.name, session: handle.session.id, token: handle.token });
    try {
      await handle.release();
      this.ok(o, {}, client.currentEndpoint());
      return { op: o };
    } catch (err) {
      this.failed(o, err, endpointOf(client));
      return { op: o };
    }
  }

  async close(process: string, client: FenceLockClient, session: Session, timeoutMs?: number): Promise<Recorded<void>> {
    const o = this.begin(process, 'close', { session: session.id });
    try {
      await session.close(timeoutMs === undefined ? {} : { timeoutMs });
      this.ok(o, {}, client.currentEndpoint());
      return { op: o };
    } catch (err) {
      this.failed(o, err, endpointOf(client));
      return { op: o };
    }
  }

  // ---- output --------------------------------------------------------------------------------------------

  /** The operations so far (in flight ones as unknown), in call order. */
  operations(): Operation[] {
    return [...this.ops];
  }

  history(): History {
    return { ops: this.operations(), faults: [...this.faults], meta: { ...this.meta } };
  }

  toJSON(space?: number): string {
    return historyToJSON(this.history(), space);
  }
}

function endpointOf(client: FenceLockClient): string | undefined {
  try {
    return client.currentEndpoint();
  } catch {
    return undefined;
  }
}

// Records every client operation of a chaos run as an Operation of test/checker/history.ts: wraps the calls
// of the fencelock client, stamps call and return times on one monotonic clock (performance.now()), and
// classifies each error as a definite refusal ('fail': the operation did NOT take effect) or an unknown
// outcome ('unknown': it MAY have taken effect, at any time after the call).
//
// An operation is appended when it is called, with outcome 'unknown', and completed when it returns: a run
// that is stopped with calls in flight leaves them unknown, which is what they are.
import { performance } from 'node:perf_hooks';
import { FenceLockError, type FenceLockClient, type LockHandle, type PermitHandle, type Session } from '../../src/client';
import {
  historyToJSON,
  type FaultEvent,
  type History,
  type KeyWrite,
  type LockMode,
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
 * - NOT_FOUND of an acquire (of a lock, a permit or a set): unknown (the grant may have happened before the
 *   session ended).
 * - FAILED_PRECONDITION, NOT_FOUND, RESOURCE_EXHAUSTED, INVALID_ARGUMENT: fail (the server refused, or the
 *   client refused before sending) — except REQUEST_TOO_OLD (a retry below the client's acknowledged floor:
 *   the first attempt may have been applied, its result forgotten) and REQUEST_ID_REUSED: unknown.
 * - DEADLINE_EXCEEDED, not indeterminate, of an acquire: the server ended the wait without a grant ("...
 *   the wait was withdrawn", or the client's LOCK_HELD / PERMITS_FULL after acquired=false): fail with
 *   reason LOCK_HELD (PERMITS_FULL for a permit). A client-side loss of the session (KEEPALIVE_TIMEOUT: the request was never sent):
 *   fail. Any other DEADLINE_EXCEEDED: unknown.
 */
const ACQUIRES: ReadonlySet<OpKind> = new Set(['acquire', 'acquirePermit', 'acquireAll']);

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
      return { outcome: ACQUIRES.has(op) ? 'unknown' : 'fail', error };
    case 'RESOURCE_EXHAUSTED':
      return { outcome: 'fail', error };
    case 'DEADLINE_EXCEEDED': {
      const notGranted = err.reason === 'LOCK_HELD' || err.reason === 'PERMITS_FULL' || (err.reason === undefined && /the wait was withdrawn/.test(err.message));
      if (ACQUIRES.has(op) && notGranted) return { outcome: 'fail', error: { ...error, reason: op === 'acquirePermit' ? 'PERMITS_FULL' : 'LOCK_HELD' } };
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
  async acquire(process: string, client: FenceLockClient, session: Session, lock: string, waitMs: number, mode?: LockMode): Promise<Recorded<LockHandle>> {
    const o = this.begin(process, 'acquire', mode === undefined ? { lock, session: session.id, waitMs } : { lock, session: session.id, waitMs, mode });
    try {
      const opts = mode === undefined ? {} : { mode };
      const handle = waitMs === 0 ? await session.tryAcquire(lock, opts) : await session.acquire(lock, { ...opts, waitTimeoutMs: waitMs });
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
  async release(process: string, client: FenceLockClient, handle: LockHandle, mode?: LockMode): Promise<Recorded<void>> {
    // A released handle resolves without sending anything: that is not an operation, and a fake 'ok' would lie.
    if (handle.isReleased()) throw new Error(`recorder: handle of ${handle.name} (token ${handle.token}) is already released`);
    const args: OpArgs = { lock: handle.name, session: handle.session.id, token: handle.token };
    if (mode !== undefined) args.mode = mode;
    const o = this.begin(process, 'release', args);
    try {
      await handle.release();
      this.ok(o, {}, client.currentEndpoint());
      return { op: o };
    } catch (err) {
      this.failed(o, err, endpointOf(client));
      return { op: o };
    }
  }

  /** A permit of a semaphore (waitMs 0: a try; every permit taken is recorded as fail PERMITS_FULL). */
  async acquirePermit(process: string, client: FenceLockClient, session: Session, semaphore: string, permits: number, waitMs: number): Promise<Recorded<PermitHandle>> {
    const o = this.begin(process, 'acquirePermit', { semaphore, permits, session: session.id, waitMs });
    try {
      const permit = waitMs === 0 ? await session.tryAcquirePermit(semaphore, { permits }) : await session.acquirePermit(semaphore, { permits, waitTimeoutMs: waitMs });
      if (permit === null) {
        o.ret = this.now();
        o.outcome = 'fail';
        o.error = { code: 'NOT_ACQUIRED', reason: 'PERMITS_FULL' };
        o.endpoint = client.currentEndpoint();
        return { op: o };
      }
      this.ok(o, { token: permit.token, slot: permit.slot }, client.currentEndpoint());
      return { op: o, value: permit };
    } catch (err) {
      this.failed(o, err, endpointOf(client));
      return { op: o };
    }
  }

  /** A fenced write under a permit (PermitHandle.write): its keys are bound to the permit's slot. */
  async writePermit(process: string, client: FenceLockClient, permit: PermitHandle, writes: KeyWrite[]): Promise<Recorded<bigint>> {
    if (permit.isReleased()) throw new Error(`recorder: permit of ${permit.name} (slot ${permit.slot}) is already released`);
    const o = this.begin(process, 'write', { semaphore: permit.name, slot: permit.slot, session: permit.session.id, token: permit.token, writes });
    try {
      const res = await permit.write(writes.map((w) => (w.value === null ? { delete: w.key } : { put: w.key, value: w.value })));
      this.ok(o, { token: permit.token, index: res.index }, client.currentEndpoint());
      return { op: o, value: res.index };
    } catch (err) {
      this.failed(o, err, endpointOf(client));
      return { op: o };
    }
  }

  async releasePermit(process: string, client: FenceLockClient, permit: PermitHandle): Promise<Recorded<void>> {
    if (permit.isReleased()) throw new Error(`recorder: permit of ${permit.name} (slot ${permit.slot}) is already released`);
    const o = this.begin(process, 'releasePermit', { semaphore: permit.name, slot: permit.slot, session: permit.session.id, token: permit.token });
    try {
      await permit.release();
      this.ok(o, {}, client.currentEndpoint());
      return { op: o };
    } catch (err) {
      this.failed(o, err, endpointOf(client));
      return { op: o };
    }
  }

  /** Every lock of `locks` in one grant (waitMs 0: a try; a busy set is recorded as fail LOCK_HELD). */
  async acquireAll(process: string, client: FenceLockClient, session: Session, locks: string[], waitMs: number): Promise<Recorded<LockHandle[]>> {
    const o = this.begin(process, 'acquireAll', { locks: [...locks], session: session.id, waitMs });
    try {
      const handles = waitMs === 0 ? await session.tryAcquireAll(locks) : await session.acquireAll(locks, { waitTimeoutMs: waitMs });
      if (handles === null) {
        o.ret = this.now();
        o.outcome = 'fail';
        o.error = { code: 'NOT_ACQUIRED', reason: 'LOCK_HELD' };
        o.endpoint = client.currentEndpoint();
        return { op: o };
      }
      // The token each handle carries: what the application was given for each lock (set-token checks it).
      this.ok(o, { token: handles[0]!.token, tokens: handles.map((h) => h.token) }, client.currentEndpoint());
      return { op: o, value: handles };
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

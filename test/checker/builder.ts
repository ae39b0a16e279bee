// A small builder of hand-made histories for the checker's tests: one method per kind of operation and
// outcome, times given explicitly as [call, ret].
import type { KeyWrite, OpError, Operation, OpArgs } from './history';

export type Span = [call: number, ret: number];

const toWrites = (kv: Record<string, string | null>): KeyWrite[] => Object.entries(kv).map(([key, value]) => ({ key, value }));

export class HistoryBuilder {
  readonly ops: Operation[] = [];

  private add(process: string, op: Operation['op'], args: OpArgs, call: number, ret: number | undefined, rest: Partial<Operation>): Operation {
    const o: Operation = { id: this.ops.length, process, op, args, call, outcome: 'unknown', ...rest };
    if (ret !== undefined) o.ret = ret;
    this.ops.push(o);
    return o;
  }

  /** Acquire acknowledged with `token`. The session defaults to the process name. */
  acquire(p: string, lock: string, [call, ret]: Span, token: bigint, session = p): Operation {
    return this.add(p, 'acquire', { lock, session, waitMs: 1000 }, call, ret, { outcome: 'ok', result: { token } });
  }

  /** Try-lock (or blocking wait) refused: the lock was held by another session. */
  acquireHeld(p: string, lock: string, [call, ret]: Span, session = p): Operation {
    return this.add(p, 'acquire', { lock, session, waitMs: 0 }, call, ret, { outcome: 'fail', error: { code: 'NOT_ACQUIRED', reason: 'LOCK_HELD' } });
  }

  acquireUnknown(p: string, lock: string, call: number, session = p, gaveUpAt?: number): Operation {
    return this.add(p, 'acquire', { lock, session, waitMs: 1000 }, call, gaveUpAt, { outcome: 'unknown', error: { code: 'UNAVAILABLE' } });
  }

  release(p: string, lock: string, [call, ret]: Span, token: bigint, session = p): Operation {
    return this.add(p, 'release', { lock, session, token }, call, ret, { outcome: 'ok', result: {} });
  }

  releaseRefused(p: string, lock: string, [call, ret]: Span, token: bigint, reason: string, session = p): Operation {
    return this.add(p, 'release', { lock, session, token }, call, ret, { outcome: 'fail', error: { code: 'FAILED_PRECONDITION', reason } });
  }

  releaseUnknown(p: string, lock: string, call: number, token: bigint, session = p): Operation {
    return this.add(p, 'release', { lock, session, token }, call, undefined, { outcome: 'unknown' });
  }

  /** Fenced write acknowledged. `kv`: key -> value (null = delete). */
  write(p: string, lock: string, [call, ret]: Span, token: bigint, kv: Record<string, string | null>, session = p, index?: bigint): Operation {
    const result = index === undefined ? { token } : { token, index };
    return this.add(p, 'write', { lock, session, token, writes: toWrites(kv) }, call, ret, { outcome: 'ok', result });
  }

  writeRefused(p: string, lock: string, [call, ret]: Span, token: bigint, kv: Record<string, string | null>, reason: string, session = p): Operation {
    const error: OpError = { code: reason === 'UNKNOWN_SESSION' ? 'NOT_FOUND' : 'FAILED_PRECONDITION', reason };
    return this.add(p, 'write', { lock, session, token, writes: toWrites(kv) }, call, ret, { outcome: 'fail', error });
  }

  writeUnknown(p: string, lock: string, call: number, token: bigint, kv: Record<string, string | null>, session = p): Operation {
    return this.add(p, 'write', { lock, session, token, writes: toWrites(kv) }, call, undefined, { outcome: 'unknown', error: { code: 'DEADLINE_EXCEEDED' } });
  }

  /** Get acknowledged: `value` null = not found; `token` = the watermark returned. */
  get(p: string, key: string, [call, ret]: Span, value: string | null, token: bigint, lock?: string): Operation {
    const args: OpArgs = lock === undefined ? { key } : { key, lock };
    return this.add(p, 'get', args, call, ret, { outcome: 'ok', result: { found: value !== null, value, token, lock: lock ?? '' } });
  }

  close(p: string, [call, ret]: Span, session = p): Operation {
    return this.add(p, 'close', { session }, call, ret, { outcome: 'ok' });
  }

  open(p: string, [call, ret]: Span, session = p): Operation {
    return this.add(p, 'open', { ttlMs: 5000 }, call, ret, { outcome: 'ok', result: { session } });
  }

  // ---- read-write locks, semaphores, AcquireAll (issue 33) ------------------------------------------------

  acquireShared(p: string, lock: string, [call, ret]: Span, token: bigint, session = p): Operation {
    return this.add(p, 'acquire', { lock, session, waitMs: 1000, mode: 'shared' }, call, ret, { outcome: 'ok', result: { token } });
  }

  acquireSharedUnknown(p: string, lock: string, call: number, session = p): Operation {
    return this.add(p, 'acquire', { lock, session, waitMs: 1000, mode: 'shared' }, call, undefined, { outcome: 'unknown', error: { code: 'UNAVAILABLE' } });
  }

  /** A shared try-lock refused (a writer held the lock, or waited for it). */
  acquireSharedHeld(p: string, lock: string, [call, ret]: Span, session = p): Operation {
    return this.add(p, 'acquire', { lock, session, waitMs: 0, mode: 'shared' }, call, ret, { outcome: 'fail', error: { code: 'NOT_ACQUIRED', reason: 'LOCK_HELD' } });
  }

  releaseShared(p: string, lock: string, [call, ret]: Span, token: bigint, session = p): Operation {
    return this.add(p, 'release', { lock, session, token, mode: 'shared' }, call, ret, { outcome: 'ok', result: {} });
  }

  permit(p: string, semaphore: string, permits: number, [call, ret]: Span, slot: number, token: bigint, session = p): Operation {
    return this.add(p, 'acquirePermit', { semaphore, permits, session, waitMs: 1000 }, call, ret, { outcome: 'ok', result: { token, slot } });
  }

  permitUnknown(p: string, semaphore: string, permits: number, call: number, session = p): Operation {
    return this.add(p, 'acquirePermit', { semaphore, permits, session, waitMs: 1000 }, call, undefined, { outcome: 'unknown', error: { code: 'UNAVAILABLE' } });
  }

  /** Every permit was taken (a try, or a wait that ran out). */
  permitFull(p: string, semaphore: string, permits: number, [call, ret]: Span, session = p): Operation {
    return this.add(p, 'acquirePermit', { semaphore, permits, session, waitMs: 0 }, call, ret, { outcome: 'fail', error: { code: 'NOT_ACQUIRED', reason: 'PERMITS_FULL' } });
  }

  releasePermit(p: string, semaphore: string, slot: number, [call, ret]: Span, token: bigint, session = p): Operation {
    return this.add(p, 'releasePermit', { semaphore, slot, session, token }, call, ret, { outcome: 'ok', result: {} });
  }

  writePermit(p: string, semaphore: string, slot: number, [call, ret]: Span, token: bigint, kv: Record<string, string | null>, session = p): Operation {
    return this.add(p, 'write', { semaphore, slot, session, token, writes: toWrites(kv) }, call, ret, { outcome: 'ok', result: { token } });
  }

  writePermitRefused(p: string, semaphore: string, slot: number, [call, ret]: Span, token: bigint, kv: Record<string, string | null>, reason: string, session = p): Operation {
    return this.add(p, 'write', { semaphore, slot, session, token, writes: toWrites(kv) }, call, ret, { outcome: 'fail', error: { code: 'FAILED_PRECONDITION', reason } });
  }

  /** AcquireAll acknowledged: `tokens` one per lock (one bigint: the same for all). */
  acquireAll(p: string, locks: string[], [call, ret]: Span, tokens: bigint | bigint[], session = p): Operation {
    const list = Array.isArray(tokens) ? tokens : locks.map(() => tokens);
    return this.add(p, 'acquireAll', { locks, session, waitMs: 1000 }, call, ret, { outcome: 'ok', result: { token: list[0]!, tokens: list } });
  }

  acquireAllUnknown(p: string, locks: string[], call: number, session = p): Operation {
    return this.add(p, 'acquireAll', { locks, session, waitMs: 1000 }, call, undefined, { outcome: 'unknown', error: { code: 'UNAVAILABLE' } });
  }

  acquireAllHeld(p: string, locks: string[], [call, ret]: Span, session = p): Operation {
    return this.add(p, 'acquireAll', { locks, session, waitMs: 0 }, call, ret, { outcome: 'fail', error: { code: 'NOT_ACQUIRED', reason: 'LOCK_HELD' } });
  }
}

// Issue 35, time metrics: wait and hold times from the `now` of applied log entries, by cause, with a lock
// label only as deep as configured; refusals of applied entries by command and reason.
import { describe, expect, it } from 'vitest';
import { encodeCommand } from '../../src/codec/commandCodec';
import { LockApp } from '../../src/node/lockApp';
import { NodeMetrics } from '../../src/node/metrics/nodeMetrics';
import type { Command } from '../../src/state';
import { parsePrometheusText, sumOf, valueOf, type Scrape } from '../support/prometheusText';

const S1 = '1'.repeat(32);
const S2 = '2'.repeat(32);
const S3 = '3'.repeat(32);

/** A state machine whose applied entries a node's metrics observe; entries carry the `now` given. */
class Log {
  readonly app = new LockApp();
  readonly metrics: NodeMetrics;
  private index = 0;
  private requestId = 0;

  constructor(lockLabelDepth = 0) {
    this.metrics = new NodeMetrics('n1', () => 0, false, lockLabelDepth);
    this.metrics.locks.watch(this.app);
  }

  apply(now: number, body: Record<string, unknown>): ReturnType<LockApp['apply']> {
    const meta = body.type === 'ExpireSession' ? {} : { clientId: 'test', requestId: ++this.requestId };
    return this.app.apply(++this.index, encodeCommand({ ...meta, now, ...body } as unknown as Command));
  }

  open(now: number, sessionId: string): void {
    expect(this.apply(now, { type: 'OpenSession', sessionId, ttlMs: 10_000, clientName: 'c' }).result.status).toBe('session_opened');
  }

  acquire(now: number, sessionId: string, lock: string): ReturnType<LockApp['apply']> {
    return this.apply(now, { type: 'Acquire', lock, sessionId, tryOnly: false, waitTimeoutMs: 60_000 });
  }

  release(now: number, sessionId: string, lock: string, token: number): ReturnType<LockApp['apply']> {
    return this.apply(now, { type: 'Release', lock, sessionId, token });
  }

  /** Installs the other log's state as a snapshot, and goes on after its last entry. */
  restoreFrom(other: Log): void {
    this.app.restore(other.app.snapshot());
    this.index = other.index;
    this.requestId = other.requestId;
  }

  async scrape(): Promise<Scrape> {
    return parsePrometheusText(await this.metrics.scrape());
  }
}

function seriesOf(m: Scrape, name: string): Array<Record<string, string>> {
  return m.samples.filter((s) => s.name === name).map((s) => s.labels);
}

describe('lock wait and hold times', () => {
  it('measure from the entries\' now: immediate grant 0, a queued wait 700 ms, holds until release and expiry', async () => {
    const log = new Log();
    log.open(0, S1);
    log.open(0, S2);
    const first = log.acquire(500, S1, 'a/x');
    expect(first.result.status).toBe('granted');
    expect(log.acquire(1000, S2, 'a/x').result.status).toBe('waiting');
    const released = log.release(1700, S1, 'a/x', (first.result as { token: number }).token);
    expect(released.result).toMatchObject({ status: 'released', nextHolder: S2 });
    expect(log.apply(2700, { type: 'ExpireSession', sessionIds: [S2] }).result.status).toBe('sessions_expired');

    const m = await log.scrape();
    // The immediate grant: one observation of 0 under cause "acquired".
    expect(valueOf(m, 'fencelock_lock_wait_seconds_count', { cause: 'acquired' })).toBe(1);
    expect(valueOf(m, 'fencelock_lock_wait_seconds_sum', { cause: 'acquired' })).toBe(0);
    // The waiter queued at 1000 and handed the lock at 1700, when s1 released it.
    expect(valueOf(m, 'fencelock_lock_wait_seconds_count', { cause: 'released' })).toBe(1);
    expect(valueOf(m, 'fencelock_lock_wait_seconds_sum', { cause: 'released' })).toBeCloseTo(0.7);
    expect(valueOf(m, 'fencelock_lock_wait_seconds_bucket', { cause: 'released', le: '0.5' })).toBe(0);
    expect(valueOf(m, 'fencelock_lock_wait_seconds_bucket', { cause: 'released', le: '1' })).toBe(1);
    // s1 held from 500 to 1700; s2 from 1700 until its lease ran out at 2700.
    expect(valueOf(m, 'fencelock_lock_hold_seconds_sum', { cause: 'released' })).toBeCloseTo(1.2);
    expect(valueOf(m, 'fencelock_lock_hold_seconds_count', { cause: 'released' })).toBe(1);
    expect(valueOf(m, 'fencelock_lock_hold_seconds_sum', { cause: 'expired' })).toBeCloseTo(1.0);
    expect(valueOf(m, 'fencelock_lock_hold_seconds_count', { cause: 'expired' })).toBe(1);
    expect(sumOf(m, 'fencelock_lock_hold_seconds_count')).toBe(2);
    // Nothing is held or waited for any more: nothing is remembered.
    expect(log.metrics.locks.times.remembered()).toBe(0);
  });

  it('hold times by close and revoke; a cancelled wait is no wait time and is forgotten', async () => {
    const log = new Log();
    for (const s of [S1, S2, S3]) log.open(0, s);
    log.acquire(100, S1, 'k');
    log.acquire(200, S2, 'k');
    expect(log.apply(300, { type: 'CancelWait', lock: 'k', sessionId: S2 }).result.status).toBe('cancelled');
    log.acquire(400, S3, 'k');
    expect(log.metrics.locks.times.remembered()).toBe(2); // s1's grant and s3's wait
    log.apply(1100, { type: 'CloseSession', sessionId: S1 });
    log.apply(1500, { type: 'RevokeSession', sessionId: S3 });
    const m = await log.scrape();
    expect(valueOf(m, 'fencelock_lock_hold_seconds_sum', { cause: 'closed' })).toBeCloseTo(1.0);
    expect(valueOf(m, 'fencelock_lock_hold_seconds_sum', { cause: 'revoked' })).toBeCloseTo(0.4);
    // s3 waited from 400 to the handover at 1100 (cause: the previous grant was closed); s2's wait is no grant.
    expect(valueOf(m, 'fencelock_lock_wait_seconds_sum', { cause: 'closed' })).toBeCloseTo(0.7);
    expect(sumOf(m, 'fencelock_lock_wait_seconds_count')).toBe(2);
    expect(log.metrics.locks.times.remembered()).toBe(0);
  });

  it('a re-entrant Acquire neither observes a wait nor restarts the hold', async () => {
    const log = new Log();
    log.open(0, S1);
    const token = (log.acquire(100, S1, 'k').result as { token: number }).token;
    expect(log.acquire(400, S1, 'k').result).toMatchObject({ status: 'granted', token, newGrant: false });
    log.release(600, S1, 'k', token);
    const m = await log.scrape();
    expect(sumOf(m, 'fencelock_lock_wait_seconds_count')).toBe(1);
    expect(valueOf(m, 'fencelock_lock_hold_seconds_sum', { cause: 'released' })).toBeCloseTo(0.5);
  });

  it('after a snapshot install, grants of unknown start are not observed; later ones are', async () => {
    const source = new Log();
    source.open(0, S1);
    source.acquire(100, S1, 'k');
    const log = new Log();
    log.open(0, S2);
    log.acquire(50, S2, 'other');
    expect(log.metrics.locks.times.remembered()).toBe(1);
    log.restoreFrom(source);
    // What was remembered belonged to the replaced state.
    expect(log.metrics.locks.times.remembered()).toBe(0);
    log.release(900, S1, 'k', (log.app.machine.describeLock('k')!.holder!.token));
    expect(sumOf(await log.scrape(), 'fencelock_lock_hold_seconds_count')).toBe(0);
    log.release(1300, S1, 'k', (log.acquire(1000, S1, 'k').result as { token: number }).token);
    const m = await log.scrape();
    expect(valueOf(m, 'fencelock_lock_hold_seconds_count', { cause: 'released' })).toBe(1);
    expect(valueOf(m, 'fencelock_lock_hold_seconds_sum', { cause: 'released' })).toBeCloseTo(0.3);
  });
});

describe('lock label cardinality', () => {
  it('depth 0: a thousand lock names add no series', async () => {
    const one = new Log();
    one.open(0, S1);
    one.release(20, S1, 'only', (one.acquire(10, S1, 'only').result as { token: number }).token);
    const many = new Log();
    many.open(0, S1);
    for (let i = 0; i < 1000; i++) many.release(20, S1, `l/${i}`, (many.acquire(10, S1, `l/${i}`).result as { token: number }).token);
    const [a, b] = [await one.scrape(), await many.scrape()];
    for (const name of ['fencelock_lock_wait_seconds_bucket', 'fencelock_lock_hold_seconds_bucket']) {
      expect(seriesOf(b, name)).toEqual(seriesOf(a, name));
      expect(seriesOf(b, name).every((l) => !('lock' in l))).toBe(true);
    }
    expect(sumOf(b, 'fencelock_lock_hold_seconds_count')).toBe(1000);
  });

  it('depth 1: a/x, a/y and b/z are two lock label values', async () => {
    const log = new Log(1);
    log.open(0, S1);
    for (const name of ['a/x', 'a/y', 'b/z']) log.release(50, S1, name, (log.acquire(10, S1, name).result as { token: number }).token);
    const m = await log.scrape();
    const values = new Set(seriesOf(m, 'fencelock_lock_hold_seconds_count').map((l) => l.lock));
    expect([...values].sort()).toEqual(['a', 'b']);
    expect(valueOf(m, 'fencelock_lock_hold_seconds_count', { cause: 'released', lock: 'a' })).toBe(2);
    expect(valueOf(m, 'fencelock_lock_wait_seconds_count', { cause: 'acquired', lock: 'b' })).toBe(1);
  });
});

describe('refusals of applied entries', () => {
  it('count by command and reason', async () => {
    const log = new Log();
    log.open(0, S1);
    const granted = log.acquire(10, S1, 'k');
    const refused = log.release(20, S1, 'k', (granted.result as { token: number }).token + 1);
    expect(refused.result.status).toBe('refused');
    const reason = (refused.result as { reason: string }).reason;
    log.apply(30, { type: 'Write', lock: 'k', sessionId: S1, token: 999, ops: [{ type: 'put', key: 'k/1', value: new Uint8Array([1]) }] });
    const m = await log.scrape();
    expect(valueOf(m, 'fencelock_refusals_total', { command: 'Release', reason })).toBe(1);
    expect(sumOf(m, 'fencelock_refusals_total', { command: 'Write' })).toBe(1);
    expect(sumOf(m, 'fencelock_refusals_total')).toBe(2);
    expect(sumOf(m, 'fencelock_fenced_write_refusals_total')).toBe(1);
  });
});

describe('shared grants and permits (issue 33)', () => {
  const granted = (r: ReturnType<Log['apply']>): number => (r.result as { token: number }).token;

  it('regression "shared hold times lost": every reader of a shared lock has its own hold time', async () => {
    const log = new Log();
    log.open(0, S1);
    log.open(0, S2);
    const t1 = granted(log.apply(100, { type: 'Acquire', lock: 'r', sessionId: S1, tryOnly: true, waitTimeoutMs: 0, shared: true }));
    const t2 = granted(log.apply(200, { type: 'Acquire', lock: 'r', sessionId: S2, tryOnly: true, waitTimeoutMs: 0, shared: true }));
    log.release(600, S1, 'r', t1);
    log.release(1200, S2, 'r', t2);
    const m = await log.scrape();
    // Keyed by lock alone, the second reader's grant replaced the first's start: s1's hold was never observed.
    expect(valueOf(m, 'fencelock_lock_hold_seconds_count', { cause: 'released' })).toBe(2);
    expect(valueOf(m, 'fencelock_lock_hold_seconds_sum', { cause: 'released' })).toBeCloseTo(0.5 + 1.0);
    expect(log.metrics.locks.times.remembered()).toBe(0);
  });

  it('permits: gauges of semaphores, permits held and waiters; grants, releases, wait and hold times by cause', async () => {
    const log = new Log();
    for (const s of [S1, S2, S3]) log.open(0, s);
    const acquire = (now: number, sessionId: string): ReturnType<Log['apply']> =>
      log.apply(now, { type: 'SemaphoreAcquire', semaphore: 'pool', sessionId, permits: 2, tryOnly: false, waitTimeoutMs: 60_000 });
    const t1 = granted(acquire(100, S1));
    acquire(200, S2);
    expect(acquire(300, S3).result.status).toBe('waiting');
    let m = await log.scrape();
    expect(valueOf(m, 'fencelock_semaphores', {})).toBe(1);
    expect(valueOf(m, 'fencelock_permits_held', {})).toBe(2);
    expect(valueOf(m, 'fencelock_permit_waiters', {})).toBe(1);
    // Permits are no locks: the lock gauges stay at 0.
    expect(valueOf(m, 'fencelock_locks_held', {})).toBe(0);
    expect(valueOf(m, 'fencelock_lock_waiters', {})).toBe(0);

    expect(log.apply(1000, { type: 'SemaphoreRelease', semaphore: 'pool', sessionId: S1, token: t1 }).result.status).toBe('permit_released');
    log.apply(1500, { type: 'ExpireSession', sessionIds: [S2, S3] });
    m = await log.scrape();
    expect(valueOf(m, 'fencelock_semaphores', {})).toBe(0);
    expect(valueOf(m, 'fencelock_permits_held', {})).toBe(0);
    expect(valueOf(m, 'fencelock_permit_grants_total', { cause: 'acquired' })).toBe(2);
    expect(valueOf(m, 'fencelock_permit_grants_total', { cause: 'released' })).toBe(1);
    expect(valueOf(m, 'fencelock_permit_releases_total', { cause: 'released' })).toBe(1);
    expect(valueOf(m, 'fencelock_permit_releases_total', { cause: 'expired' })).toBe(2);
    // s3 queued at 300 and took s1's slot at 1000.
    expect(valueOf(m, 'fencelock_permit_wait_seconds_sum', { cause: 'released' })).toBeCloseTo(0.7);
    expect(valueOf(m, 'fencelock_permit_wait_seconds_count', { cause: 'acquired' })).toBe(2);
    // s1 held 100..1000; s2 200..1500 and s3 1000..1500 until their leases ran out.
    expect(valueOf(m, 'fencelock_permit_hold_seconds_sum', { cause: 'released' })).toBeCloseTo(0.9);
    expect(valueOf(m, 'fencelock_permit_hold_seconds_sum', { cause: 'expired' })).toBeCloseTo(1.3 + 0.5);
    expect(sumOf(m, 'fencelock_lock_grants_total')).toBe(0);
    expect(log.metrics.locks.times.remembered()).toBe(0);
  });

  it('permit times carry a semaphore label only with a label depth, cut as lock labels are', async () => {
    const log = new Log(1);
    log.open(0, S1);
    for (const name of ['a/x', 'a/y', 'b/z']) {
      const t = granted(log.apply(10, { type: 'SemaphoreAcquire', semaphore: name, sessionId: S1, permits: 3, tryOnly: true, waitTimeoutMs: 0 }));
      log.apply(50, { type: 'SemaphoreRelease', semaphore: name, sessionId: S1, token: t });
    }
    const m = await log.scrape();
    expect(new Set(seriesOf(m, 'fencelock_permit_hold_seconds_count').map((l) => l.semaphore))).toEqual(new Set(['a', 'b']));
    expect(valueOf(m, 'fencelock_permit_hold_seconds_count', { cause: 'released', semaphore: 'a' })).toBe(2);
    const flat = new Log();
    flat.open(0, S1);
    flat.apply(10, { type: 'SemaphoreAcquire', semaphore: 'a/x', sessionId: S1, permits: 3, tryOnly: true, waitTimeoutMs: 0 });
    expect(seriesOf(await flat.scrape(), 'fencelock_permit_wait_seconds_count').every((l) => !('semaphore' in l))).toBe(true);
  });

  it('refusals count PERMITS_MISMATCH, SET_OVERLAP and SHARED_GRANT by command', async () => {
    const log = new Log();
    log.open(0, S1);
    log.open(0, S2);
    log.apply(10, { type: 'SemaphoreAcquire', semaphore: 'pool', sessionId: S1, permits: 2, tryOnly: true, waitTimeoutMs: 0 });
    expect(log.apply(20, { type: 'SemaphoreAcquire', semaphore: 'pool', sessionId: S2, permits: 3, tryOnly: true, waitTimeoutMs: 0 }).result).toMatchObject({ status: 'refused', reason: 'PERMITS_MISMATCH' });
    log.acquire(30, S1, 'x');
    expect(log.apply(40, { type: 'AcquireAll', locks: ['x', 'y'], sessionId: S1, tryOnly: true, waitTimeoutMs: 0 }).result).toMatchObject({ status: 'refused', reason: 'SET_OVERLAP' });
    const shared = granted(log.apply(50, { type: 'Acquire', lock: 'r', sessionId: S2, tryOnly: true, waitTimeoutMs: 0, shared: true }));
    expect(log.apply(60, { type: 'Write', lock: 'r', sessionId: S2, token: shared, ops: [{ type: 'put', key: 'r/1', value: new Uint8Array([1]) }] }).result).toMatchObject({ status: 'refused', reason: 'SHARED_GRANT' });
    const m = await log.scrape();
    expect(valueOf(m, 'fencelock_refusals_total', { command: 'SemaphoreAcquire', reason: 'PERMITS_MISMATCH' })).toBe(1);
    expect(valueOf(m, 'fencelock_refusals_total', { command: 'AcquireAll', reason: 'SET_OVERLAP' })).toBe(1);
    expect(valueOf(m, 'fencelock_refusals_total', { command: 'Write', reason: 'SHARED_GRANT' })).toBe(1);
    expect(valueOf(m, 'fencelock_fenced_write_refusals_total', { reason: 'SHARED_GRANT' })).toBe(1);
  });
});

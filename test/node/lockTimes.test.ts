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

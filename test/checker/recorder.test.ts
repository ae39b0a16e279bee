// The chaos recorder's error classification (test/chaos/recorder.ts): a wrong 'fail' would make the checker
// report bugs that are not there, so every case that may have taken effect must come out 'unknown'.
import { describe, expect, it } from 'vitest';
import { FenceLockError } from '../../src/client';
import { Recorder, classifyError } from '../chaos/recorder';
import { historyFromJSON } from './history';

describe('recorder', () => {
  it('classifies refusals as fail and anything that may have happened as unknown', () => {
    const c = (op: Parameters<typeof classifyError>[0], err: unknown): string => {
      const r = classifyError(op, err);
      return `${r.outcome}${r.error.reason ? `/${r.error.reason}` : ''}`;
    };
    const e = (code: ConstructorParameters<typeof FenceLockError>[0], message = 'x', init: ConstructorParameters<typeof FenceLockError>[2] = {}): FenceLockError =>
      new FenceLockError(code, message, init);
    expect(c('write', e('FAILED_PRECONDITION', 'stale', { reason: 'STALE_TOKEN', watermark: 9n }))).toBe('fail/STALE_TOKEN');
    expect(classifyError('write', e('FAILED_PRECONDITION', 'stale', { reason: 'STALE_TOKEN', watermark: 9n })).error.watermark).toBe(9n);
    expect(c('write', e('NOT_FOUND', 'gone', { reason: 'UNKNOWN_SESSION' }))).toBe('fail/UNKNOWN_SESSION');
    expect(c('write', e('RESOURCE_EXHAUSTED', 'full', { reason: 'STORE_FULL' }))).toBe('fail/STORE_FULL');
    expect(c('write', e('INVALID_ARGUMENT', 'bad key'))).toBe('fail');
    // The first attempt may have been applied and its result forgotten: unknown.
    expect(c('write', e('FAILED_PRECONDITION', 'old', { reason: 'REQUEST_TOO_OLD' }))).toBe('unknown/REQUEST_TOO_OLD');
    expect(c('write', e('INVALID_ARGUMENT', 'reused', { reason: 'REQUEST_ID_REUSED' }))).toBe('unknown/REQUEST_ID_REUSED');
    // Gave up after retries, no leader, cancelled, anything else.
    expect(c('write', e('DEADLINE_EXCEEDED', 'gave up', { indeterminate: true }))).toBe('unknown');
    expect(c('write', e('FAILED_PRECONDITION', 'gave up', { reason: 'STALE_TOKEN', indeterminate: true }))).toBe('unknown/STALE_TOKEN');
    expect(c('release', e('UNAVAILABLE', 'no leader'))).toBe('unknown');
    expect(c('get', e('CANCELLED', 'closed'))).toBe('unknown');
    expect(c('acquire', e('ABORTED', 'the wait was withdrawn'))).toBe('unknown');
    expect(c('acquire', new Error('boom'))).toBe('unknown');
    // A blocking acquire whose wait ended without a grant (the server's answer) is a definite "held".
    expect(c('acquire', e('DEADLINE_EXCEEDED', 'acquire lock "a" (via n1): DEADLINE_EXCEEDED: lock "a" not granted within 800 ms; the wait was withdrawn'))).toBe(
      'fail/LOCK_HELD',
    );
    expect(c('acquire', e('DEADLINE_EXCEEDED', 'still held', { reason: 'LOCK_HELD' }))).toBe('fail/LOCK_HELD');
    // ...but not a DEADLINE_EXCEEDED of the transport, nor of another operation.
    expect(c('acquire', e('DEADLINE_EXCEEDED', 'Deadline exceeded after 0.6s'))).toBe('unknown');
    expect(c('write', e('DEADLINE_EXCEEDED', 'not granted within'))).toBe('unknown');
    // Permits and sets: a wait that ran out is a refusal; a session that ended meanwhile may have been granted.
    expect(c('acquirePermit', e('DEADLINE_EXCEEDED', 'no permit of semaphore "p" within 800 ms; the wait was withdrawn'))).toBe('fail/PERMITS_FULL');
    expect(c('acquirePermit', e('DEADLINE_EXCEEDED', 'all 3 taken', { reason: 'PERMITS_FULL' }))).toBe('fail/PERMITS_FULL');
    expect(c('acquireAll', e('DEADLINE_EXCEEDED', 'locks ["a","b"] not granted within 800 ms; the wait was withdrawn from every queue'))).toBe('fail/LOCK_HELD');
    expect(c('acquireAll', e('DEADLINE_EXCEEDED', 'Deadline exceeded after 0.6s'))).toBe('unknown');
    expect(c('acquirePermit', e('NOT_FOUND', 'gone', { reason: 'UNKNOWN_SESSION' }))).toBe('unknown/UNKNOWN_SESSION');
    expect(c('acquireAll', e('NOT_FOUND', 'gone', { reason: 'UNKNOWN_SESSION' }))).toBe('unknown/UNKNOWN_SESSION');
    // A session lost on the client: the request was never sent.
    expect(c('acquire', e('DEADLINE_EXCEEDED', 'no renewal', { reason: 'KEEPALIVE_TIMEOUT' }))).toBe('fail/KEEPALIVE_TIMEOUT');
  });

  it('records calls as unknown until they complete, on its clock, with faults', () => {
    let t = 100;
    const rec = new Recorder({ now: () => t });
    const a = rec.begin('c1', 'acquire', { lock: 'L', session: 's1', waitMs: 0 });
    t = 105;
    rec.ok(a, { token: 7n }, 'n1:1');
    const w = rec.begin('c1', 'write', { lock: 'L', session: 's1', token: 7n, writes: [{ key: 'L/k', value: 'v' }] });
    t = 107;
    rec.failed(w, new FenceLockError('FAILED_PRECONDITION', 'stale', { reason: 'STALE_TOKEN' }));
    const f = rec.fault('partition', ['n1'], { minority: ['n1:1'] });
    rec.begin('c2', 'get', { key: 'L/k', lock: 'L' }); // still in flight
    t = 120;
    rec.endFault(f);
    const h = historyFromJSON(rec.toJSON());
    expect(h.ops.map((o) => [o.op, o.outcome, o.call, o.ret])).toEqual([
      ['acquire', 'ok', 100, 105],
      ['write', 'fail', 105, 107],
      ['get', 'unknown', 107, undefined],
    ]);
    expect(h.ops[0]!.result!.token).toBe(7n);
    expect(h.ops[0]!.endpoint).toBe('n1:1');
    expect(h.ops[1]!.error!.reason).toBe('STALE_TOKEN');
    expect(h.faults).toEqual([{ at: 107, end: 120, kind: 'partition', targets: ['n1'], minority: ['n1:1'] }]);
  });
});

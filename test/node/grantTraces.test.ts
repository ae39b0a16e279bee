// GrantTraces (issue 35): the leader's spans for expiry and revoke join the grant's trace; with tracing off
// nothing is kept. The first test runs before any SDK is registered in this file's process.
import { EventEmitter } from 'node:events';
import { trace, TraceFlags, type SpanContext } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import type { CommandResult, LockEvent } from '../../src/state';
import { GrantTraces } from '../../src/node/api/grantTraces';
import { tracingActive } from '../../src/protocol/traceContext';

const grantSpan: SpanContext = { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: TraceFlags.SAMPLED };

function applied(app: EventEmitter, index: number, ...events: LockEvent[]): void {
  const outcome: CommandResult = { result: { status: 'invalid', message: 'unused' }, events, duplicate: false };
  app.emit('applied', index, { type: 'ExpireSession' }, outcome);
}

const ended = (token: number, cause: Extract<LockEvent, { type: 'released' }>['cause']): LockEvent => ({ type: 'released', lock: 'l', sessionId: 's1', token, cause });

describe('GrantTraces', () => {
  it('keeps nothing and makes no span while tracing is off', () => {
    expect(tracingActive()).toBe(false);
    const app = new EventEmitter();
    const traces = new GrantTraces(app, { isLeader: () => true, currentTerm: () => 1 });
    traces.granted('l', 1, grantSpan);
    expect(traces.size).toBe(0);
    applied(app, 5, ended(1, 'expired'));
    expect(traces.size).toBe(0);
  });

  it('with tracing on: an expiry or revoke on the leader is a span in the grant\'s trace; other ends and followers make none', async () => {
    const exporter = new InMemorySpanExporter();
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
    expect(tracingActive()).toBe(true);
    let leader = true;
    const app = new EventEmitter();
    const traces = new GrantTraces(app, { isLeader: () => leader, currentTerm: () => 3 });

    traces.granted('l', 1, grantSpan);
    traces.granted('l', 2, grantSpan);
    traces.granted('l', 3, grantSpan);
    expect(traces.size).toBe(3);
    applied(app, 7, ended(1, 'expired'));
    applied(app, 8, ended(2, 'released'));
    applied(app, 9, ended(4, 'lock_revoked')); // a grant this node did not serve: a root span
    leader = false;
    applied(app, 10, ended(3, 'revoked'));
    expect(traces.size, 'every ended grant is forgotten').toBe(0);

    const spans = exporter.getFinishedSpans();
    expect(spans.map((s) => s.name)).toEqual(['fencelock.expire', 'fencelock.revoke']);
    const [expire, revoke] = spans;
    expect(expire!.spanContext().traceId).toBe(grantSpan.traceId);
    expect(expire!.parentSpanContext?.spanId).toBe(grantSpan.spanId);
    expect(expire!.attributes).toMatchObject({ 'fencelock.lock': 'l', 'fencelock.token': '1', 'fencelock.term': 3, 'fencelock.index': 7, 'fencelock.result': 'expired' });
    expect(expire!.attributes['fencelock.session']).toMatch(/^[0-9a-f]{16}$/);
    expect(revoke!.parentSpanContext).toBeUndefined();
    expect(revoke!.attributes).toMatchObject({ 'fencelock.token': '4', 'fencelock.index': 9, 'fencelock.result': 'lock_revoked' });
    app.emit('restored');
    await exporter.shutdown();
  });
});

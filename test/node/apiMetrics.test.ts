// The API metrics count what a call was answered with: its code, its refusal reason, and the quota a
// QUOTA_EXCEEDED refusal names, as the node's own refusal errors carry them.
import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { ApiError, notLeader } from '../../src/node/api/errors';
import { refusalError } from '../../src/node/api/refusals';
import { NodeMetrics } from '../../src/node/metrics/nodeMetrics';
import { Reason } from '../../src/state';
import { parsePrometheusText, sumOf, valueOf } from '../support/prometheusText';

describe('API metrics', () => {
  it('count calls by method and code, refusals by reason, quota refusals by quota', async () => {
    let now = 0;
    const metrics = new NodeMetrics('n1', () => now);
    const done = metrics.api.begin('Session.Open', 'unary');
    now += 20;
    done(refusalError(Reason.QUOTA_EXCEEDED, 0, undefined, undefined, 'sessions'));
    metrics.api.begin('Lock.Acquire', 'pipeline')();
    metrics.api.answered('KV.Write', 'pipeline', notLeader('127.0.0.1:7002'));
    metrics.api.answered('KV.Get', 'unary', new Error('a bug'));
    metrics.api.refused('Pipeline.Calls', new ApiError(grpc.status.RESOURCE_EXHAUSTED, 'over quota', { 'fencelock-reason': 'QUOTA_EXCEEDED', 'fencelock-quota': 'pipeline_streams' }));
    const m = parsePrometheusText(await metrics.scrape());
    expect(valueOf(m, 'fencelock_api_calls_total', { method: 'Session.Open', code: 'RESOURCE_EXHAUSTED', via: 'unary' })).toBe(1);
    expect(valueOf(m, 'fencelock_api_calls_total', { method: 'Lock.Acquire', code: 'OK', via: 'pipeline' })).toBe(1);
    expect(valueOf(m, 'fencelock_api_calls_total', { method: 'KV.Write', code: 'UNAVAILABLE', via: 'pipeline' })).toBe(1);
    expect(valueOf(m, 'fencelock_api_calls_total', { method: 'KV.Get', code: 'INTERNAL', via: 'unary' })).toBe(1);
    expect(valueOf(m, 'fencelock_api_refusals_total', { method: 'KV.Write', reason: 'NOT_LEADER' })).toBe(1);
    expect(valueOf(m, 'fencelock_quota_refusals_total', { quota: 'sessions' })).toBe(1);
    expect(valueOf(m, 'fencelock_quota_refusals_total', { quota: 'pipeline_streams' })).toBe(1);
    // Timed calls only: 20 ms for the refused Open, falling in the 25 ms bucket and not in the 10 ms one.
    expect(sumOf(m, 'fencelock_api_call_duration_seconds_count')).toBe(2);
    expect(valueOf(m, 'fencelock_api_call_duration_seconds_sum', { method: 'Session.Open', via: 'unary' })).toBeCloseTo(0.02);
    expect(valueOf(m, 'fencelock_api_call_duration_seconds_bucket', { method: 'Session.Open', via: 'unary', le: '0.01' })).toBe(0);
    expect(valueOf(m, 'fencelock_api_call_duration_seconds_bucket', { method: 'Session.Open', via: 'unary', le: '0.025' })).toBe(1);
  });

  it('keeps the series of each method, way of arrival and code apart when they are looked up once and reused', async () => {
    const metrics = new NodeMetrics('n1', () => 0);
    for (let i = 0; i < 3; i++) {
      metrics.api.begin('KV.Get', 'pipeline')();
      metrics.api.begin('KV.Get', 'unary')(notLeader(undefined));
      metrics.api.answered('KV.Get', 'pipeline', new ApiError(grpc.status.INVALID_ARGUMENT, 'key: is required'));
      metrics.api.begin('Lock.Release', 'pipeline')();
    }
    const m = parsePrometheusText(await metrics.scrape());
    expect(valueOf(m, 'fencelock_api_calls_total', { method: 'KV.Get', code: 'OK', via: 'pipeline' })).toBe(3);
    expect(valueOf(m, 'fencelock_api_calls_total', { method: 'KV.Get', code: 'INVALID_ARGUMENT', via: 'pipeline' })).toBe(3);
    expect(valueOf(m, 'fencelock_api_calls_total', { method: 'KV.Get', code: 'UNAVAILABLE', via: 'unary' })).toBe(3);
    expect(valueOf(m, 'fencelock_api_calls_total', { method: 'Lock.Release', code: 'OK', via: 'pipeline' })).toBe(3);
    expect(valueOf(m, 'fencelock_api_call_duration_seconds_count', { method: 'KV.Get', via: 'pipeline' })).toBe(3);
    expect(valueOf(m, 'fencelock_api_call_duration_seconds_count', { method: 'KV.Get', via: 'unary' })).toBe(3);
    expect(valueOf(m, 'fencelock_api_call_duration_seconds_count', { method: 'Lock.Release', via: 'pipeline' })).toBe(3);
  });
});

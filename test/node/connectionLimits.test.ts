// ConnectionLimits.counter: a stream's calls counted against its connection's cap and its identity's quota,
// with the keys built once per stream; the quota is read at each take, so a change applies to open streams.
import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { CONNECTION_CAPS, ConnectionLimits } from '../../src/node/api/connectionLimits';
import type { ApiError } from '../../src/node/api/errors';

const refusal = (fn: () => unknown): ApiError => {
  try {
    fn();
  } catch (err) {
    return err as ApiError;
  }
  throw new Error('expected a refusal');
};

describe('ConnectionLimits.counter', () => {
  it('counts calls per connection and per identity, reads the quota at each take, and releases once', () => {
    let quota = 2;
    const limits = new ConnectionLimits({ ...CONNECTION_CAPS, 'Pipeline calls in flight': 3 }, () => quota);
    const a = limits.counter('conn-a', 'Pipeline calls in flight', 'alice');
    const b = limits.counter('conn-b', 'Pipeline calls in flight', 'alice');
    const first = a.take();
    b.take();
    const overQuota = refusal(() => a.take());
    expect([overQuota.code, overQuota.metadata['fencelock-reason'], overQuota.metadata['fencelock-quota']]).toEqual([grpc.status.RESOURCE_EXHAUSTED, 'QUOTA_EXCEEDED', 'calls_in_flight']);
    first();
    first(); // a second release changes nothing
    a.take();
    expect(refusal(() => a.take()).metadata['fencelock-reason']).toBe('QUOTA_EXCEEDED');
    quota = 10; // raised while the streams are open
    a.take();
    a.take(); // conn-a's third call: its cap
    const overCap = refusal(() => a.take());
    expect([overCap.code, overCap.metadata['fencelock-reason']]).toEqual([grpc.status.RESOURCE_EXHAUSTED, 'TOO_MANY_CALLS']);
    // Without an identity only the connection counts.
    const anonymous = limits.counter('conn-c', 'Pipeline calls in flight');
    for (let i = 0; i < 3; i++) anonymous.take();
    expect(refusal(() => anonymous.take()).metadata['fencelock-reason']).toBe('TOO_MANY_CALLS');
  });

  it('keeps the kinds of count of one connection apart, and gives back every count on release', () => {
    const limits = new ConnectionLimits({ ...CONNECTION_CAPS, 'Pipeline calls in flight': 1, 'Watch streams': 1 }, () => 1);
    const calls = limits.counter('conn-a', 'Pipeline calls in flight', 'alice');
    const call = calls.take();
    expect(refusal(() => calls.take()).metadata['fencelock-reason']).toBe('TOO_MANY_CALLS');
    // Its calls cap is reached, not its watch cap; alice's watches are not her calls either.
    const watch = limits.take('conn-a', 'Watch streams', 'alice');
    expect(refusal(() => limits.take('conn-a', 'Watch streams')).metadata['fencelock-reason']).toBe('TOO_MANY_STREAMS');
    expect(refusal(() => limits.take('conn-b', 'Watch streams', 'alice')).metadata['fencelock-reason']).toBe('QUOTA_EXCEEDED');
    call();
    watch();
    calls.take();
    limits.take('conn-b', 'Watch streams', 'alice');
  });
});

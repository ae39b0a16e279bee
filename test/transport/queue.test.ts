import { describe, expect, it } from 'vitest';
import { MessageQueue, estimateMessageBytes } from '../../src/transport/queue';
import { appMsg, seq } from './helpers';

describe('MessageQueue', () => {
  it('is FIFO and drops the oldest beyond the message bound', () => {
    const q = new MessageQueue(3, 1 << 30);
    let dropped = 0;
    for (let i = 0; i < 5; i++) dropped += q.push(appMsg('a', 'b', i));
    expect(dropped).toBe(2);
    expect(q.length).toBe(3);
    expect(q.take(1 << 30).map(seq)).toEqual([2, 3, 4]);
    expect(q.length).toBe(0);
    expect(q.bytes).toBe(0);
  });

  it('drops the oldest beyond the byte bound but always keeps the newest', () => {
    const one = estimateMessageBytes(appMsg('a', 'b', 0, 1000));
    const q = new MessageQueue(100, one * 2);
    expect(q.push(appMsg('a', 'b', 0, 1000))).toBe(0);
    expect(q.push(appMsg('a', 'b', 1, 1000))).toBe(0);
    expect(q.push(appMsg('a', 'b', 2, 1000))).toBe(1);
    expect(q.bytes).toBe(one * 2);
    // A single message over the whole bound is kept: it is the newest.
    expect(q.push(appMsg('a', 'b', 3, 10_000))).toBe(2);
    expect(q.take(1 << 30).map(seq)).toEqual([3]);
  });

  it('take() cuts at the byte budget but returns at least one message', () => {
    const q = new MessageQueue(100, 1 << 30);
    for (let i = 0; i < 10; i++) q.push(appMsg('a', 'b', i, 100));
    const size = estimateMessageBytes(appMsg('a', 'b', 0, 100));
    expect(q.take(size * 3 + 1).map(seq)).toEqual([0, 1, 2]);
    expect(q.take(1).map(seq)).toEqual([3]);
    expect(q.length).toBe(6);
    expect(q.clear()).toBe(6);
    expect(q.take(1000)).toEqual([]);
  });

  it('stays correct across many pushes and takes (internal compaction)', () => {
    const q = new MessageQueue(5000, 1 << 30);
    let next = 0;
    let expected = 0;
    for (let round = 0; round < 50; round++) {
      for (let i = 0; i < 300; i++) q.push(appMsg('a', 'b', next++, 1));
      const got = q.take(estimateMessageBytes(appMsg('a', 'b', 0, 1)) * 250);
      for (const m of got) expect(seq(m)).toBe(expected++);
    }
    for (const m of q.take(1 << 30)) expect(seq(m)).toBe(expected++);
    expect(expected).toBe(next);
  });

  it('estimates grow with payloads', () => {
    expect(estimateMessageBytes(appMsg('a', 'b', 0, 5000))).toBeGreaterThan(5000);
  });
});

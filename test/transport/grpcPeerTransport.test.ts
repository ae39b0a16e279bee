import { afterEach, describe, expect, it } from 'vitest';
import { makeMessage } from '../../src/raft/messages';
import { MessageType, type Message } from '../../src/raft/types';
import { GrpcPeerTransport } from '../../src/transport/grpcPeerTransport';
import { TestNode, appMsg, loopbackNodes, nextTurn, seq, waitFor } from './helpers';

const { node, stopAll } = loopbackNodes();

afterEach(stopAll);

describe('GrpcPeerTransport', () => {
  it('two transports exchange batches, messages arrive intact', async () => {
    const { n: a, addr: aAddr } = await node('a');
    const { n: b, addr: bAddr } = await node('b');
    const peers = { a: aAddr, b: bAddr };
    const ta = a.start(peers);
    const tb = b.start(peers);

    const heartbeat = makeMessage({ type: MessageType.Heartbeat, from: 'a', to: 'b', term: 7, commit: 41, context: new Uint8Array([1, 2, 3]) });
    ta.send([appMsg('a', 'b', 1, 300), heartbeat]);
    tb.send([appMsg('b', 'a', 5)]);

    await waitFor('b receives 2', () => b.received.length === 2);
    await waitFor('a receives 1', () => a.received.length === 1);
    expect(b.received[0]).toMatchObject({ type: MessageType.App, from: 'a', to: 'b', term: 3, index: 1, commit: 1 });
    expect(b.received[0]!.entries[0]!.data).toEqual(new Uint8Array(300).fill(1));
    expect(b.received[1]).toMatchObject({ type: MessageType.Heartbeat, term: 7, commit: 41 });
    expect(Array.from(b.received[1]!.context)).toEqual([1, 2, 3]);
    expect(a.received[0]).toMatchObject({ from: 'b', to: 'a', index: 5 });
    expect(b.batches).toEqual([2]); // one send() in one turn = one batch
    expect(ta.stats().b).toMatchObject({ connected: true, sentBatches: 1, sentMessages: 2, dropped: 0 });
    expect(tb.stats().a).toMatchObject({ connected: true, sentBatches: 1, sentMessages: 1 });
  });

  it('three transports: each message goes to its own peer; unknown peers and self are dropped', async () => {
    const nodes = await Promise.all(['a', 'b', 'c'].map(node));
    const peers = Object.fromEntries(nodes.map(({ n, addr }) => [n.id, addr]));
    const [a, b, c] = nodes.map(({ n }) => n) as [TestNode, TestNode, TestNode];
    const ta = a.start(peers);
    b.start(peers);
    c.start(peers);

    ta.send([appMsg('a', 'b', 1), appMsg('a', 'c', 2), appMsg('a', 'zz', 3), appMsg('a', 'a', 4), appMsg('a', 'c', 5)]);
    await waitFor('b and c receive', () => b.received.length === 1 && c.received.length === 2);
    expect(b.received.map((m) => m.index)).toEqual([1]);
    expect(c.received.map((m) => m.index)).toEqual([2, 5]);
    expect(Object.keys(ta.stats()).sort()).toEqual(['b', 'c']);
    expect(a.logger.lines.filter((l) => l.msg.includes('unknown peer'))).toHaveLength(2);
  });

  it('many messages sent in one turn become one batch; order is kept on a healthy stream', async () => {
    const { n: a, addr: aAddr } = await node('a');
    const { n: b, addr: bAddr } = await node('b');
    const ta = a.start({ b: bAddr });
    b.start({ a: aAddr });

    ta.send([appMsg('a', 'b', 0)]);
    await waitFor('first message', () => b.received.length === 1);

    // 500 separate send() calls in one turn of the event loop.
    for (let i = 1; i <= 500; i++) ta.send([appMsg('a', 'b', i)]);
    expect(ta.stats().b!.sentBatches).toBe(1); // nothing is written synchronously
    await nextTurn();
    expect(ta.stats().b).toMatchObject({ sentBatches: 2, sentMessages: 501, dropped: 0 });
    await waitFor('all 501', () => b.received.length === 501);
    expect(b.batches).toEqual([1, 500]);
    expect(b.received.map((m) => m.index)).toEqual(Array.from({ length: 501 }, (_, i) => i));

    // Several turns in a row: one batch each.
    for (let turn = 0; turn < 5; turn++) {
      for (let i = 0; i < 20; i++) ta.send([appMsg('a', 'b', 1000 + turn * 20 + i)]);
      await nextTurn();
    }
    await waitFor('all 601', () => b.received.length === 601);
    expect(ta.stats().b!.sentBatches).toBe(7);
    expect(b.received.slice(501).map((m) => m.index)).toEqual(Array.from({ length: 100 }, (_, i) => 1000 + i));
  });

  it('a queue larger than maxBatchBytes is cut into several batches, in order', async () => {
    const { n: a } = await node('a');
    const { n: b, addr: bAddr } = await node('b');
    const ta = a.start({ b: bAddr }, { maxBatchBytes: 10_000 });
    b.start({});
    ta.send([appMsg('a', 'b', 0)]);
    await waitFor('connected', () => b.received.length === 1);

    const msgs = Array.from({ length: 100 }, (_, i) => appMsg('a', 'b', i + 1, 1000));
    ta.send(msgs);
    await waitFor('all', () => b.received.length === 101);
    const batches = ta.stats().b!.sentBatches - 1;
    expect(batches).toBeGreaterThanOrEqual(10);
    expect(batches).toBeLessThanOrEqual(15);
    expect(b.received.slice(1).map((m) => m.index)).toEqual(msgs.map(seq));
    // A single message larger than maxBatchBytes still goes, alone.
    ta.send([appMsg('a', 'b', 500, 50_000)]);
    await waitFor('big one', () => b.received.length === 102);
  });

  it('an unencodable message is dropped alone; the rest of its batch is delivered; send never throws', async () => {
    const { n: a } = await node('a');
    const { n: b, addr: bAddr } = await node('b');
    const ta = a.start({ b: bAddr });
    b.start({});
    const bad = { ...appMsg('a', 'b', 2), term: -1 };
    const worse = { ...appMsg('a', 'b', 3), entries: null } as unknown as Message;
    expect(() => ta.send([appMsg('a', 'b', 1), bad, worse, appMsg('a', 'b', 4)])).not.toThrow();
    await waitFor('good ones', () => b.received.length === 2);
    expect(b.received.map((m) => m.index)).toEqual([1, 4]);
    expect(ta.stats().b!.dropped).toBe(2);
    expect(a.logger.lines.filter((l) => l.level === 'warn').length).toBeGreaterThanOrEqual(1);
  });

  it('under a flood the stream applies backpressure: the queue stays bounded and every message is accounted for', async () => {
    const { n: a } = await node('a');
    const { n: b, addr: bAddr } = await node('b');
    const ta = a.start({ b: bAddr }, { maxQueuedMessagesPerPeer: 300, maxBatchBytes: 64 * 1024 });
    b.start({});
    ta.send([appMsg('a', 'b', 0)]);
    await waitFor('connected', () => b.received.length === 1);

    let total = 1;
    for (let i = 0; i < 30; i++) {
      const burst = Array.from({ length: 400 }, (_, j) => appMsg('a', 'b', total + j, 20_000));
      total += burst.length;
      const t0 = performance.now();
      ta.send(burst);
      expect(performance.now() - t0).toBeLessThan(500); // never waits for the network
      await nextTurn();
    }
    expect(ta.stats().b!.dropped).toBeGreaterThan(0);
    expect(a.logger.lines.some((l) => l.msg.includes('backpressure'))).toBe(true);
    await waitFor('drained', () => {
      const s = ta.stats().b!;
      return s.sentMessages + s.dropped === total && b.received.length === s.sentMessages;
    }, 30_000);
    // Received in increasing order (drops make gaps, never reorderings).
    for (let i = 1; i < b.received.length; i++) expect(b.received[i]!.index).toBeGreaterThan(b.received[i - 1]!.index);
    // The newest messages survive: drop-oldest.
    expect(b.received.at(-1)!.index).toBe(total - 1);
  });

  it('messages addressed to another node are not delivered (wrong address book)', async () => {
    const { n: a } = await node('a');
    const { n: b, addr: bAddr } = await node('b');
    // a believes "c" lives at b's address.
    const ta = a.start({ b: bAddr, c: bAddr });
    b.start({});
    ta.send([appMsg('a', 'c', 1), appMsg('a', 'c', 2)]);
    ta.send([appMsg('a', 'b', 3)]);
    await waitFor('b gets its own', () => b.received.length === 1);
    await waitFor('c stream wrote', () => ta.stats().c!.sentMessages === 2);
    await new Promise((r) => setTimeout(r, 50));
    expect(b.received.map((m) => m.index)).toEqual([3]);
    expect(b.logger.lines.filter((l) => l.msg.includes('another node'))).toHaveLength(1);
  });

  it('a throwing message handler does not break the stream', async () => {
    const { n: a } = await node('a');
    const { n: b, addr: bAddr } = await node('b');
    const ta = a.start({ b: bAddr });
    const tb = b.start({});
    let calls = 0;
    tb.onMessages(() => {
      calls++;
      if (calls === 1) throw new Error('boom');
    });
    ta.send([appMsg('a', 'b', 1)]);
    await waitFor('first', () => calls === 1);
    ta.send([appMsg('a', 'b', 2)]);
    await waitFor('second', () => calls === 2);
    expect(ta.stats().b!.reconnects).toBe(0);
  });

  it('rejects bad configuration at construction', () => {
    expect(() => new GrpcPeerTransport({ selfId: '', peers: {} })).toThrow();
    expect(() => new GrpcPeerTransport({ selfId: 'a', peers: { b: '' } })).toThrow();
    expect(() => new GrpcPeerTransport({ selfId: 'a', peers: {}, maxQueuedMessagesPerPeer: 0 })).toThrow();
  });

  it('send after close is a no-op; close is idempotent', async () => {
    const { n: a } = await node('a');
    const { n: b, addr: bAddr } = await node('b');
    const ta = a.start({ b: bAddr });
    b.start({});
    ta.send([appMsg('a', 'b', 1)]);
    await waitFor('delivered', () => b.received.length === 1);
    const p1 = ta.close();
    const p2 = ta.close();
    expect(p1).toBe(p2);
    await p1;
    expect(() => ta.send([appMsg('a', 'b', 2)])).not.toThrow();
    expect(ta.stats().b).toMatchObject({ connected: false, sentMessages: 1 });
  });
});

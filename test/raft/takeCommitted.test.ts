// takeCommittedEntries(): a leader applies what a quorum acknowledged while its own next write is still
// in flight, without any entry being applied twice or skipped.

import { describe, expect, it } from 'vitest';
import { dec, enc, Network, type TestNode } from './network';

const ABC = ['a', 'b', 'c'];

/** Applies taken entries to the test node's state machine, as the driver does. */
function applyTaken(node: TestNode, taken: ReturnType<TestNode['raw']['takeCommittedEntries']>): void {
  for (const e of taken) {
    expect(e.index, 'taken entries continue the applied ones').toBe(node.appliedIndex + 1);
    node.appliedIndex = e.index;
    node.state.push({ index: e.index, term: e.term, data: dec(e.data) });
  }
}

/** Delivers everything queued to the followers and lets them persist and acknowledge; leader `a` only steps. */
function followersAcknowledge(net: Network): void {
  for (let round = 0; round < 10 && net.queue.length > 0; round++) {
    const batch = net.queue;
    net.queue = [];
    for (const m of batch) net.deliver(m);
    for (const id of ['b', 'c']) while (net.raw(id).hasReady()) net.processReady(id);
  }
}

describe('takeCommittedEntries', () => {
  it('hands a leader the entries a quorum acknowledged while its next Ready is still being written', () => {
    const net = new Network(ABC);
    net.elect('a');
    net.raw('a').propose(enc('x1'));
    net.processReady('a'); // x1 durable on the leader, Apps sent
    net.raw('a').propose(enc('x2'));
    const inFlight = net.beginReady('a'); // x2 being written; x1 not committed when it was taken
    expect(inFlight.entries.map((e) => dec(e.data))).toEqual(['x2']);
    expect(inFlight.committedEntries).toHaveLength(0);

    followersAcknowledge(net);
    const taken = net.raw('a').takeCommittedEntries();
    // x1 is committed and durable here; x2 is committed by the followers but not yet durable on the leader.
    expect(taken.map((e) => dec(e.data))).toEqual(['x1']);
    expect(net.raw('a').takeCommittedEntries(), 'nothing is handed out twice').toEqual([]);
    applyTaken(net.n('a'), taken);

    net.finishReady('a');
    const next = net.processReady('a');
    expect(next.committedEntries.map((e) => dec(e.data)), 'the next Ready starts after the taken entries').toEqual(['x2']);
    net.stabilize();
    for (const id of ABC) expect(net.appliedData(id), id).toEqual(['x1', 'x2']);
  });

  it('skips the committed entries of the Ready in flight, which the caller applies itself', () => {
    const net = new Network(ABC);
    net.elect('a');
    net.raw('a').propose(enc('x1'));
    net.processReady('a');
    followersAcknowledge(net); // x1 committed
    net.raw('a').propose(enc('x2'));
    const inFlight = net.beginReady('a');
    expect(inFlight.committedEntries.map((e) => dec(e.data))).toEqual(['x1']);
    expect(net.raw('a').takeCommittedEntries()).toEqual([]);
    // advance() after take() must accept the Ready's entries as already counted.
    net.finishReady('a');
    net.stabilize();
    for (const id of ABC) expect(net.appliedData(id), id).toEqual(['x1', 'x2']);
  });

  it('hands out nothing while a Ready with a snapshot is in flight', () => {
    const net = new Network(ABC);
    net.elect('a');
    net.crash('c');
    for (let i = 0; i < 5; i++) net.propose('a', `x${i}`);
    net.compact('a');
    net.restart('c');
    // Run until c's Ready carries the snapshot, and hold that Ready open.
    let rd;
    for (let step = 0; step < 200 && rd === undefined; step++) {
      if (net.raw('c').hasReady()) {
        const candidate = net.beginReady('c');
        if (candidate.snapshot !== undefined) rd = candidate;
        else net.finishReady('c');
      }
      for (const id of ['a', 'b']) while (net.raw(id).hasReady()) net.processReady(id);
      if (!net.deliverOne()) net.raw('a').tick();
    }
    expect(rd?.snapshot, 'c receives a snapshot').toBeDefined();
    expect(net.raw('c').takeCommittedEntries()).toEqual([]);
    net.finishReady('c');
    net.stabilize();
    expect(net.appliedData('c')).toEqual(net.appliedData('a'));
  });
});

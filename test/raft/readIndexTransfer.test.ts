// ReadIndex (thesis 6.4) and leadership transfer (thesis 3.10).

import { describe, it, expect } from 'vitest';
import { MessageType, ProposalDroppedError, Role, isTransferContext, type WireMessage } from '../../src/raft';
import { Network, dec, drain, enc, msg } from './network';

const ABC = ['a', 'b', 'c'];

function dropReason(f: () => void): string | undefined {
  try {
    f();
  } catch (e) {
    if (e instanceof ProposalDroppedError) return e.reason;
    throw e;
  }
  return undefined;
}

describe('ReadIndex', () => {
  it('the leader answers with its commit index once a quorum answered a heartbeat carrying the context', () => {
    const net = new Network(ABC);
    net.elect('a');
    net.propose('a', 'x');
    const commit = net.raw('a').status().commit;
    const held: WireMessage[] = [];
    net.filter = (m) => {
      if (m.type === MessageType.HeartbeatResp) {
        held.push(m);
        return false;
      }
      return true;
    };
    net.raw('a').readIndex(enc('r1'));
    net.stabilize();
    const hbs = net.sent.filter((m) => m.type === MessageType.Heartbeat && dec(m.context) === 'r1');
    expect(hbs.map((m) => m.to).sort()).toEqual(['b', 'c']);
    expect(net.n('a').readStates).toEqual([]); // not confirmed yet
    net.filter = undefined;
    net.deliver(held[0]); // the leader plus one follower: a quorum of 3
    net.stabilize();
    expect(net.n('a').readStates.map((r) => [r.index, dec(r.context)])).toEqual([[commit, 'r1']]);
    net.deliver(held[1]); // a late answer changes nothing
    net.stabilize();
    expect(net.n('a').readStates).toHaveLength(1);
  });

  it('waits until the leader has committed an entry of its own term (its no-op)', () => {
    const net = new Network(ABC);
    let blockApps = true;
    net.filter = (m) => !(blockApps && m.type === MessageType.App);
    net.elect('a');
    expect(net.raw('a').status().commit).toBe(0);
    net.raw('a').readIndex(enc('early'));
    net.tick(3); // heartbeats get through, but the no-op is not committed
    expect(net.n('a').readStates).toEqual([]);
    blockApps = false;
    net.tick(3);
    expect(net.n('a').readStates.map((r) => [r.index, dec(r.context)])).toEqual([[1, 'early']]);
  });

  it('an isolated leader never confirms a read', () => {
    const net = new Network(ABC);
    net.elect('a');
    net.isolate('a');
    net.raw('a').readIndex(enc('r'));
    net.tick(5);
    expect(net.raw('a').status().role).toBe(Role.Leader);
    expect(net.n('a').readStates).toEqual([]);
    net.tick(10);
    expect(net.raw('a').status().role).toBe(Role.Follower); // check-quorum; the read is dropped
    net.heal();
    net.tick(30);
    expect(net.n('a').readStates).toEqual([]);
  });

  it('a follower forwards the request to the leader and receives the read state', () => {
    const net = new Network(ABC);
    net.elect('a');
    net.propose('a', 'x');
    net.raw('c').readIndex(enc('from-c'));
    net.stabilize();
    expect(net.count(MessageType.ReadIndex, (m) => m.from === 'c' && m.to === 'a')).toBe(1);
    expect(net.n('c').readStates.map((r) => [r.index, dec(r.context)])).toEqual([[net.raw('a').status().commit, 'from-c']]);
    expect(net.n('a').readStates).toEqual([]);
  });

  it('without a known leader the request is refused at once', () => {
    const net = new Network(ABC);
    expect(dropReason(() => net.raw('a').readIndex(enc('r')))).toBe('not-leader');
  });

  it('a single-node cluster answers without any message', () => {
    const net = new Network(['solo']);
    net.elect('solo');
    net.propose('solo', 'x');
    const before = net.sent.length;
    net.raw('solo').readIndex(enc('r'));
    net.stabilize();
    expect(net.sent.length).toBe(before);
    expect(net.n('solo').readStates.map((r) => [r.index, dec(r.context)])).toEqual([[2, 'r']]);
  });

  it('several requests in one turn are confirmed by one heartbeat round', () => {
    const net = new Network(ABC);
    net.elect('a');
    const before = net.sent.length;
    for (let i = 0; i < 5; i++) net.raw('a').readIndex(enc(`r${i}`));
    net.stabilize();
    expect(net.sent.slice(before).filter((m) => m.type === MessageType.Heartbeat)).toHaveLength(2);
    expect(net.n('a').readStates.map((r) => dec(r.context))).toEqual(['r0', 'r1', 'r2', 'r3', 'r4']);
  });

  it('bounds the requests waiting for confirmation', () => {
    const net = new Network(ABC, { maxPendingReads: 3 });
    net.elect('a');
    net.isolate('a');
    for (let i = 0; i < 3; i++) net.raw('a').readIndex(enc(`r${i}`));
    expect(dropReason(() => net.raw('a').readIndex(enc('one too many')))).toBe('too-many-pending-reads');
  });
});

describe('leadership transfer', () => {
  it('the target becomes leader at once, despite the leader lease', () => {
    const net = new Network(ABC);
    net.elect('a');
    net.propose('a', 'x');
    net.raw('a').transferLeadership('b');
    net.stabilize();
    expect(net.raw('b').status()).toMatchObject({ role: Role.Leader, term: 2 });
    expect(net.raw('a').status()).toMatchObject({ role: Role.Follower, term: 2, leader: 'b' });
    // The target skipped pre-vote, and its vote requests carried the transfer flag.
    const votes = net.sent.filter((m) => m.type === MessageType.Vote && m.term === 2);
    expect(votes).toHaveLength(2);
    for (const v of votes) expect(isTransferContext(v.context)).toBe(true);
    expect(net.sent.filter((m) => m.type === MessageType.PreVote && m.term === 2)).toHaveLength(0);
    net.propose('b', 'y');
    for (const id of ABC) expect(net.appliedData(id)).toEqual(['x', 'y']);
  });

  it('brings a lagging target up to date first, refusing proposals meanwhile', () => {
    const net = new Network(ABC);
    net.elect('a');
    net.isolate('c');
    for (let i = 0; i < 5; i++) net.propose('a', `x${i}`);
    const lastIndex = net.raw('a').status().lastIndex;
    net.raw('a').transferLeadership('c');
    expect(net.raw('a').status().leadTransferee).toBe('c');
    expect(dropReason(() => net.raw('a').propose(enc('refused')))).toBe('transferring');
    net.stabilize();
    expect(net.count(MessageType.TimeoutNow)).toBe(0); // c is behind and unreachable
    net.heal();
    net.tick(2);
    const timeoutNow = net.delivered.findIndex((m) => m.type === MessageType.TimeoutNow);
    expect(timeoutNow).toBeGreaterThan(0);
    // TimeoutNow went out only after c acknowledged the leader's last entry.
    const ack = net.delivered.findIndex((m) => m.type === MessageType.AppResp && m.from === 'c' && m.index === lastIndex);
    expect(ack).toBeGreaterThanOrEqual(0);
    expect(ack).toBeLessThan(timeoutNow);
    expect(net.raw('c').status().role).toBe(Role.Leader);
    expect(net.appliedData('c')).toEqual(['x0', 'x1', 'x2', 'x3', 'x4']);
  });

  it('is abandoned after an election timeout; proposals are accepted again', () => {
    const net = new Network(ABC);
    net.elect('a');
    net.crash('c');
    net.raw('a').transferLeadership('c');
    expect(dropReason(() => net.raw('a').propose(enc('x')))).toBe('transferring');
    net.tick(10);
    expect(net.raw('a').status()).toMatchObject({ role: Role.Leader, leadTransferee: '' });
    expect(dropReason(() => net.raw('a').propose(enc('x')))).toBeUndefined();
  });

  it('only a leader can transfer', () => {
    const net = new Network(ABC);
    net.elect('a');
    expect(dropReason(() => net.raw('b').transferLeadership('c'))).toBe('not-leader');
  });

  it('a vote without the transfer flag is still refused under the lease', () => {
    const net = new Network(ABC);
    net.elect('a');
    const b = net.raw('b');
    b.step(msg({ type: MessageType.Vote, from: 'c', to: 'b', term: 2, index: 1, logTerm: 1 }));
    expect(drain(b)).toEqual([]);
    b.step(msg({ type: MessageType.Vote, from: 'c', to: 'b', term: 2, index: 1, logTerm: 1, context: enc('transfer') }));
    expect(drain(b).map((m) => [m.type, m.reject])).toEqual([[MessageType.VoteResp, false]]);
  });
});

// What an attacker, or a buggy or bit-flipped authenticated peer, may say to the core, and what the core
// does with it. Each test is a regression: it failed on the core before the defence it names.

import { describe, it, expect } from 'vitest';
import { MessageType, NONE, RAFT_NUMBER_LIMIT, RawNode, Role } from '../../src/raft';
import { Network, drain, msg, nodeWithLog } from './network';

const ABC = ['a', 'b', 'c'];

describe('hardening: terms at the limit', () => {
  it('a Heartbeat at term 2^53 - 1 (or at the 2^48 limit) is not adopted and elections still succeed', () => {
    const net = new Network(ABC);
    net.elect('a');
    const term = net.raw('a').status().term;
    for (const huge of [Number.MAX_SAFE_INTEGER, RAFT_NUMBER_LIMIT, RAFT_NUMBER_LIMIT - 1, RAFT_NUMBER_LIMIT - 2]) {
      for (const to of ['b', 'c']) net.deliver(msg({ type: MessageType.Heartbeat, from: 'a', to, term: huge, commit: 0 }));
    }
    net.stabilize();
    for (const id of ABC) expect(net.raw(id).status().term).toBe(term);
    // The cluster still elects: crash the leader, the others elect one of themselves.
    net.crash('a');
    net.tick(40, ['b', 'c']);
    net.stabilize();
    const leaders = net.leaders().filter((id) => id !== 'a');
    expect(leaders).toHaveLength(1);
    expect(net.raw(leaders[0]).status().term).toBeGreaterThan(term);
  });

  it('the highest adoptable term is 2^48 - 3, so a candidate at term + 1 can still be adopted by its peers', () => {
    const b = nodeWithLog('b', ABC, [1]);
    b.step(msg({ type: MessageType.Heartbeat, from: 'a', to: 'b', term: RAFT_NUMBER_LIMIT - 3 }));
    expect(b.status().term).toBe(RAFT_NUMBER_LIMIT - 3);
    const c = nodeWithLog('c', ABC, [1]);
    c.step(msg({ type: MessageType.Vote, from: 'a', to: 'c', term: RAFT_NUMBER_LIMIT - 2, index: 1, logTerm: 1 }));
    expect(c.status().term).toBe(1);
    expect(c.status().vote).toBe(NONE);
  });

  it('a node persisted at a term that cannot be incremented does not campaign (core guard)', () => {
    const raw = new RawNode(
      { id: 'a', voters: ['a'], electionTicks: 10, heartbeatTicks: 1, random: () => 0 },
      { hardState: { term: RAFT_NUMBER_LIMIT - 2, vote: NONE, commit: 0 }, entries: [] },
    );
    raw.campaign();
    for (let i = 0; i < 50; i++) raw.tick();
    drain(raw);
    expect(raw.status().role).toBe(Role.Follower);
    expect(raw.status().term).toBe(RAFT_NUMBER_LIMIT - 2);
  });
});

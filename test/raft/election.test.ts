// Leader election: the rules of the Raft paper (section 5.2, 5.4.1) and the thesis extensions
// (pre-vote 9.6, check-quorum 6.2, leader lease 4.2.3).

import { describe, it, expect } from 'vitest';
import { MessageType, NONE, RawNode, Role, flattenMessage, narrowMessage, type Message } from '../../src/raft';
import { Network, drain, msg, nodeWithLog, seededRandom } from './network';

const ABC = ['a', 'b', 'c'];

function vote(type: MessageType, from: string, to: string, term: number, index: number, logTerm: number): Message {
  return msg({ type, from, to, term, index, logTerm });
}

describe('election timeout', () => {
  it('a follower campaigns after a randomized timeout in [electionTicks, 2*electionTicks)', () => {
    const seen = new Set<number>();
    for (let seed = 1; seed <= 30; seed++) {
      const raw = new RawNode({ id: 'a', voters: ABC, electionTicks: 10, heartbeatTicks: 1, random: seededRandom(seed) });
      let ticks = 0;
      while (raw.status().role === Role.Follower) {
        raw.tick();
        ticks++;
        expect(ticks).toBeLessThan(20);
      }
      expect(ticks).toBeGreaterThanOrEqual(10);
      expect(raw.status().role).toBe(Role.PreCandidate);
      seen.add(ticks);
    }
    expect(seen.size).toBeGreaterThan(3); // really randomized
  });

  it('a candidate that neither wins nor loses starts a new election after another timeout', () => {
    const raw = new RawNode({ id: 'a', voters: ABC, electionTicks: 10, heartbeatTicks: 1, random: () => 0, preVote: false });
    for (let i = 0; i < 10; i++) raw.tick();
    expect(raw.status()).toMatchObject({ role: Role.Candidate, term: 1 });
    for (let i = 0; i < 10; i++) raw.tick();
    expect(raw.status()).toMatchObject({ role: Role.Candidate, term: 2 });
  });

  it('a leader does not campaign, and neither does a node outside the voters', () => {
    const outsider = new RawNode({ id: 'z', voters: ABC, electionTicks: 10, heartbeatTicks: 1, random: () => 0 });
    for (let i = 0; i < 100; i++) outsider.tick();
    expect(outsider.status().role).toBe(Role.Follower);
    outsider.campaign();
    expect(outsider.status().role).toBe(Role.Follower);
  });
});

describe('voting rules', () => {
  it('a candidate votes for itself, bumps its term and asks every peer with its last index and term', () => {
    const raw = nodeWithLog('a', ABC, [1, 1, 2], {}, { preVote: false });
    raw.campaign();
    const st = raw.status();
    expect(st).toMatchObject({ role: Role.Candidate, term: 3, vote: 'a' });
    const rd = raw.ready();
    expect(rd.hardState).toEqual({ term: 3, vote: 'a', commit: 0 });
    // Vote requests carry the new term and self-vote: they leave only after that is persisted.
    expect(rd.messages).toEqual([]);
    const votes = rd.messagesAfterPersist;
    expect(votes.map(flattenMessage).map((m) => [m.type, m.to, m.term, m.index, m.logTerm])).toEqual([
      [MessageType.Vote, 'b', 3, 3, 2],
      [MessageType.Vote, 'c', 3, 3, 2],
    ]);
  });

  it('wins with a majority, loses with a majority of rejections, waits otherwise', () => {
    for (const [size, grants, rejects, want] of [
      [3, 1, 0, Role.Leader],
      [3, 0, 2, Role.Follower],
      [5, 1, 0, Role.Candidate],
      [5, 2, 0, Role.Leader],
      [5, 1, 2, Role.Candidate],
      [5, 0, 3, Role.Follower],
    ] as const) {
      const ids = ['a', 'b', 'c', 'd', 'e'].slice(0, size);
      const raw = new RawNode({ id: 'a', voters: ids, electionTicks: 10, heartbeatTicks: 1, random: () => 0, preVote: false });
      raw.campaign();
      drain(raw);
      let k = 1;
      for (let i = 0; i < grants; i++) raw.step(msg({ type: MessageType.VoteResp, from: ids[k++], to: 'a', term: 1 }));
      for (let i = 0; i < rejects; i++) {
        raw.step(msg({ type: MessageType.VoteResp, from: ids[k++], to: 'a', term: 1, reject: true }));
      }
      expect(raw.status().role, `${size} nodes, ${grants} grants, ${rejects} rejects`).toBe(want);
    }
  });

  it('grants at most one vote per term (first come, first served), and repeats it to the same candidate', () => {
    const raw = new RawNode({ id: 'a', voters: ABC, electionTicks: 10, heartbeatTicks: 1, random: () => 0 });
    raw.step(vote(MessageType.Vote, 'b', 'a', 1, 0, 0));
    raw.step(vote(MessageType.Vote, 'c', 'a', 1, 0, 0));
    raw.step(vote(MessageType.Vote, 'b', 'a', 1, 0, 0));
    const rd = raw.ready();
    expect(rd.hardState).toEqual({ term: 1, vote: 'b', commit: 0 });
    expect(rd.messages).toEqual([]);
    expect(rd.messagesAfterPersist.map(flattenMessage).map((m) => [m.to, m.type, m.reject])).toEqual([
      ['b', MessageType.VoteResp, false],
      ['c', MessageType.VoteResp, true],
      ['b', MessageType.VoteResp, false],
    ]);
  });

  it('the vote survives a restart: no second vote in the same term', () => {
    const net = new Network(ABC);
    net.raw('a').step(vote(MessageType.Vote, 'b', 'a', 1, 0, 0));
    net.flushReadies();
    net.crash('a');
    net.restart('a');
    expect(net.raw('a').status()).toMatchObject({ term: 1, vote: 'b' });
    net.raw('a').step(vote(MessageType.Vote, 'c', 'a', 1, 0, 0));
    const rd = net.processReady('a');
    expect(rd.messagesAfterPersist[0]).toMatchObject({ type: MessageType.VoteResp, to: 'c', reject: true });
  });

  // Paper 5.4.1: a vote is granted only to a candidate whose log is at least as up to date.
  const upToDate: [number[], number, number, boolean][] = [
    // voter log terms, candidate last index, candidate last term, granted
    [[], 0, 0, true],
    [[1], 1, 1, true],
    [[1], 2, 1, true],
    [[1, 1], 1, 1, false], // same last term, shorter log
    [[2], 1, 1, false], // lower last term
    [[2], 5, 1, false], // lower last term, however long
    [[1], 1, 2, true], // higher last term, same length
    [[1, 1, 1], 1, 2, true], // higher last term, shorter log
    [[1, 2], 2, 2, true],
    [[1, 2], 1, 2, false],
  ];
  for (const type of [MessageType.Vote, MessageType.PreVote]) {
    for (const [terms, index, logTerm, granted] of upToDate) {
      it(`${MessageType[type]}: voter log ${JSON.stringify(terms)} vs candidate (${index}, ${logTerm}) -> ${granted ? 'grant' : 'reject'}`, () => {
        const raw = nodeWithLog('a', ABC, terms, { term: 3 });
        raw.step(vote(type, 'b', 'a', 4, index, logTerm));
        const out = drain(raw);
        expect(out).toHaveLength(1);
        expect(out[0].type).toBe(type === MessageType.Vote ? MessageType.VoteResp : MessageType.PreVoteResp);
        expect(out[0].reject).toBe(!granted);
        // A real vote request moves the voter to the candidate's term; a pre-vote does not.
        expect(raw.status().term).toBe(type === MessageType.Vote ? 4 : 3);
        expect(raw.status().vote).toBe(type === MessageType.Vote && granted ? 'b' : NONE);
      });
    }
  }

  it('voteWithoutLogCheck (test-only bug) grants votes to stale logs', () => {
    const fine = nodeWithLog('a', ABC, [1, 2, 2], { term: 2 });
    const buggy = nodeWithLog('a', ABC, [1, 2, 2], { term: 2 }, { testOnlyBugs: { voteWithoutLogCheck: true } });
    for (const type of [MessageType.PreVote, MessageType.Vote]) {
      for (const [raw, reject] of [
        [fine, true],
        [buggy, false],
      ] as const) {
        raw.step(vote(type, 'b', 'a', 3, 1, 1));
        const out = drain(raw);
        expect(out[0].reject, `${MessageType[type]}`).toBe(reject);
      }
    }
  });
});

describe('terms', () => {
  for (const role of [Role.Follower, Role.Candidate, Role.Leader]) {
    it(`a ${role} receiving a message of a higher term becomes a follower of that term`, () => {
      const net = new Network(ABC, { preVote: false });
      if (role === Role.Leader) net.elect('a');
      if (role === Role.Candidate) {
        net.raw('a').campaign();
        net.flushReadies();
        net.queue = [];
      }
      const term = net.raw('a').status().term;
      net.raw('a').step(msg({ type: MessageType.App, from: 'b', to: 'a', term: term + 5, index: 0, logTerm: 0 }));
      expect(net.raw('a').status()).toMatchObject({ role: Role.Follower, term: term + 5, leader: 'b', vote: NONE });
    });
  }

  it('a candidate steps down when a leader of its own term appears', () => {
    const raw = new RawNode({ id: 'a', voters: ABC, electionTicks: 10, heartbeatTicks: 1, random: () => 0, preVote: false });
    raw.campaign();
    raw.step(msg({ type: MessageType.Heartbeat, from: 'b', to: 'a', term: 1 }));
    expect(raw.status()).toMatchObject({ role: Role.Follower, term: 1, leader: 'b', vote: 'a' });
  });

  it('a candidate steps down on a rejection carrying a higher term', () => {
    const raw = new RawNode({ id: 'a', voters: ABC, electionTicks: 10, heartbeatTicks: 1, random: () => 0, preVote: false });
    raw.campaign();
    raw.step(msg({ type: MessageType.VoteResp, from: 'b', to: 'a', term: 7, reject: true }));
    expect(raw.status()).toMatchObject({ role: Role.Follower, term: 7 });
  });

  it('stale-term requests are refused with our term; stale responses are ignored', () => {
    const raw = nodeWithLog('a', ABC, [1, 2], { term: 5 });
    const before = raw.status();
    raw.step(msg({ type: MessageType.App, from: 'b', to: 'a', term: 3, index: 2, logTerm: 2, entries: [{ term: 3, index: 3, type: 0, data: new Uint8Array(1) }], commit: 2 }));
    raw.step(msg({ type: MessageType.Heartbeat, from: 'b', to: 'a', term: 3, commit: 2 }));
    raw.step(vote(MessageType.Vote, 'c', 'a', 4, 9, 4));
    raw.step(vote(MessageType.PreVote, 'c', 'a', 4, 9, 4));
    raw.step(msg({ type: MessageType.VoteResp, from: 'c', to: 'a', term: 4 }));
    raw.step(msg({ type: MessageType.AppResp, from: 'c', to: 'a', term: 4, index: 2 }));
    const out = drain(raw);
    expect(out.map((m) => [m.type, m.term, m.reject])).toEqual([
      [MessageType.AppResp, 5, false],
      [MessageType.AppResp, 5, false],
      [MessageType.VoteResp, 5, true],
      [MessageType.PreVoteResp, 5, true],
    ]);
    const after = raw.status();
    expect(after).toMatchObject({ term: 5, vote: NONE, lastIndex: 2, commit: before.commit, role: Role.Follower });
  });

  it('a stale leader learns the new term from the first answer and steps down', () => {
    const net = new Network(ABC, { checkQuorum: false });
    net.elect('a');
    net.isolate('a');
    // b and c stop hearing from a (a itself is not ticked, so it keeps believing it leads).
    net.tick(20, ['b', 'c']);
    expect(net.raw('b').status().role === Role.Leader || net.raw('c').status().role === Role.Leader).toBe(true);
    const newTerm = net.raw('b').status().term;
    expect(newTerm).toBe(2);
    expect(net.raw('a').status()).toMatchObject({ role: Role.Leader, term: 1 });
    net.heal();
    net.tick(1, ['a']); // one heartbeat
    expect(net.raw('a').status()).toMatchObject({ role: Role.Follower, term: 2 });
  });
});

describe('pre-vote', () => {
  it('a pre-candidate asks at term+1 without changing its own term or vote', () => {
    const raw = nodeWithLog('a', ABC, [1, 1], { term: 1 });
    raw.campaign();
    expect(raw.status()).toMatchObject({ role: Role.PreCandidate, term: 1, vote: NONE });
    const rd = raw.ready();
    expect(rd.hardState).toBeUndefined();
    expect(rd.messagesAfterPersist.map(flattenMessage).map((m) => [m.type, m.term, m.index, m.logTerm])).toEqual([
      [MessageType.PreVote, 2, 2, 1],
      [MessageType.PreVote, 2, 2, 1],
    ]);
    raw.advance(rd);
    // A majority of pre-votes starts the real election.
    raw.step(msg({ type: MessageType.PreVoteResp, from: 'b', to: 'a', term: 2 }));
    expect(raw.status()).toMatchObject({ role: Role.Candidate, term: 2, vote: 'a' });
  });

  it('a pre-candidate rejected by a majority falls back to follower at the same term', () => {
    const raw = nodeWithLog('a', ABC, [1], { term: 1 });
    raw.campaign();
    raw.step(msg({ type: MessageType.PreVoteResp, from: 'b', to: 'a', term: 1, reject: true }));
    raw.step(msg({ type: MessageType.PreVoteResp, from: 'c', to: 'a', term: 1, reject: true }));
    expect(raw.status()).toMatchObject({ role: Role.Follower, term: 1 });
  });

  it('a partitioned node rejoins without bumping terms or disrupting the leader', () => {
    const net = new Network(ABC);
    net.elect('a');
    net.propose('a', 'x');
    net.isolate('c');
    net.tick(200);
    // c kept pre-campaigning, but a pre-vote never changes the term.
    expect(net.raw('c').status().term).toBe(1);
    expect(net.raw('c').status().role).not.toBe(Role.Leader);
    net.heal();
    net.tick(50);
    expect(net.raw('a').status()).toMatchObject({ role: Role.Leader, term: 1 });
    expect(net.raw('c').status()).toMatchObject({ role: Role.Follower, term: 1, leader: 'a' });
    expect(net.appliedData('c')).toEqual(['x']);
  });

  it('without pre-vote (and check-quorum) the same rejoin disrupts the leader', () => {
    const net = new Network(ABC, { preVote: false, checkQuorum: false });
    net.elect('a');
    net.isolate('c');
    net.tick(200);
    expect(net.raw('c').status().term).toBeGreaterThan(5);
    net.heal();
    net.tick(50);
    expect(net.raw('a').status().term).toBeGreaterThan(5); // the leader was deposed
  });

  it('a follower that heard from its leader within the election timeout ignores pre-votes, even without check-quorum', () => {
    const net = new Network(ABC, { checkQuorum: false });
    net.elect('a');
    const b = net.raw('b');
    b.step(vote(MessageType.PreVote, 'c', 'b', 2, 10, 1));
    expect(drain(b)).toEqual([]);
    // Once the leader has been silent for a full election timeout, the pre-vote is granted.
    for (let i = 0; i < 10; i++) b.tick();
    drain(b);
    b.step(vote(MessageType.PreVote, 'c', 'b', 2, 10, 1));
    const out = drain(b);
    expect(out.map((m) => [m.type, m.reject, m.term])).toEqual([[MessageType.PreVoteResp, false, 2]]);
    expect(b.status().term).toBe(1);
  });
});

describe('check-quorum and leader lease', () => {
  it('an isolated leader steps down within an election timeout; the majority elects a new one', () => {
    const net = new Network(ABC);
    net.elect('a');
    net.isolate('a');
    let steppedDownAfter = -1;
    for (let i = 1; i <= 30; i++) {
      net.tick(1);
      if (steppedDownAfter < 0 && net.raw('a').status().role !== Role.Leader) steppedDownAfter = i;
    }
    expect(steppedDownAfter).toBeGreaterThan(0);
    expect(steppedDownAfter).toBeLessThanOrEqual(10);
    expect(net.raw('a').status().term).toBe(1); // it stepped down on its own, no one told it
    expect(net.leaders().filter((id) => id !== 'a')).toHaveLength(1);
  });

  it('without check-quorum an isolated leader keeps believing it leads', () => {
    const net = new Network(ABC, { checkQuorum: false });
    net.elect('a');
    net.isolate('a');
    net.tick(50);
    expect(net.raw('a').status().role).toBe(Role.Leader);
  });

  it('a leader that still hears from a majority stays, though a minority is gone', () => {
    const net = new Network(['a', 'b', 'c', 'd', 'e']);
    net.elect('a');
    net.crash('d');
    net.crash('e');
    net.tick(100);
    expect(net.raw('a').status()).toMatchObject({ role: Role.Leader, term: 1 });
  });

  it('leader lease: followers ignore a higher-term vote request while their leader is alive', () => {
    const net = new Network(ABC, { preVote: false });
    net.elect('a');
    const b = net.raw('b');
    b.step(vote(MessageType.Vote, 'c', 'b', 2, 10, 1));
    expect(drain(b)).toEqual([]);
    expect(b.status()).toMatchObject({ term: 1, vote: 'a', leader: 'a' });
    // After an election timeout without the leader, the vote is granted.
    for (let i = 0; i < 10; i++) b.tick();
    drain(b);
    b.step(vote(MessageType.Vote, 'c', 'b', 2, 10, 1));
    expect(drain(b).map((m) => [m.type, m.reject])).toEqual([[MessageType.VoteResp, false]]);
    expect(b.status()).toMatchObject({ term: 2, vote: 'c' });
  });

  it('without check-quorum there is no lease for real votes', () => {
    const net = new Network(ABC, { preVote: false, checkQuorum: false });
    net.elect('a');
    const b = net.raw('b');
    b.step(vote(MessageType.Vote, 'c', 'b', 2, 10, 1));
    expect(drain(b).map((m) => [m.type, m.reject])).toEqual([[MessageType.VoteResp, false]]);
  });

  it('quorumActive(): true only while a quorum acknowledged the leader within electionTicks', () => {
    const net = new Network(['a', 'b', 'c', 'd', 'e'], { checkQuorum: false, electionTicks: 10 });
    expect(net.raw('a').quorumActive()).toBe(false); // not leader
    net.raw('a').campaign();
    // Elected, but before any follower has acknowledged its leadership: not yet.
    while (net.raw('a').status().role !== Role.Leader) {
      if (!net.deliverOne()) net.flushReadies();
    }
    expect(net.raw('a').quorumActive()).toBe(false);
    net.stabilize();
    expect(net.raw('a').quorumActive()).toBe(false); // the no-op was acknowledged, but no heartbeat yet
    net.tick(1);
    expect(net.raw('a').quorumActive()).toBe(true);
    net.crash('d');
    net.crash('e');
    net.tick(30);
    expect(net.raw('a').quorumActive()).toBe(true); // a, b, c
    net.isolate('a');
    net.tick(9);
    expect(net.raw('a').quorumActive()).toBe(true); // heard within the last 10 ticks
    net.tick(1);
    expect(net.raw('a').quorumActive()).toBe(false);
    expect(net.raw('a').status().role).toBe(Role.Leader); // check-quorum is off: only the lease expired
    expect(net.raw('b').quorumActive()).toBe(false);
  });

  it('a late duplicate of an old heartbeat answer does not extend the lease', () => {
    const net = new Network(ABC, { checkQuorum: false });
    net.elect('a');
    net.tick(1);
    const old = net.delivered.filter((m) => m.type === MessageType.HeartbeatResp && m.to === 'a');
    expect(old.length).toBeGreaterThan(0);
    net.isolate('a');
    net.tick(10);
    expect(net.raw('a').quorumActive()).toBe(false);
    for (const m of old) net.raw('a').step(narrowMessage(m)); // replayed by the network much later
    expect(net.raw('a').quorumActive()).toBe(false);
  });
});

describe('single-node cluster', () => {
  it('elects itself on its first timeout and commits on its own', () => {
    const net = new Network(['solo']);
    net.tick(20);
    expect(net.raw('solo').status()).toMatchObject({ role: Role.Leader, term: 1 });
    net.propose('solo', 'x');
    net.propose('solo', 'y');
    expect(net.appliedData('solo')).toEqual(['x', 'y']);
    expect(net.raw('solo').quorumActive()).toBe(true);
    net.tick(100);
    expect(net.raw('solo').status().role).toBe(Role.Leader); // check-quorum counts itself
  });
});

// The Ready/advance contract, restarts from persisted state, the test-only bugs, robustness against
// bad input and the invariant checks.

import { describe, it, expect } from 'vitest';
import {
  MessageType,
  NONE,
  RaftInvariantError,
  RawNode,
  Role,
  flattenMessage,
  type Message,
  type Ready,
} from '../../src/raft';
import { RaftLog } from '../../src/raft/raftLog';
import { Network, drain, enc, entries, msg, nodeWithLog, seededRandom } from './network';
import { runFuzz } from './chaos';

const ABC = ['a', 'b', 'c'];
const LEADER_SENDS = new Set([MessageType.App, MessageType.Heartbeat, MessageType.Snap, MessageType.TimeoutNow, MessageType.ReadIndexResp]);
const AFTER_PERSIST = new Set([
  MessageType.Vote,
  MessageType.VoteResp,
  MessageType.PreVote,
  MessageType.PreVoteResp,
  MessageType.AppResp,
  MessageType.HeartbeatResp,
  MessageType.SnapResp,
]);

/** Runs a busy scenario (elections, replication, reads, snapshots, a transfer) keeping every Ready. */
function busyCluster(bugs = {}) {
  const net = new Network(ABC, { keepReadies: true, snapshotChunkBytes: 40, testOnlyBugs: bugs });
  net.elect('a');
  net.crash('c');
  for (let i = 0; i < 10; i++) net.propose('a', `x${i}`);
  net.compact('a');
  net.restart('c');
  net.tick(5);
  net.raw('b').readIndex(enc('read'));
  net.tick(3);
  expect(net.n('b').readStates).toHaveLength(1);
  net.raw('a').transferLeadership('c');
  net.tick(5);
  expect(net.raw('c').status().role).toBe(Role.Leader);
  return net;
}

describe('Ready contract', () => {
  it('mustSync exactly when the write holds entries, a snapshot, or a new term or vote', () => {
    const net = busyCluster();
    let commitOnly = 0;
    for (const id of ABC) {
      let prev = { term: 0, vote: '' };
      for (const rd of net.n(id).readies) {
        const hs = rd.hardState;
        const termOrVote = hs !== undefined && (hs.term !== prev.term || hs.vote !== prev.vote);
        if (hs) prev = hs;
        expect(rd.mustSync).toBe(termOrVote || rd.entries.length > 0 || rd.snapshot !== undefined);
        if (hs && !rd.mustSync) commitOnly++;
      }
    }
    expect(commitOnly, 'some Ready moved only the commit index').toBeGreaterThan(0);
  });

  it('messages hold only what a leader sends; acknowledgements and vote requests wait for persistence', () => {
    const net = busyCluster();
    const seen = new Set<MessageType>();
    for (const id of ABC) {
      for (const rd of net.n(id).readies) {
        for (const m of rd.messages) {
          seen.add(m.type);
          expect(LEADER_SENDS.has(m.type) || m.type === MessageType.ReadIndex, MessageType[m.type]).toBe(true);
        }
        for (const m of rd.messagesAfterPersist) {
          seen.add(m.type);
          expect(AFTER_PERSIST.has(m.type), MessageType[m.type]).toBe(true);
        }
      }
    }
    // The scenario produced every kind of message.
    expect([...seen].sort((x, y) => x - y).map((t) => MessageType[t])).toEqual(Object.values(MessageType).filter((v) => typeof v === 'number').map((t) => MessageType[t as MessageType]));
  });

  it('ackBeforeSync (test-only bug) puts everything into messages', () => {
    const net = busyCluster({ ackBeforeSync: true });
    let acks = 0;
    for (const id of ABC) {
      for (const rd of net.n(id).readies) {
        expect(rd.messagesAfterPersist).toEqual([]);
        acks += rd.messages.filter((m) => AFTER_PERSIST.has(m.type)).length;
      }
    }
    expect(acks).toBeGreaterThan(10);
  });

  it('ackBeforeSync loses an acknowledged entry when the follower crashes before its write', () => {
    for (const bug of [false, true]) {
      const net = new Network(ABC, { testOnlyBugs: { ackBeforeSync: bug } });
      net.strict = false;
      net.elect('a');
      net.crash('c');
      net.raw('a').propose(enc('x'));
      net.processReady('a');
      net.deliverOne(); // the App to b (c is down)
      net.processReady('b', { crashBeforePersist: true });
      net.stabilize();
      // With the bug, a counted b's acknowledgement of an entry b never stored.
      expect(net.appliedData('a')).toEqual(bug ? ['x'] : []);
      net.crash('a');
      net.restart('b');
      net.restart('c');
      net.tick(40);
      const leader = net.leaders()[0];
      expect(['b', 'c']).toContain(leader);
      net.propose(leader, 'y');
      expect(net.appliedData(leader)).toEqual(['y']); // x never made it to b or c
      expect(net.violations.length > 0).toBe(bug);
    }
  });

  it('hardState only when term, vote or commit changed; softState only when leader or role changed', () => {
    const net = new Network(ABC, { keepReadies: true });
    net.elect('a');
    net.tick(5);
    const readies = net.n('b').readies;
    const withHard = readies.filter((rd) => rd.hardState !== undefined);
    // b: term 1 + vote for a, then commit of the no-op. Heartbeats alone change nothing.
    expect(withHard.map((rd) => rd.hardState)).toEqual([
      { term: 1, vote: 'a', commit: 0 },
      { term: 1, vote: 'a', commit: 1 },
    ]);
    expect(readies.filter((rd) => rd.softState !== undefined).map((rd) => rd.softState)).toEqual([{ leader: 'a', role: Role.Follower }]);
    expect(net.n('a').readies.filter((rd) => rd.softState !== undefined).map((rd) => rd.softState)).toEqual([
      { leader: NONE, role: Role.PreCandidate },
      { leader: NONE, role: Role.Candidate },
      { leader: 'a', role: Role.Leader },
    ]);
  });

  it('committedEntries are never ahead of what is persisted', () => {
    const raw = new RawNode({ id: 'b', voters: ABC, electionTicks: 10, heartbeatTicks: 1, random: () => 0 });
    raw.step(msg({ type: MessageType.App, from: 'a', to: 'b', term: 1, index: 0, logTerm: 0, entries: entries([1, 1]), commit: 2 }));
    const rd1 = raw.ready();
    expect(rd1.entries).toHaveLength(2);
    expect(rd1.hardState?.commit).toBe(2);
    expect(rd1.committedEntries).toEqual([]); // committed, but not yet durable here
    raw.advance(rd1);
    const rd2 = raw.ready();
    expect(rd2.committedEntries.map((e) => e.index)).toEqual([1, 2]);
    raw.advance(rd2);
    expect(raw.status()).toMatchObject({ applied: 2, stableIndex: 2 });
    expect(raw.hasReady()).toBe(false);
  });

  it('committedEntries per Ready are bounded by maxMsgBytes', () => {
    const net = new Network(['solo'], { maxMsgBytes: 20, keepReadies: true });
    net.elect('solo');
    const raw = net.raw('solo');
    for (let i = 0; i < 10; i++) raw.propose(new Uint8Array(8));
    net.stabilize();
    const batches = net.n('solo').readies.map((rd) => rd.committedEntries).filter((c) => c.length > 0);
    for (const b of batches) expect(b.reduce((s, e) => s + e.data.byteLength, 0)).toBeLessThanOrEqual(20);
    expect(batches.flat().map((e) => e.index)).toEqual(Array.from({ length: 11 }, (_, i) => i + 1));
    expect(batches.length).toBeGreaterThanOrEqual(4);
  });

  it('one Ready at a time: ready() again before advance() throws, advance() wants that Ready', () => {
    const raw = new RawNode({ id: 'a', voters: ['a'], electionTicks: 10, heartbeatTicks: 1, random: () => 0 });
    raw.campaign();
    const rd = raw.ready();
    expect(raw.hasReady()).toBe(false);
    expect(() => raw.ready()).toThrow(RaftInvariantError);
    const other: Ready = { ...rd };
    expect(() => raw.advance(other)).toThrow(RaftInvariantError);
    raw.advance(rd);
    expect(raw.hasReady()).toBe(true); // the no-op is now durable and committed
  });

  it('input arriving between ready() and advance() lands in the next Ready, even when it truncates', () => {
    const raw = new RawNode({ id: 'b', voters: ABC, electionTicks: 10, heartbeatTicks: 1, random: () => 0 });
    raw.step(msg({ type: MessageType.App, from: 'a', to: 'b', term: 1, index: 0, logTerm: 0, entries: entries([1, 1, 1]) }));
    const rd1 = raw.ready();
    // A new leader overwrites entries 2..3 before rd1 is advanced.
    raw.step(msg({ type: MessageType.App, from: 'c', to: 'b', term: 2, index: 1, logTerm: 1, entries: entries([2], 2) }));
    raw.advance(rd1);
    const rd2 = raw.ready();
    expect(rd2.entries.map((e) => [e.index, e.term])).toEqual([[2, 2]]);
    expect(rd2.messagesAfterPersist.map(flattenMessage).map((m) => [m.to, m.index])).toEqual([['c', 2]]);
    raw.advance(rd2);
    expect(raw.status()).toMatchObject({ lastIndex: 2, stableIndex: 2 });
  });
});

describe('restart from persisted state', () => {
  it('restores term, vote, commit and log; applied restarts at 0 and committed entries are applied again', () => {
    const net = new Network(ABC);
    net.elect('a');
    for (let i = 0; i < 5; i++) net.propose('a', `x${i}`);
    net.tick(2);
    const before = ABC.map((id) => net.raw(id).status());
    for (const id of ABC) net.crash(id);
    for (const id of ABC) net.restart(id);
    ABC.forEach((id, i) => {
      const st = net.raw(id).status();
      expect(st).toMatchObject({ term: before[i].term, vote: before[i].vote, commit: before[i].commit, lastIndex: before[i].lastIndex, applied: 0, role: Role.Follower, leader: NONE });
    });
    net.flushReadies(); // re-applies the committed entries
    for (const id of ABC) expect(net.appliedData(id)).toEqual(['x0', 'x1', 'x2', 'x3', 'x4']);
    net.tick(30);
    const leader = net.leaders()[0];
    expect(net.raw(leader).status().term).toBe(2);
    net.propose(leader, 'y');
    for (const id of ABC) expect(net.appliedData(id)).toEqual(['x0', 'x1', 'x2', 'x3', 'x4', 'y']);
  });

  it('what was not persisted is gone after a crash, and nothing acknowledged depended on it', () => {
    const net = new Network(ABC);
    net.elect('a');
    net.raw('a').propose(enc('lost'));
    net.processReady('a', { crashBeforePersist: true });
    net.stabilize(); // b and c received and acknowledged the entry; a had not persisted it
    net.restart('a');
    expect(net.raw('a').status().lastIndex).toBe(1);
    net.tick(40);
    // b and c still hold it; the next leader (one of them, or a once caught up) commits it.
    const leader = net.leaders()[0];
    net.propose(leader, 'next');
    expect(net.appliedData(leader)).toEqual(['lost', 'next']);
  });

  it('rejects corrupt persisted state', () => {
    const cfg = { id: 'a', voters: ABC, electionTicks: 10, heartbeatTicks: 1, random: () => 0 };
    expect(() => new RawNode(cfg, { hardState: { term: 1, vote: NONE, commit: 5 }, entries: entries([1, 1]) })).toThrow(RaftInvariantError);
    expect(() => new RawNode(cfg, { hardState: { term: 1, vote: NONE, commit: 0 }, entries: entries([1, 1], 2) })).toThrow(RaftInvariantError);
    expect(() => new RawNode(cfg, { hardState: { term: 1, vote: NONE, commit: 0 }, entries: entries([1, 2]) })).toThrow(RaftInvariantError);
  });

  it('rejects an invalid configuration', () => {
    const base = { id: 'a', voters: ABC, electionTicks: 10, heartbeatTicks: 1, random: () => 0 };
    expect(() => new RawNode({ ...base, heartbeatTicks: 10 })).toThrow();
    expect(() => new RawNode({ ...base, id: '' })).toThrow();
    expect(() => new RawNode({ ...base, voters: [] })).toThrow();
    expect(() => new RawNode({ ...base, maxInflight: 0 })).toThrow();
  });
});

describe('robustness', () => {
  it('step() ignores malformed, misaddressed and foreign messages without changing state', () => {
    const raw = nodeWithLog('a', ABC, [1, 1], { term: 1, commit: 1 });
    drain(raw);
    const before = JSON.stringify(raw.status());
    const good = msg({ type: MessageType.App, from: 'b', to: 'a', term: 2, index: 2, logTerm: 1, entries: entries([2], 3), commit: 3 });
    const bad: unknown[] = [
      null,
      undefined,
      42,
      'App',
      {},
      { ...good, to: 'z' },
      // A node our configuration does not name is heard only as a leader (RawNode.mayHearFrom): not its
      // answers or votes.
      { ...msg({ type: MessageType.AppResp, from: 'stranger', to: 'a', term: 2, index: 3 }) },
      { ...msg({ type: MessageType.Vote, from: 'stranger', to: 'a', term: 2, logTerm: 9, index: 9 }) },
      { ...good, from: 'a' },
      { ...good, type: 99 },
      { ...good, term: -1 },
      { ...good, term: 2.5 },
      { ...good, term: Number.NaN },
      { ...good, prevLogIndex: Infinity },
      { ...good, commit: '3' },
      { ...msg({ type: MessageType.Heartbeat, from: 'b', to: 'a', term: 2 }), context: 'ctx' },
      { ...good, entries: null },
      { ...good, entries: entries([2], 5) }, // not contiguous with index
      { ...good, entries: [{ term: 3, index: 3, type: 0, data: enc('x') }] }, // entry term above message term
      { ...good, entries: entries([0], 3) },
      { ...good, entries: [{ term: 2, index: 3, type: 7, data: enc('x') }] },
      { ...good, entries: [{ term: 2, index: 3, type: 0, data: 'x' }] },
      { ...good, prevLogTerm: 9 },
      { ...msg({ type: MessageType.VoteResp, from: 'b', to: 'a', term: 2 }), reject: 'no' },
      { ...msg({ type: MessageType.Snap, from: 'b', to: 'a', term: 2 }) }, // no snapshot fields
      { ...msg({ type: MessageType.Snap, from: 'b', to: 'a', term: 2, snapshotMeta: { index: 5, term: 3, config: { voters: ABC } }, snapshotOffset: 0, snapshotData: enc('x'), snapshotDone: true }) },
      { ...msg({ type: MessageType.Vote, from: 'b', to: 'a', term: 2, logTerm: 3 }) },
    ];
    for (const m of bad) {
      expect(() => raw.step(m as Message)).not.toThrow();
    }
    expect(JSON.stringify(raw.status())).toBe(before);
    expect(raw.hasReady()).toBe(false);
    raw.step(good); // the well-formed one is accepted
    expect(raw.status()).toMatchObject({ term: 2, lastIndex: 3, commit: 3 });
  });

  it('duplicated and reordered appends from the current leader are harmless', () => {
    const raw = new RawNode({ id: 'b', voters: ABC, electionTicks: 10, heartbeatTicks: 1, random: () => 0 });
    const m1 = msg({ type: MessageType.App, from: 'a', to: 'b', term: 1, index: 0, logTerm: 0, entries: entries([1, 1]), commit: 0 });
    const m2 = msg({ type: MessageType.App, from: 'a', to: 'b', term: 1, index: 2, logTerm: 1, entries: entries([1, 1], 3), commit: 3 });
    raw.step(m2); // too early: rejected
    raw.step(m1);
    raw.step(m2);
    raw.step(m1); // a late duplicate must not truncate 3..4
    raw.step(m2);
    drain(raw);
    expect(raw.status()).toMatchObject({ lastIndex: 4, commit: 3, stableIndex: 4 });
  });

  it('a stream of random messages never makes step() throw', () => {
    const rand = seededRandom(7);
    const types = Object.values(MessageType).filter((v) => typeof v === 'number') as MessageType[];
    const raw = nodeWithLog('a', ABC, [1, 1, 2], { term: 2, commit: 1 });
    for (let i = 0; i < 20_000; i++) {
      const term = Math.floor(rand() * 6);
      const index = Math.floor(rand() * 6);
      const m = msg({
        type: types[Math.floor(rand() * types.length)],
        from: ABC[1 + Math.floor(rand() * 2)],
        to: 'a',
        term,
        index,
        logTerm: Math.floor(rand() * (term + 1)),
        commit: Math.floor(rand() * 3),
        reject: rand() < 0.3,
        rejectHint: Math.floor(rand() * 6),
      });
      if (m.type === MessageType.App && rand() < 0.5) m.entries = entries([m.prevLogTerm, term].filter((t) => t > 0), index + 1);
      expect(() => raw.step(m)).not.toThrow();
      if (rand() < 0.1) raw.tick();
      if (rand() < 0.2) drain(raw);
    }
  });
});

describe('invariants', () => {
  it('the log refuses to overwrite committed entries, to commit beyond its end, or to leave gaps', () => {
    const log = new RaftLog(undefined, entries([1, 1, 1]), 2);
    expect(() => log.append(entries([2], 2))).toThrow(RaftInvariantError);
    expect(() => log.append(entries([2], 6))).toThrow(RaftInvariantError);
    expect(() => log.commitTo(9)).toThrow(RaftInvariantError);
    log.commitTo(1); // older information: ignored, commit never goes back
    expect(log.committed).toBe(2);
    expect(() => log.appliedTo(3)).toThrow(RaftInvariantError);
  });
});

describe('randomized faults find the deliberate bugs', () => {
  // The same harness that passes without bugs (fuzz.test.ts) must catch each one on some seed.
  for (const bug of ['voteWithoutLogCheck', 'ackBeforeSync'] as const) {
    it(bug, () => {
      let caught = false;
      for (let seed = 1; seed <= 30 && !caught; seed++) {
        try {
          runFuzz(seed * 1000 + 3, 3, 20_000, { [bug]: true });
        } catch {
          caught = true;
        }
      }
      expect(caught).toBe(true);
    });
  }
});

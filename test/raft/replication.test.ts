// Log replication: the AppendEntries rules of the Raft paper (5.3, 5.4.2, Figures 7 and 8), fast
// backtracking, pipelining and the message and uncommitted-entry bounds.

import { describe, it, expect } from 'vitest';
import { MessageType, ProposalDroppedError, Role, flattenMessage, type Message, type WireMessage } from '../../src/raft';
import { Network, drain, enc, entries, msg, nodeWithLog } from './network';

const ABC = ['a', 'b', 'c'];

function app(from: string, to: string, term: number, index: number, logTerm: number, ents: number[], commit = 0): Message {
  return msg({ type: MessageType.App, from, to, term, index, logTerm, entries: entries(ents, index + 1), commit });
}

describe('leader', () => {
  it('appends an empty no-op entry of its term when elected, and commits it', () => {
    const net = new Network(ABC);
    net.loadLog('a', [1, 1]);
    net.loadLog('b', [1, 1]);
    net.loadLog('c', [1, 1]);
    net.elect('a');
    const st = net.raw('a').status();
    expect(st).toMatchObject({ term: 2, lastIndex: 3, commit: 3 });
    const noop = net.n('a').store.entries[2];
    expect(noop).toMatchObject({ index: 3, term: 2 });
    expect(noop.data.byteLength).toBe(0);
    for (const id of ABC) expect(net.storedTerms(id)).toEqual([1, 1, 2]);
  });

  it('commits an entry once a majority stores it, and followers learn the commit index', () => {
    const net = new Network(['a', 'b', 'c', 'd', 'e']);
    net.elect('a');
    net.crash('d');
    net.crash('e');
    const { index } = net.propose('a', 'x');
    expect(net.raw('a').status().commit).toBe(index);
    for (const id of ['a', 'b', 'c']) expect(net.appliedData(id)).toEqual(['x']);
    net.crash('c');
    const second = net.propose('a', 'y');
    net.tick(5);
    expect(net.raw('a').status().commit).toBe(second.index - 1); // 2 of 5 is no majority
    expect(net.appliedData('a')).toEqual(['x']);
  });

  it('counts itself only for entries it has persisted (its own append runs in parallel)', () => {
    const net = new Network(ABC);
    net.elect('a');
    net.crash('c');
    const a = net.raw('a');
    const { index } = a.propose(enc('x'));
    const rd = a.ready();
    // The App leaves before the leader's own write.
    expect(rd.messages.filter((m) => m.type === MessageType.App)).toHaveLength(2);
    expect(rd.entries.map((e) => e.index)).toEqual([index]);
    // b acknowledges before the leader has persisted: 1 durable copy of 3 is not enough on its own...
    net.queue.push(...rd.messages.map(flattenMessage));
    while (net.queue.length > 0) net.deliverOne();
    net.processReady('b');
    while (net.queue.length > 0) net.deliverOne();
    expect(a.status().progress.b.match).toBe(index);
    expect(a.status().progress.a.match).toBe(index - 1);
    expect(a.status().commit).toBe(index - 1);
    // ...until the leader's own write completes.
    net.n('a').store.persist(rd);
    a.advance(rd);
    expect(a.status().progress.a.match).toBe(index);
    expect(a.status().commit).toBe(index);
  });

  it('refuses proposals when it is not the leader, and bounds uncommitted entries', () => {
    const net = new Network(ABC, { maxUncommittedEntries: 5 });
    expect(() => net.raw('a').propose(enc('x'))).toThrow(ProposalDroppedError);
    net.elect('a');
    net.crash('b');
    net.crash('c');
    for (let i = 0; i < 5; i++) net.raw('a').propose(enc(`p${i}`));
    let err: unknown;
    try {
      net.raw('a').propose(enc('too many'));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ProposalDroppedError);
    expect((err as ProposalDroppedError).reason).toBe('too-many-uncommitted');
    // Once followers return and entries commit, proposals are accepted again.
    net.restart('b');
    net.tick(3);
    expect(() => net.raw('a').propose(enc('ok'))).not.toThrow();
  });

  it('heartbeats go out every heartbeatTicks and carry min(commit, follower match)', () => {
    const net = new Network(ABC, { heartbeatTicks: 3 });
    net.elect('a');
    net.propose('a', 'x');
    const commit = net.raw('a').status().commit;
    net.isolate('c');
    net.propose('a', 'y');
    net.heal();
    const before = net.sent.length;
    net.tick(2);
    expect(net.sent.slice(before).filter((m) => m.type === MessageType.Heartbeat)).toHaveLength(0);
    net.filter = (m) => m.type !== MessageType.App; // keep c behind to see its heartbeat commit
    net.tick(1);
    const hbs = net.sent.slice(before).filter((m) => m.type === MessageType.Heartbeat);
    expect(hbs.map((m) => m.to).sort()).toEqual(['b', 'c']);
    expect(hbs.find((m) => m.to === 'b')!.commit).toBe(commit + 1);
    expect(hbs.find((m) => m.to === 'c')!.commit).toBe(commit); // c's match
  });
});

describe('follower: AppendEntries', () => {
  // Paper Figure 2, receiver rules: consistency check on (index, logTerm); truncate a conflicting
  // suffix; append new entries; commit = min(leaderCommit, index of last new entry).
  const cases: { name: string; m: [number, number, number[], number]; wantTerms: number[]; reject: boolean; commit: number }[] = [
    { name: 'appends after a matching entry', m: [2, 2, [3], 1], wantTerms: [1, 2, 3], reject: false, commit: 1 },
    { name: 'rejects on mismatched term', m: [2, 3, [3], 1], wantTerms: [1, 2], reject: true, commit: 0 },
    { name: 'rejects past the end', m: [3, 3, [3], 1], wantTerms: [1, 2], reject: true, commit: 0 },
    { name: 'truncates a conflicting suffix', m: [1, 1, [3, 4], 3], wantTerms: [1, 3, 4], reject: false, commit: 3 },
    { name: 'keeps a matching longer log untouched', m: [0, 0, [1], 1], wantTerms: [1, 2], reject: false, commit: 1 },
    { name: 'commit is bounded by the last new entry', m: [0, 0, [1], 2], wantTerms: [1, 2], reject: false, commit: 1 },
    { name: 'heartbeat-like empty append', m: [2, 2, [], 2], wantTerms: [1, 2], reject: false, commit: 2 },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const net = new Network(ABC);
      net.loadLog('b', [1, 2], { term: 2 });
      const [index, logTerm, ents, commit] = c.m;
      net.raw('b').step(app('a', 'b', 5, index, logTerm, ents, commit));
      const rd = net.processReady('b');
      expect(net.storedTerms('b')).toEqual(c.wantTerms);
      expect(net.raw('b').status().commit).toBe(c.commit);
      const resp = rd.messagesAfterPersist;
      expect(resp).toHaveLength(1);
      expect(resp[0]).toMatchObject({ type: MessageType.AppResp, reject: c.reject, term: 5 });
      if (!c.reject) expect(flattenMessage(resp[0]).index).toBe(index + ents.length);
    });
  }

  it('a reject carries a hint: the last index whose term is <= the leader\'s term there, and that term', () => {
    const raw = nodeWithLog('b', ABC, [1, 2, 2, 2, 4, 4, 4], { term: 4 });
    raw.step(app('a', 'b', 6, 9, 5, [6]));
    raw.step(app('a', 'b', 6, 7, 3, [6]));
    const out = drain(raw);
    expect(out.map((m) => [m.reject, m.index, m.rejectHint, m.logTerm])).toEqual([
      [true, 9, 7, 4], // beyond our end: our last entry (term 4 <= 5) is the hint
      [true, 7, 4, 2], // our term at 7 is 4 > 3: skip all of term 4, land on index 4 (term 2)
    ]);
  });

  it('acknowledges only entries it has persisted, after the write', () => {
    const net = new Network(ABC);
    net.raw('b').step(app('a', 'b', 1, 0, 0, [1, 1], 0));
    const rd = net.raw('b').ready();
    expect(rd.entries.map((e) => e.index)).toEqual([1, 2]);
    expect(rd.messages).toEqual([]);
    expect(rd.messagesAfterPersist.map(flattenMessage).map((m) => [m.type, m.index])).toEqual([[MessageType.AppResp, 2]]);
    net.raw('b').advance(rd);
  });

  it('answers an append below its commit index with its commit index', () => {
    const raw = nodeWithLog('b', ABC, [1, 1, 1], { term: 1, commit: 3 });
    raw.step(app('a', 'b', 1, 1, 1, [1], 3));
    expect(drain(raw).map((m) => [m.type, m.reject, m.index])).toEqual([[MessageType.AppResp, false, 3]]);
  });
});

describe('the leader brings every follower log in line (paper Figure 7)', () => {
  // Leader for term 8 with log 1 1 1 4 4 5 5 6 6 6; followers (a)-(f) from the figure.
  const leaderLog = [1, 1, 1, 4, 4, 5, 5, 6, 6, 6];
  const followers: Record<string, number[]> = {
    a: [1, 1, 1, 4, 4, 5, 5, 6, 6],
    b: [1, 1, 1, 4],
    c: [1, 1, 1, 4, 4, 5, 5, 6, 6, 6, 6],
    d: [1, 1, 1, 4, 4, 5, 5, 6, 6, 6, 7, 7],
    e: [1, 1, 1, 4, 4, 4, 4],
    f: [1, 1, 1, 2, 2, 2, 3, 3, 3, 3, 3],
  };
  for (const [name, log] of Object.entries(followers)) {
    it(`follower (${name}) ends with the leader's log`, () => {
      const net = new Network(['L', 'F', 'V']);
      net.loadLog('L', leaderLog, { term: 7 });
      net.loadLog('V', leaderLog, { term: 7 }); // a voter that makes L electable
      net.loadLog('F', log, { term: 7 });
      net.cut('F', 'L'); // F must not win or veto before L is leader
      net.cut('F', 'V');
      net.elect('L');
      net.heal();
      net.tick(5);
      const want = [...leaderLog, 8];
      expect(net.storedTerms('F')).toEqual(want);
      expect(net.storedTerms('L')).toEqual(want);
      expect(net.raw('F').status().commit).toBe(want.length);
    });
  }
});

describe('commit rule: only entries of the current term are committed by counting (paper Figure 8)', () => {
  function figure8(bug: boolean) {
    // S1 leads term 4 with log [1, 2] (index 2 from its own term 2) plus its no-op at index 3.
    const s1 = nodeWithLog('s1', ['s1', 's2', 's3', 's4', 's5'], [1, 2], { term: 3 }, {
      preVote: false,
      testOnlyBugs: { commitPreviousTermByCounting: bug },
    });
    s1.campaign();
    for (const v of ['s2', 's3']) s1.step(msg({ type: MessageType.VoteResp, from: v, to: 's1', term: 4 }));
    expect(s1.status()).toMatchObject({ role: Role.Leader, term: 4, lastIndex: 3 });
    drain(s1); // persists the no-op too: s1 holds 1..3
    // s2 and s3 store index 2 (term 2) but not yet the term-4 no-op: a majority holds index 2.
    for (const f of ['s2', 's3']) s1.step(msg({ type: MessageType.AppResp, from: f, to: 's1', term: 4, index: 2 }));
    return s1;
  }

  it('a majority holding an entry of an earlier term does not commit it', () => {
    const s1 = figure8(false);
    expect(s1.status().commit).toBe(0);
    // Once an entry of the current term is on a majority, it and everything before it commit.
    s1.step(msg({ type: MessageType.AppResp, from: 's2', to: 's1', term: 4, index: 3 }));
    expect(s1.status().commit).toBe(0); // s1 and s2 only
    s1.step(msg({ type: MessageType.AppResp, from: 's3', to: 's1', term: 4, index: 3 }));
    expect(s1.status().commit).toBe(3);
  });

  it('commitPreviousTermByCounting (test-only bug) commits it, which Figure 8 shows to be unsafe', () => {
    const s1 = figure8(true);
    expect(s1.status().commit).toBe(2);
  });

  it('the full Figure 8 scenario: with the bug a committed entry is overwritten, without it nothing committed is lost', () => {
    for (const bug of [false, true]) {
      const ids = ['s1', 's2', 's3', 's4', 's5'];
      const net = new Network(ids, { preVote: false, checkQuorum: false, testOnlyBugs: { commitPreviousTermByCounting: bug } });
      net.strict = false;
      // (a) S1 leads term 2 and replicates index 2 to S2 only.
      // (b) S5 was elected for term 3 by S3, S4, S5 and wrote index 2 in term 3 only locally; S1 and
      // S2 heard of term 3 too.
      net.loadLog('s1', [1, 2], { term: 3, commit: 1 });
      net.loadLog('s2', [1, 2], { term: 3, commit: 1 });
      net.loadLog('s3', [1], { term: 3, vote: 's5', commit: 1 });
      net.loadLog('s4', [1], { term: 3, vote: 's5', commit: 1 });
      net.loadLog('s5', [1, 3], { term: 3, vote: 's5', commit: 1 });
      // (c) S1 is elected for term 4 (S1, S2, S3) and sends index 2 (term 2) to S3, but its own
      // term-4 no-op reaches no one; S1 then crashes before telling anyone its commit index.
      net.partition(['s1', 's2', 's3'], ['s4', 's5']);
      net.filter = (m) => {
        if (m.from === 's1' && (m.type === MessageType.App || m.type === MessageType.Heartbeat)) {
          m.entries = m.entries.filter((e) => e.term !== 4);
          m.commit = Math.min(m.commit, 1);
        }
        return true;
      };
      net.raw('s1').campaign();
      net.stabilize();
      expect(net.raw('s1').status().role).toBe(Role.Leader);
      expect(net.storedTerms('s3')).toEqual([1, 2]);
      expect(net.raw('s1').status().commit).toBe(bug ? 2 : 1);
      const appliedOnS1 = net.n('s1').state.map((a) => a.index);
      expect(appliedOnS1.includes(2)).toBe(bug);
      // (d) S1 crashes; S5 (last term 3 > 2) wins term 5 with S2, S3, S4 and overwrites index 2.
      net.crash('s1');
      net.filter = undefined;
      net.heal();
      net.raw('s5').campaign(); // term 4 is taken (S2 and S3 voted for S1 in it)
      net.stabilize();
      net.raw('s5').campaign();
      net.stabilize();
      expect(net.raw('s5').status()).toMatchObject({ role: Role.Leader, term: 5 });
      net.tick(3, ['s2', 's3', 's4', 's5']);
      for (const id of ['s2', 's3', 's4', 's5']) expect(net.storedTerms(id).slice(0, 2)).toEqual([1, 3]);
      // With the bug, index 2 was applied as term 2 on S1 and as term 3 elsewhere.
      expect(net.violations.length > 0).toBe(bug);
    }
  });
});

describe('fast backtracking', () => {
  it('finds the divergence point in O(terms) round trips, not O(entries)', () => {
    // F holds 150 stale entries of terms 2, 3 and 4 after a common prefix; L holds 100 entries of term 5.
    const common = [1, 1];
    const leaderLog = [...common, ...Array(100).fill(5)];
    const staleLog = [...common, ...Array(50).fill(2), ...Array(50).fill(3), ...Array(50).fill(4)];
    const net = new Network(['L', 'F', 'V']);
    net.loadLog('L', leaderLog, { term: 5 });
    net.loadLog('V', leaderLog, { term: 5 });
    net.loadLog('F', staleLog, { term: 5 });
    net.cut('F', 'L');
    net.cut('F', 'V');
    net.elect('L');
    net.heal();
    net.tick(3);
    expect(net.storedTerms('F')).toEqual([...leaderLog, 6]);
    const rejects = net.count(MessageType.AppResp, (m) => m.from === 'F' && m.reject);
    expect(rejects).toBeGreaterThan(0);
    expect(rejects).toBeLessThanOrEqual(3);
  });

  it('also when the follower is far behind (a short log): one rejection jumps to its end', () => {
    const net = new Network(['L', 'F', 'V']);
    const leaderLog = [1, ...Array(200).fill(2)];
    net.loadLog('L', leaderLog, { term: 2 });
    net.loadLog('V', leaderLog, { term: 2 });
    net.loadLog('F', [1, 2], { term: 2 });
    net.cut('F', 'L');
    net.cut('F', 'V');
    net.elect('L');
    net.heal();
    net.tick(3);
    expect(net.storedTerms('F')).toHaveLength(202);
    expect(net.count(MessageType.AppResp, (m) => m.from === 'F' && m.reject)).toBe(1);
  });
});

describe('flow control', () => {
  it('probe state: one App at a time until the follower answers', () => {
    const net = new Network(ABC);
    net.elect('a');
    net.raw('a').reportUnreachable('b');
    expect(net.raw('a').status().progress.b.state).toBe('probe');
    const held: WireMessage[] = [];
    net.filter = (m) => {
      if (m.from === 'b' && m.type === MessageType.AppResp) {
        held.push(m);
        return false;
      }
      return true;
    };
    const before = net.sent.length;
    for (let i = 0; i < 5; i++) net.propose('a', `p${i}`);
    const apps = net.sent.slice(before).filter((m) => m.type === MessageType.App && m.to === 'b');
    expect(apps).toHaveLength(1);
    // A heartbeat answer shows b is alive: the (possibly lost) probe is resent.
    net.tick(1);
    expect(net.sent.slice(before).filter((m) => m.type === MessageType.App && m.to === 'b').length).toBe(2);
    net.filter = undefined;
    for (const m of held) net.deliver(m);
    net.stabilize();
    net.tick(2);
    expect(net.raw('a').status().progress.b).toMatchObject({ state: 'replicate', match: 6 });
  });

  it('replicate state pipelines up to maxInflight Apps and no more', () => {
    const net = new Network(ABC, { maxInflight: 3 });
    net.elect('a');
    expect(net.raw('a').status().progress.b.state).toBe('replicate');
    const held: WireMessage[] = [];
    net.filter = (m) => {
      if (m.from === 'b' && m.type === MessageType.AppResp) {
        held.push(m);
        return false;
      }
      return true;
    };
    const before = net.sent.length;
    for (let i = 0; i < 6; i++) net.propose('a', `p${i}`); // one App per turn
    const toB = () => net.sent.slice(before).filter((m) => m.type === MessageType.App && m.to === 'b' && m.entries.length > 0);
    expect(toB()).toHaveLength(3);
    expect(net.raw('a').status().progress.b).toMatchObject({ inflight: 3, state: 'replicate' });
    expect(net.raw('b').status().lastIndex).toBe(4); // several were in flight at once and all arrived
    // Acknowledgements open the window: the rest goes out in one App.
    net.filter = undefined;
    for (const m of held) net.deliver(m);
    net.stabilize();
    expect(toB()).toHaveLength(4);
    expect(toB()[3].entries).toHaveLength(3);
    expect(net.raw('a').status().progress.b).toMatchObject({ inflight: 0, match: 7 });
  });

  it('a lost App in replicate state is detected and resent', () => {
    const net = new Network(ABC);
    net.elect('a');
    let drop = true;
    net.filter = (m) => !(drop && m.type === MessageType.App && m.to === 'b' && m.entries.length > 0);
    net.propose('a', 'lost');
    drop = false;
    expect(net.raw('b').status().lastIndex).toBe(1);
    net.tick(3);
    expect(net.appliedData('b')).toEqual(['lost']);
  });

  it('maxMsgBytes bounds the entries of one App (a single larger entry still goes alone)', () => {
    const net = new Network(ABC, { maxMsgBytes: 100 });
    net.elect('a');
    const a = net.raw('a');
    for (let i = 0; i < 10; i++) a.propose(new Uint8Array(30).fill(i));
    a.propose(new Uint8Array(250));
    const before = net.sent.length;
    net.stabilize();
    const apps = net.sent.slice(before).filter((m) => m.type === MessageType.App && m.entries.length > 0);
    for (const m of apps) {
      const bytes = m.entries.reduce((s, e) => s + e.data.byteLength, 0);
      expect(bytes <= 100 || m.entries.length === 1).toBe(true);
    }
    expect(apps.filter((m) => m.to === 'b').length).toBeGreaterThanOrEqual(4);
    expect(net.n('b').appliedIndex).toBe(12);
    expect(net.n('c').appliedIndex).toBe(12);
  });

  it('everything proposed in one turn leaves in one App per follower', () => {
    const net = new Network(ABC);
    net.elect('a');
    const before = net.sent.length;
    for (let i = 0; i < 20; i++) net.raw('a').propose(enc(`p${i}`));
    net.processReady('a');
    const apps = net.sent.slice(before).filter((m) => m.type === MessageType.App);
    // Each names the entry before the new ones (the no-op, index 1 of term 1) and the leader's commit.
    expect(apps.map((m) => [m.to, m.entries.length, m.index, m.logTerm, m.commit, m.entries[0].index])).toEqual([
      ['b', 20, 1, 1, 1, 2],
      ['c', 20, 1, 1, 1, 2],
    ]);
  });

  it('reportUnreachable sends a replicating follower back to probe', () => {
    const net = new Network(ABC);
    net.elect('a');
    expect(net.raw('a').status().progress.c.state).toBe('replicate');
    net.raw('a').reportUnreachable('c');
    expect(net.raw('a').status().progress.c.state).toBe('probe');
    net.propose('a', 'x');
    expect(net.raw('a').status().progress.c.state).toBe('replicate');
  });
});

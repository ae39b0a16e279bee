// What an attacker, or a buggy or bit-flipped authenticated peer, may say to the core, and what the core
// does with it. Each test is a regression: it failed on the core before the defence it names.

import { describe, it, expect } from 'vitest';
import { MessageType, NONE, RAFT_NUMBER_LIMIT, RawNode, Role, type RaftConfig, type Snapshot, type SnapshotMeta } from '../../src/raft';
import { crc32 } from '../../src/raft/crc32';
import { crc32 as zlibCrc32 } from '../../src/storage/checksum';
import { RaftLog } from '../../src/raft/raftLog';
import { Network, decodeState, drain, enc, encodeState, entries, msg, nodeWithLog, wireMsg } from './network';

const ABC = ['a', 'b', 'c'];

describe('hardening: terms at the limit', () => {
  it('a Heartbeat at term 2^53 - 1 (or at the 2^48 limit) is not adopted and elections still succeed', () => {
    const net = new Network(ABC);
    net.elect('a');
    const term = net.raw('a').status().term;
    for (const huge of [Number.MAX_SAFE_INTEGER, RAFT_NUMBER_LIMIT, RAFT_NUMBER_LIMIT - 1, RAFT_NUMBER_LIMIT - 2]) {
      for (const to of ['b', 'c']) net.deliver(wireMsg({ type: MessageType.Heartbeat, from: 'a', to, term: huge, commit: 0 }));
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

describe('hardening: a follower commits only what the leader has matched', () => {
  it('a forged heartbeat commit does not commit the follower\'s unmatched uncommitted tail', () => {
    // b holds 1..3 of term 1, commit 1; a new leader (term 2) has not appended anything to b yet.
    const b = nodeWithLog('b', ABC, [1, 1, 1], { term: 1, commit: 1 });
    b.step(msg({ type: MessageType.Heartbeat, from: 'a', to: 'b', term: 2, commit: 3 }));
    const sent = drain(b);
    expect(b.status().commit).toBe(1);
    // The answer tells the leader that an append is needed to commit.
    const resp = sent.find((m) => m.type === MessageType.HeartbeatResp);
    expect(resp?.reject).toBe(true);
    // Once an append of this leader matched up to 2, a heartbeat may commit up to 2, not 3.
    b.step(msg({ type: MessageType.App, from: 'a', to: 'b', term: 2, index: 1, logTerm: 1, entries: entries([1], 2), commit: 1 }));
    b.step(msg({ type: MessageType.Heartbeat, from: 'a', to: 'b', term: 2, commit: 3 }));
    expect(b.status().commit).toBe(2);
  });

  it('the match is forgotten when the term changes', () => {
    const b = nodeWithLog('b', ABC, [1, 1, 1], { term: 1, commit: 0 });
    b.step(msg({ type: MessageType.App, from: 'a', to: 'b', term: 1, index: 3, logTerm: 1, commit: 0 }));
    b.step(msg({ type: MessageType.Heartbeat, from: 'c', to: 'b', term: 2, commit: 3 }));
    expect(b.status().commit).toBe(0);
  });

  it('a follower that restarted learns the commit again: the leader answers the refused heartbeat with an append', () => {
    const net = new Network(ABC);
    net.elect('a');
    net.propose('a', 'x');
    net.propose('a', 'y');
    net.stabilize();
    const commit = net.raw('a').status().commit;
    // b restarts and forgets its commit (the commit-only hard state may not have been synced).
    const st = net.n('b').store;
    st.hardState = { ...st.hardState, commit: 0 };
    net.restart('b');
    net.tick(3);
    net.stabilize();
    expect(net.raw('b').status().commit).toBe(commit);
  });

  it('after a forged heartbeat, the real leader can still replace the unmatched tail (it was never committed)', () => {
    // Before: the forged commit committed 2..3 of term 1, and the leader's append that replaces them was
    // then an overwrite of committed entries (the follower diverged, or the core threw).
    const b = nodeWithLog('b', ABC, [1, 1, 1], { term: 1, commit: 1 });
    b.step(msg({ type: MessageType.Heartbeat, from: 'a', to: 'b', term: 2, commit: 3 }));
    const real = msg({ type: MessageType.App, from: 'a', to: 'b', term: 2, index: 1, logTerm: 1, entries: entries([2, 2], 2), commit: 3 });
    expect(() => b.step(real)).not.toThrow();
    expect(() => drain(b)).not.toThrow();
    expect(b.status()).toMatchObject({ lastIndex: 3, commit: 3, refusedMessages: 0 });
  });

  it('an append that would overwrite a committed entry is refused as a message error, never thrown', () => {
    const log = new RaftLog(undefined, entries([1, 1, 1]), 2);
    let out: ReturnType<RaftLog['maybeAppend']> | undefined;
    expect(() => (out = log.maybeAppend(0, 0, entries([2, 2, 2])))).not.toThrow();
    expect(out).toEqual({ kind: 'overwrites-committed', index: 1 });
    expect(log.lastIndex()).toBe(3);
    expect(log.term(1)).toBe(1);
    // Through step(): a forged append below the commit changes nothing and the node keeps working.
    const b = nodeWithLog('b', ABC, [1, 1, 1], { term: 1, commit: 2 });
    expect(() => b.step(msg({ type: MessageType.App, from: 'a', to: 'b', term: 2, index: 1, logTerm: 1, entries: entries([2, 2], 2), commit: 3 }))).not.toThrow();
    expect(() => drain(b)).not.toThrow();
    expect(b.status()).toMatchObject({ lastIndex: 3, commit: 2 });
    b.step(msg({ type: MessageType.App, from: 'a', to: 'b', term: 2, index: 3, logTerm: 1, entries: entries([2], 4), commit: 4 }));
    expect(b.status()).toMatchObject({ lastIndex: 4, commit: 4 });
  });
});

describe('hardening: snapshots received from a peer', () => {
  /** b: a follower at term 2 with entries 1..2 committed; `snap` is offered by 'a' as leader of term 3. */
  function offer(meta: Partial<SnapshotMeta> & { data?: Uint8Array }, extra: Partial<RaftConfig> = {}) {
    const b = nodeWithLog('b', ABC, [1, 2], { term: 2, commit: 2 }, extra);
    const data = meta.data ?? encodeState([]);
    const snapshotMeta: SnapshotMeta = { index: 10, term: 3, config: { voters: ABC }, crc32: crc32(data), ...meta };
    delete (snapshotMeta as { data?: unknown }).data;
    b.step(msg({ type: MessageType.Snap, from: 'a', to: 'b', term: 3, snapshotMeta, snapshotOffset: 0, snapshotData: data, snapshotDone: true }));
    return b;
  }

  function expectRefused(b: RawNode): void {
    const sent = drain(b);
    expect(sent.filter((m) => m.type === MessageType.SnapResp)).toEqual([]);
    expect(b.status()).toMatchObject({ snapshotIndex: 0, lastIndex: 2, commit: 2, refusedMessages: 1 });
    // The node keeps serving: the leader's next append is accepted.
    b.step(msg({ type: MessageType.App, from: 'a', to: 'b', term: 3, index: 2, logTerm: 2, entries: entries([3], 3), commit: 3 }));
    drain(b);
    expect(b.status()).toMatchObject({ lastIndex: 3, commit: 3 });
  }

  it('a well-formed snapshot is installed (the baseline for the refusals below)', () => {
    const b = offer({});
    const rd = b.ready();
    expect(rd.snapshot?.meta.index).toBe(10);
    b.advance(rd);
  });

  it('a snapshot whose configuration lists a member twice is refused', () => {
    expectRefused(offer({ config: { voters: ['a', 'b'], learners: ['b'] } }));
    expectRefused(offer({ config: { voters: ['a', 'a', 'b'] } }));
  });

  it("a leader's snapshot brings the configuration at its index: the receiver runs with it", () => {
    // Members changed after b's log ended: the snapshot (at 10) says a, b, d vote and c left.
    const b = offer({ config: { voters: ['a', 'b', 'd'], addresses: { a: { client: 'a:1', peer: 'a:2' }, b: { client: 'b:1', peer: 'b:2' }, d: { client: 'd:1', peer: 'd:2' } } } });
    const rd = b.ready();
    b.advance(rd);
    expect(b.status().config.voters).toEqual(['a', 'b', 'd']);
    // c, no longer a member, is heard only as a leader: its vote request is dropped; d, a new voter, is heard.
    b.step(msg({ type: MessageType.Vote, from: 'c', to: 'b', term: 5, logTerm: 3, index: 10 }));
    expect(b.status().term).toBe(3);
    b.step(msg({ type: MessageType.Heartbeat, from: 'd', to: 'b', term: 5, commit: 10 }));
    expect(b.status()).toMatchObject({ term: 5, leader: 'd' });
  });

  it('a restarted node runs with the configuration of its stored snapshot, not the bootstrap one', () => {
    // The bootstrap configuration names a, b, c; the stored snapshot says b alone votes (the others were removed).
    const raw = new RawNode(
      { id: 'b', voters: ABC, electionTicks: 10, heartbeatTicks: 1, random: () => 0 },
      { hardState: { term: 3, vote: NONE, commit: 10 }, snapshot: { meta: { index: 10, term: 3, config: { voters: ['b'] } }, data: enc('[]') }, entries: [] },
    );
    expect(raw.status().config.voters).toEqual(['b']);
    for (let i = 0; i < 40; i++) raw.tick();
    drain(raw);
    expect(raw.status().role).toBe(Role.Leader);
  });

  it('junk bytes whose checksum does not match are refused before anything is persisted', () => {
    expectRefused(offer({ data: enc('14 junk bytes!'), crc32: 12345 }));
  });

  it('a snapshot without a checksum is refused', () => {
    expectRefused(offer({ crc32: undefined }));
  });

  it('junk bytes with a correct checksum are refused when the application cannot decode them', () => {
    const validateSnapshot = (s: Snapshot): boolean => {
      decodeState(s.data);
      return true;
    };
    expectRefused(offer({ data: enc('14 junk bytes!') }, { validateSnapshot }));
    expectRefused(offer({ data: enc('[]') }, { validateSnapshot: () => false }));
  });

  it('compact() records the checksum of the data, and a stored snapshot without one gets it on load', () => {
    const net = new Network(ABC);
    net.elect('a');
    net.propose('a', 'x');
    net.stabilize();
    const snap = net.compact('a');
    expect(snap.meta.crc32).toBe(crc32(snap.data));
    const { crc32: _dropped, ...old } = snap.meta;
    const restarted = new RawNode(net.n('a').config, { hardState: net.n('a').store.hardState, snapshot: { meta: old, data: snap.data }, entries: [] });
    // compact() at or below the snapshot returns the snapshot the core holds (and would send).
    expect(restarted.compact(snap.meta.index, new Uint8Array()).meta.crc32).toBe(crc32(snap.data));
  });
});

describe('hardening: the core\'s pure CRC-32', () => {
  it('equals zlib\'s crc32 (used by storage and the server) on every length and alignment', () => {
    for (let len = 0; len < 70; len++) {
      const data = new Uint8Array(len + 3).map((_, i) => (i * 151 + len) & 0xff).subarray(3);
      expect(crc32(data)).toBe(zlibCrc32(data));
    }
    expect(crc32(enc('123456789'))).toBe(0xcbf43926);
  });
});

describe('hardening: read answers', () => {
  it('a ReadIndexResp from a voter that is not our leader yields no read state', () => {
    const b = nodeWithLog('b', ABC, [1], { term: 1, commit: 1 });
    b.step(msg({ type: MessageType.Heartbeat, from: 'a', to: 'b', term: 1, commit: 1 }));
    drain(b);
    b.step(msg({ type: MessageType.ReadIndexResp, from: 'c', to: 'b', term: 1, index: 0, context: enc('guess') }));
    expect(b.ready().readStates).toEqual([]);
  });
});

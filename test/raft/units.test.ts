// The building blocks of the core on their own: quorum arithmetic, the inflight window, Progress,
// ReadIndex bookkeeping, snapshot reassembly and the log.

import { describe, it, expect } from 'vitest';
import { Inflights } from '../../src/raft/inflights';
import { Progress } from '../../src/raft/progress';
import { committedIndex, quorumSize, voteResult } from '../../src/raft/quorum';
import { RaftLog } from '../../src/raft/raftLog';
import { ReadOnly } from '../../src/raft/readOnly';
import { SnapshotReceiver } from '../../src/raft/snapshotReceiver';
import { dec, enc, entries } from './network';

describe('quorum', () => {
  it('majorities and the committed index', () => {
    expect([1, 2, 3, 4, 5].map(quorumSize)).toEqual([1, 2, 2, 3, 3]);
    expect(committedIndex([5])).toBe(5);
    expect(committedIndex([5, 3, 9])).toBe(5);
    expect(committedIndex([1, 2, 3, 4])).toBe(2); // 3 of 4 needed
    expect(committedIndex([7, 7, 0, 0, 7])).toBe(7);
  });

  it('vote tallies', () => {
    const voters = ['a', 'b', 'c'];
    expect(voteResult(voters, new Map([['a', true]]))).toBe('pending');
    expect(voteResult(voters, new Map([['a', true], ['b', true]]))).toBe('won');
    expect(voteResult(voters, new Map([['a', true], ['b', false]]))).toBe('pending');
    expect(voteResult(voters, new Map([['a', true], ['b', false], ['c', false]]))).toBe('lost');
    expect(voteResult(voters, new Map([['x', true], ['y', true]]))).toBe('pending'); // strangers do not count
  });
});

describe('flow control', () => {
  it('the inflight window fills and frees in order', () => {
    const w = new Inflights(3);
    w.add(5);
    w.add(9);
    w.add(12);
    expect(w.full()).toBe(true);
    w.freeLE(8);
    expect(w.count()).toBe(2);
    w.freeLE(12);
    expect(w.count()).toBe(0);
  });

  it('the inflight window is also full once its messages carry maxBytes of entry data', () => {
    const w = new Inflights(10, 100);
    w.add(3, 60);
    expect(w.full()).toBe(false);
    w.add(4, 40);
    expect(w.full()).toBe(true);
    w.freeLE(3);
    expect(w.full()).toBe(false);
    expect(w.count()).toBe(1);
  });

  it('Progress: stale rejections are ignored; probing moves by the hint', () => {
    const pr = new Progress(11, 4);
    expect(pr.maybeDecrTo(5, 0)).toBe(false); // not the probe we sent (next-1 = 10)
    expect(pr.maybeDecrTo(10, 3)).toBe(true);
    expect(pr.next).toBe(4);
    pr.maybeUpdate(3);
    pr.becomeReplicate();
    expect(pr.next).toBe(4);
    pr.sentEntries(8, 5);
    expect(pr.next).toBe(9);
    expect(pr.maybeDecrTo(2, 0)).toBe(false); // below match: stale
    expect(pr.maybeDecrTo(6, 0)).toBe(true);
    expect(pr.next).toBe(4);
  });
});

describe('ReadOnly', () => {
  it('an acknowledged request confirms every earlier one, in order; duplicates are ignored', () => {
    const ro = new ReadOnly();
    expect(ro.add(5, enc('r1'), 'a', 'a')).toBe(true);
    expect(ro.add(6, enc('r2'), 'b', 'a')).toBe(true);
    expect(ro.add(6, enc('r2'), 'b', 'a')).toBe(false);
    expect(ro.add(7, enc('r3'), 'a', 'a')).toBe(true);
    expect(dec(ro.lastPendingContext()!)).toBe('r3');
    expect(ro.recvAck('b', enc('r2'), ['a', 'b', 'c'])).toBe(2);
    expect(ro.advance(enc('r2')).map((r) => [r.index, dec(r.context), r.from])).toEqual([
      [5, 'r1', 'a'],
      [6, 'r2', 'b'],
    ]);
    expect(ro.size()).toBe(1);
    expect(ro.recvAck('b', enc('r1'), ['a', 'b', 'c'])).toBe(0);
  });
});

describe('SnapshotReceiver', () => {
  const meta = { index: 10, term: 2, config: { voters: ['a', 'b'] } };

  it('assembles in-order chunks; ignores duplicates; refuses gaps and chunks of an unknown transfer', () => {
    const r = new SnapshotReceiver(1 << 20);
    expect(r.receive('a', 3, meta, 4, enc('efgh'), false)).toEqual({ kind: 'gap', received: 0 });
    expect(r.receive('a', 3, meta, 0, enc('abcd'), false)).toEqual({ kind: 'progress', received: 4 });
    expect(r.receive('a', 3, meta, 0, enc('abcd'), false)).toEqual({ kind: 'progress', received: 4 }); // duplicate
    expect(r.receive('a', 3, meta, 8, enc('ij'), true)).toEqual({ kind: 'gap', received: 4 });
    expect(r.receive('a', 3, meta, 4, enc('efgh'), false)).toEqual({ kind: 'progress', received: 8 });
    expect(r.receive('b', 3, meta, 8, enc('ij'), true)).toEqual({ kind: 'gap', received: 0 }); // another sender
    const done = r.receive('a', 3, meta, 8, enc('ij'), true);
    expect(done.kind).toBe('complete');
    if (done.kind === 'complete') expect(dec(done.snapshot.data)).toBe('abcdefghij');
  });

  it('a new transfer (new leader or snapshot) starts over at offset 0', () => {
    const r = new SnapshotReceiver(1 << 20);
    r.receive('a', 3, meta, 0, enc('abcd'), false);
    expect(r.receive('b', 4, meta, 0, enc('xy'), false)).toEqual({ kind: 'progress', received: 2 });
    expect(r.receive('a', 3, meta, 4, enc('efgh'), false)).toEqual({ kind: 'gap', received: 0 });
  });

  it('regression: a transfer that grows past the byte limit is dropped whole, and a new one can start', () => {
    const r = new SnapshotReceiver(8);
    expect(r.receive('a', 3, meta, 0, enc('abcd'), false)).toEqual({ kind: 'progress', received: 4 });
    expect(r.receive('a', 3, meta, 4, enc('efgh'), false)).toEqual({ kind: 'progress', received: 8 });
    expect(r.receive('a', 3, meta, 8, enc('i'), false)).toEqual({ kind: 'too-large' });
    expect(r.receive('a', 3, meta, 9, enc('j'), true)).toEqual({ kind: 'gap', received: 0 }); // nothing held
    const again = r.receive('a', 3, meta, 0, enc('abcdefgh'), true);
    expect(again.kind).toBe('complete');
  });
});

describe('RaftLog', () => {
  it('hands committed entries out once, and takes back as applied only what it handed out', () => {
    const log = new RaftLog(undefined, entries([1, 1, 2]), 2);
    expect(() => log.appliedTo(1)).toThrow(/beyond the entries handed out/);
    expect(log.takeNextCommitted(Infinity).map((e) => e.index)).toEqual([1, 2]);
    expect(log.takeNextCommitted(Infinity)).toEqual([]);
    log.commitTo(3);
    expect(log.takeNextCommitted(Infinity).map((e) => e.index)).toEqual([3]);
    log.appliedTo(2);
    expect([log.applied, log.applying]).toEqual([2, 3]);
    expect(() => log.appliedTo(1)).toThrow(/goes back/);
  });

  it('terms, bounds and slices around a compaction point', () => {
    const log = new RaftLog(undefined, entries([1, 1, 2, 2, 3]), 4);
    expect(log.takeNextCommitted(Infinity).map((e) => e.index)).toEqual([1, 2, 3, 4]);
    log.appliedTo(4);
    log.compact(2, enc('s'), { voters: ['a'] }, 0);
    expect([log.firstIndex(), log.lastIndex(), log.term(2), log.term(1), log.term(6)]).toEqual([3, 5, 1, undefined, undefined]);
    expect(log.slice(3, 5, 1).map((e) => e.index)).toEqual([3]); // at least one entry
    expect(log.findConflictByTerm(5, 2)).toEqual({ index: 4, term: 2 });
    expect(log.findConflictByTerm(5, 0)).toEqual({ index: 1, term: 0 }); // stops where terms are unknown
  });

  it('durability tracking survives a truncation between ready() and advance()', () => {
    const log = new RaftLog(undefined, [], 0);
    log.append(entries([1, 1, 1]));
    const handedOut = log.unstableEntries();
    log.append(entries([2], 3)); // overwrites index 3 before the write of 1..3 completes
    log.stableTo(handedOut);
    expect(log.stable).toBe(2);
    expect(log.unstableEntries().map((e) => [e.index, e.term])).toEqual([[3, 2]]);
  });
});

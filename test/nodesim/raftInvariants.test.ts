// The Raft checker fed hand-made states that violate (and states that respect) each invariant: each check
// can fail, and fails for the reason it names.
import { describe, expect, it } from 'vitest';
import { makeMessage, type WireFields } from '../../src/raft/messages';
import { EntryType, MessageType, type Entry, type HardState, type Message } from '../../src/raft/types';
import type { LogView } from '../../src/storage/memoryStorage';
import { Checker, InvariantViolation } from './raftInvariants';

/** A log written out by hand: an optional snapshot point, then contiguous entries. */
class TestLog implements LogView {
  constructor(
    readonly entries: Entry[],
    readonly snapshotIndex = 0,
    readonly snapshotTerm = 0,
    readonly hardState: HardState = { term: 0, vote: '', commit: 0 },
  ) {}

  get lastIndex(): number {
    return this.snapshotIndex + this.entries.length;
  }

  term(i: number): number | undefined {
    return i === this.snapshotIndex ? this.snapshotTerm : this.entry(i)?.term;
  }

  entry(i: number): Entry | undefined {
    return i <= this.snapshotIndex || i > this.lastIndex ? undefined : this.entries[i - this.snapshotIndex - 1];
  }
}

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
const ent = (index: number, term: number, data = `v${index}.${term}`): Entry => ({ index, term, type: EntryType.Normal, data: enc(data) });
const noop = (index: number, term: number): Entry => ({ index, term, type: EntryType.Normal, data: new Uint8Array(0) });
const snap = (index: number, term: number): { index: number; term: number } => ({ index, term });
const img = (entries: Entry[], s?: { index: number; term: number }, hs?: HardState): TestLog => new TestLog(entries, s?.index ?? 0, s?.term ?? 0, hs);
const msg = (f: WireFields): Message => makeMessage(f);

function violation(fn: () => void): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof InvariantViolation) return e.invariant;
    throw e;
  }
  return 'none';
}

describe('Checker', () => {
  const ids = ['a', 'b', 'c'];
  function setup(durable: Record<string, TestLog> = {}) {
    const d = { a: img([]), b: img([]), c: img([]), ...durable };
    return { c: new Checker(ids, (id) => d[id as 'a' | 'b' | 'c']), d };
  }

  it('Election Safety: two leaders in one term, ever', () => {
    const { c } = setup();
    c.onLeader('a', 1);
    c.onLeader('a', 1);
    c.onLeader('b', 2);
    expect(violation(() => c.onLeader('c', 1))).toBe('ElectionSafety');
  });

  it('Vote Safety: one granted vote per node and term, across incarnations', () => {
    const { c } = setup({ b: img([], undefined, { term: 3, vote: 'a', commit: 0 }) });
    const grant = (to: string) => msg({ type: MessageType.VoteResp, from: 'b', to, term: 3 });
    c.onSend(grant('a'), img([]), false);
    c.onSend(msg({ type: MessageType.VoteResp, from: 'b', to: 'c', term: 3, reject: true }), img([]), false);
    expect(violation(() => c.onSend(grant('c'), img([]), false))).toBe('VoteSafety');
  });

  it('acknowledgements sent before the write syncs must only cover durable state', () => {
    const { c } = setup({ b: img([ent(1, 1)], undefined, { term: 2, vote: '', commit: 0 }) });
    // An immediate grant while the durable hard state has no vote for the candidate.
    expect(violation(() => c.onSend(msg({ type: MessageType.VoteResp, from: 'b', to: 'a', term: 2 }), img([]), true))).toBe(
      'DurableBeforeAck',
    );
    const latest = img([ent(1, 1), ent(2, 2)]);
    c.onSend(msg({ type: MessageType.AppResp, from: 'b', to: 'a', term: 2, index: 1 }), latest, true);
    expect(violation(() => c.onSend(msg({ type: MessageType.AppResp, from: 'b', to: 'a', term: 2, index: 2 }), latest, true))).toBe(
      'DurableBeforeAck',
    );
    // After persist, the same acknowledgement is fine; and without durability checks too.
    c.onSend(msg({ type: MessageType.AppResp, from: 'b', to: 'a', term: 2, index: 2 }), latest, false);
    const lax = new Checker(ids, () => img([]), { durability: false });
    lax.onSend(msg({ type: MessageType.AppResp, from: 'b', to: 'a', term: 2, index: 2 }), latest, true);
  });

  it('Log Matching: one content and one predecessor per (index, term)', () => {
    const { c } = setup();
    const la = img([ent(1, 1), ent(2, 1, 'x')]);
    c.onLogWrite('a', la, la.entries);
    const lb = img([ent(1, 1), ent(2, 1, 'y')]);
    expect(violation(() => c.onLogWrite('b', lb, [lb.entries[1]!]))).toBe('LogMatching');
    const { c: c2 } = setup();
    const l1 = img([ent(1, 1), ent(2, 3, 'z')]);
    c2.onLogWrite('a', l1, l1.entries);
    const l2 = img([ent(1, 2), ent(2, 3, 'z')]);
    expect(violation(() => c2.onLogWrite('b', l2, l2.entries))).toBe('LogMatching');
    const { c: c3 } = setup();
    const l3 = img([ent(1, 3), ent(2, 2)]);
    expect(violation(() => c3.onLogWrite('a', l3, l3.entries))).toBe('LogTermOrder');
  });

  it('State Machine Safety: no two different entries applied or committed at one index', () => {
    const both = img([ent(1, 1)]);
    const { c } = setup({ a: both, b: both, c: both });
    c.onApply('a', 1, ent(1, 1), 0);
    c.onApply('b', 1, ent(1, 1), 0);
    expect(violation(() => c.onApply('c', 2, ent(1, 2), 0))).toBe('StateMachineSafety');
    const { c: c2 } = setup({ a: both, b: both });
    expect(violation(() => c2.onApply('a', 1, ent(1, 1), 5))).toBe('ApplyOrder');
    const { c: c3 } = setup();
    c3.onCommitClaim('a', 1, 1, img([ent(1, 1, 'x')]));
    expect(violation(() => c3.onCommitClaim('b', 2, 1, img([ent(1, 2, 'y')])))).toBe('StateMachineSafety');
    expect(violation(() => c3.onCommitClaim('c', 2, 2, img([ent(1, 1, 'x')])))).toBe('CommitBeyondLog');
  });

  it('an applied entry must be durable on a quorum', () => {
    const { c } = setup({ a: img([ent(1, 1)]) });
    expect(violation(() => c.onApply('a', 1, ent(1, 1), 0))).toBe('DurableQuorum');
    const viaSnapshot = setup({ a: img([ent(1, 1)]), b: img([], snap(4, 1)) });
    viaSnapshot.c.onApply('a', 1, ent(1, 1), 0);
  });

  it('Leader Completeness: a leader holds every entry committed in an earlier term', () => {
    const { c } = setup();
    c.onCommitClaim('a', 2, 2, img([ent(1, 1), ent(2, 2)]));
    // A leader of term 3 whose log stops at 1, or holds something else at 2.
    expect(violation(() => c.checkLeader('b', 3, img([ent(1, 1)]), 1))).toBe('LeaderCompleteness');
    expect(violation(() => c.checkLeader('b', 3, img([ent(1, 1), ent(2, 1)]), 2))).toBe('LeaderCompleteness');
    c.checkLeader('b', 3, img([ent(1, 1), ent(2, 2), ent(3, 3)]), 3);
    c.checkLeader('b', 3, img([], snap(2, 2)), 2);
    // A stale leader of the commit's own term (or older) may lack it: no violation.
    c.checkLeader('c', 2, img([ent(1, 1)]), 1);
    // Creating an entry of a term >= the commit's claim term over a committed index is a violation...
    const over = img([ent(1, 1), ent(2, 3)]);
    expect(violation(() => c.onLogWrite('b', over, [over.entries[1]!]))).toBe('LeaderCompleteness');
    // ...but a stale leader's older entry reaching a lagging follower is legal.
    const stale = img([ent(1, 1), ent(2, 1)]);
    c.onLogWrite('c', stale, [stale.entries[1]!]);
  });

  it('a node never rewrites its log at or below its own commit index', () => {
    const { c } = setup();
    c.onCommitClaim('a', 5, 2, img([ent(1, 1), ent(2, 1)]));
    const rewritten = img([ent(1, 1), ent(2, 0 + 1, 'other')]);
    expect(violation(() => c.onLogWrite('a', rewritten, [rewritten.entries[1]!]))).toBe('CommittedTruncated');
  });

  it('monotonic term/commit/applied within an incarnation; nothing durable goes back on restart', () => {
    const { c } = setup();
    c.onStatus('a', 0, { term: 2, commit: 5, applied: 4, lastIndex: 6 });
    c.onStatus('a', 1, { term: 2, commit: 3, applied: 0, lastIndex: 6 }); // restarted: may reload lower
    expect(violation(() => c.onStatus('a', 1, { term: 1, commit: 3, applied: 0, lastIndex: 6 }))).toBe('Monotonic');
    expect(violation(() => c.onStatus('b', 0, { term: 1, commit: 3, applied: 4, lastIndex: 6 }))).toBe('AppliedBeyondCommit');
    expect(violation(() => c.onStatus('c', 0, { term: 1, commit: 7, applied: 4, lastIndex: 6 }))).toBe('CommitBeyondLog');
    const loaded = { hardState: { term: 4, vote: 'a', commit: 3 }, entries: [] };
    expect(violation(() => c.onRestart('a', loaded, { term: 3, commit: 3, applied: 0, lastIndex: 3 }))).toBe('RestartRegression');
  });

  it('snapshots: one state per index on every node, installed never backwards nor at another term', () => {
    const all = img([ent(1, 1, 'x'), noop(2, 1), ent(3, 1, 'y')]);
    const { c } = setup({ a: all, b: all, c: all });
    c.onApply('a', 1, ent(1, 1, 'x'), 0);
    c.onApply('a', 1, noop(2, 1), 1);
    c.onApply('a', 1, ent(3, 1, 'y'), 2);
    c.onSnapshotTaken('a', 3, 0xabc);
    c.onSnapshotTaken('b', 3, 0xabc);
    expect(violation(() => c.onSnapshotTaken('c', 3, 0xdef))).toBe('StateMachineSafety');
    c.onSnapshotInstall('b', { index: 3, term: 1 }, 0xabc, 0);
    expect(violation(() => c.onSnapshotInstall('c', { index: 3, term: 1 }, 0xdef, 0))).toBe('SnapshotContent');
    expect(violation(() => c.onSnapshotInstall('c', { index: 3, term: 2 }, 0xabc, 0))).toBe('StateMachineSafety');
    expect(violation(() => c.onSnapshotInstall('c', { index: 3, term: 1 }, 0xabc, 4))).toBe('AppliedRegression');
  });

  it('a linearizable read never returns an index below what was applied when it was issued', () => {
    const all = img([ent(1, 1), ent(2, 1)]);
    const { c } = setup({ a: all, b: all, c: all });
    c.onApply('a', 1, ent(1, 1), 0);
    c.onApply('a', 1, ent(2, 1), 1);
    c.onReadRequest('r1');
    c.onReadState('b', 'r1', 2);
    expect(violation(() => c.onReadState('b', 'r1', 1))).toBe('LinearizableRead');
  });
});

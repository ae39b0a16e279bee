// Unit tests of the simulator's own pieces: PRNG, event queue, network model, disk model, and the
// invariant checker fed hand-made states that violate (and states that respect) each invariant.
import { describe, expect, it } from 'vitest';
import { EntryType, MessageType, type Entry, type Message, type Snapshot } from '../../src/raft/types';
import { makeMessage } from '../../src/raft/messages';
import { AppState, encodeValue } from './app';
import { EventQueue } from './eventQueue';
import { Checker, InvariantViolation } from './invariants';
import { Network } from './network';
import { Prng } from './prng';
import { rawNodeFactory } from './rawNodeFactory';
import { LogImage, SimStorage } from './simStorage';
import { runSeed } from './simulator';

const enc = (s: string): Uint8Array => encodeValue(s);
const ent = (index: number, term: number, data = `v${index}.${term}`): Entry => ({ index, term, type: EntryType.Normal, data: enc(data) });
const noop = (index: number, term: number): Entry => ({ index, term, type: EntryType.Normal, data: new Uint8Array(0) });
const snap = (index: number, term: number, values: Array<[number, string]> = []): Snapshot => ({
  meta: { index, term, config: { voters: ['a', 'b', 'c'] } },
  data: enc(JSON.stringify(values)),
});
/** A log image with the given entries (contiguous from 1 unless a snapshot is given). */
const img = (entries: Entry[], s?: Snapshot, hs = { term: 0, vote: '', commit: 0 }): LogImage => new LogImage(hs, s, entries);
const msg = (f: Partial<Message> & Pick<Message, 'type' | 'from' | 'to' | 'term'>): Message => makeMessage(f);

function violation(fn: () => void): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof InvariantViolation) return e.invariant;
    throw e;
  }
  return 'none';
}

describe('Prng', () => {
  it('replays the same sequence for the same seed and differs across seeds and streams', () => {
    const a = new Prng(42);
    const b = new Prng(42);
    const xs = Array.from({ length: 100 }, () => a.nextU32());
    expect(Array.from({ length: 100 }, () => b.nextU32())).toEqual(xs);
    const c = new Prng(43);
    expect(Array.from({ length: 100 }, () => c.nextU32())).not.toEqual(xs);
    const d1 = Prng.derive(7, 'net');
    const d2 = Prng.derive(7, 'faults');
    expect(d1.nextU32()).not.toBe(d2.nextU32());
    expect(Prng.derive(7, 'net').nextU32()).toBe(Prng.derive(7, 'net').nextU32());
  });

  it('is roughly uniform and stays in range', () => {
    const r = new Prng(1);
    const buckets = new Array(10).fill(0);
    let outOfRange = 0;
    for (let i = 0; i < 100_000; i++) {
      const x = r.next();
      if (!(x >= 0 && x < 1)) outOfRange++;
      else buckets[Math.floor(x * 10)]++;
    }
    expect(outOfRange).toBe(0);
    for (const b of buckets) expect(Math.abs(b - 10_000)).toBeLessThan(600);
    const seen = new Set<number>();
    for (let i = 0; i < 1000; i++) seen.add(r.range(3, 7));
    expect([...seen].sort()).toEqual([3, 4, 5, 6, 7]);
    let hits = 0;
    for (let i = 0; i < 10_000; i++) if (r.chance(0.3)) hits++;
    expect(Math.abs(hits - 3000)).toBeLessThan(250);
    expect(r.chance(0)).toBe(false);
    const w = { a: 1, b: 0, c: 3 };
    const counts = { a: 0, b: 0, c: 0 };
    for (let i = 0; i < 4000; i++) counts[r.weighted(w)]++;
    expect(counts.b).toBe(0);
    expect(counts.c).toBeGreaterThan(counts.a * 2);
  });
});

describe('EventQueue', () => {
  it('pops by time, then in scheduling order', () => {
    const q = new EventQueue<string>();
    q.push(5, 'c');
    q.push(1, 'a');
    q.push(5, 'd');
    q.push(3, 'b');
    q.push(1, 'a2');
    const out: string[] = [];
    for (let e = q.pop(); e; e = q.pop()) out.push(e.item);
    expect(out).toEqual(['a', 'a2', 'b', 'c', 'd']);
  });

  it('stays ordered under random use', () => {
    const r = new Prng(9);
    const q = new EventQueue<number>();
    for (let i = 0; i < 2000; i++) q.push(r.int(100), i);
    let last = -1;
    while (q.size > 0) {
      const t = q.peekTime()!;
      expect(t).toBeGreaterThanOrEqual(last);
      last = q.pop()!.time;
    }
  });
});

describe('Network', () => {
  const ids5 = ['n1', 'n2', 'n3', 'n4', 'n5'];
  const link = { loss: 0, dup: 0, delay: [1, 1] as [number, number], longDelayRate: 0, longDelay: [0, 0] as [number, number] };
  const cut = (net: Network) =>
    ids5.flatMap((f) => ids5.filter((t) => t !== f && net.isBlocked(f, t)).map((t) => `${f}>${t}`)).sort();

  it('symmetric partitions cut both directions between the sides only', () => {
    const net = new Network(ids5, new Prng(1), link);
    for (let s = 0; s < 50; s++) {
      const p = net.partition('symmetric', new Prng(s));
      expect(p.a.length).toBeGreaterThanOrEqual(1);
      expect(p.a.length).toBeLessThanOrEqual(2);
      for (const x of ids5) {
        for (const y of ids5) {
          if (x === y) continue;
          const across = p.a.includes(x) !== p.a.includes(y);
          expect(net.isBlocked(x, y)).toBe(across);
        }
      }
    }
    net.heal();
    expect(cut(net)).toEqual([]);
  });

  it('one-way partitions let A talk to B but not back', () => {
    const net = new Network(ids5, new Prng(1), link);
    const p = net.partition('oneWay', new Prng(3));
    expect(p.oneWay).toBe(true);
    for (const x of p.a) {
      for (const y of p.b) {
        expect(net.isBlocked(x, y)).toBe(false);
        expect(net.isBlocked(y, x)).toBe(true);
      }
    }
  });

  it('isolates the leader with a minority: leader+1 vs 3 with 5 nodes, alone vs 2 with 3', () => {
    const net = new Network(ids5, new Prng(1), link);
    const p = net.partition('leaderMinority', new Prng(4), 'n3');
    expect(p.a[0]).toBe('n3');
    expect(p.a).toHaveLength(2);
    expect(p.b).toHaveLength(3);
    const net3 = new Network(['a', 'b', 'c'], new Prng(1), link);
    const p3 = net3.partition('leaderMinority', new Prng(4), 'b');
    expect(p3.a).toEqual(['b']);
    expect(net3.isBlocked('b', 'a') && net3.isBlocked('a', 'b') && !net3.isBlocked('a', 'c')).toBe(true);
  });

  it('loses, duplicates and delays messages at the configured rates', () => {
    const net = new Network(ids5, new Prng(5), { loss: 0.3, dup: 0.1, delay: [2, 9], longDelayRate: 0.05, longDelay: [50, 60] });
    let lost = 0;
    let dups = 0;
    let long = 0;
    const N = 20_000;
    for (let i = 0; i < N; i++) {
      const d = net.deliveries();
      if (d.length === 0) lost++;
      if (d.length === 2) dups++;
      for (const x of d) {
        expect(x).toBeGreaterThanOrEqual(2);
        if (x >= 52) long++;
        else expect(x).toBeLessThanOrEqual(9);
      }
    }
    expect(Math.abs(lost / N - 0.3)).toBeLessThan(0.02);
    expect(Math.abs(dups / (N - lost) - 0.1)).toBeLessThan(0.02);
    expect(long).toBeGreaterThan(0);
  });
});

describe('SimStorage (disk model)', () => {
  it('loses unsynced writes on crash, keeps synced ones, and can let an outstanding write land', () => {
    const s = new SimStorage();
    s.write({ entries: [ent(1, 1), ent(2, 1)], hardState: { term: 1, vote: 'a', commit: 0 } });
    s.sync();
    s.write({ entries: [ent(3, 1)], hardState: { term: 1, vote: 'a', commit: 2 } });
    expect(s.latest.lastIndex).toBe(3);
    expect(s.durable.lastIndex).toBe(2);
    s.crash();
    expect(s.loadSync().entries.map((e) => e.index)).toEqual([1, 2]);
    expect(s.loadSync().hardState.commit).toBe(0);
    s.write({ entries: [ent(3, 1)] });
    s.crash(1);
    expect(s.durable.lastIndex).toBe(3);
  });

  it('truncates a conflicting suffix, refuses gaps and vote changes, and applies the snapshot rules', () => {
    const s = new SimStorage();
    s.write({ entries: [ent(1, 1), ent(2, 1), ent(3, 1)], hardState: { term: 2, vote: 'b', commit: 1 } });
    s.write({ entries: [ent(2, 2)] });
    expect(s.latest.lastIndex).toBe(2);
    expect(s.latest.term(2)).toBe(2);
    expect(() => s.write({ entries: [ent(5, 2)] })).toThrow(/gap/);
    expect(() => s.write({ entries: [], hardState: { term: 2, vote: 'c', commit: 1 } })).toThrow(/vote/);
    expect(() => s.write({ entries: [], hardState: { term: 1, vote: '', commit: 1 } })).toThrow(/term/);
    // Snapshot matching the log at its index keeps the suffix; a diverging one drops it.
    const keep = img([ent(1, 1), ent(2, 1), ent(3, 1)]);
    keep.installSnapshot(snap(2, 1), true);
    expect([keep.snapshotIndex, keep.lastIndex]).toEqual([2, 3]);
    const drop = img([ent(1, 1), ent(2, 1), ent(3, 1)]);
    drop.installSnapshot(snap(2, 2), true);
    expect([drop.snapshotIndex, drop.lastIndex]).toEqual([2, 2]);
    s.sync();
    expect(() => s.saveSnapshotSync(snap(2, 9))).toThrow(/compaction/);
    s.saveSnapshotSync(snap(1, 1));
    expect(s.durable.snapshotIndex).toBe(1);
    expect(s.durable.term(2)).toBe(2);
  });
});

describe('AppState', () => {
  it('round-trips its applied sequence through a snapshot', () => {
    const a = new AppState();
    a.apply(noop(1, 1));
    a.apply(ent(2, 1, 'x'));
    a.apply(ent(3, 1, 'y'));
    const b = AppState.fromSnapshot({ meta: { index: 3, term: 1, config: { voters: ['a'] } }, data: a.serialize() });
    expect(b.values).toEqual([
      [2, 'x'],
      [3, 'y'],
    ]);
    expect(b.appliedIndex).toBe(3);
  });
});

describe('Checker', () => {
  const ids = ['a', 'b', 'c'];
  function setup(durable: Record<string, LogImage> = {}) {
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

  it('snapshots carry exactly the committed values and never move applied back', () => {
    const all = img([ent(1, 1, 'x'), noop(2, 1), ent(3, 1, 'y')]);
    const { c } = setup({ a: all, b: all, c: all });
    c.onApply('a', 1, ent(1, 1, 'x'), 0);
    c.onApply('a', 1, noop(2, 1), 1);
    c.onApply('a', 1, ent(3, 1, 'y'), 2);
    c.onSnapshotInstall('b', 1, { index: 3, term: 1 }, [
      [1, 'x'],
      [3, 'y'],
    ], 0);
    expect(violation(() => c.onSnapshotInstall('c', 1, { index: 3, term: 1 }, [[1, 'x']], 0))).toBe('StateMachineSafety');
    expect(violation(() => c.onSnapshotInstall('c', 1, { index: 3, term: 1 }, [[1, 'x'], [3, 'z']], 0))).toBe(
      'StateMachineSafety',
    );
    expect(violation(() => c.onSnapshotInstall('c', 1, { index: 3, term: 1 }, [[1, 'x'], [3, 'y']], 4))).toBe(
      'AppliedRegression',
    );
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

describe('determinism', () => {
  it('a seed replays exactly, event for event; another seed does not', () => {
    const trace = (seed: number): string[] => {
      const lines: string[] = [];
      runSeed({ seed, factory: rawNodeFactory, safetyTicks: 150, trace: (l) => lines.push(l) });
      return lines;
    };
    const a = trace(8);
    expect(a.length).toBeGreaterThan(500);
    expect(trace(8)).toEqual(a);
    expect(trace(10)).not.toEqual(a);
  });
});

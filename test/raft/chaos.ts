// Randomized fault injection over the core: loss, duplication, reordering, partitions, crashes that
// lose un-persisted state, compaction and snapshots. Safety is checked throughout (the Network checks
// Election Safety and State Machine Safety; here also Log Matching on the stored logs, Leader
// Completeness and monotonic hard state); then the faults stop and the cluster must converge.

import { expect } from 'vitest';
import { MessageType, ProposalDroppedError, Role, type NodeId, type WireMessage } from '../../src/raft';
import type { RaftBugs } from '../support/brokenRawNode';
import { Network, enc, seededRandom, type NetOptions } from './network';

function termAtStore(net: Network, id: NodeId, i: number): number | undefined {
  const s = net.n(id).store;
  if (s.snapshot && s.snapshot.meta.index === i) return s.snapshot.meta.term;
  return s.entries.find((e) => e.index === i)?.term;
}

function checkLogMatching(net: Network): void {
  const ids = net.ids;
  for (let x = 0; x < ids.length; x++) {
    for (let y = x + 1; y < ids.length; y++) {
      const a = net.n(ids[x]).store;
      const b = net.n(ids[y]).store;
      // Find the highest index where both hold an entry with the same term; all below must agree.
      const bTerms = new Map(b.entries.map((e) => [e.index, e]));
      for (let k = a.entries.length - 1; k >= 0; k--) {
        const ea = a.entries[k];
        const eb = bTerms.get(ea.index);
        if (eb === undefined || eb.term !== ea.term) continue;
        for (let j = k; j >= 0; j--) {
          const pa = a.entries[j];
          const pb = bTerms.get(pa.index);
          if (pb === undefined) break; // below b's snapshot
          expect(pb.term, `log matching ${ids[x]}/${ids[y]} at ${pa.index}`).toBe(pa.term);
          expect(Buffer.from(pb.data).equals(Buffer.from(pa.data))).toBe(true);
        }
        break;
      }
    }
  }
}

export function runFuzz(seed: number, size: number, steps: number, bugs: RaftBugs = {}, extra: NetOptions = {}): Network {
  const ids = Array.from({ length: size }, (_, i) => `n${i}`);
  const rand = seededRandom(seed);
  const pick = <T>(xs: T[]): T => xs[Math.floor(rand() * xs.length)];
  const net = new Network(ids, {
    seed,
    electionTicks: 10,
    heartbeatTicks: 2,
    maxMsgBytes: 64,
    maxInflight: 4,
    snapshotChunkBytes: 50,
    snapshotInflightChunks: 2,
    testOnlyBugs: bugs,
    ...extra,
  });
  const committedByIndex = new Map<number, string>();
  const lastHard = new Map<NodeId, { term: number; commit: number }>();
  let proposed = 0;

  const leaderOfTerm = new Map<number, NodeId>();
  const checkAll = () => {
    for (const id of net.leaders()) {
      const term = net.raw(id).status().term;
      const other = leaderOfTerm.get(term);
      if (other !== undefined) expect(other, `two leaders in term ${term}`).toBe(id);
      leaderOfTerm.set(term, id);
    }
    checkLogMatching(net);
    for (const id of ids) {
      const hs = net.n(id).store.hardState;
      const prev = lastHard.get(id) ?? { term: 0, commit: 0 };
      expect(hs.term).toBeGreaterThanOrEqual(prev.term);
      expect(hs.commit).toBeGreaterThanOrEqual(prev.commit);
      lastHard.set(id, { term: hs.term, commit: hs.commit });
      // Record committed entries from the durable logs; they must never change.
      for (const e of net.n(id).store.entries) {
        if (e.index > hs.commit) break;
        const key = `${e.term}`;
        const seen = committedByIndex.get(e.index);
        if (seen === undefined) committedByIndex.set(e.index, key);
        else expect(key, `committed entry ${e.index} changed`).toBe(seen);
      }
    }
    // Leader Completeness: a live leader holds every committed entry (in its log or its snapshot).
    for (const id of net.leaders()) {
      const st = net.raw(id).status();
      for (const [index, term] of committedByIndex) {
        if (index <= st.snapshotIndex) continue;
        if (index > st.lastIndex) throw new Error(`leader ${id} lacks committed index ${index}`);
        const t = termAtStore(net, id, index);
        if (t !== undefined) expect(`${t}`, `leader ${id} at ${index}`).toBe(term);
      }
    }
  };

  for (let step = 0; step < steps; step++) {
    const r = rand();
    const alive = ids.filter((id) => net.n(id).alive);
    if (r < 0.3) {
      // Deliver a random in-flight message (reordering), sometimes duplicating it.
      if (net.queue.length > 0) {
        const i = Math.floor(rand() * net.queue.length);
        const m = net.queue[i];
        if (rand() < 0.9) net.queue.splice(i, 1);
        if (rand() < 0.1) {
          // Loss.
        } else {
          net.deliver(m);
        }
      }
    } else if (r < 0.45) {
      // Handle a Ready, sometimes crashing between sending `messages` and persisting.
      const ready = alive.filter((id) => net.raw(id).hasReady() && net.n(id).pending === undefined);
      if (ready.length > 0) {
        const id = pick(ready);
        net.processReady(id, { crashBeforePersist: rand() < 0.02 });
      }
    } else if (r < 0.55) {
      // The same in two halves, with other events in between (an asynchronous disk write).
      const id = pick(alive.length > 0 ? alive : ids);
      const node = net.n(id);
      if (node.alive && node.pending !== undefined) {
        if (rand() < 0.03) net.crash(id);
        else net.finishReady(id);
      } else if (node.alive && node.raw.hasReady()) {
        net.beginReady(id);
      }
    } else if (r < 0.75) {
      const id = pick(ids);
      if (net.n(id).alive) net.raw(id).tick();
    } else if (r < 0.85) {
      const leaders = net.leaders();
      if (leaders.length > 0) {
        try {
          net.raw(pick(leaders)).propose(enc(`p${proposed++}`));
        } catch (e) {
          if (!(e instanceof ProposalDroppedError)) throw e;
        }
      }
    } else if (r < 0.86) {
      const id = pick(ids);
      if (net.n(id).alive) {
        if (alive.length > Math.floor(size / 2) || rand() < 0.3) net.crash(id);
      } else {
        net.restart(id);
      }
    } else if (r < 0.87) {
      const kind = rand();
      if (kind < 0.5) net.heal();
      else if (kind < 0.75) {
        const cut = ids.filter(() => rand() < 0.4);
        net.partition(cut, ids.filter((id) => !cut.includes(id)));
      } else {
        net.cut(pick(ids), pick(ids), true); // one-way
      }
    } else if (r < 0.89) {
      const id = pick(alive.length > 0 ? alive : ids);
      const node = net.n(id);
      if (node.alive && node.appliedIndex > (node.store.snapshot?.meta.index ?? 0) + 3 && !node.raw.hasReady()) {
        net.compact(id);
      }
    } else if (r < 0.9) {
      const id = pick(alive.length > 0 ? alive : ids);
      if (net.n(id).alive) {
        try {
          net.raw(id).readIndex(enc(`r${step}`));
        } catch (e) {
          if (!(e instanceof ProposalDroppedError)) throw e;
        }
      }
    } else if (r < 0.902) {
      const id = pick(alive.length > 0 ? alive : ids);
      if (net.n(id).alive && net.raw(id).status().role === Role.Leader) net.raw(id).transferLeadership(pick(ids));
    } else if (r < 0.91) {
      // Duplicate something old (a stale message arriving very late).
      if (net.sent.length > 0) {
        const m: WireMessage = net.sent[Math.floor(rand() * net.sent.length)];
        net.deliver(m);
      }
    } else {
      // Deliver the oldest message (the common, orderly case).
      net.deliverOne();
    }
    if (step % 50 === 0) checkAll();
  }
  checkAll();

  // Liveness: heal, restart everyone, drop nothing; a leader must emerge and everything converge.
  net.heal();
  for (const id of ids) if (!net.n(id).alive) net.restart(id);
  net.stabilize();
  // A leader left over from the faulty phase may step down right away (check-quorum) and take an
  // uncommitted proposal with it; that is allowed, so retry until one sticks.
  let leader: NodeId | undefined;
  for (let attempt = 0; attempt < 10; attempt++) {
    let candidate: NodeId | undefined;
    for (let i = 0; i < 200 && candidate === undefined; i++) {
      net.tick(1);
      const ls = net.leaders();
      if (ls.length === 1 && net.raw(ls[0]).quorumActive() && net.raw(ls[0]).status().leadTransferee === '') candidate = ls[0];
    }
    expect(candidate, `seed ${seed}: no leader after healing`).toBeDefined();
    net.propose(candidate!, 'final');
    net.tick(30);
    if (net.leaders().length === 1 && net.leaders()[0] === candidate && net.appliedData(candidate!).includes('final')) {
      leader = candidate;
      break;
    }
  }
  expect(leader, `seed ${seed}: no stable leader committed a proposal`).toBeDefined();
  const want = net.n(leader!).state.map((a) => `${a.index}:${a.term}`);
  expect(net.appliedData(leader!)).toContain('final');
  for (const id of ids) {
    expect(net.n(id).state.map((a) => `${a.index}:${a.term}`), `seed ${seed}: ${id} converged`).toEqual(want);
  }
  checkAll();
  // Snapshot chunk bound holds throughout.
  for (const m of net.sent) {
    if (m.type === MessageType.Snap) expect(m.snapshotData!.byteLength).toBeLessThanOrEqual(extra.snapshotChunkBytes ?? 50);
  }
  return net;
}

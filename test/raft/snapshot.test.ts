// Compaction and chunked InstallSnapshot (paper section 7, Figure 13).

import { crc32 } from '../../src/raft/crc32';
import { describe, it, expect } from 'vitest';
import { MessageType, RaftInvariantError, Role, flattenMessage, type Snapshot, type WireMessage } from '../../src/raft';
import { Network, drain, enc, msg, nodeWithLog, encodeState } from './network';

const ABC = ['a', 'b', 'c'];

/** A 3-node cluster where c missed 40 entries that the leader then compacted away. */
function laggingFollower(chunkBytes = 64) {
  const net = new Network(ABC, { snapshotChunkBytes: chunkBytes, snapshotInflightChunks: 2 });
  net.elect('a');
  net.crash('c');
  for (let i = 0; i < 40; i++) net.propose('a', `entry-${i}`);
  net.tick(2);
  const snap = net.compact('a');
  expect(snap.meta.index).toBe(41);
  expect(net.raw('a').status().snapshotIndex).toBe(41);
  net.restart('c');
  return { net, snap };
}

describe('compaction', () => {
  it('compact() keeps the snapshot and drops the entries it covers', () => {
    const net = new Network(ABC);
    net.elect('a');
    for (let i = 0; i < 5; i++) net.propose('a', `x${i}`);
    net.tick(1);
    const snap = net.compact('a', 4);
    expect(snap.meta).toEqual({ index: 4, term: 1, config: { voters: ABC }, crc32: crc32(snap.data) });
    const st = net.raw('a').status();
    expect(st).toMatchObject({ snapshotIndex: 4, lastIndex: 6, applied: 6 });
    // Compacting at or below the current snapshot changes nothing.
    expect(net.raw('a').compact(3, new Uint8Array())).toBe(snap);
  });

  it('refuses to compact beyond the applied index', () => {
    const net = new Network(ABC);
    net.elect('a');
    expect(() => net.raw('a').compact(5, new Uint8Array())).toThrow(RaftInvariantError);
  });
});

describe('InstallSnapshot', () => {
  it('a follower far behind the compaction point catches up through a chunked snapshot', () => {
    const { net, snap } = laggingFollower(64);
    net.tick(3);
    const chunks = net.sent.filter((m) => m.type === MessageType.Snap);
    expect(chunks.length).toBeGreaterThanOrEqual(Math.ceil(snap.data.byteLength / 64));
    for (const m of chunks) {
      expect(m.snapshotData!.byteLength).toBeLessThanOrEqual(64);
      expect(m.snapshotMeta).toEqual(snap.meta); // the meta rides on every chunk
    }
    expect(chunks.filter((m) => m.snapshotDone)).toHaveLength(1);
    // c installed the snapshot (state restored from it), and the log continues after it.
    const c = net.n('c');
    expect(c.installedSnapshots).toHaveLength(1);
    expect(Buffer.from(c.installedSnapshots[0].data).equals(Buffer.from(snap.data))).toBe(true);
    expect(c.store.snapshot?.meta.index).toBe(41);
    expect(net.raw('c').status()).toMatchObject({ snapshotIndex: 41, applied: 41, commit: 41 });
    net.propose('a', 'after');
    expect(net.appliedData('c')).toEqual(net.appliedData('a'));
    expect(net.appliedData('c')).toContain('after');
    expect(net.raw('a').status().progress.c.state).toBe('replicate');
  });

  it('the leader keeps at most snapshotInflightChunks unacknowledged chunks in flight', () => {
    const { net } = laggingFollower(32);
    const held: WireMessage[] = [];
    net.filter = (m) => {
      if (m.type === MessageType.SnapResp) {
        held.push(m);
        return false;
      }
      return true;
    };
    net.tick(2);
    expect(net.sent.filter((m) => m.type === MessageType.Snap)).toHaveLength(2);
    expect(net.raw('a').status().progress.c.state).toBe('snapshot');
    net.filter = undefined;
    for (const m of held) net.deliver(m);
    net.tick(5);
    expect(net.raw('c').status().snapshotIndex).toBe(41);
  });

  it('a lost chunk: the follower reports what it holds and the leader resends from there', () => {
    const { net, snap } = laggingFollower(32);
    let dropped = false;
    net.filter = (m) => {
      if (!dropped && m.type === MessageType.Snap && m.snapshotOffset === 32) {
        dropped = true;
        return false;
      }
      return true;
    };
    net.tick(5);
    expect(dropped).toBe(true);
    // The chunk after the gap was refused, naming the offset the follower needs.
    const gaps = net.delivered.filter((m) => m.type === MessageType.SnapResp && m.reject);
    expect(gaps.length).toBeGreaterThan(0);
    expect(gaps[0].index).toBe(32);
    expect(net.sent.filter((m) => m.type === MessageType.Snap && m.snapshotOffset === 32)).toHaveLength(2);
    expect(net.raw('c').status().snapshotIndex).toBe(snap.meta.index);
    expect(net.n('c').state).toEqual(net.n('a').state.slice(0, net.n('c').state.length));
  });

  it('chunks that arrive out of order are not assembled out of order', () => {
    const { net, snap } = laggingFollower(16);
    // Deliver each leader chunk batch reversed.
    net.tick(1, ['a']);
    let rounds = 0;
    while (net.raw('c').status().snapshotIndex < snap.meta.index && rounds++ < 500) {
      net.flushReadies();
      const batch = net.queue;
      net.queue = [];
      const snaps = batch.filter((m) => m.type === MessageType.Snap).reverse();
      for (const m of [...batch.filter((m) => m.type !== MessageType.Snap), ...snaps]) net.deliver(m);
      if (net.queue.length === 0) net.tick(1);
    }
    expect(net.raw('c').status().snapshotIndex).toBe(snap.meta.index);
    expect(net.n('c').installedSnapshots.map((s) => Buffer.from(s.data).toString())).toEqual([Buffer.from(snap.data).toString()]);
  });

  it('the leader restarts the transfer from the start when the follower falls silent', () => {
    const { net } = laggingFollower(32);
    let silent = true;
    net.filter = (m) => !(silent && m.type === MessageType.SnapResp);
    net.tick(25); // more than an election timeout without an answer (c still answers heartbeats)
    expect(net.raw('a').status().role).toBe(Role.Leader);
    const firstChunks = net.sent.filter((m) => m.type === MessageType.Snap && m.snapshotOffset === 0);
    expect(firstChunks.length).toBeGreaterThanOrEqual(2);
    silent = false;
    net.tick(10);
    expect(net.raw('c').status().snapshotIndex).toBe(41);
  });

  it('regression (sim seed 1242): a replicating follower whose lost Apps were compacted away gets a snapshot', () => {
    const net = new Network(ABC, { maxInflight: 2, snapshotChunkBytes: 64 });
    net.elect('a');
    let drop = true;
    net.filter = (m) => !(drop && m.type === MessageType.App && m.to === 'c');
    for (let i = 0; i < 6; i++) net.propose('a', `x${i}`); // one App per turn: c's window fills with lost Apps
    expect(net.raw('a').status().progress.c).toMatchObject({ state: 'replicate', match: 1, inflight: 2 });
    net.compact('a');
    drop = false;
    net.tick(5);
    expect(net.raw('c').status().snapshotIndex).toBe(7);
    expect(net.appliedData('c')).toEqual(net.appliedData('a'));
  });

  it('a snapshot that is not newer than the follower\'s commit is acknowledged without being installed', () => {
    const raw = nodeWithLog('b', ABC, [1, 1, 1, 1], { term: 1, commit: 4 });
    const meta = { index: 3, term: 1, config: { voters: ABC } };
    raw.step(msg({ type: MessageType.Snap, from: 'a', to: 'b', term: 1, snapshotMeta: meta, snapshotOffset: 0, snapshotData: enc('x'), snapshotDone: true }));
    const rd = raw.ready();
    expect(rd.snapshot).toBeUndefined();
    expect(rd.messagesAfterPersist.map(flattenMessage).map((m) => [m.type, m.snapshotDone, m.index])).toEqual([[MessageType.SnapResp, true, 4]]);
    raw.advance(rd);
  });

  function install(log: number[], meta: { index: number; term: number }) {
    const raw = nodeWithLog('b', ABC, log, { term: 2, commit: 1 });
    const data = encodeState([]);
    const snapshotMeta = { ...meta, config: { voters: ABC }, crc32: crc32(data) };
    raw.step(msg({ type: MessageType.Snap, from: 'a', to: 'b', term: 3, snapshotMeta, snapshotOffset: 0, snapshotData: data, snapshotDone: true }));
    return raw;
  }

  it('restoring keeps the entries after the snapshot when the log holds its last entry (Figure 13, step 6)', () => {
    const raw = install([1, 1, 1, 2, 2], { index: 3, term: 1 });
    const rd = raw.ready();
    expect(rd.snapshot?.meta.index).toBe(3);
    // The stored log is replaced by the snapshot plus the kept entries, in one write.
    expect(rd.entries.map((e) => [e.index, e.term])).toEqual([
      [4, 2],
      [5, 2],
    ]);
    expect(rd.committedEntries).toEqual([]);
    expect(rd.hardState?.commit).toBe(3);
    expect(rd.messagesAfterPersist.map(flattenMessage).map((m) => [m.type, m.snapshotDone, m.index])).toEqual([[MessageType.SnapResp, true, 3]]);
    raw.advance(rd);
    expect(raw.status()).toMatchObject({ snapshotIndex: 3, lastIndex: 5, applied: 3, commit: 3, stableIndex: 5 });
  });

  it('restoring discards the whole log when it conflicts with the snapshot (Figure 13, step 7)', () => {
    const raw = install([1, 1, 1, 2, 2], { index: 4, term: 3 });
    const rd = raw.ready();
    expect(rd.snapshot?.meta).toMatchObject({ index: 4, term: 3 });
    expect(rd.entries).toEqual([]);
    raw.advance(rd);
    expect(raw.status()).toMatchObject({ snapshotIndex: 4, lastIndex: 4, applied: 4, commit: 4 });
  });

  it('a restarted node resumes from its stored snapshot: applied starts at the snapshot index', () => {
    const { net } = laggingFollower();
    net.tick(3);
    net.propose('a', 'more');
    for (const id of ABC) {
      net.crash(id);
      net.restart(id);
    }
    for (const id of ABC) {
      const st = net.raw(id).status();
      expect(st.applied).toBe(net.n(id).store.snapshot?.meta.index ?? 0);
    }
    net.tick(30);
    const leader = net.leaders()[0];
    net.propose(leader, 'after restart');
    for (const id of ABC) expect(net.appliedData(id)).toEqual(net.appliedData(leader));
    expect(net.appliedData(leader).slice(-2)).toEqual(['more', 'after restart']);
  });

  it('a leader elected from a compacted log serves snapshots too', () => {
    const net = new Network(ABC, { snapshotChunkBytes: 100 });
    net.elect('a');
    net.crash('c');
    for (let i = 0; i < 10; i++) net.propose('a', `x${i}`);
    net.tick(2);
    net.compact('a');
    net.compact('b');
    net.crash('a');
    net.restart('c');
    net.tick(40);
    expect(net.leaders()).toEqual(['b']);
    expect(net.n('c').installedSnapshots).toHaveLength(1);
    expect(net.appliedData('c')).toEqual(net.appliedData('b'));
  });

  it('the snapshot carries the configuration', () => {
    const { net } = laggingFollower();
    net.tick(3);
    const snap: Snapshot = net.n('c').store.snapshot!;
    expect(snap.meta.config.voters).toEqual(ABC);
    drain(net.raw('c'));
  });
});

// The snapshot byte format (format 2) and the machinery that makes taking and installing a snapshot fast:
// the machine's own encoder against the plain reference, snapshot views, the restored records (lazily
// created sets, a lock's holder and waiters being the session records themselves), canonical encodings, and
// the sorted indexes that spare the snapshot any sorting.
import { describe, expect, it } from 'vitest';
import {
  InvariantError,
  LockStateMachine,
  SNAPSHOT_FORMAT,
  SnapshotError,
  decodeSnapshot,
  encodeSnapshot,
  type StateSnapshot,
} from '../../src/state';
import { Writer, writeMagic } from '../../src/state/snapshotFormat';
import { KeyIndex } from '../../src/state/sortedIndex';
import { compareStrings } from '../../src/state/text';
import { Harness, expectCanonicalSnapshot, expectSameBytes, internals, put, referenceSnapshot, roundTrip, sid } from './harness';

/** Holders, FIFO queues of several waiters, a lock kept free by its keys, dedup results of every kind. */
function queuedHarness(): { h: Harness; ids: string[] } {
  const h = new Harness();
  const ids = Array.from({ length: 6 }, (_, i) => h.open(10_000 + i, `client-${i}`));
  const [a, b, c, d, e, f] = ids as [string, string, string, string, string, string];
  const tq = h.grant(a, 'queue');
  for (const w of [e, c, f, b]) h.acquire(w, 'queue'); // FIFO order is not id order
  h.grant(b, 'other');
  h.acquire(d, 'other');
  h.acquire(a, 'other');
  const tk = h.grant(d, 'kept');
  h.write(d, 'kept', tk, [put('k/1', 'one'), put('k/2', 'two')]);
  h.release(d, 'kept', tk); // free, kept by its keys; its latest holder is still open
  h.write(a, 'queue', tq, [put('q/1', 'x')]);
  const tz = h.grant(f, 'closed-holder');
  h.write(f, 'closed-holder', tz, [put('z/1', 'z')]);
  h.release(f, 'closed-holder', tz);
  h.cancel(c, 'queue');
  h.apply(h.req('Write', { lock: 'queue', sessionId: b, token: 1, ops: [put('q/1', 'no')] })); // refused, with a key
  return { h, ids };
}

describe('snapshot encoder', () => {
  it('writes exactly the bytes of the plain reference snapshot, for states built by apply and restored ones', () => {
    const { h, ids } = queuedHarness();
    const bytes = expectCanonicalSnapshot(h.m);
    const restored = roundTrip(h.m);
    expectSameBytes(expectCanonicalSnapshot(restored), bytes);
    // a lock whose latest holder has closed: written as a literal id (not one of the sessions)
    h.close(ids[5]!);
    expect(h.m.describeLock('closed-holder')).toMatchObject({ holder: null });
    const after = expectCanonicalSnapshot(h.m);
    const r2 = roundTrip(h.m);
    expectSameBytes(expectCanonicalSnapshot(r2), after);
    expect(internals(r2).locks.get('closed-holder')!.latestHolder).toBe(ids[5]);
    // and the stale holder is told apart from a stranger, as before the snapshot
    const token = h.m.describeLock('closed-holder')!.latestToken;
    for (const m of [h.m, r2]) {
      expect(m.apply(h.index + 1, { type: 'Write', clientId: '', requestId: 0, now: 1, lock: 'closed-holder', sessionId: ids[5]!, token, ops: [put('z/1', 'late')] }).result)
        .toMatchObject({ status: 'refused', reason: 'LOCK_NOT_HELD' });
    }
  });

  it('is deterministic whatever the history: sessions and locks created and dropped in any order', () => {
    const build = (order: number[]): Uint8Array => {
      const m = new LockStateMachine();
      let i = 0;
      for (const n of order) m.apply(++i, { type: 'OpenSession', clientId: '', requestId: 0, now: 1, sessionId: sid(n), ttlMs: 5_000, clientName: '' });
      i = 100;
      for (const n of order) {
        for (const lock of [`l${n}`, `l${(n * 7) % 13}`, 'shared']) {
          m.apply(++i, { type: 'Acquire', clientId: '', requestId: 0, now: 2, lock, sessionId: sid(n), tryOnly: false });
        }
      }
      // drop some sessions again (their locks pass to waiters or are forgotten)
      for (const n of order) if (n % 3 === 0) m.apply(++i, { type: 'CloseSession', clientId: '', requestId: 0, now: 3, sessionId: sid(n) });
      i = 1000; // the same indexes from here on, whatever the order above
      m.apply(++i, { type: 'Noop' });
      return expectCanonicalSnapshot(m);
    };
    const forward = Array.from({ length: 13 }, (_, n) => n + 1);
    const a = build(forward);
    const b = build([...forward].reverse());
    expect(a.length).toBeGreaterThan(100);
    // Different histories give different states here (tokens, FIFO order), so compare each with itself
    // rebuilt, and with its restored copy: the bytes depend on the state only.
    expectSameBytes(build(forward), a);
    expectSameBytes(build([...forward].reverse()), b);
    expectSameBytes(encodeSnapshot(LockStateMachine.fromSnapshot(decodeSnapshot(a)).toSnapshot()), a);
  });

  it('refuses to write a lock whose holder is not an open session (the state is broken)', () => {
    const { h, ids } = queuedHarness();
    const t = internals(h.m);
    const rec = t.locks.get('queue')!;
    t.sessions.delete(t.sessions.get(ids[0]!)!); // the holder disappears behind the machine's back
    expect(h.m.checkInvariants().join('\n')).toMatch(/held by a session that is not open/);
    expect(() => h.m.toSnapshot()).toThrow(InvariantError);
    expect(rec.holder?.id).toBe(ids[0]);
  });
});

describe('a larger state', () => {
  it('round trips through many index chunks and link batches, with churn', () => {
    const m = new LockStateMachine();
    let i = 0;
    const open = (n: number): void => {
      m.apply(++i, { type: 'OpenSession', clientId: '', requestId: 0, now: i, sessionId: sid(n), ttlMs: 5_000, clientName: `c${n % 7}` });
    };
    const acquire = (n: number, lock: string): void => {
      m.apply(++i, { type: 'Acquire', clientId: `client-${n % 5}`, requestId: i, now: i, lock, sessionId: sid(n), tryOnly: false });
    };
    for (let n = 1; n <= 400; n++) open((n * 7919) % 100_003);
    const ids = m.sessionIds();
    ids.forEach((id, k) => {
      for (let j = 0; j < 8; j++) acquire(parseInt(id, 16), `lock/${(k * 31 + j * 17) % 2_000}`);
    });
    // churn: close every third session (locks pass to waiters or are forgotten), reopen others
    ids.forEach((id, k) => {
      if (k % 3 === 0) m.apply(++i, { type: 'CloseSession', clientId: '', requestId: 0, now: i, sessionId: id });
    });
    for (let n = 1; n <= 100; n++) open(200_000 + n);
    for (let n = 1; n <= 100; n++) acquire(200_000 + n, `lock/${n * 13}`);
    expect(m.checkInvariants()).toEqual([]);
    const stats = m.stats();
    expect(stats.heldLocks).toBeGreaterThan(1_500);
    expect(stats.waiters).toBeGreaterThan(100);
    const bytes = expectCanonicalSnapshot(m);
    const restored = roundTrip(m);
    expect(restored.stats()).toEqual(stats);
    expectSameBytes(expectCanonicalSnapshot(restored), bytes);
    for (const id of m.sessionIds()) expect(restored.getSession(id)).toEqual(m.getSession(id));
    // the same commands applied to both keep them equal
    for (const id of m.sessionIds().slice(0, 60)) {
      const cmd = { type: 'CloseSession' as const, clientId: '', requestId: 0, now: i + 1, sessionId: id };
      i++;
      expect(restored.apply(i, cmd)).toEqual(m.apply(i, cmd));
    }
    expect(restored.checkInvariants()).toEqual([]);
    expectSameBytes(expectCanonicalSnapshot(restored), expectCanonicalSnapshot(m));
  });
});

describe('restored records', () => {
  it('keep FIFO queues, and refer to the session records themselves', () => {
    const { h } = queuedHarness();
    const restored = roundTrip(h.m);
    for (const name of ['queue', 'other', 'kept', 'closed-holder']) expect(restored.describeLock(name)).toEqual(h.m.describeLock(name));
    expect(restored.describeLock('queue')!.waiters).toEqual(h.m.describeLock('queue')!.waiters);
    const t = internals(restored);
    for (const rec of t.locks.values()) {
      if (rec.holder !== null) {
        expect(t.sessions.get(rec.holder.id)).toBe(rec.holder);
        expect(rec.latestHolder).toBe(rec.holder.id);
      }
      for (const w of rec.waiters ?? []) expect(t.sessions.get(w.id)).toBe(w);
    }
    for (const r of [h.m, restored]) {
      const q = internals(r).locks.get('queue')!;
      const other = internals(r).locks.get('other')!;
      expect(q.waiters?.size).toBe(3);
      expect(other.waiters?.size).toBe(2);
      expect(internals(r).locks.get('kept')!.waiters).toBeNull(); // no empty set kept
    }
  });

  it('create sets only when needed and drop them when they empty', () => {
    const h = new Harness();
    const [a, b] = [h.open(), h.open()];
    const t = internals(h.m);
    const sa = t.sessions.get(a)!;
    const sb = t.sessions.get(b)!;
    expect([sa.heldHead, sa.heldCount, sa.waiting]).toEqual([null, 0, null]);
    const token = h.grant(a, 'L');
    const rec = t.locks.get('L')!;
    expect(rec.waiters).toBeNull();
    expect([sa.heldHead, sa.heldCount]).toEqual([rec, 1]);
    h.acquire(b, 'L');
    expect(rec.waiters?.size).toBe(1);
    expect(sb.waiting?.has(rec)).toBe(true);
    h.cancel(b, 'L');
    expect(rec.waiters).toBeNull();
    expect(sb.waiting).toBeNull();
    h.acquire(b, 'L');
    h.release(a, 'L', token); // handed over to b
    expect(rec.holder).toBe(sb);
    expect([rec.waiters, sb.waiting, sa.heldHead, sa.heldCount, sb.heldCount]).toEqual([null, null, null, 0, 1]);
    const restored = internals(roundTrip(h.m));
    const r2 = restored.locks.get('L')!;
    expect([r2.waiters, restored.sessions.get(b)!.waiting, restored.sessions.get(a)!.heldHead]).toEqual([null, null, null]);
  });

  it('the invariant check finds a broken held list', () => {
    const h = new Harness();
    const a = h.open();
    h.grant(a, 'L');
    h.grant(a, 'M');
    h.checkEachStep = false;
    const t = internals(h.m);
    const s = t.sessions.get(a)!;
    const m = t.locks.get('M')!;
    s.heldHead = m.heldNext; // drop M from the list
    s.heldCount = 1;
    if (s.heldHead !== null) s.heldHead.heldPrev = null;
    expect(h.m.checkInvariants().join('\n')).toMatch(/holder session does not know it/);
  });
});

describe('snapshot views', () => {
  it('encodeSnapshot returns the bytes a snapshot was made from, until someone reads or changes it', () => {
    const { h } = queuedHarness();
    const view = h.m.toSnapshot();
    const bytes = encodeSnapshot(view);
    expect(encodeSnapshot(view)).toBe(bytes);
    expect([view.format, view.lastApplied, view.gcFloor]).toEqual([SNAPSHOT_FORMAT, h.m.lastApplied, 0]);
    expect(encodeSnapshot(view)).toBe(bytes); // the header is read without decoding
    expect(view.sessions).toHaveLength(6); // now it is plain data
    expect(Object.getOwnPropertyDescriptor(view, 'locks')).toMatchObject({ writable: true, enumerable: true });
    const again = encodeSnapshot(view);
    expect(again).not.toBe(bytes);
    expectSameBytes(again, bytes);
    // plain data from here on: a change shows in the encoding
    view.locks = view.locks.filter((l) => l.name !== 'queue');
    expect(encodeSnapshot(view).length).toBeLessThan(bytes.length);
    expect(() => LockStateMachine.fromSnapshot(view)).toThrow(SnapshotError); // q/1 is bound to the lock removed
  });

  it('a field set before anything was read is kept (the view turns plain first)', () => {
    const { h } = queuedHarness();
    const view = h.m.toSnapshot();
    view.lastApplied += 10;
    expect(view.lastApplied).toBe(h.m.lastApplied + 10);
    expect(decodeSnapshot(encodeSnapshot(view)).lastApplied).toBe(h.m.lastApplied + 10);
    expect(LockStateMachine.fromSnapshot(view).lastApplied).toBe(h.m.lastApplied + 10);
  });

  it('are plain data to structuredClone, JSON and equality', () => {
    const { h } = queuedHarness();
    const plain = referenceSnapshot(h.m);
    expect(structuredClone(h.m.toSnapshot())).toEqual(plain);
    expect(h.m.toSnapshot()).toEqual(plain);
    expect(JSON.parse(JSON.stringify(h.m.toSnapshot())).locks).toEqual(JSON.parse(JSON.stringify(plain.locks)));
  });

  it('decodeSnapshot brings the restored machine along once; later installs restore their own', () => {
    const { h } = queuedHarness();
    const bytes = encodeSnapshot(h.m.toSnapshot());
    const view = decodeSnapshot(bytes);
    expect(encodeSnapshot(view)).not.toBe(bytes); // a copy: the caller may reuse its buffer
    expectSameBytes(encodeSnapshot(view), bytes);
    const first = LockStateMachine.fromSnapshot(view);
    const second = LockStateMachine.fromSnapshot(view);
    expect(second).not.toBe(first);
    const owner = first.describeLock('queue')!.holder!;
    first.apply(h.index + 1, { type: 'Release', clientId: '', requestId: 0, now: 1, lock: 'queue', sessionId: owner.sessionId, token: owner.token });
    expect(second.describeLock('queue')).toEqual(h.m.describeLock('queue'));
    expect(first.describeLock('queue')).not.toEqual(h.m.describeLock('queue'));
    expectSameBytes(encodeSnapshot(second.toSnapshot()), bytes);
  });

  it('a decoded view that was changed installs as changed', () => {
    const { h } = queuedHarness();
    const view = decodeSnapshot(encodeSnapshot(h.m.toSnapshot()));
    view.dedup = [];
    const m = LockStateMachine.fromSnapshot(view);
    expect(m.stats().dedupClients).toBe(0);
    expect(h.m.stats().dedupClients).toBeGreaterThan(0);
  });

  it('bytes that are well encoded but inconsistent decode to plain data; fromSnapshot refuses them', () => {
    const { h } = queuedHarness();
    const plain = referenceSnapshot(h.m);
    plain.locks[0]!.holder = sid(999); // not an open session: written as a literal id
    const bytes = encodeSnapshot(plain);
    const decoded = decodeSnapshot(bytes);
    expect(decoded.locks[0]!.holder).toBe(sid(999));
    expect(() => LockStateMachine.fromSnapshot(decoded)).toThrow(/held by an unknown session/);
  });
});

// ---- hand-made encodings --------------------------------------------------------------------------------

const S1 = sid(1);

interface Parts {
  format?: number;
  /** Writes the lock list (the default: one lock held by session 0 with both refs, no waiters). */
  locks?: (w: Writer) => void;
  keys?: (w: Writer) => void;
  dedup?: (w: Writer) => void;
}

/** A snapshot file: lastApplied 9, one session (S1), then the given sections. */
function file(p: Parts = {}): Uint8Array {
  const w = new Writer();
  writeMagic(w);
  w.varint(p.format ?? SNAPSHOT_FORMAT);
  w.varint(9);
  w.varint(0);
  w.varint(1);
  w.str(S1);
  w.str('c');
  w.varint(5_000);
  w.varint(1);
  w.varint(1);
  (p.locks ?? ((x) => lockList(x, [2], [2])))(w);
  (p.keys ?? ((x) => x.varint(0)))(w);
  (p.dedup ?? ((x) => x.varint(0)))(w);
  return w.finish();
}

/** An sref as written: its varint, then the literal id if any. */
function writeSref(w: Writer, parts: Array<number | string>): void {
  for (const x of parts) {
    if (typeof x === 'number') w.varint(x);
    else w.str(x);
  }
}

/** One lock "L" granted at index 2 to S1; `holder` and `latest` are the sref varints (and literal). */
function lockList(w: Writer, holder: Array<number | string>, latest: Array<number | string>): void {
  w.varint(1);
  w.str('L');
  writeSref(w, holder);
  w.varint(2); // token
  w.varint(7); // grantedAt
  w.varint(2); // latestToken
  writeSref(w, latest);
  w.varint(0); // waiters
}

/** One dedup client with one entry whose command type and result are written by `entry`. */
function dedupOne(entry: (w: Writer) => void): (w: Writer) => void {
  return (w) => {
    w.varint(1);
    w.str('client');
    w.varint(0);
    w.varint(1);
    w.varint(1); // requestId
    entry(w);
  };
}

const acquireType = (w: Writer): void => w.dstr('Acquire');

describe('the format', () => {
  it('a hand-made file decodes and installs; it is the encoding of its own state', () => {
    const bytes = file();
    const m = LockStateMachine.fromSnapshot(decodeSnapshot(bytes));
    expect(m.describeLock('L')).toMatchObject({ holder: { sessionId: S1, token: 2, grantedAt: 7 }, latestToken: 2 });
    expectSameBytes(encodeSnapshot(m.toSnapshot()), bytes);
  });

  it('refuses other formats, non-canonical and malformed encodings', () => {
    const cases: Array<[string, Uint8Array, RegExp]> = [
      ['format 3', file({ format: 3 }), /unsupported format 3/],
      ['format 0', file({ format: 0 }), /unsupported format 0/],
      ['an open session id as a literal', file({ locks: (w) => lockList(w, [2], [1, S1]) }), /written as a literal/],
      ['a reference out of range', file({ locks: (w) => lockList(w, [3], [2]) }), /out of range/],
      ['a dictionary string as a literal', file({ dedup: dedupOne((w) => { w.varint(0); w.str('Acquire'); w.byte(1); w.varint(1); w.dstr('status'); w.byte(0); w.dstr('noop'); }) }), /dictionary string written as a literal/],
      ['JSON for a result that has a binary form', file({ dedup: dedupOne((w) => { acquireType(w); w.byte(0); w.str('{"status":"noop"}'); }) }), /has a binary form/],
      ['a result field twice', file({ dedup: dedupOne((w) => { acquireType(w); w.byte(1); w.varint(2); w.dstr('status'); w.byte(0); w.dstr('noop'); w.dstr('status'); w.byte(0); w.dstr('noop'); }) }), /field twice/],
      ['a result field name that is not in the dictionary', file({ dedup: dedupOne((w) => { acquireType(w); w.byte(1); w.varint(1); w.varint(0); w.str('x'); w.byte(2); }) }), /bad stored result field/],
      ['a key bound to a lock name written as a literal', file({ keys: (w) => { w.varint(1); w.str('k'); w.varint(0); w.str('L'); w.varint(2); w.byte(0); w.bytes(new Uint8Array(1)); } }), /lock name written as a literal/],
    ];
    for (const [what, bytes, message] of cases) expect(() => decodeSnapshot(bytes), what).toThrow(message);
    const good = file();
    const long = new Uint8Array(good.length + 1);
    long.set(good.subarray(0, 5));
    long[5] = 0x89; // lastApplied 9 as a two-byte varint: 0x89 0x00
    long[6] = 0x00;
    long.set(good.subarray(6), 7);
    expect(() => decodeSnapshot(long)).toThrow(/not minimal/);
  });

  it('keeps a result the binary form cannot carry as its JSON, exactly', () => {
    const json = '{"status":"noop","note":-1}';
    const bytes = file({ dedup: dedupOne((w) => { acquireType(w); w.byte(0); w.str(json); }) });
    const decoded = decodeSnapshot(bytes);
    const plain = structuredClone(decoded);
    expect(plain.dedup[0]!.entries[0]!.result).toBe(json);
    expectSameBytes(encodeSnapshot(plain), bytes);
    const m = LockStateMachine.fromSnapshot(decoded);
    expectSameBytes(encodeSnapshot(m.toSnapshot()), bytes);
    const again = m.apply(10, { type: 'Acquire', clientId: 'client', requestId: 1, now: 1, lock: 'L', sessionId: S1, tryOnly: false });
    expect(again).toEqual({ result: { status: 'noop', note: -1 }, events: [], duplicate: true });
  });

  it('a literal lock name that is no lock decodes, and is refused on install', () => {
    const bytes = file({ keys: (w) => { w.varint(1); w.str('k'); w.varint(0); w.str('nowhere'); w.varint(2); w.byte(0); w.bytes(new Uint8Array(1)); } });
    const decoded = decodeSnapshot(bytes);
    expect(decoded.keys[0]!.lock).toBe('nowhere');
    expectSameBytes(encodeSnapshot(structuredClone(decoded)), bytes);
    expect(() => LockStateMachine.fromSnapshot(decoded)).toThrow(/bound to an unknown lock/);
  });

  it('every byte flip is refused, or decodes to data that encodes to the same bytes', () => {
    const { h } = queuedHarness();
    const bytes = encodeSnapshot(h.m.toSnapshot());
    for (let i = 0; i < bytes.length; i++) {
      const bad = bytes.slice();
      bad[i] = bad[i]! ^ 0x41;
      let decoded: StateSnapshot;
      try {
        decoded = decodeSnapshot(bad);
      } catch (e) {
        expect(e, `byte ${i}`).toBeInstanceOf(SnapshotError);
        continue;
      }
      expectSameBytes(encodeSnapshot(structuredClone(decoded)), bad, `byte ${i}`);
    }
  });
});

/** Format 1, as nodes wrote it before format 2 (the encoder of that version, kept here as a fixture). */
function encodeFormat1(s: StateSnapshot): Uint8Array {
  const w = new Writer();
  writeMagic(w);
  w.varint(1);
  w.varint(s.lastApplied);
  w.varint(s.gcFloor);
  w.varint(s.sessions.length);
  for (const x of s.sessions) {
    w.str(x.id);
    w.str(x.clientName);
    w.varint(x.ttlMs);
    w.varint(x.openedAt);
    w.varint(x.openIndex);
  }
  w.varint(s.locks.length);
  for (const x of s.locks) {
    w.str(x.name);
    w.str(x.holder);
    w.varint(x.token);
    w.varint(x.grantedAt);
    w.varint(x.latestToken);
    w.str(x.latestHolder);
    w.varint(x.waiters.length);
    for (const waiter of x.waiters) w.str(waiter);
  }
  w.varint(s.keys.length);
  for (const x of s.keys) {
    w.str(x.key);
    w.str(x.lock);
    w.varint(x.watermark);
    w.byte(x.deleted ? 1 : 0);
    w.bytes(x.value);
  }
  w.varint(s.dedup.length);
  for (const x of s.dedup) {
    w.str(x.clientId);
    w.varint(x.floor);
    w.varint(x.entries.length);
    for (const e of x.entries) {
      w.varint(e.requestId);
      w.str(e.commandType);
      w.str(e.result);
    }
  }
  return w.finish();
}

describe('format 1', () => {
  it('is still read: a node upgraded with a format 1 snapshot restores the same state, and writes format 2', () => {
    const { h } = queuedHarness();
    const v1 = encodeFormat1(referenceSnapshot(h.m));
    const decoded = decodeSnapshot(v1);
    expect(decoded).toEqual(referenceSnapshot(h.m));
    const m = LockStateMachine.fromSnapshot(decoded);
    expect(m.stats()).toEqual(h.m.stats());
    for (const name of ['queue', 'other', 'kept', 'closed-holder']) expect(m.describeLock(name)).toEqual(h.m.describeLock(name));
    expectSameBytes(encodeSnapshot(m.toSnapshot()), encodeSnapshot(h.m.toSnapshot()));
    expect(encodeSnapshot(m.toSnapshot())[4]).toBe(SNAPSHOT_FORMAT);
  });

  it('malformed format 1 bytes are refused', () => {
    const v1 = encodeFormat1(referenceSnapshot(queuedHarness().h.m));
    for (let n = 0; n < v1.length; n += 7) expect(() => decodeSnapshot(v1.subarray(0, n)), `length ${n}`).toThrow(SnapshotError);
  });
});

describe('SortedIndex with removals', () => {
  it('stays sorted and dense through random inserts and deletes, and matches its map', () => {
    let seed = 7;
    const rnd = (): number => (seed = (seed * 48271) % 2147483647) / 2147483647;
    const index = new KeyIndex<{ key: string }>();
    const map = new Map<string, { key: string }>();
    for (let round = 0; round < 20_000; round++) {
      const tail = rnd();
      // astral characters (surrogate pairs) and U+E000..U+FFFF sort differently by code point and by unit
      const key = `k${Math.floor(rnd() * 3_000)}${tail < 0.05 ? '\u{1F600}' : tail < 0.1 ? '\uffff' : tail < 0.12 ? '\ue000x' : ''}`;
      const present = map.get(key);
      if (present === undefined) {
        const r = { key };
        index.insert(r);
        map.set(key, r);
      } else if (rnd() < 0.6) {
        expect(index.delete(present)).toBe(true);
        expect(index.delete(present)).toBe(false);
        map.delete(key);
      }
      if (round % 2_000 === 0) expect(index.matches(map)).toBe(true);
    }
    const keys: string[] = [];
    index.scan((r) => {
      keys.push(r.key);
    });
    expect(keys).toEqual([...map.keys()].sort(compareStrings));
    expect(index.size).toBe(map.size);
    expect(index.matches(map)).toBe(true);
    // emptied out entirely, then refilled
    for (const r of [...map.values()]) index.delete(r);
    expect(index.size).toBe(0);
    expect(index.first()).toBeUndefined();
    index.insert({ key: 'b' });
    index.insert({ key: 'a' });
    expect(index.first()?.key).toBe('a');
    expect(index.last()?.key).toBe('b');
  });

  it('matches() notices a record that is not the map’s, and disorder', () => {
    const index = new KeyIndex<{ key: string }>();
    const a = { key: 'a' };
    const b = { key: 'b' };
    index.insert(a);
    index.insert(b);
    expect(index.matches(new Map([['a', a], ['b', b]]))).toBe(true);
    expect(index.matches(new Map([['b', b], ['a', a]]))).toBe(true); // another insertion order
    expect(index.matches(new Map([['a', a], ['b', { key: 'b' }]]))).toBe(false);
    expect(index.matches(new Map([['a', a]]))).toBe(false);
  });
});

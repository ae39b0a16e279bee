// The snapshot byte format (format 6; formats 2 to 5 are still read) and the machinery that makes taking and
// installing a snapshot fast: the machine's own encoder against the oracle, the restored records (lazily created sets, a lock's holder
// and waiters being the session records themselves), canonical encodings, and the sorted indexes that spare
// the snapshot any sorting.
import { describe, expect, it } from 'vitest';
import { InvariantError, LockStateMachine, SNAPSHOT_FORMAT, SnapshotError, encodeResult, type Result } from '../../src/state';
import { Writer, writeMagic } from '../../src/state/snapshotWire';
import { KeyIndex } from '../../src/state/sortedIndex';
import { compareStrings } from '../../src/state/text';
import { Harness, expectCanonicalSnapshot, expectSameBytes, internals, put, roundTrip, sid } from './harness';
import { writeResultJson } from './snapshotOracle';

/** Holders, FIFO queues of several waiters, a lock kept free by its keys, dedup results of every kind. */
function queuedHarness(): { h: Harness; ids: string[] } {
  const h = new Harness();
  const ids = Array.from({ length: 6 }, (_, i) => h.open(10_000 + i, `client-${i}`));
  const [a, b, c, d, e, f] = ids as [string, string, string, string, string, string];
  const tq = h.grant(a, 'queue');
  for (const w of [e, c, f, b]) h.acquire(w, 'queue'); // FIFO order is not id order
  const to = h.grant(b, 'other');
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
  h.apply(h.req('Write', { lock: 'queue', sessionId: b, token: 1, ops: [put('q/1', 'no')] })); // refused: stale
  // refused: k/1 belongs to 'kept' (stored as JSON, naming the owner)
  expect(h.apply(h.req('Write', { lock: 'other', sessionId: b, token: to, ops: [put('k/1', 'no')] })).result).toMatchObject({ key: 'k/1', owner: 'kept' });
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
      m.apply(++i, { type: 'ExpireSession', now: 4, sessionIds: [sid(999)] }); // changes nothing but lastApplied
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
    expectSameBytes(LockStateMachine.readSnapshot(a).writeSnapshot(), a);
  });

  it('refuses to write a lock whose holder is not an open session (the state is broken)', () => {
    const { h, ids } = queuedHarness();
    const t = internals(h.m);
    const rec = t.locks.get('queue')!;
    t.sessions.delete(t.sessions.get(ids[0]!)!); // the holder disappears behind the machine's back
    expect(h.m.checkInvariants().join('\n')).toMatch(/held by a session that is not open/);
    expect(() => h.m.writeSnapshot()).toThrow(InvariantError);
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
      for (const w of rec.waiters?.keys() ?? []) expect(t.sessions.get(w.id)).toBe(w);
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

// ---- hand-made encodings --------------------------------------------------------------------------------

const S1 = sid(1);

interface Parts {
  format?: number;
  /** The session's lease checkpoint (format 3 on; default its TTL). */
  remainingMs?: number;
  /** Writes the lock list (the default: one lock held by session 0 with both refs, no waiters). */
  locks?: (w: Writer) => void;
  keys?: (w: Writer) => void;
  dedup?: (w: Writer) => void;
  /** The session's owner (format 4 on; default ''). */
  owner?: string;
  /** Writes the auth section (format 4 on; default: auth off, empty). */
  auth?: (w: Writer) => void;
  /** The session's labels, written as given (format 6 on; default none). */
  labels?: Array<[string, string]>;
  /** The semaphore section (format 9 on): none unless given. */
  semaphores?: (w: Writer) => void;
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
  const format = p.format ?? SNAPSHOT_FORMAT;
  if (format >= 3) w.varint(p.remainingMs ?? 5_000);
  if (format >= 4) w.str(p.owner ?? '');
  if (format >= 6) {
    const labels = p.labels ?? [];
    w.varint(labels.length);
    for (const [key, value] of labels) {
      w.str(key);
      w.str(value);
    }
  }
  (p.locks ?? ((x) => lockList(x, [2], [2], format)))(w);
  (p.keys ?? ((x) => x.varint(0)))(w);
  (p.dedup ?? ((x) => x.varint(0)))(w);
  if (format >= 4) (p.auth ?? emptyAuth)(w);
  if (format >= 9) (p.semaphores ?? ((x) => x.varint(0)))(w);
  return w.finish();
}

/** Auth off, no users, roles or tokens. */
function emptyAuth(w: Writer): void {
  w.byte(0);
  w.varint(0);
  w.varint(0);
  w.varint(0);
}

/** An sref as written: its varint, then the literal id if any. */
function writeSref(w: Writer, parts: Array<number | string>): void {
  for (const x of parts) {
    if (typeof x === 'number') w.varint(x);
    else w.str(x);
  }
}

/** One lock "L" granted at index 2 to S1; `holder` and `latest` are the sref varints (and literal). */
function lockList(w: Writer, holder: Array<number | string>, latest: Array<number | string>, format = SNAPSHOT_FORMAT): void {
  w.varint(1);
  w.str('L');
  writeSref(w, holder);
  w.varint(2); // token
  w.varint(7); // grantedAt
  w.varint(2); // latestToken
  writeSref(w, latest);
  w.varint(0); // waiters
  if (format >= 8) {
    w.varint(0); // lockDelayMs
    w.varint(0); // delayedSince
    w.varint(0); // delayedUntil
  }
  if (format >= 9) w.varint(0); // shared grants
}

/**
 * Format 9: lock "L" held shared by S1 under token 2. `waiterMode`: S1 also waits, in that mode (refused on
 * read before the invariants would be); `exclusiveToo`: S1 also holds it exclusively (refused too).
 */
function sharedLock(w: Writer, o: { waiterMode?: number; exclusiveToo?: boolean }): void {
  w.varint(1);
  w.str('L');
  w.varint(o.exclusiveToo === true ? 2 : 0); // holder: S1, or nobody
  w.varint(o.exclusiveToo === true ? 2 : 0); // token
  w.varint(o.exclusiveToo === true ? 7 : 0); // grantedAt of the exclusive grant
  w.varint(2); // latestToken
  w.varint(2); // latestHolder: S1
  if (o.waiterMode === undefined) {
    w.varint(0);
  } else {
    w.varint(1);
    w.varint(2); // S1
    w.varint(7); // since
    w.varint(0); // lockDelayMs
    w.varint(o.waiterMode);
  }
  w.varint(0); // lockDelayMs
  w.varint(0); // delayedSince
  w.varint(0); // delayedUntil
  w.varint(1); // one shared grant
  w.varint(2); // S1
  w.varint(2); // its token
  w.varint(7); // grantedAt
}

/** One dedup client with one entry whose command type and result are written by `entry`. */
function dedupOne(entry: (w: Writer) => void): (w: Writer) => void {
  return (w) => {
    w.varint(1);
    w.str(''); // caller
    w.str('client');
    w.varint(0);
    w.varint(1);
    w.varint(1); // requestId
    entry(w);
  };
}

const acquireType = (w: Writer): void => w.dstr('Acquire');

describe('the format', () => {
  it('a hand-made file installs; it is the encoding of its own state', () => {
    const bytes = file();
    const m = LockStateMachine.readSnapshot(bytes);
    expect(m.describeLock('L')).toMatchObject({ holder: { sessionId: S1, token: 2, grantedAt: 7 }, latestToken: 2 });
    expectSameBytes(m.writeSnapshot(), bytes);
  });

  it('installs a lock held shared (format 9) and writes it again as it was; format 8 reads as all exclusive', () => {
    const bytes = file({ locks: (w) => sharedLock(w, {}) });
    const m = LockStateMachine.readSnapshot(bytes);
    expect(m.describeLock('L')).toMatchObject({ holder: null, latestToken: 2, sharedHolders: [{ sessionId: S1, token: 2, grantedAt: 7 }] });
    expect(m.getSession(S1)?.sharedLocks).toEqual(['L']);
    expectSameBytes(m.writeSnapshot(), bytes);
    const m8 = LockStateMachine.readSnapshot(file({ format: 8 }));
    expect(m8.describeLock('L')?.sharedHolders).toBeUndefined();
    expectSameBytes(m8.writeSnapshot(), file());
  });

  it('installs a session\'s labels (format 6) and writes them again as they were; format 5 has none', () => {
    const labels: Array<[string, string]> = [['host', 'web-1'], ['pid', '7']];
    const bytes = file({ labels });
    const m = LockStateMachine.readSnapshot(bytes);
    expect(m.getSession(S1)?.labels).toEqual([{ key: 'host', value: 'web-1' }, { key: 'pid', value: '7' }]);
    expectSameBytes(m.writeSnapshot(), bytes);
    const m5 = LockStateMachine.readSnapshot(file({ format: 5 }));
    expect(m5.getSession(S1)?.labels).toEqual([]);
    expectSameBytes(m5.writeSnapshot(), file());
  });

  it('installs format 2 (no lease checkpoints: each is the TTL) and 3 (no owners, no auth), and writes them again as format 6', () => {
    const m = LockStateMachine.readSnapshot(file({ format: 2 }));
    expect(m.leases()).toEqual([{ id: S1, ttlMs: 5_000, remainingMs: 5_000 }]);
    expectSameBytes(m.writeSnapshot(), file());
    const m3 = LockStateMachine.readSnapshot(file({ format: 3, remainingMs: 1_200 }));
    expect([m3.leases(), m3.auth.sessionOwner(S1), m3.auth.authEnabled()]).toEqual([[{ id: S1, ttlMs: 5_000, remainingMs: 1_200 }], '', false]);
    expectSameBytes(m3.writeSnapshot(), file({ remainingMs: 1_200 }));
    expect(LockStateMachine.readSnapshot(file({ owner: 'alice' })).auth.sessionOwner(S1)).toBe('alice');
    expect(LockStateMachine.readSnapshot(file({ remainingMs: 1_200 })).leases()).toEqual([{ id: S1, ttlMs: 5_000, remainingMs: 1_200 }]);
  });

  it('refuses other formats, non-canonical and malformed encodings', () => {
    const keyOf = (lock: (w: Writer) => void) => (w: Writer): void => {
      w.varint(1);
      w.str('k');
      lock(w);
      w.varint(2);
      w.byte(0);
      w.bytes(new Uint8Array(1));
      w.str(''); // payer
    };
    const cancelled = (w: Writer): void => {
      w.dstr('status');
      w.byte(0);
      w.dstr('cancelled');
    };
    const cases: Array<[string, Uint8Array, RegExp]> = [
      ['format 1 (never deployed)', file({ format: 1 }), /unsupported format 1/],
      ['format 10 (a newer version)', file({ format: 10 }), /unsupported format 10: this version reads formats 2, 3, 4, 5, 6, 7, 8, 9 \(written by a newer version: upgrade this node\)/],
      ['a waiter mode beyond 2 (0 exclusive, 1 shared, 2 in a set)', file({ locks: (w) => sharedLock(w, { waiterMode: 3 }) }), /waiter mode 3/],
      ['a lock held both exclusive and shared', file({ locks: (w) => sharedLock(w, { exclusiveToo: true }) }), /held both exclusive and shared/],
      ['labels out of order', file({ labels: [['b', ''], ['a', '']] }), /session 0+1: labels: keys must be sorted/],
      ['a label key that OpenSession refuses', file({ labels: [['Host', 'x']] }), /label key "Host"/],
      ['a label value with a control character', file({ labels: [['k', '\u0007']] }), /control characters/],
      ['a default value written', file({ dedup: dedupOne((w) => { acquireType(w); w.bytes(new Uint8Array([0x2a, 0x02, 0x08, 0x00])); }) }), /token 0 is written/],
      ['fields out of order', file({ dedup: dedupOne((w) => { w.dstr('Write'); w.bytes(new Uint8Array([0x5a, 0x04, 0x10, 0x01, 0x08, 0x02])); }) }), /field 1 unknown, out of order/],
      ['an unknown result member', file({ dedup: dedupOne((w) => { acquireType(w); w.bytes(new Uint8Array([0xc2, 0x02, 0x00])); }) }), /unknown oneof member 40/],
      ['a semaphore of 0 permits', file({ semaphores: semaphore('s', 0, []) }), /permits 0 out of range/],
      ['a semaphore of 1,025 permits', file({ semaphores: semaphore('s', 1_025, []) }), /permits 1025 out of range/],
      ['a semaphore with more slots than permits', file({ semaphores: semaphore('s', 1, [[2, 1, 2, S1], [0, 0, 2, S1]]) }), /more slots than permits/],
      ['a permit held by a session that is not its latest holder', file({ semaphores: semaphore('s', 2, [[2, 1, 2, 'b'.repeat(32)]]) }), /not its latest holder/],
      ['a permit held by no open session', file({ semaphores: semaphore('s', 2, [[3, 1, 2, S1]]) }), /session reference out of range/],
      ['a permit token above lastApplied', file({ semaphores: semaphore('s', 2, [[2, 1, 10, S1]]) }), /token out of range/],
      ['semaphores out of order', file({ semaphores: (w) => { w.varint(2); for (const n of ['t', 's']) { w.str(n); w.varint(1); w.varint(1); w.varint(2); w.varint(1); w.varint(2); w.str(S1); w.varint(0); } } }), /semaphore "s" out of order/],
      ['two result members', file({ dedup: dedupOne((w) => { acquireType(w); w.bytes(new Uint8Array([0x42, 0x00, 0x42, 0x00])); }) }), /more than one member/],
      ['a token beyond 2^53', file({ dedup: dedupOne((w) => { acquireType(w); w.bytes(new Uint8Array([0x2a, 0x09, 0x08, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x10])); }) }), /varint beyond 2\^53/],
      ['a format-4 result in format 6', file({ dedup: dedupOne((w) => { acquireType(w); w.byte(1); w.varint(1); cancelled(w); }) }), /a stored result/],
      ['an owner that is no caller', file({ owner: 'a b' }), /bad caller/],
      ['an auth flag that is not 0/1', file({ auth: (w) => { w.byte(2); w.varint(0); w.varint(0); w.varint(0); } }), /enabled flag/],
      ['no auth section', file({ auth: () => undefined }), /truncated/],
      ['a lease checkpoint above the TTL', file({ remainingMs: 5_001 }), /lease checkpoint above its TTL/],
      ['format 0', file({ format: 0 }), /unsupported format 0/],
      ['an open session id as a literal', file({ locks: (w) => lockList(w, [2], [1, S1]) }), /written as a literal/],
      ['a holder that is not a session', file({ locks: (w) => lockList(w, [1, sid(2)], [2]) }), /held by an unknown session/],
      ['a reference out of range', file({ locks: (w) => lockList(w, [3], [2]) }), /out of range/],
      ['a dictionary string as a literal', file({ format: 4, dedup: dedupOne((w) => { w.varint(0); w.str('Acquire'); w.byte(1); w.varint(1); cancelled(w); }) }), /dictionary string written as a literal/],
      ['JSON for a result that has a binary form', file({ format: 4, dedup: dedupOne((w) => { acquireType(w); w.byte(0); w.str('{"status":"cancelled"}'); }) }), /JSON that is not a handover/],
      ['JSON that is not canonical', file({ format: 4, dedup: dedupOne((w) => { acquireType(w); w.byte(0); w.str('{"status":"written","token":2,"ops":1,"index":3,"note":1}'); }) }), /not canonical/],
      ['a result field twice', file({ format: 4, dedup: dedupOne((w) => { acquireType(w); w.byte(1); w.varint(2); cancelled(w); cancelled(w); }) }), /cancelled result with 2 fields/],
      ['a result field name that is not in the dictionary', file({ format: 4, dedup: dedupOne((w) => { acquireType(w); w.byte(1); w.varint(1); w.varint(0); w.str('x'); w.byte(2); }) }), /without its status/],
      ['a token that is a string', file({ format: 4, dedup: dedupOne((w) => { acquireType(w); w.byte(1); w.varint(2); w.dstr('status'); w.byte(0); w.dstr('released'); w.dstr('token'); w.byte(0); w.dstr('x'); }) }), /token of another type/],
      ['an unknown status', file({ format: 4, dedup: dedupOne((w) => { acquireType(w); w.byte(1); w.varint(1); w.dstr('status'); w.byte(0); w.dstr('noop'); }) }), /status "noop"/],
      ['an owner on a refusal other than WRONG_LOCK', file({ format: 4, dedup: dedupOne((w) => { w.dstr('Write'); w.byte(0); w.str('{"status":"refused","reason":"STALE_TOKEN","watermark":2,"key":"k","owner":"M"}'); }) }), /names an owner but is not WRONG_LOCK/],
      ['an owner that is not a string', file({ format: 4, dedup: dedupOne((w) => { w.dstr('Write'); w.byte(0); w.str('{"status":"refused","reason":"WRONG_LOCK","watermark":2,"key":"k","owner":7}'); }) }), /not a well-formed string/],
      ['an owner with a lone surrogate', file({ format: 4, dedup: dedupOne((w) => { w.dstr('Write'); w.byte(0); w.str('{"status":"refused","reason":"WRONG_LOCK","watermark":2,"key":"k","owner":"\\ud800"}'); }) }), /not a well-formed string/],
      ['a refusal with an owner but no key', file({ format: 4, dedup: dedupOne((w) => { w.dstr('Write'); w.byte(0); w.str('{"status":"refused","reason":"WRONG_LOCK","watermark":2,"owner":"M"}'); }) }), /not a well-formed string/],
      ['a refusal naming an owner, fields out of order', file({ format: 4, dedup: dedupOne((w) => { w.dstr('Write'); w.byte(0); w.str('{"status":"refused","reason":"WRONG_LOCK","watermark":2,"owner":"M","key":"k"}'); }) }), /not canonical/],
      // Format 9 spends the literal reference on keys bound to a semaphore's slot (issue 33); before, it is refused.
      ['a key bound to a lock name written as a literal', file({ format: 8, keys: keyOf((w) => { w.varint(0); w.str('L'); }) }), /bound to an unknown lock/],
      ['a key bound to a name that is no lock', file({ format: 8, keys: keyOf((w) => { w.varint(0); w.str('nowhere'); }) }), /bound to an unknown lock/],
      ['a key bound to a slot past MAX_PERMITS', file({ keys: keyOf((w) => { w.varint(0); w.str('pool'); w.varint(1_024); }) }), /bound to slot 1024 of a semaphore/],
    ];
    for (const [what, bytes, message] of cases) expect(() => LockStateMachine.readSnapshot(bytes), what).toThrow(message);
    const good = file();
    const long = new Uint8Array(good.length + 1);
    long.set(good.subarray(0, 5));
    long[5] = 0x89; // lastApplied 9 as a two-byte varint: 0x89 0x00
    long[6] = 0x00;
    long.set(good.subarray(6), 7);
    expect(() => LockStateMachine.readSnapshot(long)).toThrow(/not minimal/);
  });

  it('converts the format-4 results written as JSON (a handover, an indexed write, a refusal naming its key\'s owner) exactly', () => {
    for (const [json, again] of [
      ['{"status":"released","token":2,"nextHolder":"' + S1 + '","nextToken":5}', { status: 'released', token: 2, nextHolder: S1, nextToken: 5 }],
      ['{"status":"written","token":2,"ops":1,"index":3}', { status: 'written', token: 2, ops: 1, index: 3 }],
      ['{"status":"refused","reason":"WRONG_LOCK","watermark":2,"key":"k/ü","owner":"orders"}', { status: 'refused', reason: 'WRONG_LOCK', watermark: 2, key: 'k/ü', owner: 'orders' }],
    ] as const) {
      const bytes = file({ format: 4, dedup: dedupOne((w) => { acquireType(w); w.byte(0); w.str(json); }) });
      const m = LockStateMachine.readSnapshot(bytes);
      expectSameBytes(m.writeSnapshot(), file({ dedup: dedupOne((w) => { acquireType(w); w.bytes(encodeResult(again)); }) }));
      const retry = m.apply(10, { type: 'Acquire', clientId: 'client', requestId: 1, now: 1, lock: 'L', sessionId: S1, tryOnly: false });
      expect(retry).toEqual({ result: again, events: [], duplicate: true });
    }
  });

  it('converts format-4 results stored before fields were added (binary) exactly: a Write without its index, a WRONG_LOCK without its owner', () => {
    for (const stored of [
      { status: 'written', token: 2, ops: 1 },
      { status: 'refused', reason: 'WRONG_LOCK', watermark: 2, key: 'k' },
    ] as Result[]) {
      // Every field name is in DICT, so the oracle writes the binary form.
      const bytes = file({ format: 4, dedup: dedupOne((w) => { w.dstr('Write'); writeResultJson(w, JSON.stringify(stored)); }) });
      const m = LockStateMachine.readSnapshot(bytes);
      const format5 = file({ dedup: dedupOne((w) => { w.dstr('Write'); w.bytes(encodeResult(stored)); }) });
      expectSameBytes(m.writeSnapshot(), format5);
      expectSameBytes(LockStateMachine.readSnapshot(format5).writeSnapshot(), format5);
      const retry = m.apply(10, { type: 'Write', clientId: 'client', requestId: 1, now: 1, lock: 'L', sessionId: S1, token: 2, ops: [put('k', 'v')] });
      expect(retry).toEqual({ result: stored, events: [], duplicate: true });
    }
  });

  it('every byte flip is refused, or restores a machine that writes the same bytes', () => {
    const { h } = queuedHarness();
    const bytes = h.m.writeSnapshot();
    for (let i = 0; i < bytes.length; i++) {
      const bad = bytes.slice();
      bad[i] = bad[i]! ^ 0x41;
      let m: LockStateMachine;
      try {
        m = LockStateMachine.readSnapshot(bad);
      } catch (e) {
        expect(e, `byte ${i}`).toBeInstanceOf(SnapshotError);
        continue;
      }
      expectSameBytes(m.writeSnapshot(), bad, `byte ${i}`);
    }
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

/** A semaphore section of one semaphore: its slots as [holder sref, grantedAt, latestToken, latestHolder], no waiters. */
function semaphore(name: string, permits: number, slots: Array<[number, number, number, string]>): (w: Writer) => void {
  return (w) => {
    w.varint(1);
    w.str(name);
    w.varint(permits);
    w.varint(slots.length);
    for (const [holder, grantedAt, token, latestHolder] of slots) {
      w.varint(holder);
      w.varint(grantedAt);
      w.varint(token);
      w.str(latestHolder);
    }
    w.varint(0);
  };
}

// Snapshot and restore: exact round trips, canonical deterministic bytes, and a restored machine that answers
// every further command exactly like the original.
import { describe, expect, it } from 'vitest';
import { LockStateMachine, SnapshotError } from '../../src/state';
import { SNAPSHOT_FORMAT } from '../../src/state/snapshot';
import { Harness, del, put, referenceSnapshot, roundTrip, sid } from './harness';
import { encodePlainSnapshot, type StateSnapshot } from './snapshotOracle';

/** A machine with a bit of everything: holders, queues, tombstones, forgotten locks, dedup results. */
function richHarness(): Harness {
  const h = new Harness();
  const [a, b, c, d] = [h.open(), h.open(10_000, 'bee'), h.open(60_000, 'ç'), h.open()];
  const tl = h.grant(a, 'L');
  h.write(a, 'L', tl, [put('app/x', 'x1'), put('app/y', 'y1'), put('app/\u{1F600}', 'emoji')]);
  h.acquire(c, 'L'); // queued against id order: FIFO must survive a restore
  h.acquire(b, 'L');
  const tm = h.grant(b, 'M');
  h.write(b, 'M', tm, [put('m/1', ''), del('m/1')]);
  h.acquire(d, 'M', true);
  const tg = h.grant(d, 'gone');
  h.release(d, 'gone', tg); // forgotten: raises gcFloor
  h.apply(h.req('Acquire', { lock: 'L', sessionId: d, tryOnly: false, clientId: 'other-client' }));
  h.write(sid(99), 'L', tl, [put('app/x', 'nope')]);
  h.apply(h.req('CancelWait', { lock: 'L', sessionId: b, ackedBelow: 3 }));
  h.acquire(b, 'L');
  return h;
}

/** A fixed script of further commands touching everything. */
function continueScript(h: Harness): void {
  const ids = h.m.sessionIds();
  const [a, b, c] = [ids[0]!, ids[1]!, ids[2]!];
  const tl = h.m.describeLock('L')!.holder!.token;
  h.write(a, 'L', tl, [put('app/x', 'x2')]);
  h.release(a, 'L', tl);
  const tl2 = h.m.describeLock('L')!.holder!.token;
  h.write(b, 'L', tl, [put('app/x', 'stale')]);
  h.write(h.m.describeLock('L')!.holder!.sessionId, 'L', tl2, [del('app/y')]);
  h.expire(b);
  h.acquire(c, 'M');
  h.acquire(a, 'new-lock');
  h.close(a);
  h.expire(sid(12345)); // an unknown session: changes nothing but lastApplied
  // retries of the first commands of the history
  for (const entry of h.history.slice(0, 12)) h.apply(entry.command);
}

describe('snapshot', () => {
  it('round-trips exactly: same state, same bytes, same queries', () => {
    const h = richHarness();
    const bytes = h.m.writeSnapshot();
    const restored = LockStateMachine.readSnapshot(bytes);
    expect(referenceSnapshot(restored)).toEqual(referenceSnapshot(h.m));
    expect(restored.writeSnapshot()).toEqual(bytes);
    expect(restored.stats()).toEqual(h.m.stats());
    expect(restored.checkInvariants()).toEqual([]);
    for (const id of h.m.sessionIds()) expect(restored.getSession(id)).toEqual(h.m.getSession(id));
    for (const name of ['L', 'M', 'gone', 'none']) expect(restored.describeLock(name)).toEqual(h.m.describeLock(name));
    expect(restored.list('', 100)).toEqual(h.m.list('', 100));
    expect(restored.get('m/1')).toEqual(h.m.get('m/1'));
  });

  it('encoding is deterministic: twice the same bytes, and the same bytes for the same state reached differently', () => {
    const h = richHarness();
    expect(h.m.writeSnapshot()).toEqual(h.m.writeSnapshot());
    // Two histories that differ only in the order keys were first written (no dedup: clientId '').
    const build = (keys: string[]) => {
      const m = new LockStateMachine();
      const s = sid(1);
      m.apply(1, { type: 'OpenSession', clientId: '', requestId: 0, now: 5, sessionId: s, ttlMs: 5_000, clientName: '' });
      m.apply(2, { type: 'Acquire', clientId: '', requestId: 0, now: 6, lock: 'L', sessionId: s, tryOnly: false });
      let i = 3;
      for (const key of keys) m.apply(i++, { type: 'Write', clientId: '', requestId: 0, now: 7, lock: 'L', sessionId: s, token: 2, ops: [put(key, key)] });
      return m.writeSnapshot();
    };
    expect(build(['b', 'a', 'c', 'ab'])).toEqual(build(['c', 'ab', 'a', 'b']));
  });

  it('a restored machine answers every further command exactly like the original', () => {
    const original = richHarness();
    const restored = new Harness(roundTrip(original.m));
    Object.assign(restored, { index: original.index, now: original.now, nextRequestId: original.nextRequestId, nextSession: original.nextSession });
    restored.history.push(...original.history);
    continueScript(original);
    continueScript(restored);
    expect(restored.history.map((e) => e.outcome)).toEqual(original.history.map((e) => e.outcome));
    expect(restored.m.writeSnapshot()).toEqual(original.m.writeSnapshot());
  });

  it('round trips at every step of a history give the same results as never restoring', () => {
    const base = richHarness();
    const commands = base.history;
    const plain = new LockStateMachine();
    let hopping = new LockStateMachine();
    for (const { index, command } of commands) {
      const expected = plain.apply(index, command);
      const got = hopping.apply(index, command);
      expect(got).toEqual(expected);
      hopping = roundTrip(hopping);
      expect(hopping.writeSnapshot()).toEqual(plain.writeSnapshot());
    }
  });

  it('a snapshot taken earlier stays valid after further applies (its bytes are its own)', () => {
    const h = richHarness();
    const bytes = h.m.writeSnapshot();
    const copy = bytes.slice();
    const tl = h.m.describeLock('L')!.holder!;
    h.write(tl.sessionId, 'L', tl.token, [put('app/x', 'changed'), del('app/\u{1F600}')]);
    expect(bytes).toEqual(copy);
    expect(h.m.writeSnapshot()).not.toEqual(bytes);
  });

  it('an empty machine round-trips', () => {
    const m = new LockStateMachine();
    const r = roundTrip(m);
    expect(r.writeSnapshot()).toEqual(m.writeSnapshot());
    expect(r.lastApplied).toBe(0);
  });
});

describe('decoding and restoring bad snapshots', () => {
  it('every truncation is refused with a SnapshotError', () => {
    const bytes = richHarness().m.writeSnapshot();
    for (let n = 0; n < bytes.length; n++) {
      expect(() => LockStateMachine.readSnapshot(bytes.subarray(0, n)), `length ${n}`).toThrow(SnapshotError);
    }
    const longer = new Uint8Array(bytes.length + 1);
    longer.set(bytes);
    expect(() => LockStateMachine.readSnapshot(longer)).toThrow(/trailing/);
  });

  it('a corrupted byte is refused or yields a consistent machine, never another error', () => {
    const bytes = richHarness().m.writeSnapshot();
    for (let i = 0; i < bytes.length; i++) {
      for (const flip of [0x01, 0x80, 0xff]) {
        const bad = bytes.slice();
        bad[i] = bad[i]! ^ flip;
        try {
          const m = LockStateMachine.readSnapshot(bad);
          expect(m.checkInvariants()).toEqual([]);
        } catch (e) {
          expect(e, `byte ${i} ^ ${flip}`).toBeInstanceOf(SnapshotError);
        }
      }
    }
  });

  it('reads a valid auth section back (the base of the broken ones below)', () => {
    const m = LockStateMachine.readSnapshot(encodePlainSnapshot({ ...referenceSnapshot(richHarness().m), auth: AUTH }));
    expect(m.auth.authList()).toMatchObject({ enabled: false, users: [{ name: 'a', roles: ['q', 'r'] }], tokens: [{ id: '0123456789abcdef', user: 'a' }] });
  });

  it('rejects inconsistent snapshots', () => {
    const good = referenceSnapshot(richHarness().m);
    const mutate = (f: (s: StateSnapshot) => void): StateSnapshot => {
      const s = structuredClone(good);
      f(s);
      return s;
    };
    const cases: Array<[string, StateSnapshot]> = [
      ['format 1 (older)', mutate((s) => (s.format = 1))],
      [`format ${SNAPSHOT_FORMAT + 1} (newer)`, mutate((s) => (s.format = SNAPSHOT_FORMAT + 1))],
      ['a session owner that is no caller', mutate((s) => (s.sessions[0]!.owner = 'has space'))],
      ['auth on without an admin', mutate((s) => (s.auth = { enabled: true, users: [{ name: 'a', roles: [] }], roles: [], tokens: [] }))],
      ['a user holding an unknown role', mutate((s) => (s.auth.users = [{ name: 'a', roles: ['r'] }]))],
      ['a user\'s roles out of order', mutate((s) => (s.auth = { ...AUTH, users: [{ name: 'a', roles: ['r', 'q'] }] }))],
      ['users out of order', mutate((s) => (s.auth = { ...AUTH, users: [{ name: 'b', roles: [] }, { name: 'a', roles: [] }] }))],
      ['a bad user name', mutate((s) => (s.auth = { ...AUTH, users: [{ name: '-a', roles: [] }] }))],
      ['rules out of order', mutate((s) => (s.auth = { ...AUTH, roles: [{ name: 'q', rules: [{ perm: 'read', prefix: '' }, { perm: 'lock', prefix: '' }], quotas: [] }, AUTH.roles[1]!] }))],
      ['an admin rule with a prefix', mutate((s) => (s.auth = { ...AUTH, roles: [{ name: 'q', rules: [{ perm: 'admin', prefix: 'x' }], quotas: [] }, AUTH.roles[1]!] }))],
      ['an unknown quota', mutate((s) => (s.auth = { ...AUTH, roles: [{ name: 'q', rules: [], quotas: [['bogus', 1]] }, AUTH.roles[1]!] }))],
      ['a token of an unknown user', mutate((s) => (s.auth = { ...AUTH, tokens: [{ id: '0123456789abcdef', user: 'z', hash: 'a'.repeat(64) }] }))],
      ['a bad token hash', mutate((s) => (s.auth = { ...AUTH, tokens: [{ id: '0123456789abcdef', user: 'a', hash: 'A'.repeat(64) }] }))],
      ['holder unknown', mutate((s) => (s.locks[0]!.holder = sid(12345)))],
      ['waiter twice', mutate((s) => s.locks[0]!.waiters.push(s.locks[0]!.waiters[0]!))],
      ['key of unknown lock', mutate((s) => (s.keys[0]!.lock = 'nowhere'))],
      ['keys out of order', mutate((s) => s.keys.reverse())],
      ['watermark above lock', mutate((s) => (s.keys[0]!.watermark = 10_000))],
      ['token in the future', mutate((s) => (s.lastApplied = 1))],
      ['bad result (format 4)', mutate((s) => ((s.format = 4), (s.dedup[0]!.entries[0]!.result = '{')))],
      ['a result with an unknown reason', mutate((s) => (s.dedup[0]!.entries[0]!.result = '{"status":"refused","reason":"NOPE","watermark":1}'))],
      ['a handover without its token', mutate((s) => (s.dedup[0]!.entries[0]!.result = `{"status":"released","token":2,"nextHolder":"${sid(1)}"}`))],
      ['bad session id', mutate((s) => (s.sessions[0]!.id = 'XYZ'))],
      ['tombstone with value', mutate((s) => (s.keys.find((k) => k.deleted)!.value = new Uint8Array(1)))],
      ['idle lock', mutate((s) => s.locks.push({ name: 'zzz', holder: '', token: 0, grantedAt: 0, latestToken: 3, latestHolder: '', waiters: [] }))],
    ];
    for (const [what, s] of cases) expect(() => LockStateMachine.readSnapshot(encodePlainSnapshot(s)), what).toThrow(SnapshotError);
    expect(() => LockStateMachine.readSnapshot(new TextEncoder().encode('JSON'))).toThrow(/not a fencelock/);
  });
});

/** A valid auth section with auth off: user a holding roles q and r, one token. */
const AUTH: StateSnapshot['auth'] = {
  enabled: false,
  users: [{ name: 'a', roles: ['q', 'r'] }],
  roles: [
    { name: 'q', rules: [{ perm: 'lock', prefix: '' }, { perm: 'read', prefix: 'k/' }], quotas: [['keys', 5], ['sessions', 2]] },
    { name: 'r', rules: [], quotas: [] },
  ],
  tokens: [{ id: '0123456789abcdef', user: 'a', hash: 'a'.repeat(64) }],
};

describe('decoding from a Node Buffer', () => {
  it('gives values that do not alias the input', () => {
    const bytes = richHarness().m.writeSnapshot();
    const input = Buffer.from(bytes);
    const restored = LockStateMachine.readSnapshot(input);
    input.fill(0);
    expect(restored.writeSnapshot()).toEqual(bytes);
    for (const k of restored.list('', 100)) expect(Object.getPrototypeOf(k.value)).toBe(Uint8Array.prototype);
  });
});

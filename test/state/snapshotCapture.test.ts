// A captured snapshot is the state at the capture, however the machine changes while it is encoded a slice
// at a time: the tables freeze (copy-on-write chunks, saved record images) until the encoding ends.
import { describe, expect, it } from 'vitest';
import { LockStateMachine } from '../../src/state';
import { expectSameBytes, Harness, put, referenceSnapshot } from './harness';
import { driveRandomly, type DriveOptions } from './randomStates';

/** Encodes `m`'s capture, applying a few random commands (on the same sessions) after every slice. */
function encodeWhileChanging(m: LockStateMachine, seed: number, sliceUnits: number, options: DriveOptions = {}): { bytes: Uint8Array; slices: number } {
  const encoding = m.captureSnapshot(sliceUnits);
  let slices = 0;
  while (!encoding.step()) {
    slices++;
    driveRandomly(m, seed * 1_000 + slices, 3, seed, options);
    // A synchronous snapshot meanwhile (the simulator's end-of-run comparison) restamps the sessions' positions.
    if (slices % 7 === 0) m.writeSnapshot();
  }
  return { bytes: encoding.bytes(), slices };
}

describe('snapshot capture', () => {
  it('encodes the state at the capture while commands change sessions, locks, keys and dedup results', () => {
    let changedDuring = 0;
    for (let seed = 1; seed <= 60; seed++) {
      const m = new LockStateMachine();
      driveRandomly(m, seed, 300);
      const atCapture = m.writeSnapshot();
      const { bytes, slices } = encodeWhileChanging(m, seed, 1 + (seed % 5));
      expect(slices, `seed ${seed}`).toBeGreaterThan(4);
      expectSameBytes(bytes, atCapture, `seed ${seed}`);
      // The machine itself went on: its state is its own, consistent, and no longer frozen.
      expect(m.checkInvariants(), `seed ${seed}`).toEqual([]);
      const after = m.writeSnapshot();
      expect(referenceSnapshot(LockStateMachine.readSnapshot(after))).toEqual(referenceSnapshot(m));
      if (Buffer.compare(after, atCapture) !== 0) changedDuring++;
    }
    expect(changedDuring).toBeGreaterThan(50);
  });

  it('encodes the auth table as it was at the capture while callers change it', () => {
    for (let seed = 1; seed <= 30; seed++) {
      const m = new LockStateMachine();
      driveRandomly(m, seed, 300, seed, { auth: true });
      const atCapture = m.writeSnapshot();
      const authAtCapture = m.auth.authList();
      const encoding = m.captureSnapshot(1);
      expect(encoding.step()).toBe(false);
      // One certain change (the node's own entry is never refused), then random ones with every slice.
      const change = { op: 'token_issue', user: authAtCapture.users[0]?.name ?? 'x', tokenId: 'ffffffffffffff01', tokenHash: 'cd'.repeat(32) } as const;
      const userAdd = { op: 'user_add', user: 'added-during-capture' } as const;
      m.apply(m.lastApplied + 1, { type: 'AuthChange', clientId: '', requestId: 0, now: 1, change: authAtCapture.users.length > 0 ? change : userAdd });
      expect(m.auth.authList(), `seed ${seed}`).not.toEqual(authAtCapture);
      for (let slice = 1; !encoding.step(); slice++) driveRandomly(m, seed * 1_000 + slice, 3, seed, { auth: true });
      expectSameBytes(encoding.bytes(), atCapture, `seed ${seed}`);
      expect(m.checkInvariants(), `seed ${seed}`).toEqual([]);
    }
  });

  it('keeps a lock, its queue and its keys as they were when they change after the capture', () => {
    const h = new Harness();
    const a = h.open();
    const b = h.open();
    const token = h.grant(a, 'L');
    expect(h.acquire(b, 'L').result).toMatchObject({ status: 'waiting' });
    expect(h.write(a, 'L', token, [put('k', 'before')]).result).toMatchObject({ status: 'written' });
    const atCapture = h.m.writeSnapshot();
    const encoding = h.m.captureSnapshot(1);
    expect(encoding.step()).toBe(false);
    // Hand the lock over (holder, token, queue change), write the key under the new token, close a session.
    expect(h.release(a, 'L', token).result).toMatchObject({ status: 'released' });
    const next = h.m.describeLock('L')!.latestToken;
    expect(h.write(b, 'L', next, [put('k', 'after')]).result).toMatchObject({ status: 'written' });
    h.close(a);
    while (!encoding.step());
    expectSameBytes(encoding.bytes(), atCapture);
    const restored = LockStateMachine.readSnapshot(encoding.bytes());
    expect(restored.describeLock('L')!.holder?.sessionId).toBe(a);
    expect(restored.get('k')!.watermark).toBe(token);
    expect(h.m.describeLock('L')!.holder?.sessionId).toBe(b);
  });

  it('keeps a dedup client as it was when a later request acknowledges its results', () => {
    const m = new LockStateMachine();
    const open = (requestId: number, ackedBelow = 0): void => {
      const sessionId = requestId.toString(16).padStart(32, '0');
      m.apply(m.lastApplied + 1, { type: 'OpenSession', clientId: 'c', requestId, ackedBelow, now: 1, sessionId, ttlMs: 10_000, clientName: '' });
    };
    for (let id = 1; id <= 5; id++) open(id);
    const atCapture = m.writeSnapshot();
    const encoding = m.captureSnapshot(1);
    expect(encoding.step()).toBe(false);
    open(6, 4); // drops the results of requests 1..3 and raises the client's floor
    while (!encoding.step());
    expectSameBytes(encoding.bytes(), atCapture);
    expect(Buffer.compare(m.writeSnapshot(), atCapture)).not.toBe(0);
  });

  it('allows one capture at a time, and a cancelled one frees the tables for the next', () => {
    const m = new LockStateMachine();
    driveRandomly(m, 7, 200);
    const first = m.captureSnapshot(1);
    expect(first.step()).toBe(false);
    expect(() => m.captureSnapshot()).toThrow(/capture is open already/);
    // A synchronous snapshot during a capture is of the live state.
    driveRandomly(m, 8, 50, 7);
    const live = m.writeSnapshot();
    first.cancel();
    expect(() => first.step()).toThrow(/cancelled/);
    const second = m.captureSnapshot();
    while (!second.step());
    expectSameBytes(second.bytes(), live);
    expect(() => second.bytes()).not.toThrow();
  });
});

// LockStateMachine.restoredForNewCluster (docs/backup.md): the state a restored cluster starts from.
import { describe, expect, it } from 'vitest';
import { InvariantError, LockStateMachine } from '../../src/state';
import { Harness, put } from './harness';

const BUMP = 1_000;

/** A state with a held lock and its key, a queued waiter, a free lock with a key, and a user. */
function backupState(): { h: Harness; holder: string; waiter: string; heldToken: number; freeToken: number } {
  const h = new Harness();
  expect(h.auth({ op: 'user_add', user: 'alice' }).result).toEqual({ status: 'auth_changed' });
  const holder = h.open();
  const waiter = h.open();
  const freeToken = h.grant(holder, 'free');
  h.write(holder, 'free', freeToken, [put('free/k', 'kept')]);
  h.release(holder, 'free', freeToken);
  const heldToken = h.grant(holder, 'held');
  h.write(holder, 'held', heldToken, [put('held/k', 'v1')]);
  expect(h.acquire(waiter, 'held').result).toMatchObject({ status: 'waiting' });
  return { h, holder, waiter, heldToken, freeToken };
}

describe('a state restored for a new cluster', () => {
  it('ends every session without handing any lock on, and keeps keys, watermarks, latest tokens and the auth table', () => {
    const { h, holder, waiter, heldToken, freeToken } = backupState();
    const backupIndex = h.index;
    const { machine: m, sessionsEnded } = LockStateMachine.restoredForNewCluster(h.m.writeSnapshot(), backupIndex + BUMP);
    expect(sessionsEnded).toBe(2);
    expect(m.lastApplied).toBe(backupIndex + BUMP);
    expect(m.sessionIds()).toEqual([]);
    expect(m.describeLock('held')).toEqual({ name: 'held', holder: null, latestToken: heldToken, waiters: [], waiterSessions: [] });
    expect(m.get('held/k')).toMatchObject({ lock: 'held', watermark: heldToken });
    expect(m.get('free/k')).toMatchObject({ lock: 'free', watermark: freeToken });
    expect(m.auth.userInfo('alice')).toBeDefined();
    expect(m.checkInvariants()).toEqual([]);
    expect(m.sessionLockState('held', waiter)).toEqual({ state: 'none' });
    expect(m.getSession(holder)).toBeUndefined();
  });

  it('refuses the old holder\'s token, and every later grant is above the bumped index', () => {
    const { h, holder, heldToken } = backupState();
    const restoredAt = h.index + BUMP;
    const r = new Harness(LockStateMachine.restoredForNewCluster(h.m.writeSnapshot(), restoredAt).machine);
    r.nextRequestId = 1_000;
    expect(r.write(holder, 'held', heldToken, [put('held/k', 'stale')]).result).toMatchObject({ status: 'refused', reason: 'LOCK_NOT_HELD' });
    const fresh = r.open();
    const token = r.grant(fresh, 'held');
    expect(token).toBeGreaterThan(restoredAt);
    expect(r.write(holder, 'held', heldToken, [put('held/k', 'stale')]).result).toMatchObject({ status: 'refused', reason: 'STALE_TOKEN' });
    expect(r.write(fresh, 'held', token, [put('held/k', 'v2')]).result).toMatchObject({ status: 'written' });
    expect(r.value('held/k')).toBe('v2');
  });

  it('keeps the retry records: a write acknowledged before the backup, retried after the restore, gets its original answer', () => {
    const { h, holder, heldToken } = backupState();
    const write = h.req('Write', { lock: 'held', sessionId: holder, token: heldToken, ops: [put('held/k', 'v2')] });
    expect(h.apply(write).result).toMatchObject({ status: 'written' });
    const r = new Harness(LockStateMachine.restoredForNewCluster(h.m.writeSnapshot(), h.index + BUMP).machine);
    const retried = r.apply(write);
    // Run again, it would be refused (its session is gone), telling the client its acknowledged write failed.
    expect(retried.duplicate).toBe(true);
    expect(retried.result).toMatchObject({ status: 'written', token: heldToken });
    expect(r.value('held/k')).toBe('v2');
  });

  it('never goes below the backup\'s own index', () => {
    const { h } = backupState();
    expect(() => LockStateMachine.restoredForNewCluster(h.m.writeSnapshot(), h.index - 1)).toThrow(InvariantError);
    expect(LockStateMachine.restoredForNewCluster(h.m.writeSnapshot(), h.index).machine.lastApplied).toBe(h.index);
  });
});

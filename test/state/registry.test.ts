// The command registry (src/state/registry): one entry per command type, and what applying a command yields
// is among the statuses its entry declares (what ResultOf<T>, and so the node's typed propose, relies on).
import { describe, expect, it } from 'vitest';
import { COMMAND_TYPES, LockStateMachine, decoderOfMember, entryOf, type Command, type CommandResult } from '../../src/state';
import { COMMAND_SAMPLES } from './commandSamples';
import { driveRandomly } from './randomStates';

describe('command registry', () => {
  it('has one entry per command type, each written in its own state.proto member', () => {
    expect(new Set(COMMAND_TYPES).size).toBe(17);
    const members = COMMAND_TYPES.map((t) => entryOf(t).member);
    expect(new Set(members).size).toBe(members.length);
    for (const t of COMMAND_TYPES) {
      expect(entryOf(t).type).toBe(t);
      expect(decoderOfMember(entryOf(t).member)?.kind).toBe(entryOf(t).kind);
    }
    // The single-session expiry of older logs is read by the ExpireSession entry, and nothing else is.
    expect(decoderOfMember('expireSession')?.kind).toBe('lease');
    expect(decoderOfMember('body')).toBeUndefined();
  });

  it('answers every applied command with a status its entry declares, or refused / invalid', () => {
    const seen = new Map<string, Set<string>>();
    for (const [seed, auth] of [
      [7, false],
      [8, true],
      [9, true],
    ] as const) {
      const m = new LockStateMachine();
      const apply = m.apply.bind(m);
      m.apply = (index: number, c: Command): CommandResult => {
        const out = apply(index, c);
        const allowed: readonly string[] = [...entryOf(c.type).statuses, 'refused', 'invalid'];
        expect(allowed, `${c.type} answered ${out.result.status}`).toContain(out.result.status);
        if (!seen.has(c.type)) seen.set(c.type, new Set());
        seen.get(c.type)?.add(out.result.status);
        return out;
      };
      driveRandomly(m, seed, 3_000, seed, { auth });
      // The samples of every kind (the drive sends no RevokeSession nor CheckpointLeases).
      if (seed === 7) {
        COMMAND_SAMPLES.forEach(([, c]) => m.apply(m.lastApplied + 1, c));
        // Nor a RevokeLock, which is newer than the samples' fixture: revoke a grant of its own.
        const base = { clientId: 'revoker', now: 5_000 };
        const sessionId = 'e'.repeat(32);
        m.apply(m.lastApplied + 1, { type: 'OpenSession', ...base, requestId: 1, sessionId, ttlMs: 10_000, clientName: '' });
        m.apply(m.lastApplied + 1, { type: 'Acquire', ...base, requestId: 2, lock: 'revoked', sessionId, tryOnly: true });
        m.apply(m.lastApplied + 1, { type: 'RevokeLock', ...base, requestId: 3, lock: 'revoked', token: 0, reason: '' });
        // Nor a lock-delay: a revoked grant that asked for one, then the leader's end of the delay.
        m.apply(m.lastApplied + 1, { type: 'Acquire', ...base, requestId: 4, lock: 'delayed', sessionId, tryOnly: true, lockDelayMs: 1_000 });
        m.apply(m.lastApplied + 1, { type: 'RevokeLock', ...base, requestId: 5, lock: 'delayed', token: 0, reason: '' });
        const since = m.lastApplied;
        m.apply(m.lastApplied + 1, { type: 'EndLockDelays', now: 6_000, delays: [{ lock: 'delayed', since }] });
        // Nor a semaphore: a permit taken, one waited for and cancelled, one released.
        const other = 'f'.repeat(32);
        const sem = { semaphore: 'sem', permits: 1, waitTimeoutMs: 0 };
        m.apply(m.lastApplied + 1, { type: 'OpenSession', ...base, requestId: 6, sessionId: other, ttlMs: 10_000, clientName: '' });
        m.apply(m.lastApplied + 1, { type: 'SemaphoreAcquire', ...base, ...sem, requestId: 7, sessionId, tryOnly: true });
        m.apply(m.lastApplied + 1, { type: 'SemaphoreAcquire', ...base, ...sem, requestId: 8, sessionId: other, tryOnly: false });
        m.apply(m.lastApplied + 1, { type: 'SemaphoreCancelWait', ...base, requestId: 9, semaphore: 'sem', sessionId: other });
        const token = m.lastApplied - 2;
        m.apply(m.lastApplied + 1, { type: 'SemaphoreRelease', ...base, requestId: 10, semaphore: 'sem', sessionId, token });
        // Nor an AcquireAll: a set granted whole.
        m.apply(m.lastApplied + 1, { type: 'AcquireAll', ...base, requestId: 11, locks: ['all-b', 'all-a'], sessionId, tryOnly: true });
      }
    }
    // Every entry is reached with commands that run (not only refusals).
    for (const t of COMMAND_TYPES) {
      expect([...(seen.get(t) ?? [])].some((s) => s !== 'refused' && s !== 'invalid'), `${t}: ${[...(seen.get(t) ?? [])].join(',')}`).toBe(true);
    }
  });
});

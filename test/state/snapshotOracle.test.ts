// The machine's snapshot encoder writes the bytes of format 6 exactly: the same bytes as the plain oracle
// (snapshotOracle.ts, whose stored results protobufjs encodes) on random states, and a machine restored from
// them writes them again. Formats 2 (before lease checkpoints), 3 (before auth), 4 (before protobuf
// results) and 5 (before wait times) still install: the oracle's bytes of them are those of the encoders that wrote them (digests
// pinned from each), and they restore the same state.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { LockStateMachine } from '../../src/state';
import { expectCanonicalSnapshot, expectSameBytes, referenceSnapshot, withoutWaitTimes } from './harness';
import { encodePlainSnapshot, type StateSnapshot } from './snapshotOracle';
import { driveRandomly } from './randomStates';

/**
 * SHA-256 of the format-2 snapshots of seeds 1..20 (after 4 rounds of 150 commands each) as the first encoder
 * wrote them (main at 0580bdb, toSnapshot + encodeSnapshot). 800 snapshots of seeds 1..200 were compared byte
 * for byte with it when the encoder was rewritten, and it pinned the machine's own bytes until format 3.
 */
const PINNED_FORMAT_2 = 'b35ccbe07bb786ba2b536f261be8e0c253cf1799ffaec771d9bf3d9734ec922f';

/**
 * SHA-256 of the format-3 snapshots of the same states, as the machine wrote them before format 4 (i10-state
 * at ede604d, writeSnapshot): nodes have these bytes on disk.
 */
const PINNED_FORMAT_3 = '7e58a61bd35e62696e2cfae5c44286a3e4030abea77978fca2873203024d879b';

/**
 * SHA-256 of the format-4 snapshots of the same states (round 3 of seeds 1..20), and of the states driven
 * with auth (the second test), as the machine wrote them before format 5 (main at f55004a, writeSnapshot,
 * run from a copy of that tree): nodes have these bytes on disk.
 */
const PINNED_FORMAT_4 = '6c8d106f1fb0ff97af403fcbc00ff487426116615f92fd463438d8e221c45d0b';
const PINNED_FORMAT_4_AUTH = 'f7d2e6bcd2e977aa0e64d3bf6f8d256fbddcec5c3c8ffee3b2112db9f7169713';

/**
 * The state as the machine kept it before refusals named the lock owning their key: what PINNED_FORMAT_2 was
 * taken of (the random commands do not depend on results, so everything else is the same state).
 */
function withoutOwners(s: StateSnapshot): StateSnapshot {
  const drop = (json: string): string => {
    const { owner, ...rest } = JSON.parse(json) as Record<string, unknown>;
    return owner === undefined ? json : JSON.stringify(rest);
  };
  return { ...s, dedup: s.dedup.map((c) => ({ ...c, entries: c.entries.map((e) => ({ ...e, result: drop(e.result) })) })) };
}

/**
 * The format-4 bytes of a state (results as dictionary fields or JSON) restore the same state (wait times
 * unknown), which writes itself as format 6 again (converted on read); returns them.
 */
function expectFormat4Converts(plain: StateSnapshot): Uint8Array {
  const format4 = encodePlainSnapshot({ ...plain, format: 4 });
  const converted = LockStateMachine.readSnapshot(format4);
  const known = withoutWaitTimes(plain);
  expect(referenceSnapshot(converted)).toEqual(known);
  expectSameBytes(converted.writeSnapshot(), encodePlainSnapshot(known));
  return format4;
}

/** The format-5 bytes of a state restore it with every wait time 0, and the wait times are all it loses. */
function expectFormat5Converts(plain: StateSnapshot): void {
  const converted = LockStateMachine.readSnapshot(encodePlainSnapshot({ ...plain, format: 5 }));
  expect(referenceSnapshot(converted)).toEqual(withoutWaitTimes(plain));
}

describe('snapshot bytes', () => {
  it('are the oracle’s on random states, and round-trip through readSnapshot', () => {
    const digest = createHash('sha256');
    const digest3 = createHash('sha256');
    const digest4 = createHash('sha256');
    const kinds = new Set<string>();
    for (let seed = 1; seed <= 20; seed++) {
      const m = new LockStateMachine();
      for (let round = 0; round < 4; round++) {
        driveRandomly(m, seed * 10 + round, 150);
        const bytes = expectCanonicalSnapshot(m);
        const restored = LockStateMachine.readSnapshot(bytes);
        expectSameBytes(restored.writeSnapshot(), bytes, `seed ${seed} round ${round}`);
        const plain = referenceSnapshot(m);
        expect(referenceSnapshot(restored)).toEqual(plain);
        // These states have no lease checkpoints, so their format-2 bytes say all there is.
        const format2 = encodePlainSnapshot({ ...plain, format: 2 });
        expect(referenceSnapshot(LockStateMachine.readSnapshot(format2))).toEqual(withoutWaitTimes(plain));
        // Nor callers or auth: their format-3 bytes say all there is too.
        const format3 = encodePlainSnapshot({ ...plain, format: 3 });
        expect(referenceSnapshot(LockStateMachine.readSnapshot(format3))).toEqual(withoutWaitTimes(plain));
        const format4 = expectFormat4Converts(plain);
        expectFormat5Converts(plain);
        // Queued waiters carry the time their Acquire queued them (the random commands stamp it).
        const since = plain.locks.flatMap((x) => x.waitingSince ?? []);
        if (since.length > 0) expect(since.every((t) => t > 0)).toBe(true);
        for (const c of plain.dedup) {
          for (const e of c.entries) kinds.add(Object.keys(JSON.parse(e.result) as object).join(','));
        }
        if (round === 3) {
          digest.update(encodePlainSnapshot({ ...withoutOwners(plain), format: 2 }));
          digest3.update(format3);
          digest4.update(format4);
        }
      }
    }
    expect(digest.digest('hex')).toBe(PINNED_FORMAT_2);
    expect(digest3.digest('hex')).toBe(PINNED_FORMAT_3);
    expect(digest4.digest('hex')).toBe(PINNED_FORMAT_4);
    // The states hold every kind of stored result, both forms included.
    for (const k of [
      'status,sessionId,ttlMs',
      'status,sessionId,cause,released',
      'status,token,newGrant',
      'status,holderToken,position',
      'status,holderToken',
      'status',
      'status,token',
      'status,token,nextHolder,nextToken',
      'status,token,ops,index',
      'status,reason,watermark',
      // A refusal with a key but no owner is only found in older snapshots now (snapshotFormat.test.ts).
      'status,reason,watermark,key,owner',
      'status,message',
    ]) {
      expect(kinds, k).toContain(k);
    }
  });

  it('are the oracle’s on random states with callers, tokens and auth changes, and round-trip', () => {
    let enabled = 0;
    let owned = 0;
    const results = new Set<string>();
    /** A stored result's status, with the refusal reason or whether a move moved anything. */
    const describeResult = (json: string): string => {
      const r = JSON.parse(json) as { status: string; reason?: string; moved?: number };
      return r.status === 'refused' ? `refused ${r.reason}` : r.status === 'keys_moved' ? `keys_moved ${r.moved === 0 ? 0 : 'some'}` : r.status;
    };
    let users = 0;
    const digest4 = createHash('sha256');
    for (let seed = 1; seed <= 20; seed++) {
      const m = new LockStateMachine();
      for (let round = 0; round < 4; round++) {
        driveRandomly(m, seed * 10 + round, 150, seed * 10 + round, { auth: true });
        const bytes = expectCanonicalSnapshot(m);
        const restored = LockStateMachine.readSnapshot(bytes);
        expectSameBytes(restored.writeSnapshot(), bytes, `seed ${seed} round ${round}`);
        const plain = referenceSnapshot(m);
        expect(referenceSnapshot(restored)).toEqual(plain);
        expect(restored.auth.authList()).toEqual(m.auth.authList());
        const format4 = expectFormat4Converts(plain);
        for (const c of plain.dedup) for (const e of c.entries) results.add(describeResult(e.result));
        if (round === 3) {
          digest4.update(format4);
          if (plain.auth.enabled) enabled++;
          users += plain.auth.users.length;
          owned += plain.sessions.filter((x) => x.owner !== '').length;
        }
      }
    }
    expect(digest4.digest('hex')).toBe(PINNED_FORMAT_4_AUTH);
    // The states hold what the new parts of the format encode.
    expect(enabled).toBeGreaterThan(5);
    expect(users).toBeGreaterThan(20);
    expect(owned).toBeGreaterThan(20);
    for (const kind of ['auth_changed', 'keys_moved some', 'refused PERMISSION_DENIED', 'refused NOT_SESSION_OWNER', 'refused QUOTA_EXCEEDED', 'refused LOCK_BUSY', 'refused AUTH_OFF']) {
      expect(results, kind).toContain(kind);
    }
  });
});

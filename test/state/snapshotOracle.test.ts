// The machine's snapshot encoder writes the bytes of format 2 exactly: the same bytes as the plain oracle
// (snapshotOracle.ts) on random states, the same bytes as the encoder of the format before this one was
// written (a digest pinned from it), and a machine restored from them writes them again.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { LockStateMachine } from '../../src/state';
import { expectCanonicalSnapshot, expectSameBytes, referenceSnapshot } from './harness';
import { driveRandomly } from './randomStates';

/**
 * SHA-256 of the snapshots of seeds 1..20 (after 4 rounds of 150 commands each) as the previous encoder wrote
 * them (main at 0580bdb, toSnapshot + encodeSnapshot). 800 snapshots of seeds 1..200 were compared byte for
 * byte with it when the encoder was rewritten.
 */
const PINNED = 'b35ccbe07bb786ba2b536f261be8e0c253cf1799ffaec771d9bf3d9734ec922f';

describe('snapshot bytes', () => {
  it('are the oracle’s on random states, and round-trip through readSnapshot', () => {
    const digest = createHash('sha256');
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
        for (const c of plain.dedup) {
          for (const e of c.entries) kinds.add(Object.keys(JSON.parse(e.result) as object).join(','));
        }
        if (round === 3) digest.update(bytes);
      }
    }
    expect(digest.digest('hex')).toBe(PINNED);
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
      'status,reason,watermark,key',
      'status,message',
    ]) {
      expect(kinds, k).toContain(k);
    }
  });
});

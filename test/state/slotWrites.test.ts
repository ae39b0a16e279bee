// Fenced writes under a semaphore's permit (issue 33; src/state/slotFencing.ts): keys bound to (semaphore,
// slot), each slot fenced by its own latest token, so a stale holder of one slot is refused while the other
// slots' holders write on; slot keys are no lock's keys; snapshots keep the binding (format 9).
import { describe, expect, it } from 'vitest';
import { decodeCommand, encodeCommand } from '../../src/codec/commandCodec';
import { LockStateMachine, Reason, type Command, type Result } from '../../src/state';
import type { WriteOp } from '../../src/state/writeOps';
import { Harness, put, referenceSnapshot } from './harness';
import { encodePlainSnapshot } from './snapshotOracle';

function permit(h: Harness, sessionId: string, permits: number, semaphore = 'pool'): { token: number; slot: number } {
  const r = h.apply(h.req('SemaphoreAcquire', { semaphore, sessionId, permits, tryOnly: false, waitTimeoutMs: 5_000 })).result;
  expect(r).toMatchObject({ status: 'permit_granted' });
  return r as { token: number; slot: number };
}

function slotWrite(h: Harness, sessionId: string, slot: number, token: number, ops: WriteOp[], semaphore = 'pool'): Result {
  return h.apply(h.req('Write', { lock: semaphore, slot, sessionId, token, ops })).result;
}

describe('writes under a permit', () => {
  it('refuses a stale holder of slot 1 once the slot has a newer grant, while slots 0 and 2 write on', () => {
    const h = new Harness();
    const [a, b, c, d] = [h.open(), h.open(), h.open(), h.open()];
    const [pa, pb, pc] = [permit(h, a, 3), permit(h, b, 3), permit(h, c, 3)];
    expect([pa.slot, pb.slot, pc.slot]).toEqual([0, 1, 2]);
    for (const [s, p] of [[a, pa], [b, pb], [c, pc]] as const) expect(slotWrite(h, s, p.slot, p.token, [put(`pool/${p.slot}`, 'x')])).toMatchObject({ status: 'written' });
    // d waits; b's session expires: slot 1 goes to d under a new token.
    h.apply(h.req('SemaphoreAcquire', { semaphore: 'pool', sessionId: d, permits: 3, tryOnly: false, waitTimeoutMs: 5_000 }));
    h.expire(b);
    const handed = h.m.sessionPermitState('pool', d);
    expect(handed).toMatchObject({ state: 'holder', slot: 1 });
    const dToken = (handed as { token: number }).token;
    // The stale holder of slot 1: refused STALE_TOKEN, the slot's watermark with it.
    expect(slotWrite(h, b, 1, pb.token, [put('pool/1', 'stale')])).toEqual({ status: 'refused', reason: Reason.STALE_TOKEN, watermark: dToken });
    expect(slotWrite(h, d, 1, dToken, [put('pool/1', 'd')])).toMatchObject({ status: 'written', token: dToken });
    // The other slots are untouched by slot 1's new grant.
    expect(slotWrite(h, a, 0, pa.token, [put('pool/0', 'y')])).toMatchObject({ status: 'written' });
    expect(slotWrite(h, c, 2, pc.token, [put('pool/2', 'y')])).toMatchObject({ status: 'written' });
    expect(h.m.get('pool/1')).toMatchObject({ lock: 'pool', slot: 1, watermark: dToken });
  });

  it('binds keys to their slot: another slot, the lock of the same name and a wrong slot are refused', () => {
    const h = new Harness();
    const [a, b] = [h.open(), h.open()];
    const [pa, pb] = [permit(h, a, 2), permit(h, b, 2)];
    expect(slotWrite(h, a, 0, pa.token, [put('k', 'a')])).toMatchObject({ status: 'written' });
    expect(slotWrite(h, b, 1, pb.token, [put('k', 'b')])).toMatchObject({ status: 'refused', reason: Reason.WRONG_LOCK, key: 'k', owner: 'pool#0' });
    const lockToken = h.grant(b, 'pool');
    expect(h.write(b, 'pool', lockToken, [put('k', 'lock')]).result).toMatchObject({ status: 'refused', reason: Reason.WRONG_LOCK, key: 'k', owner: 'pool#0' });
    expect(h.write(b, 'pool', lockToken, [put('lock-key', 'v')]).result).toMatchObject({ status: 'written' });
    expect(slotWrite(h, b, 1, pb.token, [put('lock-key', 'v')])).toMatchObject({ status: 'refused', reason: Reason.WRONG_LOCK, owner: 'pool' });
    // b's token in a's slot: above slot 0's latest token, so not issued for it.
    expect(slotWrite(h, b, 0, pb.token, [put('other', 'v')])).toMatchObject({ status: 'refused', reason: Reason.WRONG_LOCK });
    // a's token in slot 0 by b: the latest of the slot, but a's grant.
    expect(slotWrite(h, b, 0, pa.token, [put('other', 'v')])).toMatchObject({ status: 'refused', reason: Reason.NOT_HOLDER });
  });

  it('refuses a released permit LOCK_NOT_HELD, and a forgotten semaphore too', () => {
    const h = new Harness();
    const [a, b] = [h.open(), h.open()];
    const pa = permit(h, a, 2);
    const pb = permit(h, b, 2);
    h.apply(h.req('SemaphoreRelease', { semaphore: 'pool', sessionId: a, token: pa.token }));
    expect(slotWrite(h, a, 0, pa.token, [put('k', 'v')])).toMatchObject({ status: 'refused', reason: Reason.LOCK_NOT_HELD });
    h.apply(h.req('SemaphoreRelease', { semaphore: 'pool', sessionId: b, token: pb.token }));
    expect(h.m.describeSemaphore('pool')).toBeUndefined();
    expect(slotWrite(h, b, 1, pb.token, [put('k', 'v')])).toMatchObject({ status: 'refused', reason: Reason.LOCK_NOT_HELD });
  });

  it('keeps slot keys across a snapshot (format 9), as the plain encoder writes them, and a moved key leaves its slot', () => {
    const h = new Harness();
    const a = h.open();
    const pa = permit(h, a, 2);
    slotWrite(h, a, pa.slot, pa.token, [put('pool/0', 'x')]);
    const plain = referenceSnapshot(h.m);
    expect(plain.keys).toEqual([expect.objectContaining({ key: 'pool/0', lock: 'pool', slot: 0 })]);
    const bytes = h.m.writeSnapshot();
    expect(Array.from(bytes)).toEqual(Array.from(encodePlainSnapshot(plain)));
    const restored = LockStateMachine.readSnapshot(bytes);
    expect(referenceSnapshot(restored)).toEqual(plain);
    expect(restored.checkInvariants()).toEqual([]);

    const moved = h.apply(h.req('MoveKeys', { key: 'pool/0', toLock: 'elsewhere' })).result;
    expect(moved).toEqual({ status: 'keys_moved', moved: 1 });
    expect(h.m.get('pool/0')).toMatchObject({ lock: 'elsewhere' });
    expect(h.m.get('pool/0')?.slot).toBeUndefined();
  });

  it('round-trips the slot of a Write command, and refuses a slot past MAX_PERMITS', () => {
    const h = new Harness();
    const a = h.open();
    for (const slot of [0, 3, undefined]) {
      const command = h.req('Write', { lock: 'pool', ...(slot === undefined ? {} : { slot }), sessionId: a, token: 7, ops: [put('k', 'v')] }) as Command;
      const { ops: _ops, ...decoded } = decodeCommand(encodeCommand(command)) as Extract<Command, { type: 'Write' }>;
      const { ops: _sent, ...sent } = command as Extract<Command, { type: 'Write' }>;
      expect(decoded, `slot ${String(slot)}`).toEqual(sent);
    }
    const out = h.apply(h.req('Write', { lock: 'pool', slot: 5_000, sessionId: a, token: 1, ops: [put('k', 'v')] })).result;
    expect(out).toMatchObject({ status: 'invalid' });
    expect((out as { message: string }).message).toContain('slot');
  });
});

// The checker's rules for semaphores (docs/architecture.md#semaphores): each slot is a resource of its own
// (projection.ts). For each rule, a history it accepts and one it rejects that it would accept without it.
import { describe, expect, it } from 'vitest';
import { HistoryBuilder } from './builder';
import { checkedSlot } from './history';
import { brokenInvariants, expectLinearizable, expectNotLinearizable } from './verdicts';

const S = 'pool';
const K0 = 'pool/0/k';
const K1 = 'pool/1/k';

describe('semaphores in the linearizability model', () => {
  it('holders of different slots hold and write at once', () => {
    const b = new HistoryBuilder();
    b.permit('a', S, 2, [0, 1], 0, 5n);
    b.permit('b', S, 2, [2, 3], 1, 7n);
    b.writePermit('a', S, 0, [4, 5], 5n, { [K0]: 'a1' });
    b.writePermit('b', S, 1, [4, 5], 7n, { [K1]: 'b1' });
    b.get('c', K0, [6, 7], 'a1', 5n, checkedSlot(S, 0));
    b.releasePermit('a', S, 0, [8, 9], 5n);
    b.releasePermit('b', S, 1, [8, 9], 7n);
    expectLinearizable(b.ops);
  });

  it('one holder per slot: a grant of the same slot ends the previous holder', () => {
    const bad = new HistoryBuilder();
    bad.permit('a', S, 2, [0, 1], 0, 5n);
    bad.permit('b', S, 2, [2, 3], 0, 7n);
    bad.writePermit('a', S, 0, [4, 5], 5n, { [K0]: 'a1' });
    expectNotLinearizable(bad.ops, checkedSlot(S, 0));
  });

  it("fencing is per slot: another slot's newer grant does not make a holder stale, its own slot's does", () => {
    const ok = new HistoryBuilder();
    ok.permit('a', S, 2, [0, 1], 0, 5n);
    ok.permit('b', S, 2, [2, 3], 1, 7n);
    ok.writePermit('b', S, 1, [4, 5], 7n, { [K1]: 'b1' });
    ok.writePermit('a', S, 0, [6, 7], 5n, { [K0]: 'a1' });
    expectLinearizable(ok.ops);
    const bad = new HistoryBuilder();
    bad.permit('a', S, 2, [0, 1], 0, 5n);
    bad.writePermit('a', S, 0, [2, 3], 5n, { [K0]: 'a1' });
    bad.releasePermit('a', S, 0, [4, 5], 5n);
    bad.permit('b', S, 2, [6, 7], 0, 9n);
    bad.writePermit('b', S, 0, [8, 9], 9n, { [K0]: 'b1' });
    bad.get('c', K0, [10, 11], 'a1', 5n, checkedSlot(S, 0)); // the slot's key went back to an older watermark
    expectNotLinearizable(bad.ops, checkedSlot(S, 0));
  });

  it('a STALE_TOKEN refusal needs a newer grant of the SAME slot', () => {
    const ok = new HistoryBuilder();
    ok.permit('a', S, 2, [0, 1], 0, 5n);
    ok.permit('b', S, 2, [2, 3], 0, 7n);
    ok.writePermitRefused('a', S, 0, [4, 5], 5n, { [K0]: 'a1' }, 'STALE_TOKEN');
    expectLinearizable(ok.ops);
    const bad = new HistoryBuilder();
    bad.permit('a', S, 2, [0, 1], 0, 5n);
    bad.permit('b', S, 2, [2, 3], 1, 7n);
    bad.writePermitRefused('a', S, 0, [4, 5], 5n, { [K0]: 'a1' }, 'STALE_TOKEN');
    expectNotLinearizable(bad.ops, checkedSlot(S, 0));
  });

  it('a slot is handed on under a higher token; a released permit writes nothing', () => {
    const ok = new HistoryBuilder();
    ok.permit('a', S, 1, [0, 1], 0, 5n);
    ok.releasePermit('a', S, 0, [2, 3], 5n);
    ok.permit('b', S, 1, [4, 5], 0, 8n);
    expectLinearizable(ok.ops);
    const lower = new HistoryBuilder();
    lower.permit('a', S, 1, [0, 1], 0, 5n);
    lower.releasePermit('a', S, 0, [2, 3], 5n);
    lower.permit('b', S, 1, [4, 5], 0, 4n);
    expectNotLinearizable(lower.ops, checkedSlot(S, 0));
    const afterRelease = new HistoryBuilder();
    afterRelease.permit('a', S, 1, [0, 1], 0, 5n);
    afterRelease.releasePermit('a', S, 0, [2, 3], 5n);
    afterRelease.writePermit('a', S, 0, [4, 5], 5n, { [K0]: 'a1' });
    expectNotLinearizable(afterRelease.ops, checkedSlot(S, 0));
  });

  it('a permit of unknown outcome may have taken any slot', () => {
    const ok = new HistoryBuilder();
    ok.permit('a', S, 3, [0, 1], 1, 5n);
    ok.permitUnknown('b', S, 3, 2);
    ok.writePermitRefused('a', S, 1, [3, 4], 5n, { [K1]: 'a1' }, 'STALE_TOKEN'); // b may have taken slot 1
    ok.permit('b', S, 3, [5, 6], 2, 9n); // re-entrant: b's permit was slot 2
    expectLinearizable(ok.ops);
    const bad = new HistoryBuilder();
    bad.permit('a', S, 3, [0, 1], 1, 5n);
    bad.writePermitRefused('a', S, 1, [3, 4], 5n, { [K1]: 'a1' }, 'STALE_TOKEN');
    expectNotLinearizable(bad.ops, checkedSlot(S, 1));
  });

  it('a refused permit (every slot taken) is not judged per slot', () => {
    const b = new HistoryBuilder();
    b.permit('a', S, 2, [0, 1], 0, 5n);
    b.permitFull('b', S, 2, [2, 3]);
    expectLinearizable(b.ops);
  });
});

describe('semaphores in the invariants', () => {
  it('permit-slot: at most `permits` holders, so a slot is below the number of permits', () => {
    const ok = new HistoryBuilder();
    ok.permit('a', S, 3, [0, 1], 2, 5n);
    expect(brokenInvariants(ok.ops)).toEqual([]);
    const bad = new HistoryBuilder();
    bad.permit('a', S, 3, [0, 1], 3, 5n);
    expect(brokenInvariants(bad.ops)).toEqual(['permit-slot']);
    expectLinearizable(bad.ops); // the per-slot model alone cannot see it
  });

  it('token-order and stale-write hold per slot, not across slots', () => {
    const ok = new HistoryBuilder();
    ok.permit('a', S, 2, [0, 1], 0, 9n);
    ok.permit('b', S, 2, [2, 3], 1, 12n);
    ok.writePermit('a', S, 0, [4, 5], 9n, { [K0]: 'a1' });
    expect(brokenInvariants(ok.ops)).toEqual([]);
    const bad = new HistoryBuilder();
    bad.permit('a', S, 2, [0, 1], 0, 9n);
    bad.permit('b', S, 2, [2, 3], 0, 12n);
    bad.writePermit('a', S, 0, [4, 5], 9n, { [K0]: 'a1' });
    expect(brokenInvariants(bad.ops)).toEqual(['stale-write']);
  });
});

// The leader's lock-delay timers (src/node/runtime/lockDelayTimers.ts) on a clock the test moves: a delay
// ends no earlier than its length after the leader learned of it; a new leader times every delay in force
// afresh, in full; a delay is handed out once until its proposal fails; a later delay of the same lock
// replaces an earlier one, and a delay gone from the state is forgotten.
import { describe, expect, it } from 'vitest';
import { LockDelayTimers } from '../../src/node/runtime/lockDelayTimers';

function timers(): { t: LockDelayTimers; at: (ms: number) => void } {
  let now = 1_000;
  return { t: new LockDelayTimers(() => now), at: (ms) => void (now = ms) };
}

describe('lock-delay timers', () => {
  it('hand out a delay once its length has passed since this leader learned of it, once', () => {
    const { t, at } = timers();
    t.promote([]);
    t.sync('L', { since: 7, delayMs: 500 });
    at(1_499);
    expect(t.ended(10)).toEqual([]);
    at(1_500);
    expect(t.ended(10)).toEqual([{ lock: 'L', since: 7 }]);
    expect(t.ended(10)).toEqual([]); // proposed: not again until it fails
    t.retry([{ lock: 'L', since: 7 }]);
    expect(t.ended(10)).toEqual([{ lock: 'L', since: 7 }]);
    t.sync('L', undefined); // applied: the delay is gone
    t.retry([{ lock: 'L', since: 7 }]);
    expect([t.ended(10), t.size]).toEqual([[], 0]);
  });

  it('a new leader times every delay in force in full from its promotion, however long the old one had timed it', () => {
    const { t, at } = timers();
    at(50_000);
    t.promote([{ lock: 'A', since: 3, delayMs: 2_000 }, { lock: 'B', since: 4, delayMs: 100 }]);
    at(50_099);
    expect(t.ended(10)).toEqual([]);
    at(50_100);
    expect(t.ended(10)).toEqual([{ lock: 'B', since: 4 }]);
    at(51_999);
    expect(t.ended(10)).toEqual([]);
    at(52_000);
    expect(t.ended(10)).toEqual([{ lock: 'A', since: 3 }]);
  });

  it('a later delay of the same lock replaces the earlier; a retry of the earlier one changes nothing; demoted, nothing is timed', () => {
    const { t, at } = timers();
    t.promote([{ lock: 'L', since: 3, delayMs: 100 }]);
    t.sync('L', { since: 3, delayMs: 100 }); // the same delay again: its time does not start over
    at(1_100);
    expect(t.ended(10)).toEqual([{ lock: 'L', since: 3 }]);
    t.sync('L', { since: 9, delayMs: 300 });
    t.retry([{ lock: 'L', since: 3 }]);
    expect(t.ended(10)).toEqual([]);
    at(1_400);
    expect(t.ended(1)).toEqual([{ lock: 'L', since: 9 }]);
    t.demote();
    t.sync('M', { since: 10, delayMs: 1 });
    at(9_999);
    expect([t.ended(10), t.size]).toEqual([[], 0]);
  });

  it('hands out at most `limit` at a time, the rest at the next call', () => {
    const { t, at } = timers();
    t.promote(['a', 'b', 'c'].map((lock, i) => ({ lock, since: i + 1, delayMs: 10 })));
    at(1_010);
    expect(t.ended(2)).toHaveLength(2);
    expect(t.ended(2)).toHaveLength(1);
  });
});

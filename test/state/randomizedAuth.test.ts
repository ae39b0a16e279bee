// Seeded random commands with callers, tokens, auth changes and key moves (randomStates.ts, option auth):
// invariants (usage recounts included) hold after every step, and a machine restored from snapshots along
// the way gives exactly the results, events and bytes of the one that never was.
import { describe, expect, it } from 'vitest';
import { LockStateMachine, type Command, type CommandResult } from '../../src/state';
import { expectCanonicalSnapshot, roundTrip } from './harness';
import { driveRandomly } from './randomStates';

type Step = { index: number; command: Command; outcome: CommandResult };

/** Drives a machine randomly, checking invariants after every entry; returns the entries and outcomes. */
function record(seed: number, steps: number): { m: LockStateMachine; log: Step[] } {
  const m = new LockStateMachine();
  const log: Step[] = [];
  const recorder = {
    get lastApplied() {
      return m.lastApplied;
    },
    describeLock: (name: string) => m.describeLock(name),
    apply(index: number, command: Command): CommandResult {
      const outcome = m.apply(index, command);
      log.push({ index, command, outcome });
      const problems = m.checkInvariants();
      if (problems.length > 0) expect(problems, `seed ${seed} entry ${index} ${JSON.stringify(command)}`).toEqual([]);
      return outcome;
    },
  };
  driveRandomly(recorder as unknown as LockStateMachine, seed, steps, seed, { auth: true });
  return { m, log };
}

describe('randomized with auth (seeded)', () => {
  it('keeps every invariant, and restored machines agree with the original', () => {
    for (let seed = 1; seed <= 15; seed++) {
      const { m, log } = record(seed, 600);
      let b = new LockStateMachine();
      log.forEach(({ index, command, outcome }, i) => {
        if (i % 150 === 75) b = roundTrip(b);
        expect(b.apply(index, command), `seed ${seed} entry ${index}`).toEqual(outcome);
      });
      expect(Buffer.compare(expectCanonicalSnapshot(b), m.writeSnapshot()), `seed ${seed}`).toBe(0);
      expect(b.auth.authList()).toEqual(m.auth.authList());
    }
  });
});

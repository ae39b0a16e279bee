// The simulator proves its teeth: with each deliberately broken variant of the core
// (RaftConfig.testOnlyBugs), some seed of the CI range must end in a safety violation. Each variant is
// tried twice: with every check, and with only the classic Raft properties (Election Safety, Log Matching,
// Leader Completeness, State Machine Safety, Vote Safety...), i.e. without the direct durability checks,
// which shows that the damage is real and not only a broken rule. The first catching seed is printed;
// replay it with `npm run sim:raft -- --seed N --ticks 1000 --bug <flag>` (add --no-durability-checks).
import { describe, expect, it } from 'vitest';
import type { TestOnlyBugs } from '../../src/raft/types';
import { rawNodeFactory } from './rawNodeFactory';
import { runSeed, type SimResult } from './simulator';

const SEEDS = 300;
const TICKS = 1000;
/** Outcomes that are not a safety invariant caught by the checker. */
const NOT_SAFETY = new Set(['Liveness', 'SimulatorError', 'CoreError']);
const FLAGS: Array<keyof TestOnlyBugs> = ['commitPreviousTermByCounting', 'voteWithoutLogCheck', 'ackBeforeSync'];

function firstCatch(flag: keyof TestOnlyBugs, durabilityChecks: boolean): SimResult | undefined {
  for (let seed = 1; seed <= SEEDS; seed++) {
    const r = runSeed({ seed, factory: rawNodeFactory, bugs: { [flag]: true }, safetyTicks: TICKS, durabilityChecks });
    if (!r.ok && !NOT_SAFETY.has(r.violation!.invariant)) return r;
  }
  return undefined;
}

describe(`the simulator catches each deliberately broken core within seeds 1..${SEEDS}`, () => {
  for (const flag of FLAGS) {
    for (const durability of [true, false]) {
      it(`${flag} (${durability ? 'all checks' : 'classic Raft invariants only'})`, () => {
        const r = firstCatch(flag, durability);
        expect(r, `no seed in 1..${SEEDS} caught ${flag}`).toBeDefined();
        const v = r!.violation!;
        console.log(
          `${flag} [${durability ? 'all checks' : 'classic only'}]: first caught by seed ${r!.seed} ` +
            `(${r!.nodes} nodes, ${r!.profile}) at tick ${v.tick}: ${v.invariant}: ${v.detail}`,
        );
      });
    }
  }
});

import { it } from 'vitest';
import { runFuzz } from './fuzz.test';

it('power', () => {
  for (const flag of ['ackBeforeSync', 'voteWithoutLogCheck', 'commitPreviousTermByCounting'] as const) {
    let found = 0;
    const n = 30;
    for (let seed = 1; seed <= n; seed++) {
      try {
        runFuzz(seed * 1000 + 3, 3, 20_000, { [flag]: true });
      } catch (e) {
        found++;
        if (found <= 2) console.log(flag, seed, String(e).slice(0, 200));
      }
    }
    console.log(flag, found, '/', n);
  }
});

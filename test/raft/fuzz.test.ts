import { describe, it } from 'vitest';
import { runFuzz } from './chaos';

describe('randomized faults (safety, then liveness)', () => {
  for (const size of [3, 5]) {
    for (let seed = 1; seed <= 30; seed++) {
      it(`size ${size} seed ${seed}`, () => runFuzz(seed * 1000 + size, size, 20_000));
    }
  }
});

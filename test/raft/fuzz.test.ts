import { describe, it } from 'vitest';
import { runFuzz } from './chaos';

describe('randomized faults (safety, then liveness)', () => {
  for (const size of [3, 5]) {
    for (let seed = 1; seed <= 30; seed++) {
      it(`size ${size} seed ${seed}`, () => runFuzz(seed * 1000 + size, size, 20_000));
    }
  }
});

describe('randomized faults with other settings', () => {
  const variants = {
    'no pre-vote': { preVote: false },
    'no check-quorum': { checkQuorum: false },
    'neither pre-vote nor check-quorum': { preVote: false, checkQuorum: false },
    'window of one, tiny messages and chunks': { maxInflight: 1, maxMsgBytes: 8, snapshotChunkBytes: 7, snapshotInflightChunks: 1 },
  };
  for (const [name, extra] of Object.entries(variants)) {
    for (let seed = 1; seed <= 8; seed++) {
      it(`${name}, seed ${seed}`, () => runFuzz(seed * 977 + 3 + (seed % 2) * 2, 3 + (seed % 2) * 2, 20_000, {}, extra));
    }
  }
});

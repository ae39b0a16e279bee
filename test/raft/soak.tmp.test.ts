import { it } from 'vitest';
import { runFuzz } from './chaos';

const variants = [
  {},
  { preVote: false },
  { checkQuorum: false },
  { preVote: false, checkQuorum: false },
  { heartbeatTicks: 1, maxInflight: 1 },
  { maxMsgBytes: 8, snapshotChunkBytes: 7, snapshotInflightChunks: 1 },
];
const base = Number(process.env.SOAK_BASE ?? 0);
it('soak', () => {
  const failures: string[] = [];
  for (let v = 0; v < variants.length; v++) {
    for (let seed = base + 1; seed <= base + 60; seed++) {
      for (const size of [3, 5]) {
        try {
          runFuzz(seed * 7 + size, size, 20_000, {}, variants[v]);
        } catch (e) {
          failures.push(`variant ${v} seed ${seed * 7 + size} size ${size}: ${String(e).slice(0, 300)}`);
        }
      }
    }
  }
  console.log(failures.length, 'failures\n' + failures.join('\n'));
}, 3_600_000);

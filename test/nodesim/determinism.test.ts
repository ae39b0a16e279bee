// A failing seed is only useful if it replays: the same seed gives the same run, event for event.
import { describe, expect, it } from 'vitest';
import { runNodeSeed } from './simulation';

async function timeline(seed: number, faultyMs = 4_000): Promise<string[]> {
  const lines: string[] = [];
  const r = await runNodeSeed({ seed, faultyMs, trace: (line) => lines.push(line) });
  lines.push(JSON.stringify(r));
  return lines;
}

describe('whole-node simulation: determinism', () => {
  it('a seed replays exactly, line for line of its timeline; another seed does not', async () => {
    const first = await timeline(12);
    expect(first.length).toBeGreaterThan(200);
    expect(await timeline(12)).toEqual(first);
    expect(await timeline(13)).not.toEqual(first);
  });

  it('a seed that changes membership replays exactly too', async () => {
    const first = await timeline(10, 8_000);
    expect(first.filter((l) => / MEMBERSHIP .* committed at /.test(l)).length).toBeGreaterThan(0);
    expect(await timeline(10, 8_000)).toEqual(first);
  });
});

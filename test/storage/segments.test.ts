import { describe, expect, it } from 'vitest';
import { applySegments, planSegments, segmentOf, type SegmentRef } from '../../src/storage/segments';

const segs = (...ranges: Array<[number, number]>): SegmentRef[] => ranges.map(([first, last]) => ({ first, last }));

/** The plan (which must leave its input alone), and the list it leaves once applied. */
function plan(before: SegmentRef[], snapIndex: number, cutFrom: number, dropAll: boolean): { deletes: number[]; truncate: unknown; kept: SegmentRef[] } {
  const copy = before.map((seg) => ({ ...seg }));
  const changes = planSegments(before, snapIndex, cutFrom, dropAll);
  expect(before).toEqual(copy);
  applySegments(before, changes);
  return { deletes: changes.deletes, truncate: changes.truncate, kept: before };
}

describe('planSegments', () => {
  it('an append changes nothing', () => {
    expect(plan(segs([1, 3], [4, 9]), 0, Infinity, false)).toEqual({ deletes: [], truncate: undefined, kept: segs([1, 3], [4, 9]) });
  });

  it('a compaction deletes the segments wholly at or below the snapshot and keeps a straddler whole', () => {
    expect(plan(segs([1, 3], [4, 6], [7, 9]), 6, Infinity, false)).toEqual({ deletes: [1, 4], truncate: undefined, kept: segs([7, 9]) });
    expect(plan(segs([1, 3], [4, 6], [7, 9]), 5, Infinity, false)).toEqual({ deletes: [1], truncate: undefined, kept: segs([4, 6], [7, 9]) });
  });

  it('a conflict deletes the segments from the cut and truncates the one that straddles it', () => {
    expect(plan(segs([1, 3], [4, 6], [7, 9]), 0, 5, false)).toEqual({
      deletes: [7],
      truncate: { segment: { first: 4, last: 6 }, keepBelow: 5 },
      kept: segs([1, 3], [4, 4]),
    });
    expect(plan(segs([1, 3], [4, 6], [7, 9]), 0, 4, false)).toEqual({ deletes: [7, 4], truncate: undefined, kept: segs([1, 3]) });
  });

  it('a straddler cut down to entries the snapshot covers goes', () => {
    expect(plan(segs([1, 6]), 5, 6, false)).toEqual({ deletes: [1], truncate: undefined, kept: [] });
  });

  it('a snapshot from the leader drops every segment', () => {
    expect(plan(segs([1, 3], [4, 6]), 9, Infinity, true)).toEqual({ deletes: [1, 4], kept: [] });
  });
});

describe('segmentOf', () => {
  it('finds the segment holding an index, or none', () => {
    const list = segs([1, 3], [4, 4], [5, 9]);
    expect([1, 3, 4, 5, 9].map((i) => segmentOf(list, i)?.first)).toEqual([1, 1, 4, 5, 5]);
    expect(segmentOf(list, 0)).toBeUndefined();
    expect(segmentOf(list, 10)).toBeUndefined();
    expect(segmentOf([], 1)).toBeUndefined();
  });
});

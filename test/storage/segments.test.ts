import { describe, expect, it } from 'vitest';
import { planSegments, segmentOf, type SegmentRef } from '../../src/storage/segments';

const segs = (...ranges: Array<[number, number]>): SegmentRef[] => ranges.map(([first, last]) => ({ first, last }));

describe('planSegments', () => {
  it('an append changes nothing', () => {
    expect(planSegments(segs([1, 3], [4, 9]), 0, Infinity, false)).toEqual({ deletes: [], truncate: undefined, kept: segs([1, 3], [4, 9]) });
  });

  it('a compaction deletes the segments wholly at or below the snapshot and keeps a straddler whole', () => {
    expect(planSegments(segs([1, 3], [4, 6], [7, 9]), 6, Infinity, false)).toEqual({ deletes: [1, 4], truncate: undefined, kept: segs([7, 9]) });
    expect(planSegments(segs([1, 3], [4, 6], [7, 9]), 5, Infinity, false)).toEqual({ deletes: [1], truncate: undefined, kept: segs([4, 6], [7, 9]) });
  });

  it('a conflict deletes the segments from the cut and truncates the one that straddles it', () => {
    expect(planSegments(segs([1, 3], [4, 6], [7, 9]), 0, 5, false)).toEqual({
      deletes: [7],
      truncate: { segment: { first: 4, last: 6 }, keepBelow: 5 },
      kept: segs([1, 3], [4, 4]),
    });
    expect(planSegments(segs([1, 3], [4, 6], [7, 9]), 0, 4, false)).toEqual({ deletes: [7, 4], truncate: undefined, kept: segs([1, 3]) });
  });

  it('a straddler cut down to entries the snapshot covers goes', () => {
    expect(planSegments(segs([1, 6]), 5, 6, false)).toEqual({ deletes: [1], truncate: undefined, kept: [] });
  });

  it('a snapshot from the leader drops every segment', () => {
    expect(planSegments(segs([1, 3], [4, 6]), 9, Infinity, true)).toEqual({ deletes: [1, 4], kept: [] });
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

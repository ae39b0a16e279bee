/**
 * Where LevelStorage's log entries are: one segment (a LevelDB value holding consecutive entries) per
 * persisted batch, keyed by its first index. A batch then costs one LevelDB operation whatever its number of
 * entries; per-entry operations cost about 10 µs of CPU each in the Ready loop (docs/performance.md).
 *
 * Segments are ascending and contiguous. The first may begin at or below the snapshot index: a compaction
 * deletes only the segments that lie wholly at or below it, and the entries of a straddling one that the
 * snapshot covers are skipped when the log is read back. This module only plans; LevelStorage executes.
 */

/** One stored segment: the inclusive range of indexes it holds. */
export interface SegmentRef {
  first: number;
  last: number;
}

/** What one write does to the segments, in terms of the segments stored before it. */
export interface SegmentChanges {
  /** Segments to delete (by their first index). */
  deletes: number[];
  /** A segment that keeps only its entries below `keepBelow`: LevelStorage rewrites it under the same key. */
  truncate?: { segment: SegmentRef; keepBelow: number };
  /** The segments after the write (before the new segment, if any, is appended). */
  kept: SegmentRef[];
}

/**
 * Plans the segment changes of one write. Only the ends of the list can change, so only they are visited: an
 * append (the usual write) costs nothing here, however many segments the log holds.
 * - `snapIndex`: the snapshot index after the write: segments wholly at or below it go.
 * - `cutFrom`: the first index whose stored entry the write replaces or truncates (Infinity: none). Segments
 *   from it on go; one that straddles it keeps its entries below it, unless the snapshot covers them all.
 * - `dropAll`: the write installs a snapshot from the leader, which replaces every stored entry.
 * `segments` is taken over: the result's `kept` is that same array, changed.
 */
export function planSegments(segments: SegmentRef[], snapIndex: number, cutFrom: number, dropAll: boolean): SegmentChanges {
  if (dropAll) return { deletes: segments.map((seg) => seg.first), kept: [] };
  const deletes: number[] = [];
  let truncate: SegmentChanges['truncate'];
  let back = segments.length;
  while (back > 0) {
    const seg = segments[back - 1];
    if (seg === undefined || seg.last < cutFrom) break;
    // Wholly replaced, or a straddler that would keep only entries the snapshot covers: it goes.
    if (seg.first >= cutFrom || cutFrom - 1 <= snapIndex) {
      deletes.push(seg.first);
      back--;
      continue;
    }
    truncate = { segment: seg, keepBelow: cutFrom };
    segments[back - 1] = { first: seg.first, last: cutFrom - 1 };
    break;
  }
  segments.length = back;
  let front = 0;
  for (let seg = segments[0]; seg !== undefined && seg.last <= snapIndex; seg = segments[++front]) deletes.push(seg.first);
  if (front > 0) segments.splice(0, front);
  return { deletes, truncate, kept: segments };
}

/** The segment holding `index`, by binary search (segments are ascending and contiguous). */
export function segmentOf(segments: readonly SegmentRef[], index: number): SegmentRef | undefined {
  let lo = 0;
  let hi = segments.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const seg = segments[mid];
    if (seg === undefined) return undefined;
    if (index < seg.first) hi = mid - 1;
    else if (index > seg.last) lo = mid + 1;
    else return seg;
  }
  return undefined;
}
